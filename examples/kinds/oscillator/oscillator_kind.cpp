// An example kind built out of tree against an installed hyloop (find_package(hyloop),
// hyloop_add_kind): a split-mass real-time hybrid simulation. The numerical substructure is a
// single-degree-of-freedom oscillator under a sine force; the physical one a spring–dashpot
// specimen that an actuator with a first-order lag deforms, with a load cell on it:
//
//   numerical:  m·a = f0·sin(2π·f·t) − c·v − k·x − F_meas,  v += T·a,  x += T·v  (x_c = x)
//   actuator:   x_a[k] = x_a[k−1] + α·(x_c[k] − x_a[k−1]),  α = 1 − exp(−T/τ)   (exact ZOH)
//   specimen:   F = k_s·x_a + c_s·v_a,  v_a = (x_a[k] − x_a[k−1])/T
//   ideal twin: the numerical model with the specimen's force computed from its own x, v
//
// Units: SI (m, s, kg, N). The actuator's lag τ delays the specimen's force: e_x = x − x_ideal
// measures what that delay does. It runs on hyloop's generic loop chain (LoopExperiment), so the
// in-process run and the services' lockstep run record the same samples bit for bit.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <numbers>
#include <utility>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace oscillator {
namespace ex = hyloop::experiment;

constexpr const char* kKind = "oscillator";

struct Scenario {
  std::string name = "oscillator";
  double step = 0.001;                // T, s
  double duration = 10.0;             // s
  double mass = 100.0;                // m, kg
  double damping = 20.0;              // c, N·s/m
  double stiffness = 4.0e4;           // k, N/m
  double force_amplitude = 500.0;     // f0, N
  double force_frequency = 2.0;       // f, Hz
  double x0 = 0.0;                    // initial displacement, m (the rig starts there too)
  double specimen_stiffness = 2.0e4;  // k_s, N/m
  double specimen_damping = 0.0;      // c_s, N·s/m
  double actuator_lag = 0.005;        // τ, s (0: follows at once)
  double stroke = 0.1;                // |x_c| ≤ stroke, m
  double velocity_max = 1.0;          // m/s
  double acceleration_max = 100.0;    // m/s²
};

hyloop::hal::SafetyConfig safety_config(const Scenario& s) {
  hyloop::hal::SafetyConfig safety;
  safety.limits.position_min = -s.stroke;
  safety.limits.position_max = s.stroke;
  safety.limits.velocity_max = s.velocity_max;
  safety.limits.acceleration_max = s.acceleration_max;
  safety.step = s.step;
  safety.stop_deceleration = s.acceleration_max;
  return safety;
}

Scenario parse(const YAML::Node& root, const std::string& origin) {
  Scenario s;
  ex::MapReader top(root, "", origin);
  std::string kind;
  top.string("kind", kind);
  top.string("name", s.name);
  ex::MapReader timing = top.child("timing");
  timing.number("step_s", s.step);
  timing.number("duration_s", s.duration);
  timing.finish();
  ex::MapReader model = top.child("model");
  model.number("mass_kg", s.mass);
  model.number("damping_nspm", s.damping);
  model.number("stiffness_npm", s.stiffness);
  model.number("force_amplitude_n", s.force_amplitude);
  model.number("force_frequency_hz", s.force_frequency);
  model.number("x0_m", s.x0);
  model.finish();
  ex::MapReader rig = top.child("rig");
  rig.number("specimen_stiffness_npm", s.specimen_stiffness);
  rig.number("specimen_damping_nspm", s.specimen_damping);
  rig.number("actuator_lag_s", s.actuator_lag);
  rig.number("stroke_m", s.stroke);
  rig.number("velocity_max_mps", s.velocity_max);
  rig.number("acceleration_max_mps2", s.acceleration_max);
  rig.finish();
  top.finish();
  ex::validate_with_origin(origin, [&] {
    if (kind != kKind) throw ex::ScenarioError("kind: must be \"" + std::string(kKind) + "\"");
    if (s.name.empty()) throw ex::ScenarioError("name: must not be empty");
    ex::require(s.step >= 1e-5 && s.step <= 0.1, "timing.step_s", s.step, "in [1e-5, 0.1] s");
    ex::require(s.duration > 0.0 && s.duration / s.step <= 1e7, "timing.duration_s", s.duration,
                "> 0 and at most 1e7 steps");
    ex::require(s.mass > 0.0, "model.mass_kg", s.mass, "> 0");
    ex::require(s.damping >= 0.0, "model.damping_nspm", s.damping, ">= 0");
    ex::require(s.stiffness >= 0.0, "model.stiffness_npm", s.stiffness, ">= 0");
    ex::require(s.force_frequency >= 0.0, "model.force_frequency_hz", s.force_frequency, ">= 0");
    ex::require(s.specimen_stiffness >= 0.0, "rig.specimen_stiffness_npm", s.specimen_stiffness,
                ">= 0");
    ex::require(s.specimen_damping >= 0.0, "rig.specimen_damping_nspm", s.specimen_damping, ">= 0");
    ex::require(s.actuator_lag >= 0.0 && s.actuator_lag <= 10.0, "rig.actuator_lag_s",
                s.actuator_lag, "in [0, 10] s");
    ex::require(s.stroke > 0.0, "rig.stroke_m", s.stroke, "> 0");
    ex::require(std::abs(s.x0) < s.stroke, "model.x0_m", s.x0,
                "inside (-rig.stroke_m, rig.stroke_m)");
    ex::require(s.velocity_max > 0.0, "rig.velocity_max_mps", s.velocity_max, "> 0");
    ex::require(s.acceleration_max > 0.0, "rig.acceleration_max_mps2", s.acceleration_max, "> 0");
    // The e-stop ramps at the acceleration limit: it must reach rest within hal::kMaxStopTime.
    ex::require_stop_deceleration(safety_config(s), "rig.acceleration_max_mps2", s.acceleration_max,
                                  "m/s^2", "rig.velocity_max_mps", "rig.stroke_m");
  });
  return s;
}

std::string resolved_yaml(const Scenario& s) {
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << kKind;
  out << YAML::Key << "name" << YAML::Value << s.name;
  out << YAML::Key << "timing" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "step_s" << YAML::Value << s.step;
  out << YAML::Key << "duration_s" << YAML::Value << s.duration << YAML::EndMap;
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "mass_kg" << YAML::Value << s.mass;
  out << YAML::Key << "damping_nspm" << YAML::Value << s.damping;
  out << YAML::Key << "stiffness_npm" << YAML::Value << s.stiffness;
  out << YAML::Key << "force_amplitude_n" << YAML::Value << s.force_amplitude;
  out << YAML::Key << "force_frequency_hz" << YAML::Value << s.force_frequency;
  out << YAML::Key << "x0_m" << YAML::Value << s.x0 << YAML::EndMap;
  out << YAML::Key << "rig" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "specimen_stiffness_npm" << YAML::Value << s.specimen_stiffness;
  out << YAML::Key << "specimen_damping_nspm" << YAML::Value << s.specimen_damping;
  out << YAML::Key << "actuator_lag_s" << YAML::Value << s.actuator_lag;
  out << YAML::Key << "stroke_m" << YAML::Value << s.stroke;
  out << YAML::Key << "velocity_max_mps" << YAML::Value << s.velocity_max;
  out << YAML::Key << "acceleration_max_mps2" << YAML::Value << s.acceleration_max;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ex::LoopPlan plan(const Scenario& s) {
  const auto steps = static_cast<std::int64_t>(std::llround(s.duration / s.step));
  ex::LoopPlan p = ex::every_cycle_plan(kKind, steps, s.step, safety_config(s), s.x0);
  p.measurement = ex::mechanical_measurement("x_a", "v_a", "f_meas");
  p.command = ex::set_point_command("x_c", "m", "length");
  return p;
}

class Rig final : public ex::RigPart {
 public:
  explicit Rig(const Scenario& s)
      : alpha_(s.actuator_lag > 0.0 ? -std::expm1(-s.step / s.actuator_lag) : 1.0),
        step_(s.step),
        k_s_(s.specimen_stiffness),
        c_s_(s.specimen_damping),
        x_a_(s.x0) {}
  void step(const hyloop::hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const double previous = x_a_;
    x_a_ += alpha_ * (applied.position - x_a_);
    const double v_a = (x_a_ - previous) / step_;
    const double force = k_s_ * x_a_ + c_s_ * v_a;
    measurement[0] = x_a_;
    measurement[1] = v_a;
    measurement[2] = force;
    truth[0] = x_a_;
    truth[1] = force;
  }
  std::vector<std::string> truth_names() const override { return {"x_a[m]", "f_specimen[N]"}; }

 private:
  double alpha_, step_, k_s_, c_s_;
  double x_a_;
};

class Dynamics final : public ex::DynamicsPart {
 public:
  explicit Dynamics(const Scenario& s) : s_(s), x_(s.x0), x_i_(s.x0) {}
  const std::vector<std::string>& names() const override { return names_; }
  ex::StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                      hyloop::hal::ActuatorCommand& next) noexcept override {
    const double t = static_cast<double>(k) * s_.step;
    const double f_ext =
        s_.force_amplitude * std::sin(2.0 * std::numbers::pi * s_.force_frequency * t);
    const double f_meas = measurement[2];
    values[0] = x_;
    values[1] = v_;
    values[2] = f_ext;
    values[3] = f_meas;
    values[4] = x_i_;
    values[5] = x_ - x_i_;
    const double a = (f_ext - s_.damping * v_ - s_.stiffness * x_ - f_meas) / s_.mass;
    v_ += s_.step * a;
    x_ += s_.step * v_;
    const double f_twin = s_.specimen_stiffness * x_i_ + s_.specimen_damping * v_i_;
    const double a_i = (f_ext - s_.damping * v_i_ - s_.stiffness * x_i_ - f_twin) / s_.mass;
    v_i_ += s_.step * a_i;
    x_i_ += s_.step * v_i_;
    if (!std::isfinite(x_) || std::abs(x_) > s_.stroke) return ex::StepStatus::stop("stroke");
    next = {x_, v_};
    return ex::StepStatus::ok();
  }

 private:
  Scenario s_;
  std::vector<std::string> names_{"x[m]",      "v[m/s]",     "f_ext[N]",
                                  "f_meas[N]", "x_ideal[m]", "e_x[m]"};
  double x_, v_ = 0.0, x_i_, v_i_ = 0.0;
};

/// The scenario parsed once (Kind::load): the plan, the parts, and in process a LoopExperiment
/// over the same parts.
class Loaded final : public ex::LoadedScenario {
 public:
  Loaded(const ex::Kind& kind, Scenario s) : LoadedScenario(kind), s_(std::move(s)) {}
  std::unique_ptr<ex::RigPart> make_rig_part() const override { return std::make_unique<Rig>(s_); }
  std::unique_ptr<ex::DynamicsPart> make_dynamics_part() const override {
    return std::make_unique<Dynamics>(s_);
  }

 protected:
  std::unique_ptr<ex::Experiment> make_experiment() const override {
    return std::make_unique<ex::LoopExperiment>(plan(s_), make_rig_part(), make_dynamics_part(),
                                                s_.name, resolved_yaml(s_));
  }
  ex::LoopPlan make_loop_plan() const override { return plan(s_); }

 private:
  Scenario s_;
};

class OscillatorKind final : public ex::Kind {
 public:
  std::string name() const override { return kKind; }
  std::unique_ptr<ex::LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                           const ex::DataSource& /*data*/) const override {
    return std::make_unique<Loaded>(*this, parse(root, origin));
  }
  /// The mass's motion x, which the actuator reproduces (x_a); x_ideal the one-piece twin's.
  ex::SignalRoles signal_roles() const override {
    ex::SignalRoles r;
    r.target = "x[m]";
    r.measured = "x_a[m]";
    r.ideal = "x_ideal[m]";
    r.velocity = "v[m/s]";
    r.force = "f_meas[N]";
    return r;
  }
  ex::CommandGauges command_gauges() const override { return ex::mechanical_command_gauges(); }
};

}  // namespace oscillator

HYLOOP_KIND_PLUGIN(oscillator::OscillatorKind)
