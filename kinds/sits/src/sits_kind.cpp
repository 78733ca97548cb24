// The SITS kind (kind.hpp): its runner, its loop parts over SitsDynamics and the SITS rig
// emulator, its gauges.
#include <memory>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/sits_rig_emulator.hpp"
#include "hyloop/kinds/sits/sits_dynamics.hpp"
#include "hyloop/kinds/sits/sits_jobs.hpp"
#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

// The emulated robot and force sensor behind hal's drivers, stepped as a real rig's would be
// (step_drivers); the emulator is the plant clock.
class SitsRig final : public RigPart, private PlantClock {
 public:
  explicit SitsRig(const SitsScenario& s) : rig_(sits_rig_config(s)) {
    rig_.reset(s.model.initial_position);
  }
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    if (step_drivers(actuator_, sensor_, this, applied, measurement) == hal::DriverStatus::kFault) {
      fault_ = to_string(StopReason::kDriverFault).data();  // NUL-terminated
    }
    truth[0] = rig_.held_command().position;
    truth[1] = rig_.contact_force();
  }
  std::vector<std::string> truth_names() const override {
    return {std::string(kSitsColumnHeaders[col(SitsColumn::kXCmd)]),
            std::string(kSitsColumnHeaders[col(SitsColumn::kFContact)])};
  }
  const char* fault() const noexcept override { return fault_; }
  std::uint64_t rejected_commands() const noexcept override { return rig_.rejected_commands(); }

 private:
  void advance() noexcept override { rig_.advance(); }

  hal::SitsRigEmulator rig_;
  hal::EmulatedActuator actuator_{rig_};
  hal::EmulatedForceSensor sensor_{rig_};
  const char* fault_ = nullptr;
};

class SitsDynamicsPart final : public DynamicsPart {
 public:
  explicit SitsDynamicsPart(const SitsScenario& s)
      : dynamics_(s), columns_(columns_except(kSitsColumns, column_indices(kSitsRigColumns))) {
    for (std::size_t c : columns_) names_.emplace_back(kSitsColumnHeaders[c]);
  }
  const std::vector<std::string>& names() const override { return names_; }
  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    const StopReason r =
        dynamics_.step(k, {measurement[0], measurement[1], measurement[2]}, row_, next);
    for (std::size_t i = 0; i < columns_.size(); ++i) values[i] = row_[columns_[i]];
    return r == StopReason::kNone ? StepStatus::ok()
                                  : StepStatus::stop(to_string(r).data());  // NUL-terminated
  }

 private:
  SitsDynamics dynamics_;
  SampleRow row_{};
  std::vector<std::size_t> columns_;
  std::vector<std::string> names_;
};

std::vector<std::string> sits_notices(const SitsScenario& s) { return s.notices; }

class SitsKind final : public Kind {
 public:
  std::string name() const override { return "sits"; }
  const FieldTable* fields() const override { return &sits_field_table(); }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                       const DataSource& /*data*/) const override {
    using Loaded = ParsedScenario<SitsScenario, SitsRunner>;
    return std::make_unique<Loaded>(*this, parse_scenario(root, origin),
                                    Loaded::Form{.plan = &sits_loop_plan,
                                                 .rig = &make_sits_rig_part,
                                                 .dynamics = &make_sits_dynamics_part,
                                                 .notices = &sits_notices,
                                                 .yaml = &to_yaml,
                                                 .wire_emulator = &make_sits_wire_emulator});
  }
  /// The target's motion x, which the robot (x_robot) reproduces; its ideal twin x_ideal.
  SignalRoles signal_roles() const override {
    return {.target = "x[m]",
            .measured = "x_robot[m]",
            .ideal = "x_ideal[m]",
            .command = "x_cmd[m]",
            .force = "f_meas[N]",
            .velocity = "v[m/s]",
            .velocity_ideal = "v_ideal[m/s]",
            .force_input = "f_input[N]",
            .force_ideal = "f_ideal[N]",
            .power = "power[W]",
            .power_ideal = "power_ideal[W]",
            .energy = "energy[J]",
            .energy_ideal = "energy_ideal[J]",
            .gain = "k_h[N*s/m]",
            .observed_energy = "eps_h[J]"};
  }
  std::vector<GaugeSpec> dynamics_gauges() const override {
    return {{.metric = "hyloop_compensation_force_newtons",
             .help = "Compensation force F_h = K_h * (estimated velocity).",
             .column = "f_comp[N]"},
            {.metric = "hyloop_compensator_gain_newton_seconds_per_meter",
             .help = "The compensator's current gain K_h.",
             .column = "k_h[N*s/m]"},
            {.metric = "hyloop_observed_energy_joule_seconds",
             .help = "SCVG's energy observer, sum of |eps_h| * T.",
             .column = "eps_sum[J*s]"}};
  }
  CommandGauges command_gauges() const override { return mechanical_command_gauges(); }
  const Identification* identification() const override { return &sits_identification(); }
  const Analysis* analysis() const override { return &sits_analysis(); }
  /// The compensator tuner (sits_jobs.hpp tune_compensator).
  std::optional<TuneResult> tune(const TuneRequest& request, std::ostream& log) const override {
    const SitsScenario s = parse_scenario(request.text, request.origin, request.overrides);
    const nlohmann::json result = tune_compensator(s,
                                                   {.jobs = request.jobs,
                                                    .switch_times = request.switch_times,
                                                    .coarse = request.coarse,
                                                    .top = request.top},
                                                   log);
    return TuneResult{.document = result, .text = result["best"].dump(2) + "\n"};
  }
  std::string tuning() const override {
    return "compensator.type (fgc, lgc or scvg) gains and the SCVG switch time, with its phase "
           "correction when compensator.phase_correction.enabled";
  }
  std::vector<TuneOption> tune_options() const override {
    return {TuneOption::kSwitchTimes, TuneOption::kCoarse};
  }
};

}  // namespace

LoopPlan sits_loop_plan(const SitsScenario& s) {
  LoopPlan p;
  p.kind = "sits";
  p.total_steps = s.steps();
  p.step = s.timing.step;
  p.hold_steps = s.hold_steps();
  p.safety = sits_safety_config(s);
  p.initial = SitsDynamics(s).initial_command();
  p.rig_driver = s.rig.driver.type;
  p.tare = s.acquisition.tare;
  p.filter_time_constant = s.acquisition.filter_time_constant;
  p.corrupt_message_every = s.rig.corrupt_message_every;
  p.measurement = mechanical_measurement("x_robot", "v_robot", "f_meas");
  p.command = set_point_command("x_cmd", "m", "length");
  return p;
}

std::unique_ptr<RigPart> make_sits_emulated_rig_part(const SitsScenario& s) {
  return std::make_unique<SitsRig>(s);
}

std::unique_ptr<RigPart> make_sits_rig_part(const SitsScenario& s) {
  if (!is_wire_driver(s.rig.driver.type)) return make_sits_emulated_rig_part(s);
  return make_wire_rig_part(s.rig.driver, sits_safety_config(s).limits, s.timing.step,
                            {.velocity = true, .needs_force = true, .command_truth = true},
                            {std::string(kSitsColumnHeaders[col(SitsColumn::kXCmd)]),
                             std::string(kSitsColumnHeaders[col(SitsColumn::kFContact)])});
}

std::unique_ptr<WireEmulator> make_sits_wire_emulator(const SitsScenario& s,
                                                      const hal::WireImpairments& impairments) {
  const RigDriverSettings& d = s.rig.driver;
  hal::SitsRigConfig rig = sits_rig_config(s);
  if (d.type == "udp") {
    return make_udp_target_emulator(d, std::make_shared<hal::SitsAxisPlant>(rig), rig.step,
                                    s.model.initial_position, s.rig.limits, impairments);
  }
  if (d.type != "egm" && d.type != "rsi") {
    throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                        ": the sits kind emulates a udp target, an egm robot or an rsi controller");
  }
  // Positions on the wire are relative to the pose where the session starts (0 here).
  require(s.model.initial_position == 0.0, "model.initial_position_m", s.model.initial_position,
          "must be 0 over an egm or rsi robot (its positions are relative to the session's start)");
  // The same robot, contact and sensor delay, stepped at the controller's cycle.
  rig.step = robot_controller_cycle(d);
  rig.sensor_delay_steps = s.sensor_delay_steps() * s.timing.step / rig.step;
  return make_robot_controller_emulator(d, std::make_shared<hal::SitsAxisPlant>(rig), impairments);
}

std::unique_ptr<DynamicsPart> make_sits_dynamics_part(const SitsScenario& s) {
  return std::make_unique<SitsDynamicsPart>(s);
}

const Kind& sits_kind() {
  static const SitsKind kind;
  return kind;
}

std::unique_ptr<Kind> make_sits_kind() { return std::make_unique<SitsKind>(); }

}  // namespace hyloop::experiment
