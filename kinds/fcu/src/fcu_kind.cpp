// The FCU kind (kind.hpp): its runner, its loop parts over FcuDynamics and the FCU rig emulator.
// Its loop signals are fuel flows in kg/s under their own names: the command x_p (the demand,
// the safety window in kg/s), the measurement x_m (the flow meter); the metrics export g/s.
#include "hyloop/experiment/kind.hpp"
#include "hyloop/kinds/fcu/fcu_dynamics.hpp"
#include "hyloop/kinds/fcu/fcu_experiment.hpp"

namespace hyloop::experiment {
namespace {

/// Prometheus's base unit of mass is the gram (as runtime::kGramsPerKilogram; this library
/// does not link the runtime).
constexpr double kGramsPerKilogram = 1000.0;

class FcuRig final : public RigPart {
 public:
  explicit FcuRig(const FcuScenario& s) : rig_(fcu_rig_config(s)) {
    rig_.reset(fcu_initial_fuel(s));
  }
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const hal::FcuRigSample& r = rig_.step(applied.position);
    measurement[0] = r.x_m;
    truth[0] = r.x_motor;
    truth[1] = r.valve_position;
    truth[2] = r.fuel_flow;
    truth[3] = r.saturated ? 1.0 : 0.0;
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
    std::vector<std::size_t> excluded = column_indices(kFcuRigColumns);
    excluded.push_back(kFcuColumns + static_cast<std::size_t>(FcuExtraColumn::kValveSaturated));
    excluded.push_back(col(kFcuRecorderColumn));
    columns_ = columns_except(row_.size(), excluded);
    for (const std::size_t c : columns_) names_.push_back(fcu_record_columns()[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    double command = 0.0;
    const char* reason = dynamics_.step(k, measurement[0], row_, command);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    next = {command, 0.0};
    return StepStatus::from_reason(reason);
  }

 private:
  FcuScenario scenario_;
  FcuDynamics dynamics_;
  std::vector<double> row_;
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

std::vector<GaugeSpec> fuel_flow_gauges() {
  const std::string help =
      "FCU: fuel flow in g/s (Prometheus's base unit of mass is the gram): the ECU's command "
      "x_c, the compensated command x_p sent to the motor, the flow meter's reading x_m.";
  const std::string metric = "hyloop_fuel_flow_grams_per_second";
  constexpr double kScale = kGramsPerKilogram;
  return {{metric, help, {{"signal", "command"}}, "x_c[kg/s]", kScale},
          {metric, help, {{"signal", "compensated"}}, "x_p[kg/s]", kScale},
          {metric, help, {{"signal", "measured"}}, "x_m[kg/s]", kScale}};
}

class FcuKind final : public Kind {
 public:
  std::string name() const override { return "fcu"; }
  const FieldTable* fields() const override { return &fcu_field_table(); }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                       const DataSource& /*data*/) const override {
    using Loaded = ParsedScenario<FcuScenario, FcuExperiment>;
    return std::make_unique<Loaded>(*this, parse_fcu_scenario(root, origin),
                                    Loaded::Form{.plan = &fcu_loop_plan,
                                                 .rig = &make_fcu_rig_part,
                                                 .dynamics = &make_fcu_dynamics_part,
                                                 .yaml = &to_yaml});
  }
  /// No mechanical target: the tracking gauges read NaN.
  /// The engine speed of the hybrid loop (n) against the ideal twin's (n_ideal), which is what
  /// it should reproduce; the fuel-flow demand x_c is the command.
  SignalRoles signal_roles() const override {
    return {.target = "n_ideal[%]", .measured = "n[%]", .command = "x_c[kg/s]"};
  }
  std::vector<GaugeSpec> dynamics_gauges() const override {
    std::vector<GaugeSpec> g = {
        {.metric = "hyloop_engine_speed_ratio",
         .help = "FCU: the engine's speed n, normalised (1 = design speed).",
         .column = "speed[-]"},
        {.metric = "hyloop_ideal_engine_speed_ratio",
         .help = "FCU: the ideal twin's engine speed, normalised.",
         .column = "speed_ideal[-]"}};
    for (GaugeSpec& f : fuel_flow_gauges()) g.push_back(std::move(f));
    return g;
  }
  CommandGauges command_gauges() const override {
    return {.command_metric = "hyloop_actuator_command_grams_per_second",
            .actuator_help =
                "FCU: the fuel-flow command after the safety layer (what the AC motor gets).",
            .rig_help = "FCU: the fuel-flow command the rig applied (holds) in its last cycle.",
            .limit_metric = "hyloop_actuator_command_limit_grams_per_second",
            .limit_help = "FCU: the configured fuel-flow command window.",
            .scale = kGramsPerKilogram};
  }
};

}  // namespace

LoopPlan fcu_loop_plan(const FcuScenario& s) {
  LoopPlan p = every_cycle_plan("fcu", s.steps(), s.timing.step, fcu_safety_config(s),
                                FcuDynamics(s).initial_command());
  p.measurement = {{{"x_m", "kg/s", "mass_flow"}}};           // the flow meter's reading
  p.command = set_point_command("x_p", "kg/s", "mass_flow");  // the motor's fuel-flow demand
  return p;
}

std::unique_ptr<RigPart> make_fcu_rig_part(const FcuScenario& s) {
  return std::make_unique<FcuRig>(s);
}

std::unique_ptr<DynamicsPart> make_fcu_dynamics_part(const FcuScenario& s) {
  return std::make_unique<FcuDynamicsPart>(s);
}

const Kind& fcu_kind() {
  static const FcuKind kind;
  return kind;
}

std::unique_ptr<Kind> make_fcu_kind() { return std::make_unique<FcuKind>(); }

}  // namespace hyloop::experiment
