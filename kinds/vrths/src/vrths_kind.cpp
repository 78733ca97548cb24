// The vrths kind (vrths_experiment.hpp): its loop parts over the benchmark's models
// (core/rths_benchmark.hpp) and the Kind.
#include <cmath>
#include <random>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/kinds/vrths/vrths_experiment.hpp"

namespace hyloop::experiment {
namespace {

namespace rths = core::rths;

// The dynamics part's values, then the rig's truth: vrths_record_columns().
const std::vector<std::string>& dynamics_names() {
  static const std::vector<std::string> names = {
      "time[s]", "ag[m/s^2]", "y1[m]", "y2[m]", "y3[m]", "r1[m]",   "r2[m]",  "r3[m]",
      "x_m[m]",  "f_e[N]",    "u[m]",  "c0[1]", "c1[s]", "c2[s^2]", "c3[s^3]"};
  return names;
}
const std::vector<std::string>& truth_columns() {
  static const std::vector<std::string> names = {"x[m]", "v[m/s]", "F_act[N]"};
  return names;
}

class VrthsRig final : public RigPart {
 public:
  explicit VrthsRig(const VrthsScenario& s) : axis_(s) {}
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const hal::ServoMeasurement& m = axis_.step(applied.position);
    measurement[0] = m.displacement;
    measurement[1] = m.force;
    truth[0] = m.true_displacement;
    truth[1] = axis_.plant().velocity();
    truth[2] = axis_.plant().actuator_force();
  }
  std::vector<std::string> truth_names() const override { return truth_columns(); }

 private:
  VrthsAxisPlant axis_;
};

enum class Controller { kNone, kSample, kAts, kAmb };

Controller controller_of(const std::string& type) {
  if (type == "sample") return Controller::kSample;
  if (type == "ats") return Controller::kAts;
  if (type == "amb") return Controller::kAmb;
  return Controller::kNone;
}

class VrthsDynamics final : public DynamicsPart {
 public:
  explicit VrthsDynamics(const VrthsScenario& s)
      : motion_(load_vrths_ground_motion(s)),
        building_(rths::building_case(s.building_case)),
        numerical_(rths::FrameModel::numerical(building_, s.run_plant(), s.timing.step)),
        reference_(rths::FrameModel::reference(building_, s.timing.step)),
        sample_(s.controller.sample, {s.sensors.resolution, s.sensors.converter_limit},
                s.timing.step),
        ats_(s.controller.ats),
        amb_(s.controller.amb),
        guard_(s.guard.config),
        guarded_(s.guard.enabled),
        controller_(controller_of(s.controller.type)),
        step_(s.timing.step),
        scale_(s.ground_motion.scale),
        padding_(s.ground_motion.padding),
        stroke_(s.limits.stroke) {}
  const std::vector<std::string>& names() const override { return dynamics_names(); }

  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    const double t0 = static_cast<double>(k) * step_;
    const double t1 = static_cast<double>(k + 1) * step_;
    const double ag0 = ground(t0), agh = ground(0.5 * (t0 + t1)), ag1 = ground(t1);
    numerical_.step(ag0, agh, ag1, force_[0]);
    reference_.step(ag0, agh, ag1, 0.0);
    force_[0] = force_[1];
    force_[1] = measurement[1];
    const Eigen::Vector3d& y = numerical_.displacement();
    const Eigen::Vector3d& r = reference_.displacement();
    const double x_m = measurement[0];
    const double u = command(y[0], x_m);
    const std::array<double, 15> row = {t1,
                                        ag1,
                                        y[0],
                                        y[1],
                                        y[2],
                                        r[0],
                                        r[1],
                                        r[2],
                                        x_m,
                                        measurement[1],
                                        u,
                                        coefficient(0),
                                        coefficient(1),
                                        coefficient(2),
                                        coefficient(3)};
    std::copy(row.begin(), row.end(), values.begin());
    next = {u, 0.0};  // a set point (no feed-forward velocity), as the RHT kind's
    last_u_ = u;
    if (!std::isfinite(u) || !y.allFinite()) {
      return StepStatus::stop(to_string(StopReason::kNotFinite).data());
    }
    if (std::abs(x_m) > stroke_) {
      return StepStatus::stop(to_string(StopReason::kStrokeLimit).data());
    }
    if (guarded_ && guard_.update(t1, y[0], x_m)) {
      return StepStatus::stop(to_string(StopReason::kStabilityGuard).data());
    }
    return StepStatus::ok();
  }

 private:
  [[nodiscard]] double ground(double t) const noexcept { return scale_ * motion_.at(t - padding_); }

  double command(double desired, double measured) noexcept {
    switch (controller_) {
      case Controller::kSample:
        return sample_.step(desired, measured);
      case Controller::kAts: {
        ats_.observe(last_u_, measured);
        const double v = seen_ ? (desired - last_y_) / step_ : 0.0;
        const double a = seen_ ? (v - last_v_) / step_ : 0.0;
        last_y_ = desired;
        last_v_ = v;
        seen_ = true;
        return ats_.command(desired, v, a);
      }
      case Controller::kAmb:
        if (seen_) amb_.observe(measured);  // closes the pair of the last command
        seen_ = true;
        return amb_.command(desired);
      case Controller::kNone:
        break;
    }
    return desired;
  }
  [[nodiscard]] double coefficient(std::size_t i) const noexcept {
    if (controller_ == Controller::kAts) return i < 3 ? ats_.coefficients()[i] : 0.0;
    return controller_ == Controller::kAmb ? amb_.coefficients()[i] : 0.0;
  }

  core::GroundMotion motion_;
  rths::BuildingCase building_;
  rths::FrameModel numerical_, reference_;
  rths::SampleController sample_;
  core::AdaptiveTimeSeries ats_;
  core::AdaptiveModelBased amb_;
  core::StabilityGuard guard_;
  bool guarded_;
  Controller controller_;
  double step_, scale_, padding_, stroke_;
  std::array<double, 2> force_{};  // f_e at t_{k−1}, t_k
  double last_u_ = 0.0, last_y_ = 0.0, last_v_ = 0.0;
  bool seen_ = false;
};

class VrthsKind final : public Kind {
 public:
  std::string name() const override { return "vrths"; }
  const FieldTable* fields() const override { return &vrths_field_table(); }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                       const DataSource& data) const override {
    using Loaded = ParsedScenario<VrthsScenario, VrthsExperiment>;
    return std::make_unique<Loaded>(*this, parse_vrths_scenario(root, origin, data),
                                    Loaded::Form{.plan = &vrths_loop_plan,
                                                 .rig = &make_vrths_rig_part,
                                                 .dynamics = &make_vrths_dynamics_part,
                                                 .yaml = &to_yaml,
                                                 .wire_emulator = &make_vrths_wire_emulator});
  }
  /// The numerical floor 1 (y1) is the target the specimen reproduces (x_m; the benchmark's
  /// J2/J3 compare the two), the reference structure's floor 1 (r1) its ideal twin.
  SignalRoles signal_roles() const override {
    return {.target = "y1[m]",
            .measured = "x_m[m]",
            .ideal = "r1[m]",
            .command = "u[m]",
            .force = "f_e[N]"};
  }
  CommandGauges command_gauges() const override { return mechanical_command_gauges(); }
  /// Run i: the plant drawn with seed i (k_e, beta1, beta2, a3) and the sensors' noise of seed
  /// 1000 + i.
  std::vector<std::string> monte_carlo_overrides(int run) const override {
    return {"perturbation.seed=" + std::to_string(run),
            "sensors.seed=" + std::to_string(1000 + run)};
  }
  std::optional<TuneResult> tune(const TuneRequest& request, std::ostream& log) const override {
    return tune_vrths(*this, request, log);
  }
  std::string tuning() const override { return vrths_tuning(); }
  std::vector<TuneOption> tune_options() const override { return {TuneOption::kRuns}; }
  std::vector<std::string> monte_carlo_metrics() const override {
    return {"J1_ms",      "J2_percent", "J3_percent", "J4_percent", "J5_percent",
            "J6_percent", "J7_percent", "J8_percent", "J9_percent", "peak_actuator_force_n"};
  }
};

}  // namespace

std::vector<std::string> vrths_record_columns() {
  std::vector<std::string> c = dynamics_names();
  c.insert(c.end(), truth_columns().begin(), truth_columns().end());
  return c;
}

hal::SafetyConfig vrths_safety_config(const VrthsScenario& s) {
  hal::SafetyConfig safety;
  safety.limits.position_min = -s.limits.stroke;
  safety.limits.position_max = s.limits.stroke;
  // The command is the servo-valve's reference, not the actuator's motion: the benchmark limits
  // the actuator (300 mm/s, reported against limits.velocity_m_per_s), not the command, whose
  // sample controller steps by up to 0.2 mm a cycle (converter LSB x lead x PI gain).
  safety.limits.acceleration_max = s.limits.acceleration;
  safety.step = s.timing.step;
  safety.stop_deceleration = 50.0;  // m/s²: the ramp to rest of a servo-hydraulic actuator
  return safety;
}

LoopPlan vrths_loop_plan(const VrthsScenario& s) {
  const hal::SafetyConfig safety = vrths_safety_config(s);
  LoopPlan p =
      every_cycle_plan("vrths", s.steps(load_vrths_ground_motion(s)), s.timing.step, safety, 0.0);
  p.measurement = {{{"x_m", "m", "length"}, {"f_e", "N", "force"}}};
  p.command = set_point_command("u", "m", "length");
  p.rig_driver = s.rig.driver.type;
  return p;
}

VrthsAxisPlant::VrthsAxisPlant(const VrthsScenario& s)
    : plant_(s.run_plant(), s.timing.step),
      c_e_(plant_.parameters().c_e()),
      step_(s.timing.step),
      sigma_x_(s.sensors.displacement_noise),
      sigma_f_(s.sensors.force_noise),
      seed_(s.sensors.seed),
      random_(seed_) {}

void VrthsAxisPlant::reset(double /*position*/) noexcept {
  plant_.reset();
  random_.seed(seed_);
  noise_.reset();
  x1_ = 0.0;
  v1_ = 0.0;
  measurement_ = {};
}

const hal::ServoMeasurement& VrthsAxisPlant::step(double command) noexcept {
  plant_.step(command);
  const double x = plant_.displacement();
  const double v = (x - x1_) / step_;
  const double a = (v - v1_) / step_;
  x1_ = x;
  v1_ = v;
  const core::rths::PlantParameters& p = plant_.parameters();
  const double n = noise_(random_);
  measurement_.time += step_;
  measurement_.displacement = x + sigma_x_ * n;
  measurement_.true_displacement = x;
  measurement_.velocity = plant_.velocity();
  measurement_.force = p.k_e * x + c_e_ * v + p.m_e * a + sigma_f_ * n;
  return measurement_;
}

std::unique_ptr<RigPart> make_vrths_emulated_rig_part(const VrthsScenario& s) {
  return std::make_unique<VrthsRig>(s);
}

std::unique_ptr<RigPart> make_vrths_rig_part(const VrthsScenario& s) {
  if (!is_wire_driver(s.rig.driver.type)) return make_vrths_emulated_rig_part(s);
  // x_m and f_e from the device; it reports no truth: x holds its measurement, v and F_act NaN.
  return make_wire_rig_part(s.rig.driver, vrths_safety_config(s).limits, s.timing.step,
                            {.velocity = false, .needs_force = true, .command_truth = false},
                            truth_columns());
}

std::unique_ptr<WireEmulator> make_vrths_wire_emulator(const VrthsScenario& s,
                                                       const hal::WireImpairments& impairments) {
  return make_udp_target_emulator(s.rig.driver, std::make_shared<VrthsAxisPlant>(s), s.timing.step,
                                  0.0, vrths_safety_config(s).limits, impairments);
}

std::unique_ptr<DynamicsPart> make_vrths_dynamics_part(const VrthsScenario& s) {
  return std::make_unique<VrthsDynamics>(s);
}

const Kind& vrths_kind() {
  static const VrthsKind kind;
  return kind;
}

std::unique_ptr<Kind> make_vrths_kind() { return std::make_unique<VrthsKind>(); }

}  // namespace hyloop::experiment
