// hyloop-dynamics: hosts the DynamicsComponent behind the lifecycle gRPC API.
#include "dynamics/dynamics_component.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-dynamics")) return 2;
  return hyloop::runtime::run_service_main(argc, argv, "dynamics", [] {
    return std::make_unique<hyloop::services::DynamicsComponent>();
  });
}
