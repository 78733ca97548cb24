// hyloop-actuator: hosts the ActuatorComponent behind the lifecycle gRPC API.
#include "actuator/actuator_component.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-actuator")) return 2;
  return hyloop::runtime::run_service_main(argc, argv, "actuator", [] {
    return std::make_unique<hyloop::services::ActuatorComponent>();
  });
}
