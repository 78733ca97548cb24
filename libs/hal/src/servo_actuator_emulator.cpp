#include "hyloop/hal/servo_actuator_emulator.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "require.hpp"

namespace hyloop::hal {

using detail::require;

namespace {

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }

}  // namespace

ServoActuatorEmulator::ServoActuatorEmulator(const ServoActuatorConfig& config)
    : config_(config), rng_(config.seed), noise_(0.0, 1.0) {
  require(finite_positive(config.step), "step", config.step, "finite and > 0 s");
  require(std::isfinite(config.zeta) && config.zeta >= 0.0, "zeta", config.zeta, "finite and >= 0");
  const auto& v = config.omega_variation;
  if (v.enabled) {
    require(finite_positive(v.omega_min), "omega_variation.omega_min", v.omega_min,
            "finite and > 0 rad/s");
    require(std::isfinite(v.omega_max) && v.omega_max >= v.omega_min, "omega_variation.omega_max",
            v.omega_max, "finite and >= omega_min");
    require(finite_positive(v.period), "omega_variation.period", v.period, "finite and > 0 s");
    require(std::isfinite(v.phase), "omega_variation.phase", v.phase, "finite");
  } else {
    require(finite_positive(config.omega), "omega", config.omega, "finite and > 0 rad/s");
  }
  require(std::isfinite(config.noise_std) && config.noise_std >= 0.0, "noise_std", config.noise_std,
          "finite and >= 0 m");
  require(std::isfinite(config.specimen_stiffness), "specimen_stiffness", config.specimen_stiffness,
          "finite (N/m)");
  require(std::isfinite(config.specimen_damping), "specimen_damping", config.specimen_damping,
          "finite (N*s/m)");
  discretise(omega_at(0.5 * config.step), config.zeta, config.step, a_d_, b_d_);
  reset(0.0);
}

void ServoActuatorEmulator::discretise(double omega, double zeta, double step, Matrix2& a_d,
                                       Vector2& b_d) noexcept {
  // A = [[0, 1], [−ω², −2ζω]]; e^{AΔt} = e^{μΔt}[f·I + g·(A − μI)], μ = −ζω,
  // q² = μ² − det A = ω²(ζ² − 1); f = cosh(qΔt), g = sinh(qΔt)/q (cos/sin when q² < 0).
  const double mu = -zeta * omega;
  const double delta = omega * omega * (zeta * zeta - 1.0) * step * step;  // (qΔt)²
  double f = 0.0;
  double g = 0.0;  // g/Δt
  if (std::abs(delta) < 1e-6) {
    f = 1.0 + delta / 2.0 + delta * delta / 24.0;
    g = 1.0 + delta / 6.0 + delta * delta / 120.0;
  } else if (delta > 0.0) {
    const double x = std::sqrt(delta);
    f = std::cosh(x);
    g = std::sinh(x) / x;
  } else {
    const double x = std::sqrt(-delta);
    f = std::cos(x);
    g = std::sin(x) / x;
  }
  g *= step;
  const double e = std::exp(mu * step);
  Matrix2 a_minus_mu;
  a_minus_mu << -mu, 1.0, -omega * omega, -2.0 * zeta * omega - mu;
  a_d = e * (f * Matrix2::Identity() + g * a_minus_mu);
  // B_d = A⁻¹(A_d − I)B = (A_d − I)·A⁻¹B with A⁻¹B = [−1, 0]ᵀ.
  b_d << 1.0 - a_d(0, 0), -a_d(1, 0);
}

double ServoActuatorEmulator::omega_at(double t) const noexcept {
  const auto& v = config_.omega_variation;
  if (!v.enabled) {
    return config_.omega;
  }
  return 0.5 * (v.omega_max + v.omega_min) +
         0.5 * (v.omega_max - v.omega_min) *
             std::sin(2.0 * std::numbers::pi * t / v.period + v.phase);
}

void ServoActuatorEmulator::reset(double position) noexcept {
  state_ << position, 0.0;
  time_ = 0.0;
  steps_ = 0;
  rng_.seed(config_.seed);
  noise_.reset();
  measurement_ = {};
  measurement_.time = 0.0;
  measurement_.omega = omega_at(0.5 * config_.step);
  measurement_.displacement = position;
  measurement_.true_displacement = position;
  measurement_.force = config_.specimen_stiffness * position;
}

const ServoMeasurement& ServoActuatorEmulator::step(double command) noexcept {
  double omega = config_.omega;
  if (config_.omega_variation.enabled) {
    omega = omega_at(time_ + 0.5 * config_.step);
    discretise(omega, config_.zeta, config_.step, a_d_, b_d_);
  }
  const Vector2 next = a_d_ * state_ + b_d_ * command;
  state_ = next;
  ++steps_;
  time_ = static_cast<double>(steps_) * config_.step;
  measure(omega);
  return measurement_;
}

void ServoActuatorEmulator::measure(double omega) noexcept {
  measurement_.time = time_;
  measurement_.true_displacement = state_(0);
  measurement_.velocity = state_(1);
  measurement_.displacement =
      state_(0) + (config_.noise_std > 0.0 ? config_.noise_std * noise_(rng_) : 0.0);
  measurement_.force =
      config_.specimen_stiffness * state_(0) + config_.specimen_damping * state_(1);
  measurement_.omega = omega;
}

std::shared_ptr<AxisPlant> axis_or_servo(std::shared_ptr<AxisPlant> axis,
                                         const ServoActuatorConfig& servo) {
  if (axis) return axis;
  return std::make_shared<ServoActuatorEmulator>(servo);
}

}  // namespace hyloop::hal
