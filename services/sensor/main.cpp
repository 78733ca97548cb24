// hyloop-sensor: hosts the SensorComponent behind the lifecycle gRPC API.
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "sensor/sensor_component.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-sensor")) return 2;
  return hyloop::runtime::run_service_main(
      argc, argv, "sensor", [] { return std::make_unique<hyloop::services::SensorComponent>(); });
}
