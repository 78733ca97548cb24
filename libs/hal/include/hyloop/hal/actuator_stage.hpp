#pragma once
// Step 5 of the cycle contract (DESIGN.md §6) as the actuator performs it, in process and in
// the actuator service alike: the command offered for cycle k is latched when k is a multiple
// of h (the control period T_c = h·T), passed through the safety layer at that period, and the
// result is held until the next latch. A missing command at a latch counts towards the
// watchdog; an emergency stop takes effect at the next latch, i.e. within one control period.
//
// Several axes (a 6-DoF pose, a robot's joints): one ActuatorSafety per axis, each with its own
// limits, latched together. A command is taken or refused as a whole: when any axis's value is
// not finite or outside that axis's limits (check_command), that axis counts the rejection and
// every other axis holds as for a missing command, so no axis moves on a command another axis
// refused. The e-stop, the watchdog trip and the rest test act on all axes. With one axis the
// stage is exactly the single safety layer.
// RT-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/signal_layout.hpp"

namespace hyloop::hal {

/// The most axes a command carries: each has a set point and its rate in the command layout.
inline constexpr std::size_t kMaxAxes = kMaxSignals / 2;

class ActuatorStage {
 public:
  /// One axis. `safety.step` must be the control period h·T.
  ActuatorStage(std::int64_t hold_steps, const SafetyConfig& safety);
  /// One axis per entry (1..kMaxAxes), each `step` the control period h·T.
  /// @throws std::invalid_argument naming the axis.
  ActuatorStage(std::int64_t hold_steps, std::span<const SafetyConfig> axes);

  ActuatorStage(const ActuatorStage&) = delete;
  ActuatorStage& operator=(const ActuatorStage&) = delete;

  /// At rest at the initial command (bumpless arming): it is the output until the first latch.
  void reset(const ActuatorCommand& initial) noexcept { reset(std::span(&initial, 1)); }
  /// Each axis at rest at its initial command (axes() of them).
  void reset(std::span<const ActuatorCommand> initial) noexcept;

  /// The output for cycle `cycle`, given the command offered for it: axes() values, or nullptr
  /// when none arrived. Its `command` is axis 0's; applied() has every axis's.
  const SafetyOutput& update(std::int64_t cycle, const ActuatorCommand* commands) noexcept;

  [[nodiscard]] bool latches(std::int64_t cycle) const noexcept { return cycle % hold_steps_ == 0; }
  /// Axis 0's command; limited if any axis was limited; the event the first axis that had one.
  [[nodiscard]] const SafetyOutput& output() const noexcept { return output_; }
  /// Every axis's output command, axis 0 first.
  [[nodiscard]] std::span<const ActuatorCommand> applied() const noexcept {
    return {applied_.data(), axes_};
  }
  [[nodiscard]] std::size_t axes() const noexcept { return axes_; }
  [[nodiscard]] ActuatorSafety& safety(std::size_t axis = 0) noexcept { return *safety_[axis]; }
  [[nodiscard]] const ActuatorSafety& safety(std::size_t axis = 0) const noexcept {
    return *safety_[axis];
  }

  /// Latches the e-stop on every axis. Any thread, async-signal-safe.
  void emergency_stop() noexcept;
  [[nodiscard]] bool estopped() const noexcept { return safety_[0]->estopped(); }
  [[nodiscard]] bool watchdog_tripped() const noexcept { return safety_[0]->watchdog_tripped(); }
  /// Trips every axis's watchdog now. Control thread.
  void trip_watchdog() noexcept;
  /// Every axis at rest.
  [[nodiscard]] bool at_rest() const noexcept;
  /// A safety counter summed over the axes, e.g. total(&ActuatorSafety::rejected_position).
  [[nodiscard]] std::uint64_t total(std::uint64_t (ActuatorSafety::*counter)()
                                        const) const noexcept;

 private:
  /// The axis whose value refuses the whole command, if any.
  [[nodiscard]] std::optional<std::size_t> refusing_axis(
      const ActuatorCommand* commands) const noexcept;

  std::int64_t hold_steps_;
  std::size_t axes_;
  std::array<std::optional<ActuatorSafety>, kMaxAxes> safety_;
  std::array<ActuatorCommand, kMaxAxes> applied_{};
  SafetyOutput output_{};
};

}  // namespace hyloop::hal
