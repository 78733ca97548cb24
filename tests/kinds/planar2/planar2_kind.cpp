#include "planar2_kind.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::testing {
namespace {

namespace ex = hyloop::experiment;

struct Planar2Scenario {
  std::string name = "planar2";
  double step = 0.001, duration = 2.0;            // s
  double mass = 2.0, stiffness = 400.0;           // kg, N/m
  double force_x = 3.0, force_y = 2.0;            // N
  double frequency_x = 1.5, frequency_y = 2.5;    // Hz
  double lag = 0.004;                             // s, each actuator's first-order lag
  double rig_stiffness = 300.0, coupling = 60.0;  // N/m
  double noise = 0.01;                            // N
  std::uint64_t seed = 11;
  double x_limit = 0.05, y_limit = 0.05, rate_limit = 2.0;  // m, m, m/s
  [[nodiscard]] std::int64_t steps() const { return std::llround(duration / step); }
};

void positive(ex::MapReader& r, const std::string& key, double& out) {
  r.number(key, out);
  ex::require(out > 0.0, r.field(key), out, "must be > 0");
}

Planar2Scenario parse(const YAML::Node& root, const std::string& origin) {
  Planar2Scenario s;
  ex::validate_with_origin(origin, [&] {
    ex::MapReader top(root, "", origin);
    std::string kind;
    top.string("kind", kind);
    top.string("name", s.name);
    ex::MapReader timing(top.get("timing"), "timing", origin);
    positive(timing, "step_s", s.step);
    positive(timing, "duration_s", s.duration);
    ex::MapReader num(top.get("numerical"), "numerical", origin);
    positive(num, "mass_kg", s.mass);
    positive(num, "stiffness_n_per_m", s.stiffness);
    num.number("force_x_n", s.force_x);
    num.number("force_y_n", s.force_y);
    positive(num, "frequency_x_hz", s.frequency_x);
    positive(num, "frequency_y_hz", s.frequency_y);
    ex::MapReader phys(top.get("physical"), "physical", origin);
    positive(phys, "lag_s", s.lag);
    positive(phys, "stiffness_n_per_m", s.rig_stiffness);
    phys.number("coupling_n_per_m", s.coupling);
    phys.number("noise_n", s.noise);
    phys.unsigned64("seed", s.seed);
    ex::MapReader limits(top.get("limits"), "limits", origin);
    positive(limits, "x_m", s.x_limit);
    positive(limits, "y_m", s.y_limit);
    positive(limits, "rate_m_per_s", s.rate_limit);
    for (ex::MapReader* r : {&timing, &num, &phys, &limits, &top}) r->finish();
  });
  return s;
}

std::string to_yaml(const Planar2Scenario& s) {
  const auto n = [](double v) { return ex::format_number(v); };
  std::ostringstream y;
  y << "kind: planar2\nname: " << s.name << "\ntiming:\n  step_s: " << n(s.step)
    << "\n  duration_s: " << n(s.duration) << "\nnumerical:\n  mass_kg: " << n(s.mass)
    << "\n  stiffness_n_per_m: " << n(s.stiffness) << "\n  force_x_n: " << n(s.force_x)
    << "\n  force_y_n: " << n(s.force_y) << "\n  frequency_x_hz: " << n(s.frequency_x)
    << "\n  frequency_y_hz: " << n(s.frequency_y) << "\nphysical:\n  lag_s: " << n(s.lag)
    << "\n  stiffness_n_per_m: " << n(s.rig_stiffness) << "\n  coupling_n_per_m: " << n(s.coupling)
    << "\n  noise_n: " << n(s.noise) << "\n  seed: " << s.seed
    << "\nlimits:\n  x_m: " << n(s.x_limit) << "\n  y_m: " << n(s.y_limit)
    << "\n  rate_m_per_s: " << n(s.rate_limit) << "\n";
  return y.str();
}

// Two lagged actuators pressing a coupled spring; the truth is what each axis was given.
class Planar2Rig final : public ex::RigPart {
 public:
  explicit Planar2Rig(const Planar2Scenario& s) : s_(s), random_(s.seed) {}
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    const std::array<hal::ActuatorCommand, 2> both = {applied, {}};
    step_axes(both, measurement, truth);
  }
  void step_axes(std::span<const hal::ActuatorCommand> applied, std::span<double> measurement,
                 std::span<double> truth) noexcept override {
    const double a = s_.step / (s_.lag + s_.step);
    for (std::size_t i = 0; i < 2; ++i) position_[i] += a * (applied[i].position - position_[i]);
    const double k = s_.rig_stiffness, kc = s_.coupling;
    measurement[0] = position_[0];
    measurement[1] = position_[1];
    measurement[2] = -(k * position_[0] + kc * position_[1]) + s_.noise * noise_(random_);
    measurement[3] = -(kc * position_[0] + k * position_[1]) + s_.noise * noise_(random_);
    truth[0] = applied[0].position;
    truth[1] = applied[1].position;
  }
  std::vector<std::string> truth_names() const override { return {"x_applied[m]", "y_applied[m]"}; }

 private:
  Planar2Scenario s_;
  std::mt19937_64 random_;
  std::normal_distribution<double> noise_{0.0, 1.0};
  std::array<double, 2> position_{};
};

// The point mass on its own springs, driven by its forcing and the measured forces.
class Planar2Dynamics final : public ex::DynamicsPart {
 public:
  explicit Planar2Dynamics(const Planar2Scenario& s) : s_(s) {}
  const std::vector<std::string>& names() const override { return names_; }
  ex::StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                      hal::ActuatorCommand& next) noexcept override {
    std::array<hal::ActuatorCommand, 2> both{};
    const ex::StepStatus status = step_axes(k, measurement, values, both);
    next = both[0];
    return status;
  }
  ex::StepStatus step_axes(std::int64_t k, std::span<const double> measurement,
                           std::span<double> values,
                           std::span<hal::ActuatorCommand> next) noexcept override {
    const double t = static_cast<double>(k) * s_.step;
    const double w = 2.0 * std::numbers::pi;
    const std::array<double, 2> drive = {
        s_.force_x * std::sin(w * s_.frequency_x * t),
        s_.force_y * std::cos(w * s_.frequency_y * t) - s_.force_y};
    values[0] = t;
    for (std::size_t i = 0; i < 2; ++i) {
      velocity_[i] +=
          s_.step * (drive[i] - s_.stiffness * position_[i] + measurement[2 + i]) / s_.mass;
      position_[i] += s_.step * velocity_[i];
      next[i] = {position_[i], velocity_[i]};
      values[1 + 2 * i] = position_[i];
      values[2 + 2 * i] = measurement[2 + i];
    }
    if (!std::isfinite(position_[0]) || !std::isfinite(position_[1])) {
      return ex::StepStatus::stop("not finite");
    }
    return ex::StepStatus::ok();
  }

 private:
  Planar2Scenario s_;
  std::vector<std::string> names_ = {"time[s]", "x[m]", "f_x[N]", "y[m]", "f_y[N]"};
  std::array<double, 2> position_{}, velocity_{};
};

hal::SafetyConfig axis_safety(const Planar2Scenario& s, double window) {
  hal::SafetyConfig safety;
  safety.limits = {.position_min = -window,
                   .position_max = window,
                   .velocity_max = s.rate_limit,
                   .acceleration_max = 1e4};
  safety.step = s.step;
  safety.stop_deceleration = 100.0;
  return safety;
}

class Planar2Loaded final : public ex::LoadedScenario {
 public:
  Planar2Loaded(const ex::Kind& kind, Planar2Scenario s) : LoadedScenario(kind), s_(std::move(s)) {}
  std::unique_ptr<ex::RigPart> make_rig_part() const override {
    return std::make_unique<Planar2Rig>(s_);
  }
  std::unique_ptr<ex::DynamicsPart> make_dynamics_part() const override {
    return std::make_unique<Planar2Dynamics>(s_);
  }

 protected:
  std::unique_ptr<ex::Experiment> make_experiment() const override {
    return std::make_unique<ex::LoopExperiment>(loop_plan(), make_rig_part(), make_dynamics_part(),
                                                s_.name, to_yaml(s_));
  }
  ex::LoopPlan make_loop_plan() const override {
    ex::LoopPlan p =
        ex::every_cycle_plan(kind().name(), s_.steps(), s_.step, axis_safety(s_, s_.x_limit), 0.0);
    p.extra_axes.push_back({axis_safety(s_, s_.y_limit), {}});
    p.measurement = {{{"x_r", "m", "length"},
                      {"y_r", "m", "length"},
                      {"f_x", "N", "force"},
                      {"f_y", "N", "force"}}};
    p.command = ex::set_point_command("x_cmd", "m", "length");
    for (hal::Signal& signal : ex::set_point_command("y_cmd", "m", "length").signals) {
      p.command.signals.push_back(std::move(signal));
    }
    return p;
  }

 private:
  Planar2Scenario s_;
};

class Planar2Kind final : public ex::Kind {
 public:
  std::string name() const override { return "planar2"; }
  std::unique_ptr<ex::LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                           const ex::DataSource& /*data*/) const override {
    return std::make_unique<Planar2Loaded>(*this, parse(root, origin));
  }
};

}  // namespace

std::unique_ptr<experiment::Kind> make_planar2_kind() { return std::make_unique<Planar2Kind>(); }

}  // namespace hyloop::testing
