#pragma once
// Adaptive time series (ATS) compensation of an actuator's dynamics (Chae, Kazemibidokhti,
// Ricles 2013; issue 13).
//
// The command is a combination of the target's kinematics (displacement, velocity,
// acceleration x_t, ẋ_t, ẍ_t, e.g. from the numerical substructure's integrator):
//
//   u(k) = a0·x_t(k) + a1·ẋ_t(k) + a2·ẍ_t(k)                                    a1 in s, a2 in s²
//
// The coefficients A = [a0 a1 a2]ᵀ are the actuator's inverse, fitted by least squares over a
// moving window of the last N samples: the commands that were sent against the measured
// kinematics they produced,
//
//   u(i) ≈ a0·x_m(i) + a1·ẋ_m(i) + a2·ẍ_m(i),   i = k−N+1 … k      A = (XᵀX)⁻¹·XᵀU
//
// with ẋ_m, ẍ_m the backward differences of the measured displacement. Optionally both x_m and
// u are low-passed first by the same filter, two cascaded one-poles of time constant τ_f
// (x_f(k) = x_f(k−1) + (T/(τ_f+T))·(x − x_f(k−1)), twice): a linear filter applied to both
// sides commutes with the model, so it takes the sensor noise out of the differences (whose
// noise would otherwise bias a1 and a2 towards 0: errors in the regressors) without biasing A.
// A pure delay τ gives a0 ≈ 1, a1 ≈ τ, a2 ≈ τ²/2 (Taylor); a first-order lag of time constant τ
// gives a0 = 1, a1 = τ, a2 = 0.
// The fit is redone every `update_every` samples, and only
//   - once the window is full and the RMS of the measured displacement over it exceeds
//     `adapt_threshold` (below it the motion is too small to identify: A stays);
//   - when XᵀX, its columns scaled to a unit diagonal, is well conditioned (λ_min/λ_max ≥
//     kMinConditioning) and the solution finite; otherwise the previous A is kept (a failed
//     solve, counted).
// Each new coefficient is clamped to its range and moves at most `rate_limit` per update.
// Published values (Chae et al., 2048 Hz): a0 ∈ [0.9, 1.1], a1 ∈ [0, 0.06] s,
// a2 ∈ [0, 0.0032] s², window 1 s, update every 16 samples: the defaults here. The per-update
// rate limits are ours (the paper's were not available to us): 0.01, 0.001 s, 5e-5 s².
//
// Units: displacement in any unit (m), time in s. step() and command() are RT-safe (fixed-size
// storage, no allocation, no exception); the constructor validates and allocates.

#include <array>
#include <cstdint>
#include <vector>

namespace hyloop::core {

struct AdaptiveTimeSeriesConfig {
  double step = 1.0 / 2048.0;                    ///< T, s; > 0
  double window = 1.0;                           ///< N·T, s; at least 8 samples
  int update_every = 16;                         ///< samples between fits; ≥ 1
  std::array<double, 3> initial{1.0, 0.0, 0.0};  ///< A before the first fit, within the ranges
  std::array<double, 3> min{0.9, 0.0, 0.0};      ///< a0 [-], a1 [s], a2 [s²]
  std::array<double, 3> max{1.1, 0.06, 0.0032};
  std::array<double, 3> rate_limit{0.01, 0.001, 5e-5};  ///< largest |Δa_i| per update; > 0
  double adapt_threshold = 1e-4;      ///< RMS of x_m over the window below which A stays (≥ 0)
  double filter_time_constant = 0.0;  ///< τ_f, s; 0: u and x_m unfiltered
};

class AdaptiveTimeSeries {
 public:
  /// Smallest ratio of the least to the largest eigenvalue of XᵀX, its columns scaled to a unit
  /// diagonal, that a fit accepts (the reciprocal condition number).
  static constexpr double kMinConditioning = 1e-9;

  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit AdaptiveTimeSeries(const AdaptiveTimeSeriesConfig& config);

  /// Records the command u(k) just sent and the displacement x_m(k) it produced (measured at the
  /// end of the cycle), and refits A when due. RT-safe.
  void observe(double command, double measured) noexcept;
  /// u = a0·x_t + a1·ẋ_t + a2·ẍ_t with the current A. RT-safe.
  [[nodiscard]] double command(double x, double v, double a) const noexcept;

  [[nodiscard]] const std::array<double, 3>& coefficients() const noexcept { return a_; }
  [[nodiscard]] std::uint64_t fits() const noexcept { return fits_; }
  /// Fits that kept the previous A (ill-conditioned or not finite).
  [[nodiscard]] std::uint64_t failed_fits() const noexcept { return failed_; }
  /// Updates skipped because the motion was below adapt_threshold.
  [[nodiscard]] std::uint64_t quiet_updates() const noexcept { return quiet_; }
  [[nodiscard]] const AdaptiveTimeSeriesConfig& config() const noexcept { return config_; }

 private:
  void fit() noexcept;

  AdaptiveTimeSeriesConfig config_;
  std::size_t n_;                        // window, samples
  std::vector<double> u_, x_, v_, acc_;  // rings of the window (sized once)
  std::size_t head_ = 0;                 // next slot
  std::size_t count_ = 0;                // samples in the window
  std::int64_t since_fit_ = 0;
  std::array<double, 2> filtered_{}, filtered_u_{};  // the two stages for x_m and u
  double last_x_ = 0.0, last_v_ = 0.0;
  std::int64_t seen_ = 0;
  std::array<double, 3> a_;
  std::uint64_t fits_ = 0, failed_ = 0, quiet_ = 0;
};

}  // namespace hyloop::core
