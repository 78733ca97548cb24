// hyloop-rig-emulator: hosts the RigEmulatorComponent behind the lifecycle gRPC API.
#include "hyloop/runtime/service_main.hpp"
#include "rig_emulator/rig_emulator_component.hpp"

int main(int argc, char** argv) {
  return hyloop::runtime::run_service_main(argc, argv, "rig-emulator", [] {
    return std::make_unique<hyloop::services::RigEmulatorComponent>();
  });
}
