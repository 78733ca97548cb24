#include "hyloop/core/tracking_differentiator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {
double sign(double v) noexcept { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }
}  // namespace

TrackingDifferentiator::TrackingDifferentiator(const TrackingDifferentiatorConfig& config)
    : config_(config) {
  if (!std::isfinite(config.step) || config.step <= 0.0) {
    throw std::invalid_argument("step = " + std::to_string(config.step) + ": must be > 0");
  }
  if (!std::isfinite(config.r) || config.r <= 0.0) {
    throw std::invalid_argument("r = " + std::to_string(config.r) + ": must be > 0");
  }
  if (!std::isfinite(config.h) || config.h < config.step) {
    throw std::invalid_argument("h = " + std::to_string(config.h) +
                                ": must be finite and >= the step " + std::to_string(config.step));
  }
}

void TrackingDifferentiator::reset(double x, double v) noexcept {
  x1_ = x;
  x2_ = v;
}

double TrackingDifferentiator::fhan(double measured) const noexcept {
  const double r = config_.r;
  const double h = config_.h;
  const double d = r * h;
  const double d0 = d * h;
  const double y = x1_ - measured + h * x2_;
  const double a0 = std::sqrt(d * d + 8.0 * r * std::abs(y));
  const double a = std::abs(y) > d0 ? x2_ + 0.5 * (a0 - d) * sign(y) : x2_ + y / h;
  return std::abs(a) > d ? -r * sign(a) : -r * a / d;
}

double TrackingDifferentiator::update(double measured) noexcept {
  const double u = fhan(measured);
  x1_ += config_.step * x2_;
  x2_ += config_.step * u;
  return x2_;
}

}  // namespace hyloop::core
