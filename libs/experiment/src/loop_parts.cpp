#include "hyloop/experiment/loop_parts.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/fcu_dynamics.hpp"
#include "hyloop/experiment/fcu_experiment.hpp"
#include "hyloop/experiment/rht_dynamics.hpp"
#include "hyloop/experiment/rht_experiment.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/experiment/sits_dynamics.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/sits_rig_emulator.hpp"

namespace hyloop::experiment {
namespace {

constexpr const char* kOrigin = "scenario";

std::string kind_of(const std::string& text) {
  const std::string kind = scenario_kind_of_text(text, kOrigin);
  if (kind != "sits" && kind != "rht" && kind != "fcu") {
    throw std::invalid_argument("scenario kind \"" + kind +
                                "\": the distributed stack runs kinds sits, rht and fcu; run "
                                "this one in process (hyloop run)");
  }
  return kind;
}

template <class Column, std::size_t R>
std::vector<std::size_t> indices(const std::array<Column, R>& columns) {
  std::vector<std::size_t> out;
  for (const Column c : columns) out.push_back(static_cast<std::size_t>(c));
  return out;
}

/// The columns [0, count) but `excluded` (the rig's, the recorder's): what the dynamics computes.
std::vector<std::size_t> columns_except(std::size_t count,
                                        const std::vector<std::size_t>& excluded) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < count; ++c) {
    if (std::find(excluded.begin(), excluded.end(), c) == excluded.end()) out.push_back(c);
  }
  return out;
}

/// The loop plan of a kind whose actuator latches every cycle (no hold).
LoopPlan every_cycle_plan(std::string kind, std::int64_t total_steps, double step,
                          const hal::SafetyConfig& safety, double initial_command) {
  LoopPlan p;
  p.kind = std::move(kind);
  p.total_steps = total_steps;
  p.step = step;
  p.hold_steps = 1;
  p.safety = safety;
  p.initial = {initial_command, 0.0};
  return p;
}

class SitsRig final : public RigPart {
 public:
  explicit SitsRig(const SitsScenario& s) : rig_(sits_rig_config(s)) {
    rig_.reset(s.model.initial_position);
  }
  void step(const hal::ActuatorCommand& applied, RigSample& out) noexcept override {
    (void)rig_.apply(applied);
    rig_.advance();
    const hal::ActuatorState robot = rig_.robot_state();
    out.position = robot.position;
    out.velocity = robot.velocity;
    out.force = rig_.measured_force();
    out.truth = {rig_.held_command().position, rig_.contact_force(), 0.0, 0.0};
  }
  std::vector<std::string> truth_names() const override {
    return {std::string(kSitsColumnHeaders[col(SitsColumn::kXCmd)]),
            std::string(kSitsColumnHeaders[col(SitsColumn::kFContact)])};
  }

 private:
  hal::SitsRigEmulator rig_;
};

class RhtRig final : public RigPart {
 public:
  explicit RhtRig(const RhtScenario& s) : servo_(rht_servo_config(s, s.servo.seed)) {
    servo_.reset(0.0);
  }
  void step(const hal::ActuatorCommand& applied, RigSample& out) noexcept override {
    const hal::ServoMeasurement& m = servo_.step(applied.position);
    out.position = m.displacement;
    out.velocity = 0.0;
    out.force = m.force;
    out.truth = {m.true_displacement, m.omega, 0.0, 0.0};
  }
  std::vector<std::string> truth_names() const override {
    return {rht_column_headers()[col(RhtColumn::kTrue)],
            rht_column_headers()[col(RhtColumn::kOmega)]};
  }

 private:
  hal::ServoActuatorEmulator servo_;
};

class SitsDynamicsPart final : public DynamicsPart {
 public:
  explicit SitsDynamicsPart(const SitsScenario& s)
      : dynamics_(s), columns_(columns_except(kSitsColumns, indices(kSitsRigColumns))) {
    for (std::size_t c : columns_) names_.emplace_back(kSitsColumnHeaders[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  const char* step(std::int64_t k, double position, double velocity, double force,
                   std::span<double> values, hal::ActuatorCommand& next) noexcept override {
    const StopReason r = dynamics_.step(k, {position, velocity, force}, row_, next);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    return r == StopReason::kNone ? nullptr : to_string(r).data();  // NUL-terminated literals
  }

 private:
  SitsDynamics dynamics_;
  SampleRow row_{};
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

class RhtDynamicsPart final : public DynamicsPart {
 public:
  explicit RhtDynamicsPart(const RhtScenario& s)
      : dynamics_(s),
        row_(kRhtColumns, 0.0),
        columns_(columns_except(kRhtColumns, indices(kRhtRigColumns))) {
    for (std::size_t c : columns_) names_.push_back(rht_column_headers()[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  const char* step(std::int64_t k, double position, double /*velocity*/, double force,
                   std::span<double> values, hal::ActuatorCommand& next) noexcept override {
    double command = 0.0;
    const char* reason = dynamics_.step(k, position, force, row_, command);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    next = {command, 0.0};
    return reason;
  }

 private:
  RhtDynamics dynamics_;
  std::vector<double> row_;
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

class FcuRig final : public RigPart {
 public:
  explicit FcuRig(const FcuScenario& s) : rig_(fcu_rig_config(s)) {
    rig_.reset(fcu_initial_fuel(s));
  }
  void step(const hal::ActuatorCommand& applied, RigSample& out) noexcept override {
    const hal::FcuRigSample& r = rig_.step(applied.position);
    out.position = r.x_m;
    out.velocity = 0.0;
    out.force = 0.0;
    out.truth = {r.x_motor, r.valve_position, r.fuel_flow, r.saturated ? 1.0 : 0.0};
  }
  std::vector<std::string> truth_names() const override {
    const auto& c = fcu_record_columns();
    return {c[col(FcuColumn::kXMotor)], c[col(FcuColumn::kValvePosition)],
            c[col(FcuColumn::kFuelFlow)],
            c[kFcuColumns + static_cast<std::size_t>(FcuExtraColumn::kValveSaturated)]};
  }

 private:
  hal::FcuRigEmulator rig_;
};

class FcuDynamicsPart final : public DynamicsPart {
 public:
  explicit FcuDynamicsPart(const FcuScenario& s)
      : scenario_(s), dynamics_(scenario_), row_(kFcuColumns + kFcuExtraColumns, 0.0) {
    std::vector<std::size_t> excluded = indices(kFcuRigColumns);
    excluded.push_back(kFcuColumns + static_cast<std::size_t>(FcuExtraColumn::kValveSaturated));
    excluded.push_back(col(kFcuRecorderColumn));
    columns_ = columns_except(row_.size(), excluded);
    for (const std::size_t c : columns_) names_.push_back(fcu_record_columns()[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  const char* step(std::int64_t k, double position, double /*velocity*/, double /*force*/,
                   std::span<double> values, hal::ActuatorCommand& next) noexcept override {
    double command = 0.0;
    const char* reason = dynamics_.step(k, position, row_, command);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    next = {command, 0.0};
    return reason;
  }

 private:
  FcuScenario scenario_;
  FcuDynamics dynamics_;
  std::vector<double> row_;
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

}  // namespace

LoopPlan loop_plan(const std::string& text) {
  const std::string kind = kind_of(text);
  if (kind == "fcu") {
    const FcuScenario s = parse_fcu_scenario(text, kOrigin, {});
    return every_cycle_plan(kind, s.steps(), s.timing.step, fcu_safety_config(s),
                            FcuDynamics(s).initial_command());
  }
  if (kind == "rht") {
    const RhtScenario s = parse_rht_scenario(text, kOrigin, {});
    const RhtDynamics d(s);
    return every_cycle_plan(kind, d.total_steps(), s.timing.step, rht_safety_config(s),
                            d.initial_command());
  }
  const SitsScenario s = parse_scenario(text, kOrigin, {});
  LoopPlan p;
  p.kind = kind;
  p.total_steps = s.steps();
  p.step = s.timing.step;
  p.hold_steps = s.hold_steps();
  p.safety = sits_safety_config(s);
  p.initial = SitsDynamics(s).initial_command();
  p.tare = s.acquisition.tare;
  p.filter_time_constant = s.acquisition.filter_time_constant;
  p.corrupt_message_every = s.rig.corrupt_message_every;
  return p;
}

std::unique_ptr<RigPart> make_rig_part(const std::string& text) {
  const std::string kind = kind_of(text);
  if (kind == "sits") {
    return std::make_unique<SitsRig>(parse_scenario(text, kOrigin, {}));
  }
  if (kind == "fcu") {
    return std::make_unique<FcuRig>(parse_fcu_scenario(text, kOrigin, {}));
  }
  return std::make_unique<RhtRig>(parse_rht_scenario(text, kOrigin, {}));
}

std::unique_ptr<DynamicsPart> make_dynamics_part(const std::string& text) {
  const std::string kind = kind_of(text);
  if (kind == "sits") {
    return std::make_unique<SitsDynamicsPart>(parse_scenario(text, kOrigin, {}));
  }
  if (kind == "fcu") {
    return std::make_unique<FcuDynamicsPart>(parse_fcu_scenario(text, kOrigin, {}));
  }
  return std::make_unique<RhtDynamicsPart>(parse_rht_scenario(text, kOrigin, {}));
}

}  // namespace hyloop::experiment
