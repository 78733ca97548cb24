// hyloop-rig-emulator: hosts the RigEmulatorComponent behind the lifecycle gRPC API.
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "rig_emulator/rig_emulator_component.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-rig-emulator")) return 2;
  return hyloop::runtime::run_service_main(argc, argv, "rig-emulator", [] {
    return std::make_unique<hyloop::services::RigEmulatorComponent>();
  });
}
