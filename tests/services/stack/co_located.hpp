#pragma once
// The loop components and a coordinator over them in one process (inproc://), the stack the
// service tests run: `hyloop up`'s services without the processes. Lockstep runs of it give the
// same run directory as `hyloop up` (tests/services/services_test.cpp).

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actuator/actuator_component.hpp"
#include "coordinator/coordinator_component.hpp"
#include "dynamics/dynamics_component.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "sensor/sensor_component.hpp"

namespace hyloop::testing {

struct CoLocated {
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  services::ActuatorComponent actuator;
  services::DynamicsComponent dynamics;
  services::SensorComponent sensor;
  std::unique_ptr<services::Coordinator> coordinator;

  /// Endpoints "inproc://NAME…"; run directories go to `runs_dir` (the coordinator's --runs-dir).
  CoLocated(const std::string& name, const std::filesystem::path& runs_dir);
  ~CoLocated();
  CoLocated(const CoLocated&) = delete;
  CoLocated& operator=(const CoLocated&) = delete;

  /// Loads a scenario's text with overrides; the status of LoadScenario.
  grpc::Status load_text(const std::string& text, const std::vector<std::string>& overrides = {});
  /// Starts a run into runs_dir/`run`.
  grpc::Status start(const std::string& run, v1::ClockMode mode = v1::CLOCK_MODE_LOCKSTEP);
  /// Waits for the run to end (at most `timeout`); its status.
  v1::RunStatus finish(std::chrono::seconds timeout = std::chrono::minutes(2));
};

}  // namespace hyloop::testing
