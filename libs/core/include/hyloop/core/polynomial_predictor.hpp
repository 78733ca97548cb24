#pragma once
// Polynomial forward prediction (FCU paper §6, Eq. 9–23; Horiuchi; Wallace et al.).
//
// A polynomial of degree N is fitted by least squares to the last n samples Z_0 (newest), Z_1, …,
// Z_{n−1} at times t_i = −i·Δt and evaluated P steps ahead:
//
//   Z′ = Σ_{i=0}^{n−1} ā_i·Z_i,     ā = X_P·(XᵀX)⁻¹Xᵀ                          (Eq. 9, 23)
//   X = [t_i^k]  (n × (N+1)),       X_P = [1, P·Δt, …, (P·Δt)^N]               (Eq. 13, 19)
//
// The weights ā are independent of Δt and computed once at construction (time is normalised to
// steps, and scaled by n−1 for conditioning). n = 3, N = 2 gives 3, −3, 1 for P = 1, 6, −8, 3 for
// P = 2 and 15 931, −31 683, 15 753 for P = 177 (the paper's 0.177 s at 1 ms). A polynomial of
// degree ≤ N is predicted exactly. Units are those of the signal.

#include <cstddef>
#include <span>
#include <vector>

namespace hyloop::core {

struct PolynomialPredictorConfig {
  int order = 2;        ///< N ≥ 0, polynomial degree
  int points = 3;       ///< n > N, samples fitted (at most kMaxPoints)
  int steps_ahead = 1;  ///< P ≥ 1, steps predicted ahead
};

class PolynomialPredictor {
 public:
  static constexpr int kMaxPoints = 64;

  /// Computes the weights. Not RT-safe (allocates).
  /// @throws std::invalid_argument naming `order`, `points` or `steps_ahead` when out of range.
  explicit PolynomialPredictor(const PolynomialPredictorConfig& config, double initial = 0.0);

  /// Pushes the newest sample Z_0 and returns the prediction Z′ of the value P steps ahead.
  /// Before n samples have been pushed the missing older samples read as the initial value.
  /// RT-safe: no allocation, no exception.
  double step(double sample) noexcept;

  /// Prediction from the samples pushed so far (the value step() last returned). RT-safe.
  [[nodiscard]] double prediction() const noexcept;

  /// Fills the history with `value` (a bumpless start). RT-safe.
  void reset(double value) noexcept;

  /// ā_0 … ā_{n−1}: weight of Z_i, Z_0 the newest sample.
  [[nodiscard]] std::span<const double> weights() const noexcept { return weights_; }
  [[nodiscard]] const PolynomialPredictorConfig& config() const noexcept { return config_; }

  /// The weights alone (used by the constructor; not RT-safe).
  static std::vector<double> compute_weights(const PolynomialPredictorConfig& config);

 private:
  PolynomialPredictorConfig config_;
  std::vector<double> weights_;
  std::vector<double> history_;  // ring buffer of the last n samples
  std::size_t head_ = 0;         // index of the newest sample
};

}  // namespace hyloop::core
