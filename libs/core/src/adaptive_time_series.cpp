#include "hyloop/core/adaptive_time_series.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;

AdaptiveTimeSeries::AdaptiveTimeSeries(const AdaptiveTimeSeriesConfig& config)
    : config_(config), a_(config.initial) {
  const AdaptiveTimeSeriesConfig& c = config_;
  require(std::isfinite(c.step) && c.step > 0.0, "step", c.step, "must be finite and > 0");
  const double samples = c.window / c.step;
  require(std::isfinite(samples) && samples >= 8.0 && samples <= 1e7, "window", c.window,
          "must hold 8 to 1e7 samples of the step");
  require(c.update_every >= 1, "update_every", c.update_every, "must be >= 1");
  static constexpr const char* kNames[3][4] = {{"initial.a0", "min.a0", "max.a0", "rate_limit.a0"},
                                               {"initial.a1", "min.a1", "max.a1", "rate_limit.a1"},
                                               {"initial.a2", "min.a2", "max.a2", "rate_limit.a2"}};
  for (std::size_t i = 0; i < 3; ++i) {
    require(std::isfinite(c.min[i]), kNames[i][1], c.min[i], "must be finite");
    require(std::isfinite(c.max[i]) && c.max[i] >= c.min[i], kNames[i][2], c.max[i],
            "must be finite and >= the minimum");
    require(c.initial[i] >= c.min[i] && c.initial[i] <= c.max[i], kNames[i][0], c.initial[i],
            "must lie within [min, max]");
    require(std::isfinite(c.rate_limit[i]) && c.rate_limit[i] > 0.0, kNames[i][3], c.rate_limit[i],
            "must be finite and > 0");
  }
  require(std::isfinite(c.adapt_threshold) && c.adapt_threshold >= 0.0, "adapt_threshold",
          c.adapt_threshold, "must be finite and >= 0");
  require(std::isfinite(c.filter_time_constant) && c.filter_time_constant >= 0.0,
          "filter_time_constant", c.filter_time_constant, "must be finite and >= 0");
  n_ = static_cast<std::size_t>(std::llround(samples));
  for (auto* ring : {&u_, &x_, &v_, &acc_}) ring->assign(n_, 0.0);
}

void AdaptiveTimeSeries::observe(double command, double measured) noexcept {
  if (!std::isfinite(command) || !std::isfinite(measured)) return;
  const double t = config_.step;
  // The same filter on both sides of the regression: a linear filter commutes with
  // u = a0·x + a1·ẋ + a2·ẍ, so it removes noise without biasing A.
  if (seen_ == 0 || config_.filter_time_constant <= 0.0) {
    filtered_ = {measured, measured};
    filtered_u_ = {command, command};
  } else {
    const double g = t / (config_.filter_time_constant + t);
    filtered_[0] += g * (measured - filtered_[0]);
    filtered_[1] += g * (filtered_[0] - filtered_[1]);
    filtered_u_[0] += g * (command - filtered_u_[0]);
    filtered_u_[1] += g * (filtered_u_[0] - filtered_u_[1]);
  }
  const double x = filtered_[1];
  const double v = seen_ == 0 ? 0.0 : (x - last_x_) / t;
  const double acc = seen_ <= 1 ? 0.0 : (v - last_v_) / t;
  last_x_ = x;
  last_v_ = v;
  if (++seen_ <= 2) return;  // the differences need two earlier samples
  u_[head_] = filtered_u_[1];
  x_[head_] = x;
  v_[head_] = v;
  acc_[head_] = acc;
  head_ = (head_ + 1) % n_;
  count_ = std::min(count_ + 1, n_);
  if (++since_fit_ >= config_.update_every && count_ == n_) {
    since_fit_ = 0;
    fit();
  }
}

void AdaptiveTimeSeries::fit() noexcept {
  Eigen::Matrix3d m = Eigen::Matrix3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  double x2 = 0.0;
  for (std::size_t i = 0; i < n_; ++i) {
    const Eigen::Vector3d row(x_[i], v_[i], acc_[i]);
    m.noalias() += row * row.transpose();
    b += row * u_[i];
    x2 += x_[i] * x_[i];
  }
  if (std::sqrt(x2 / static_cast<double>(n_)) < config_.adapt_threshold) {
    ++quiet_;
    return;
  }
  const Eigen::Vector3d d = m.diagonal().cwiseSqrt();
  if (!(d.minCoeff() > 0.0) || !d.allFinite()) {
    ++failed_;
    return;
  }
  const Eigen::Matrix3d scaled = d.cwiseInverse().asDiagonal() * m * d.cwiseInverse().asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen;
  eigen.computeDirect(scaled, Eigen::EigenvaluesOnly);  // closed form for 3×3: no allocation
  const Eigen::Vector3d lambda = eigen.eigenvalues();   // ascending
  const Eigen::Vector3d fitted = scaled.ldlt().solve(b.cwiseQuotient(d)).cwiseQuotient(d);
  if (!(lambda(0) >= kMinConditioning * lambda(2)) || !fitted.allFinite()) {
    ++failed_;
    return;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    const double target =
        std::clamp(fitted(static_cast<Eigen::Index>(i)), config_.min[i], config_.max[i]);
    a_[i] += std::clamp(target - a_[i], -config_.rate_limit[i], config_.rate_limit[i]);
  }
  ++fits_;
}

double AdaptiveTimeSeries::command(double x, double v, double a) const noexcept {
  return a_[0] * x + a_[1] * v + a_[2] * a;
}

}  // namespace hyloop::core
