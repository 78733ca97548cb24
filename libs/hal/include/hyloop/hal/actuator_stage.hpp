#pragma once
// Step 5 of the cycle contract (DESIGN.md §6) as the actuator performs it, in process and in
// the actuator service alike: the command offered for cycle k is latched when k is a multiple
// of h (the control period T_c = h·T), passed through the safety layer at that period, and the
// result is held until the next latch. A missing command at a latch counts towards the
// watchdog; an emergency stop takes effect at the next latch, i.e. within one control period.
// RT-safe.

#include <cstdint>

#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/drivers.hpp"

namespace hyloop::hal {

class ActuatorStage {
 public:
  /// `safety.step` must be the control period h·T.
  ActuatorStage(std::int64_t hold_steps, const SafetyConfig& safety)
      : hold_steps_(hold_steps < 1 ? 1 : hold_steps), safety_(safety) {}

  /// At rest at the initial command (bumpless arming): it is the output until the first latch.
  void reset(const ActuatorCommand& initial) noexcept {
    safety_.reset(initial.position);
    output_ = {initial, false, false, false, SafetyEvent::kNone};
  }

  /// The output for cycle `cycle`, given the command offered for it (nullptr: none arrived).
  const SafetyOutput& update(std::int64_t cycle, const ActuatorCommand* command) noexcept {
    if (cycle % hold_steps_ == 0) {
      output_ = safety_.filter(command);
    }
    return output_;
  }

  [[nodiscard]] bool latches(std::int64_t cycle) const noexcept { return cycle % hold_steps_ == 0; }
  [[nodiscard]] const SafetyOutput& output() const noexcept { return output_; }
  [[nodiscard]] ActuatorSafety& safety() noexcept { return safety_; }
  [[nodiscard]] const ActuatorSafety& safety() const noexcept { return safety_; }

 private:
  std::int64_t hold_steps_;
  ActuatorSafety safety_;
  SafetyOutput output_{};
};

}  // namespace hyloop::hal
