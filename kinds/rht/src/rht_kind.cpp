// The RHT kind (kind.hpp): its runner, its loop parts over RhtDynamics and the servo emulator.
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/kinds/rht/rht_dynamics.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"

namespace hyloop::experiment {
namespace {

class RhtRig final : public RigPart {
 public:
  explicit RhtRig(const RhtScenario& s) : servo_(rht_servo_config(s, s.servo.seed)) {
    servo_.reset(0.0);
  }
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const hal::ServoMeasurement& m = servo_.step(applied.position);
    measurement[0] = m.displacement;
    measurement[1] = m.force;
    truth[0] = m.true_displacement;
    truth[1] = m.omega;
  }
  std::vector<std::string> truth_names() const override {
    return {rht_column_headers()[col(RhtColumn::kTrue)],
            rht_column_headers()[col(RhtColumn::kOmega)]};
  }

 private:
  hal::ServoActuatorEmulator servo_;
};

class RhtDynamicsPart final : public DynamicsPart {
 public:
  explicit RhtDynamicsPart(const RhtScenario& s)
      : dynamics_(s),
        row_(kRhtColumns, 0.0),
        columns_(columns_except(kRhtColumns, column_indices(kRhtRigColumns))) {
    for (std::size_t c : columns_) names_.push_back(rht_column_headers()[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    double command = 0.0;
    const char* reason = dynamics_.step(k, measurement[0], measurement[1], row_, command);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    next = {command, 0.0};
    return StepStatus::from_reason(reason);
  }

 private:
  RhtDynamics dynamics_;
  std::vector<double> row_;
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

class RhtKind final : public Kind {
 public:
  std::string name() const override { return "rht"; }
  const FieldTable* fields() const override { return &rht_field_table(); }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                       const DataSource& data) const override {
    using Loaded = ParsedScenario<RhtScenario, RhtExperiment>;
    return std::make_unique<Loaded>(*this, parse_rht_scenario(root, origin, data),
                                    Loaded::Form{.plan = &rht_loop_plan,
                                                 .rig = &make_rht_rig_part,
                                                 .dynamics = &make_rht_dynamics_part,
                                                 .yaml = &to_yaml,
                                                 .wire_emulator = &make_rht_wire_emulator});
  }
  /// The structure's displacement (d_desired) is the target the actuator reproduces
  /// (d_measured), the reference structure's (d_numerical) its ideal twin; velocities by
  /// differences; no force compensator.
  SignalRoles signal_roles() const override {
    return {.target = "d_desired[m]",
            .measured = "d_measured[m]",
            .ideal = "d_numerical[m]",
            .command = "d_command[m]",
            .force = "force[N]"};
  }
  CommandGauges command_gauges() const override { return mechanical_command_gauges(); }
  std::optional<TuneResult> tune(const TuneRequest& request, std::ostream& log) const override {
    return tune_rht(*this, request, log);
  }
  std::string tuning() const override { return rht_tuning(); }
  std::vector<TuneOption> tune_options() const override { return {TuneOption::kRuns}; }
};

}  // namespace

LoopPlan rht_loop_plan(const RhtScenario& s) {
  const RhtDynamics d(s);
  LoopPlan p = every_cycle_plan("rht", d.total_steps(), s.timing.step, rht_safety_config(s),
                                d.initial_command());
  p.measurement = {{{"d_measured", "m", "length"}, {"force", "N", "force"}}};
  p.command = set_point_command("d_command", "m", "length");
  p.rig_driver = s.rig.driver.type;
  return p;
}

std::unique_ptr<RigPart> make_rht_emulated_rig_part(const RhtScenario& s) {
  return std::make_unique<RhtRig>(s);
}

std::unique_ptr<RigPart> make_rht_rig_part(const RhtScenario& s) {
  if (!is_wire_driver(s.rig.driver.type)) return make_rht_emulated_rig_part(s);
  // d_true: the device reports no truth, its measurement stands for it; omega: NaN.
  return make_wire_rig_part(
      s.rig.driver, rht_safety_config(s).limits, s.timing.step,
      {.velocity = false, .needs_force = true, .command_truth = false},
      {rht_column_headers()[col(RhtColumn::kTrue)], rht_column_headers()[col(RhtColumn::kOmega)]});
}

std::unique_ptr<WireEmulator> make_rht_wire_emulator(const RhtScenario& s,
                                                     const hal::WireImpairments& impairments) {
  if (s.rig.driver.type == "openfresco") {
    // hyloop's own site: the same servo-hydraulic plant behind the same safety window.
    return make_openfresco_site_emulator(s.rig.driver, rht_servo_config(s, s.servo.seed),
                                         rht_safety_config(s));
  }
  hal::ServoActuatorConfig servo = rht_servo_config(s, s.servo.seed);
  if (s.rig.driver.type == "egm" || s.rig.driver.type == "rsi") {
    // The robot's axis is the same servo-hydraulic model, stepped at the controller's cycle.
    servo.step = robot_controller_cycle(s.rig.driver);
    return make_robot_controller_emulator(
        s.rig.driver, std::make_shared<hal::ServoActuatorEmulator>(servo), impairments);
  }
  return make_udp_target_emulator(s.rig.driver, std::make_shared<hal::ServoActuatorEmulator>(servo),
                                  servo.step, 0.0, rht_safety_config(s).limits, impairments);
}

std::unique_ptr<DynamicsPart> make_rht_dynamics_part(const RhtScenario& s) {
  return std::make_unique<RhtDynamicsPart>(s);
}

const Kind& rht_kind() {
  static const RhtKind kind;
  return kind;
}

std::unique_ptr<Kind> make_rht_kind() { return std::make_unique<RhtKind>(); }

}  // namespace hyloop::experiment
