// hyloop-sensor: hosts the SensorComponent behind the lifecycle gRPC API.
#include "hyloop/runtime/service_main.hpp"
#include "sensor/sensor_component.hpp"

int main(int argc, char** argv) {
  return hyloop::runtime::run_service_main(
      argc, argv, "sensor", [] { return std::make_unique<hyloop::services::SensorComponent>(); });
}
