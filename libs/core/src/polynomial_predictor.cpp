#include "hyloop/core/polynomial_predictor.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {

void validate(const PolynomialPredictorConfig& c) {
  if (c.order < 0) {
    throw std::invalid_argument("order = " + std::to_string(c.order) + ": must be >= 0");
  }
  if (c.points <= c.order || c.points > PolynomialPredictor::kMaxPoints) {
    throw std::invalid_argument(
        "points = " + std::to_string(c.points) + ": must be in [order + 1, " +
        std::to_string(PolynomialPredictor::kMaxPoints) + "] = [" + std::to_string(c.order + 1) +
        ", " + std::to_string(PolynomialPredictor::kMaxPoints) + "]");
  }
  if (c.steps_ahead < 1) {
    throw std::invalid_argument("steps_ahead = " + std::to_string(c.steps_ahead) +
                                ": must be >= 1 (P = 0 predicts nothing)");
  }
}

}  // namespace

std::vector<double> PolynomialPredictor::compute_weights(const PolynomialPredictorConfig& config) {
  validate(config);
  const int n = config.points;
  const int cols = config.order + 1;
  // Time in steps, scaled so that the fitted window spans [−1, 0].
  const double scale = n > 1 ? static_cast<double>(n - 1) : 1.0;
  Eigen::MatrixXd x(n, cols);
  for (int i = 0; i < n; ++i) {
    const double t = -static_cast<double>(i) / scale;
    double p = 1.0;
    for (int k = 0; k < cols; ++k) {
      x(i, k) = p;
      p *= t;
    }
  }
  Eigen::RowVectorXd xp(cols);
  const double tp = static_cast<double>(config.steps_ahead) / scale;
  double p = 1.0;
  for (int k = 0; k < cols; ++k) {
    xp(k) = p;
    p *= tp;
  }
  // ā = X_P (XᵀX)⁻¹Xᵀ, i.e. the least-squares solution X a = Z applied to each unit sample.
  const Eigen::MatrixXd pinv =
      x.colPivHouseholderQr().solve(Eigen::MatrixXd::Identity(n, n));  // (N+1) × n
  const Eigen::RowVectorXd w = xp * pinv;
  return {w.data(), w.data() + n};
}

PolynomialPredictor::PolynomialPredictor(const PolynomialPredictorConfig& config, double initial)
    : config_(config),
      weights_(compute_weights(config)),
      history_(static_cast<std::size_t>(config.points), initial) {}

double PolynomialPredictor::step(double sample) noexcept {
  head_ = (head_ + 1) % history_.size();
  history_[head_] = sample;
  return prediction();
}

double PolynomialPredictor::prediction() const noexcept {
  const std::size_t n = history_.size();
  double z = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    z += weights_[i] * history_[(head_ + n - i) % n];
  }
  return z;
}

void PolynomialPredictor::reset(double value) noexcept {
  std::fill(history_.begin(), history_.end(), value);
  head_ = 0;
}

}  // namespace hyloop::core
