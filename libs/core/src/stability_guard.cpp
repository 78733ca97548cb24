#include "hyloop/core/stability_guard.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "number_text.hpp"

namespace hyloop::core {
using detail::require;

StabilityGuard::StabilityGuard(const StabilityGuardConfig& c)
    : config_(c), n_(0), tripped_at_(std::numeric_limits<double>::quiet_NaN()) {
  require(std::isfinite(c.step) && c.step > 0.0, "step", c.step, "must be finite and > 0");
  require(std::isfinite(c.window) && c.window / c.step >= 8.0 && c.window / c.step <= 1e6, "window",
          c.window, "must hold 8 to 1e6 steps");
  require(std::isfinite(c.max_tracking_ratio) && c.max_tracking_ratio > 0.0, "max_tracking_ratio",
          c.max_tracking_ratio, "must be finite and > 0");
  require(std::isfinite(c.amplitude_floor) && c.amplitude_floor >= 0.0, "amplitude_floor",
          c.amplitude_floor, "must be finite and >= 0");
  require(c.hold >= 1, "hold", c.hold, "must be >= 1");
  n_ = static_cast<std::size_t>(std::llround(c.window / c.step));
  error2_.assign(n_, 0.0);
  target2_.assign(n_, 0.0);
}

bool StabilityGuard::update(double t, double target, double measured) noexcept {
  if (tripped_) return true;
  if (!std::isfinite(target) || !std::isfinite(measured)) {
    tripped_ = true;
    tripped_at_ = t;
    return true;
  }
  const double e2 = (measured - target) * (measured - target);
  const double x2 = target * target;
  sum_error2_ += e2 - error2_[head_];
  sum_target2_ += x2 - target2_[head_];
  error2_[head_] = e2;
  target2_[head_] = x2;
  head_ = (head_ + 1) % n_;
  count_ = count_ < n_ ? count_ + 1 : n_;
  if (++since_resum_ >= static_cast<std::int64_t>(n_)) {  // no drift of the running sums
    since_resum_ = 0;
    sum_error2_ = sum_target2_ = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      sum_error2_ += error2_[i];
      sum_target2_ += target2_[i];
    }
  }
  if (count_ < n_) return false;
  const double floor2 = config_.amplitude_floor * config_.amplitude_floor;
  if (sum_target2_ / static_cast<double>(n_) < floor2 || sum_target2_ <= 0.0) {
    above_ = 0;
    return false;
  }
  const double ratio = std::sqrt(sum_error2_ / sum_target2_);
  if (ratio > max_ratio_) {
    max_ratio_ = ratio;
    max_ratio_at_ = t;
  }
  above_ = ratio > config_.max_tracking_ratio ? above_ + 1 : 0;
  if (above_ >= config_.hold) {
    tripped_ = true;
    tripped_at_ = t;
  }
  return tripped_;
}

}  // namespace hyloop::core
