#include "hyloop/core/adaptive_model_based.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;

AdaptiveModelBased::AdaptiveModelBased(const AdaptiveModelBasedConfig& config)
    : config_(config), a_(config.initial) {
  const AdaptiveModelBasedConfig& c = config_;
  require(std::isfinite(c.step) && c.step > 0.0, "step", c.step, "must be finite and > 0");
  static constexpr const char* kNames[4][4] = {{"initial.a0", "min.a0", "max.a0", "gain.a0"},
                                               {"initial.a1", "min.a1", "max.a1", "gain.a1"},
                                               {"initial.a2", "min.a2", "max.a2", "gain.a2"},
                                               {"initial.a3", "min.a3", "max.a3", "gain.a3"}};
  for (std::size_t i = 0; i < 4; ++i) {
    require(std::isfinite(c.min[i]), kNames[i][1], c.min[i], "must be finite");
    require(std::isfinite(c.max[i]) && c.max[i] >= c.min[i], kNames[i][2], c.max[i],
            "must be finite and >= the minimum");
    require(c.initial[i] >= c.min[i] && c.initial[i] <= c.max[i], kNames[i][0], c.initial[i],
            "must lie within [min, max]");
    require(std::isfinite(c.gain[i]) && c.gain[i] >= 0.0 && c.gain[i] * c.step <= 0.1, kNames[i][3],
            c.gain[i], "must be finite, >= 0 and <= 0.1/step");
  }
  require(c.filter_cutoff > 0.0 && c.filter_cutoff < 0.25 / c.step, "filter_cutoff",
          c.filter_cutoff, "must be in (0, 0.25/step)");
  const double samples = c.power_time_constant / c.step;
  require(std::isfinite(samples) && samples >= 8.0 && samples <= 1e9, "power_time_constant",
          c.power_time_constant, "must hold 8 to 1e9 samples of the step");
  require(std::isfinite(c.adapt_threshold) && c.adapt_threshold >= 0.0, "adapt_threshold",
          c.adapt_threshold, "must be finite and >= 0");

  window_ = static_cast<std::int64_t>(std::ceil(samples));
  // Butterworth, bilinear transform pre-warped at f_c.
  const double k = std::tan(std::numbers::pi * c.filter_cutoff * c.step);
  const double norm = 1.0 / (1.0 + std::numbers::sqrt2 * k + k * k);
  b_ = {k * k * norm, 2.0 * k * k * norm, k * k * norm, 2.0 * (k * k - 1.0) * norm,
        (1.0 - std::numbers::sqrt2 * k + k * k) * norm};
  const double omega_r = 2.0 * std::numbers::pi * c.filter_cutoff;
  for (std::size_t i = 0; i < 4; ++i) {
    floor_[i] = kPowerFloor * std::pow(omega_r, 2.0 * static_cast<double>(i));
  }
}

double AdaptiveModelBased::filter(FilterState& s, double x) const noexcept {
  const double y = b_[0] * x + s.s1;
  s.s1 = b_[1] * x - b_[3] * y + s.s2;
  s.s2 = b_[2] * x - b_[4] * y;
  return y;
}

double AdaptiveModelBased::command(double target) noexcept {
  if (!std::isfinite(target)) {
    ++rejected_;
    return last_u_;
  }
  if (!started_) {
    history_.fill(target);
    started_ = true;
  }
  const double t = config_.step;
  const auto& [h1, h2, h3] = history_;
  phi_ = {target, (target - h1) / t, (target - 2.0 * h1 + h2) / (t * t),
          (target - 3.0 * h1 + 3.0 * h2 - h3) / (t * t * t)};
  history_ = {target, h1, h2};
  target_ = target;
  open_ = true;
  last_u_ = a_[0] * phi_[0] + a_[1] * phi_[1] + a_[2] * phi_[2] + a_[3] * phi_[3];
  return last_u_;
}

void AdaptiveModelBased::observe(double measured) noexcept {
  if (!std::isfinite(measured) || !open_) {
    ++rejected_;
    return;
  }
  open_ = false;
  if (!config_.adapt) return;
  const double t = config_.step;
  const double alpha = t / config_.power_time_constant;
  const double e = filter(state_[0], target_ - measured);
  std::array<double, 4> phi{};
  for (std::size_t i = 0; i < 4; ++i) {
    phi[i] = filter(state_[i + 1], phi_[i]);
    power_[i] += alpha * (phi[i] * phi[i] - power_[i]);
  }
  if (++paired_ < window_) return;
  if (!(power_[0] > 0.0) || std::sqrt(power_[0]) < config_.adapt_threshold) {
    ++quiet_;
    return;
  }
  for (std::size_t i = 0; i < 4; ++i) {
    const double step = config_.gain[i] * t * e * phi[i] / (power_[i] + floor_[i] * power_[0]);
    if (std::isfinite(step)) a_[i] = std::clamp(a_[i] + step, config_.min[i], config_.max[i]);
  }
  ++updates_;
}

}  // namespace hyloop::core
