// hyloop-actuator: hosts the ActuatorComponent behind the lifecycle gRPC API.
#include "actuator/actuator_component.hpp"
#include "hyloop/runtime/service_main.hpp"

int main(int argc, char** argv) {
  return hyloop::runtime::run_service_main(argc, argv, "actuator", [] {
    return std::make_unique<hyloop::services::ActuatorComponent>();
  });
}
