#include "torsion2_kind.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"

namespace hyloop::testing {
namespace {

namespace ex = hyloop::experiment;

/// An inertia on a torsional spring and damper.
struct Body {
  double j;  // kg*m^2
  double k;  // N*m/rad
  double c;  // N*m*s/rad
};

struct Torsion2Scenario {
  std::string name = "torsion2";
  double step = 0.001;    // s
  double duration = 2.0;  // s
  Body numerical{0.5, 200.0, 0.2};
  double m0 = 2.0, frequency = 1.5;  // N*m, Hz
  Body physical{0.1, 80.0, 0.05};
  double noise = 0.01;  // N*m
  std::uint64_t seed = 7;
  double angle_limit = 1.0;  // rad
  double rate_limit = 40.0;  // rad/s
  [[nodiscard]] std::int64_t steps() const { return std::llround(duration / step); }
};

void positive(ex::MapReader& r, const std::string& key, double& out) {
  r.number(key, out);
  ex::require(out > 0.0, r.field(key), out, "must be > 0");
}

void read_body(ex::MapReader& r, Body& b) {
  positive(r, "inertia_kg_m2", b.j);
  positive(r, "stiffness_n_m_per_rad", b.k);
  r.number("damping_n_m_s_per_rad", b.c);
}

void write_body(std::ostream& y, const Body& b) {
  y << "\n  inertia_kg_m2: " << ex::format_number(b.j)
    << "\n  stiffness_n_m_per_rad: " << ex::format_number(b.k)
    << "\n  damping_n_m_s_per_rad: " << ex::format_number(b.c);
}

Torsion2Scenario parse(const YAML::Node& root, const std::string& origin) {
  Torsion2Scenario s;
  ex::validate_with_origin(origin, [&] {
    ex::MapReader top(root, "", origin);
    std::string kind;
    top.string("kind", kind);
    top.string("name", s.name);
    ex::MapReader timing(top.get("timing"), "timing", origin);
    positive(timing, "step_s", s.step);
    positive(timing, "duration_s", s.duration);
    ex::MapReader num(top.get("numerical"), "numerical", origin);
    read_body(num, s.numerical);
    num.number("torque_amplitude_n_m", s.m0);
    positive(num, "torque_frequency_hz", s.frequency);
    ex::MapReader phys(top.get("physical"), "physical", origin);
    read_body(phys, s.physical);
    phys.number("noise_n_m", s.noise);
    phys.unsigned64("seed", s.seed);
    ex::MapReader limits(top.get("limits"), "limits", origin);
    positive(limits, "angle_rad", s.angle_limit);
    positive(limits, "rate_rad_per_s", s.rate_limit);
    for (ex::MapReader* r : {&timing, &num, &phys, &limits, &top}) r->finish();
  });
  return s;
}

std::string to_yaml(const Torsion2Scenario& s) {
  const auto n = [](double v) { return ex::format_number(v); };
  std::ostringstream y;
  y << "kind: torsion2\nname: " << s.name << "\ntiming:\n  step_s: " << n(s.step)
    << "\n  duration_s: " << n(s.duration) << "\nnumerical:";
  write_body(y, s.numerical);
  y << "\n  torque_amplitude_n_m: " << n(s.m0) << "\n  torque_frequency_hz: " << n(s.frequency)
    << "\nphysical:";
  write_body(y, s.physical);
  y << "\n  noise_n_m: " << n(s.noise) << "\n  seed: " << s.seed
    << "\nlimits:\n  angle_rad: " << n(s.angle_limit) << "\n  rate_rad_per_s: " << n(s.rate_limit)
    << "\n";
  return y.str();
}

class Torsion2Rig final : public ex::RigPart {
 public:
  explicit Torsion2Rig(const Torsion2Scenario& s) : s_(s), random_(s.seed) {}
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const double theta_a = applied.position;
    const Body& b = s_.physical;
    const double accel = (-b.k * (phi_ - theta_a) - b.c * omega_) / b.j;
    omega_ += s_.step * accel;
    phi_ += s_.step * omega_;
    const double tau = b.k * (phi_ - theta_a);
    measurement[0] = theta_a;
    measurement[1] = phi_;
    measurement[2] = tau + s_.noise * noise_(random_);
    truth[0] = omega_;
    truth[1] = tau;
  }
  std::vector<std::string> truth_names() const override {
    return {"omega_2[rad/s]", "tau_true[N*m]"};
  }

 private:
  Torsion2Scenario s_;
  std::mt19937_64 random_;
  std::normal_distribution<double> noise_{0.0, 1.0};
  double phi_ = 0.0, omega_ = 0.0;
};

class Torsion2Dynamics final : public ex::DynamicsPart {
 public:
  explicit Torsion2Dynamics(const Torsion2Scenario& s) : s_(s) {}
  const std::vector<std::string>& names() const override { return names_; }
  ex::StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                      hal::ActuatorCommand& next) noexcept override {
    const double t = static_cast<double>(k) * s_.step;
    const double torque = s_.m0 * std::sin(2.0 * std::numbers::pi * s_.frequency * t);
    const double tau = measurement[2];
    const Body& b = s_.numerical;
    omega_ += s_.step * (torque - b.k * theta_ - b.c * omega_ + tau) / b.j;
    theta_ += s_.step * omega_;
    values[0] = t;
    values[1] = theta_;
    values[2] = omega_;
    values[3] = tau;
    values[4] = torque;
    values[5] = measurement[1];
    next = {theta_, omega_};
    if (!std::isfinite(theta_) || !std::isfinite(omega_)) return ex::StepStatus::stop("not finite");
    return std::abs(theta_) > s_.angle_limit ? ex::StepStatus::stop("angle limit")
                                             : ex::StepStatus::ok();
  }

 private:
  Torsion2Scenario s_;
  std::vector<std::string> names_ = {"time[s]",       "theta_1[rad]",   "omega_1[rad/s]",
                                     "tau_meas[N*m]", "torque_in[N*m]", "phi[rad]"};
  double theta_ = 0.0, omega_ = 0.0;
};

/// The parsed scenario: the plan and parts, and a LoopExperiment over them in process.
class Torsion2Loaded final : public ex::LoadedScenario {
 public:
  Torsion2Loaded(const ex::Kind& kind, Torsion2Scenario s)
      : LoadedScenario(kind), s_(std::move(s)) {}
  std::unique_ptr<ex::RigPart> make_rig_part() const override {
    return std::make_unique<Torsion2Rig>(s_);
  }
  std::unique_ptr<ex::DynamicsPart> make_dynamics_part() const override {
    return std::make_unique<Torsion2Dynamics>(s_);
  }

 protected:
  std::unique_ptr<ex::Experiment> make_experiment() const override {
    return std::make_unique<ex::LoopExperiment>(loop_plan(), make_rig_part(), make_dynamics_part(),
                                                s_.name, to_yaml(s_));
  }
  ex::LoopPlan make_loop_plan() const override {
    hal::SafetyConfig safety;
    safety.limits = {.position_min = -s_.angle_limit,
                     .position_max = s_.angle_limit,
                     .velocity_max = s_.rate_limit,
                     .acceleration_max = 1e4};
    safety.step = s_.step;
    safety.stop_deceleration = 100.0;
    ex::LoopPlan p = ex::every_cycle_plan(kind().name(), s_.steps(), s_.step, safety, 0.0);
    p.measurement = {
        {{"theta_a", "rad", "angle"}, {"phi", "rad", "angle"}, {"tau", "N*m", "torque"}}};
    p.command = ex::set_point_command("theta_cmd", "rad", "angle");
    return p;
  }

 private:
  Torsion2Scenario s_;
};

class Torsion2Kind final : public ex::Kind {
 public:
  std::string name() const override { return "torsion2"; }
  std::unique_ptr<ex::LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                           const ex::DataSource& /*data*/) const override {
    return std::make_unique<Torsion2Loaded>(*this, parse(root, origin));
  }
};

}  // namespace

std::unique_ptr<experiment::Kind> make_torsion2_kind() { return std::make_unique<Torsion2Kind>(); }

}  // namespace hyloop::testing
