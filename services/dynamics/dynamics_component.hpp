#pragma once
// The dynamics + compensation service: hosts experiment::DynamicsPart (SitsDynamics or
// RhtDynamics, the same blocks the in-process runners step). For each SensorSample of cycle k it
// computes step 4 of the cycle contract and sends the ActuatorCommand of cycle k+1 (its header
// carries the rig's sample time as origin, so the actuator measures the loop latency), and the
// recorder's columns of cycle k as telemetry. Lockstep: cycle k starts when sample k is there. Real
// time: each sample is used as it arrives; stale or out-of-order samples are dropped and counted by
// the validator. A stop verdict (not finite, displacement limit) stops sending commands: the
// actuator's watchdog then ramps the rig to rest.

#include <memory>
#include <optional>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/runtime/loop_component.hpp"

namespace hyloop::services {

class DynamicsComponent final : public runtime::LoopComponent {
 public:
  DynamicsComponent() : LoopComponent("dynamics") {}

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  experiment::LoopPlan plan_;
  std::unique_ptr<experiment::DynamicsPart> dynamics_;
  std::unique_ptr<transport::LoopInput<v1::SensorSample>> samples_;
  std::unique_ptr<transport::LoopOutput> commands_;
  v1::ActuatorCommand command_;
  std::vector<double> values_;
  std::atomic<bool> estop_{false};
};

}  // namespace hyloop::services
