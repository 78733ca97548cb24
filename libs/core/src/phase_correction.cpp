#include "hyloop/core/phase_correction.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {
using detail::require;

void validate(const PhaseCorrectionConfig& c) {
  require(std::isfinite(c.k_x_max) && c.k_x_max >= 0.0, "k_x_max_n_per_m", c.k_x_max,
          "must be finite and >= 0 N/m");
  require(std::isfinite(c.k_x_initial) && std::abs(c.k_x_initial) <= c.k_x_max,
          "k_x_initial_n_per_m", c.k_x_initial, "must be finite with |value| <= k_x_max_n_per_m");
  require(std::isfinite(c.rate_max) && c.rate_max > 0.0, "rate_max_n_per_m_s", c.rate_max,
          "must be finite and > 0 N/m/s");
  require(std::isfinite(c.bandwidth) && c.bandwidth > 0.0 && c.bandwidth <= 100.0,
          "bandwidth_rad_s", c.bandwidth, "must be in (0, 100] rad/s");
  require(std::isfinite(c.damping) && c.damping > 0.0 && c.damping <= 10.0, "damping", c.damping,
          "must be in (0, 10]");
  require(std::isfinite(c.start_time) && c.start_time >= 0.0, "start_time_s", c.start_time,
          "must be finite and >= 0 s");
  require(std::isfinite(c.min_amplitude) && c.min_amplitude >= 0.0, "min_amplitude_m",
          c.min_amplitude, "must be finite and >= 0 m");
}

double model_stiffness_correction(const PhaseCorrectionModel& m) {
  using C = std::complex<double>;
  require(std::isfinite(m.mass) && m.mass > 0.0, "mass", m.mass, "must be finite and > 0 kg");
  require(std::isfinite(m.stiffness) && m.stiffness > 0.0, "stiffness", m.stiffness,
          "must be finite and > 0 N/m");
  require(std::isfinite(m.damping), "damping", m.damping, "must be finite");
  require(std::isfinite(m.step) && m.step > 0.0, "step", m.step, "must be finite and > 0 s");
  require(std::isfinite(m.sensor_delay_steps) && m.sensor_delay_steps >= 0.0, "sensor_delay_steps",
          m.sensor_delay_steps, "must be finite and >= 0");
  require(m.hold_steps >= 1, "hold_steps", m.hold_steps, "must be >= 1");
  require(std::isfinite(m.k_h), "k_h", m.k_h, "must be finite");
  require(std::isfinite(m.td.h) && m.td.h > 0.0, "td.h", m.td.h, "must be finite and > 0 s");
  const double w = std::sqrt(m.stiffness / m.mass);
  const double t = m.step;
  const C jw(0.0, w);
  const C z = std::exp(jw * t);
  // P = X_R/x: the hold's mean lag of (h−1)/2 steps; a robot sampled at the end of the step
  // under a held input adds its zero-order-hold half-step lag minus one step (a half-step lead).
  const bool robot = !m.robot_poles.empty() || !m.robot_zeros.empty() || m.robot_gain != 1.0;
  C p = std::exp(-jw * (0.5 * static_cast<double>(m.hold_steps - 1) * t));
  if (robot) {
    C g = m.robot_gain;
    for (const C& zero : m.robot_zeros) g *= jw - zero;
    for (const C& pole : m.robot_poles) g /= jw - pole;
    p *= g * std::exp(jw * (0.5 * t));
  }
  const C d = std::exp(-jw * (m.sensor_delay_steps * t));
  // The tracking differentiator in its linear region: u = −(x1 − X)/h² − 2·x2/h,
  // x1' = x1 + T·x2, x2' = x2 + T·u; it returns x2' for X[k]: V(z) = z·[0 1](zI − A)⁻¹B.
  const double h = m.td.h;
  const double a11 = 1.0, a12 = t, a21 = -t / (h * h), a22 = 1.0 - 2.0 * t / h;
  const double b2 = t / (h * h);
  const C det = (z - a11) * (z - a22) - a12 * a21;
  const C x2 = (z - a11) * b2 / det;  // second row of (zI − A)⁻¹·B
  const C v = z * x2;
  const double numerator =
      -m.stiffness + ((m.stiffness + jw * m.damping) * d * p).real() - m.k_h * (v * p).real();
  require(std::abs(p.real()) > 1e-6, "robot", p.real(), "Re[X_R/x] at omega0 is about 0");
  const double k_x = numerator / p.real();
  require(std::isfinite(k_x), "k_x", k_x, "not finite");
  return k_x;
}

double analysis_stiffness_correction(const PhaseCorrectionConfig& config, double model_k_x) {
  if (!config.enabled) return 0.0;
  return std::clamp(model_k_x, -config.k_x_max, config.k_x_max);
}

double phase_against_twin(double x, double v, double x_ideal, double v_ideal,
                          double omega0) noexcept {
  const double im = (x * v_ideal - v * x_ideal) / omega0;
  const double re = x * x_ideal + v * v_ideal / (omega0 * omega0);
  if (im == 0.0 && re == 0.0) return 0.0;
  return std::atan2(im, re);
}

PhaseCorrection::PhaseCorrection(const PhaseCorrectionConfig& config, double omega0,
                                 double stiffness, double step)
    : config_(config), omega0_(omega0), step_(step) {
  validate(config);
  require(std::isfinite(omega0) && omega0 > 0.0, "omega0", omega0, "must be finite and > 0 rad/s");
  require(std::isfinite(stiffness) && stiffness > 0.0, "stiffness", stiffness,
          "must be finite and > 0 N/m");
  require(std::isfinite(step) && step > 0.0, "step", step, "must be finite and > 0 s");
  const double c = omega0 / (2.0 * stiffness);
  k_p_ = 2.0 * config.damping * config.bandwidth / c;
  k_i_ = config.bandwidth * config.bandwidth / c;
  reset();
}

void PhaseCorrection::reset() noexcept {
  k_x_ = config_.enabled ? config_.k_x_initial : 0.0;
  integral_ = 0.0;
  phase_ = 0.0;
}

double PhaseCorrection::update(double t, double x, double v, double x_ideal,
                               double v_ideal) noexcept {
  if (!config_.enabled) return 0.0;
  const double w2 = omega0_ * omega0_;
  const double a2 = x * x + v * v / w2;
  const double ai2 = x_ideal * x_ideal + v_ideal * v_ideal / w2;
  const double floor2 = config_.min_amplitude * config_.min_amplitude;
  phase_ = phase_against_twin(x, v, x_ideal, v_ideal, omega0_);
  if (t < config_.start_time || !(a2 > floor2) || !(ai2 > floor2) || !std::isfinite(phase_)) {
    return k_x_;
  }
  integral_ += k_i_ * phase_ * step_;
  const double target = config_.k_x_initial + k_p_ * phase_ + integral_;
  const double max_step = config_.rate_max * step_;
  const double next = std::clamp(k_x_ + std::clamp(target - k_x_, -max_step, max_step),
                                 -config_.k_x_max, config_.k_x_max);
  // Anti-windup: the integral is what the limited output can follow.
  if (next != target) {
    integral_ = next - config_.k_x_initial - k_p_ * phase_;
  }
  k_x_ = next;
  return k_x_;
}

}  // namespace hyloop::core
