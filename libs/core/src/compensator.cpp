#include "hyloop/core/compensator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {

CompensatorKind parse_compensator_kind(std::string_view name) {
  if (name == "none") return CompensatorKind::kNone;
  if (name == "fgc") return CompensatorKind::kFixedGain;
  if (name == "lgc") return CompensatorKind::kLinearGain;
  if (name == "scvg") return CompensatorKind::kSwitching;
  if (name == "tdpa") return CompensatorKind::kPassivity;
  throw std::invalid_argument("\"" + std::string(name) +
                              "\": must be one of none, fgc, lgc, scvg, tdpa");
}

std::string_view to_string(CompensatorKind kind) noexcept {
  switch (kind) {
    case CompensatorKind::kNone:
      return "none";
    case CompensatorKind::kFixedGain:
      return "fgc";
    case CompensatorKind::kLinearGain:
      return "lgc";
    case CompensatorKind::kSwitching:
      return "scvg";
    case CompensatorKind::kPassivity:
      return "tdpa";
  }
  return "unknown";
}

double EnergyObserver::add(double t, double epsilon) noexcept {
  last_ = epsilon;
  if (t > start_time_) {
    sum_ += std::abs(last_) * step_;
  }
  return last_;
}

namespace {

PassivityControllerConfig passivity_config(const CompensatorConfig& c, double step) {
  PassivityControllerConfig p;
  p.step = step;
  p.causality = PortCausality::kImpedance;
  p.hold = HoldConvention::kHeldOutput;
  p.max_damping = c.max_damping;
  return p;
}

}  // namespace

Compensator::Compensator(const CompensatorConfig& config, double step)
    : config_(config),
      observer_(step, config.switch_time),
      passivity_(passivity_config(config, step)) {
  const auto check = [](const char* field, double v) {
    if (!std::isfinite(v)) {
      throw std::invalid_argument(std::string(field) + " = " + std::to_string(v) +
                                  ": must be finite");
    }
  };
  check("k_eps0", config.k_eps0);
  check("k_eps1", config.k_eps1);
  check("k_eps2", config.k_eps2);
  check("switch_time", config.switch_time);
  try {
    validate(config.phase_correction);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("phase_correction.") + e.what());
  }
  if (config.switch_time < 0.0) {
    throw std::invalid_argument("switch_time = " + std::to_string(config.switch_time) +
                                ": must be >= 0 s");
  }
}

double Compensator::gain(double t) const noexcept {
  switch (config_.kind) {
    case CompensatorKind::kNone:
    case CompensatorKind::kPassivity:  // force() with the measured force gives its gain
      return 0.0;
    case CompensatorKind::kFixedGain:
      return config_.k_eps0;
    case CompensatorKind::kLinearGain:
      return config_.k_eps0 + config_.k_eps1 * t;
    case CompensatorKind::kSwitching:
      if (t <= config_.switch_time) {
        return config_.k_eps0 + config_.k_eps1 * t;
      }
      return config_.k_eps0 + (config_.bumpless ? config_.k_eps1 * config_.switch_time : 0.0) +
             config_.k_eps2 * observer_.sum();
  }
  return 0.0;
}

double Compensator::force(double t, double velocity_estimate) noexcept {
  last_gain_ = gain(t);
  return last_gain_ * velocity_estimate;
}

double Compensator::force(double t, double velocity_estimate, double measured_force,
                          double model_velocity) noexcept {
  if (config_.kind != CompensatorKind::kPassivity) return force(t, velocity_estimate);
  (void)passivity_.step(model_velocity, -measured_force);
  last_gain_ = -passivity_.damping();
  return last_gain_ * model_velocity;
}

void Compensator::reset() noexcept {
  observer_.reset();
  passivity_.reset();
  last_gain_ = 0.0;
}

}  // namespace hyloop::core
