#pragma once
// What the loop services need of a scenario, whatever its kind: the plan (cycles, period,
// hold, safety limits, the bumpless first command, the sensor's conditioning), the rig's physics
// (for the rig emulator service) and the numerical side (for the dynamics service). Each kind
// implements them over the same blocks its in-process runner steps (SitsDynamics and the SITS
// rig emulator; RhtDynamics and the servo emulator; FcuDynamics and the FCU rig emulator), so a
// lockstep distributed run computes what `hyloop run` computes. The functions below ask the
// scenario's kind (kind.hpp); an unknown kind, or one without a distributed form, is refused by
// name (std::invalid_argument).
//
// Loop contract v2: what a frame's values are is the plan's signal layouts (hal/signal_layout.hpp),
// each kind's own names and units (SITS: x_R [m], v_R [m/s], f_meas [N]; FCU: x_m [kg/s]). A
// rig part writes the measurement layout's values, a dynamics part reads them and writes the
// command layout's (set point, rate) through hal::ActuatorCommand, whose `position` is the set
// point in the command's unit (kg/s for the FCU) and whose safety window is in that unit.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/actuator_stage.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/signal_layout.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::experiment {

/// One commanded axis beyond the first: its safety window (in its set point's unit) and the
/// command held before cycle 0.
struct PlanAxis {
  hal::SafetyConfig safety;
  hal::ActuatorCommand initial;
};

struct LoopPlan {
  std::string kind;
  std::int64_t total_steps = 0;
  double step = 0.0;             ///< T, s
  std::int64_t hold_steps = 1;   ///< h: the actuator latches every h cycles
  hal::SafetyConfig safety;      ///< at the control period h·T
  hal::ActuatorCommand initial;  ///< the command held before cycle 0
  /// rig.driver.type (rig_driver_fields.hpp): "emulator", the kind's in-process emulator, or
  /// the device on the wire the rig part drives (udp, egm, rsi), which runs in real time only.
  std::string rig_driver = "emulator";
  bool tare = false;
  double filter_time_constant = 0.0;
  int corrupt_message_every = 0;  ///< rig fault injection (0: off)
  hal::SignalLayout measurement;  ///< rig → sensor → dynamics (the sensor conditions its force)
  /// dynamics → actuator → rig: the set point and its rate, per axis (axis i at 2i, 2i+1).
  hal::SignalLayout command;
  /// Axes beyond the first (`safety` and `initial` are axis 0's): each with its own safety
  /// window and bumpless first command. Empty for a kind of one set point.
  std::vector<PlanAxis> extra_axes;
};

/// The number of commanded axes of a plan (1 + extra_axes).
[[nodiscard]] std::size_t plan_axes(const LoopPlan& plan) noexcept;
/// Every axis's safety configuration, axis 0 first (the actuator stage's).
[[nodiscard]] std::vector<hal::SafetyConfig> plan_safety(const LoopPlan& plan);
/// Every axis's bumpless first command, axis 0 first.
[[nodiscard]] std::array<hal::ActuatorCommand, hal::kMaxAxes> plan_initial(const LoopPlan& plan);

/// The measurement of a kind whose rig measures a position, its velocity and a force
/// (`position`, `velocity` and `force` are the kind's names for them).
hal::SignalLayout mechanical_measurement(std::string position, std::string velocity,
                                         std::string force);
/// The command of a kind whose set point is `name` in `unit` measuring `quantity`: the set point
/// and its rate name_rate [unit/s] (quantity_rate).
hal::SignalLayout set_point_command(const std::string& name, const std::string& unit,
                                    const std::string& quantity);

/// The plan of a scenario's text (one parse: load_scenario_text(text)->loop_plan()).
/// @throws ScenarioError naming the field; std::invalid_argument for an unknown kind or one
/// without services.
LoopPlan loop_plan(const std::string& scenario_text);
/// `plan` once its layouts are checked (hal::validate_layout) and its measurement's first signal
/// is what its set point commands. @throws std::invalid_argument naming the signals.
LoopPlan checked_loop_plan(LoopPlan plan);
/// The loop plan of a kind whose actuator latches every cycle (no hold, no conditioning).
LoopPlan every_cycle_plan(std::string kind, std::int64_t total_steps, double step,
                          const hal::SafetyConfig& safety, double initial_command);

/// A kind's validate() of the e-stop bound (hal::kMaxStopTime) on `field`, whose `value` feeds
/// the ramp's deceleration (a stop deceleration or an acceleration limit, in `unit`).
/// @throws ScenarioError "FIELD = VALUE: must be >= D UNIT ..." when value is below
/// hal::min_stop_deceleration(safety); `speed` and `window` say which fields bound them.
void require_stop_deceleration(const hal::SafetyConfig& safety, const std::string& field,
                               double value, const std::string& unit, const std::string& speed,
                               const std::string& window);

/// The most truth values a rig part records.
inline constexpr std::size_t kMaxTruth = 8;

class RigPart {
 public:
  virtual ~RigPart() = default;
  /// Applies the command of this cycle and advances one step: writes the plan's measurement
  /// (measurement.size() == its layout's size, as the sensor's DAQ delivers it: delayed,
  /// noisy) and the truth columns (truth.size() == truth_names().size()). RT-safe.
  virtual void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
                    std::span<double> truth) noexcept = 0;
  /// The same with every axis's applied command (plan_axes(plan) of them, axis 0 first): what the
  /// loop calls. A rig of several axes (LoopPlan::extra_axes) overrides it; one axis need not.
  virtual void step_axes(std::span<const hal::ActuatorCommand> applied,
                         std::span<double> measurement, std::span<double> truth) noexcept {
    step(applied[0], measurement, truth);
  }
  /// "name[unit]" of the truth values (at most kMaxTruth), as in the kind's record columns.
  [[nodiscard]] virtual std::vector<std::string> truth_names() const = 0;
  /// A fault the rig's drivers reported (a literal, latched), or nullptr: the rig service sends it
  /// once as a FAULT loop event, the coordinator then stops the run. RT-safe.
  [[nodiscard]] virtual const char* fault() const noexcept { return nullptr; }
  /// Commands the rig's actuator driver refused so far (a SITS summary's rejected_commands).
  [[nodiscard]] virtual std::uint64_t rejected_commands() const noexcept { return 0; }
};

/// A device's wire-level emulator (hal's UdpTargetEmulator, ...) that a rig.driver talks to
/// (`hyloop up --emulate-wire`): it serves on its own I/O thread from construction to
/// destruction, driving the kind's plant model.
class WireEmulator {
 public:
  virtual ~WireEmulator() = default;
  /// One line of what the device saw (steps, commands, late, lost, rejected). Not RT.
  [[nodiscard]] virtual std::string report() const = 0;
};

/// What advances an emulated rig's plant by one step between the command and the reads; a real
/// rig's hardware advances on its own (no clock).
class PlantClock {
 public:
  virtual ~PlantClock() = default;
  virtual void advance() noexcept = 0;
};

/// One cycle of a rig behind hal's driver interfaces (drivers.hpp), the order of every rig part
/// built on them: actuator.command(applied) (a rejected command leaves the last accepted one
/// held, the driver's contract), clock->advance() when there is one, actuator.state() and
/// sensor.read() → measurement = [position, velocity, force] (mechanical_measurement's layout).
/// @return DriverStatus::kFault when either driver reports one (the measurement then holds what
///   was read), else kOk. RT-safe.
hal::DriverStatus step_drivers(hal::ActuatorDriver& actuator, hal::ForceSensorDriver& sensor,
                               PlantClock* clock, const hal::ActuatorCommand& applied,
                               std::span<double> measurement) noexcept;
std::unique_ptr<RigPart> make_rig_part(const std::string& scenario_text);

/// What a dynamics part's cycle says about the loop (as ros2_control's return_type): carry on,
/// or stop for a reason (a string literal; it becomes the run's stop_reason). After a stop the
/// command of the next cycle is not sent (the services) or applied (LoopExperiment).
class StepStatus {
 public:
  [[nodiscard]] static constexpr StepStatus ok() noexcept { return StepStatus(nullptr); }
  [[nodiscard]] static constexpr StepStatus stop(const char* reason) noexcept {
    return StepStatus(reason != nullptr ? reason : "stopped");
  }
  /// ok() for nullptr, else stop(reason): for blocks that report a stop as a nullable reason.
  [[nodiscard]] static constexpr StepStatus from_reason(const char* reason) noexcept {
    return StepStatus(reason);
  }
  [[nodiscard]] constexpr bool stopped() const noexcept { return reason_ != nullptr; }
  /// Why the loop stops; nullptr while it carries on.
  [[nodiscard]] constexpr const char* reason() const noexcept { return reason_; }

 private:
  constexpr explicit StepStatus(const char* reason) noexcept : reason_(reason) {}
  const char* reason_;
};

class DynamicsPart {
 public:
  virtual ~DynamicsPart() = default;
  /// "name[unit]" of the values step() writes, as in the kind's samples.csv.
  [[nodiscard]] virtual const std::vector<std::string>& names() const = 0;
  /// Cycle k from its measurements (the plan's measurement layout): writes names().size()
  /// values and the command of cycle k+1, and says whether the loop carries on. RT-safe.
  virtual StepStatus step(std::int64_t k, std::span<const double> measurement,
                          std::span<double> values, hal::ActuatorCommand& next) noexcept = 0;
  /// The same writing every axis's command of cycle k+1 (next.size() == plan_axes(plan)): what
  /// the loop calls. A dynamics of several axes overrides it; one axis need not.
  virtual StepStatus step_axes(std::int64_t k, std::span<const double> measurement,
                               std::span<double> values,
                               std::span<hal::ActuatorCommand> next) noexcept {
    return step(k, measurement, values, next[0]);
  }
};
std::unique_ptr<DynamicsPart> make_dynamics_part(const std::string& scenario_text);

/// The record columns [0, count) but `excluded` (the rig's, the recorder's): a dynamics part's.
std::vector<std::size_t> columns_except(std::size_t count,
                                        const std::vector<std::size_t>& excluded);
/// The indices of a kind's column enumerators.
template <class Column, std::size_t R>
std::vector<std::size_t> column_indices(const std::array<Column, R>& columns) {
  std::vector<std::size_t> out;
  for (const Column c : columns) out.push_back(static_cast<std::size_t>(c));
  return out;
}

}  // namespace hyloop::experiment
