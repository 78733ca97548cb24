#pragma once
// Tracking metrics of a transfer system: how well the measured signal x_m follows its command x_c.
//
// Mercan's tracking indicator (FCU paper Eq. 27–29), computed as written, with A_0 = TA_0 = 0:
//
//   A_{j+1}  = A_j  + ½(x_c[j+1] + x_c[j])·(x_m[j+1] − x_m[j])                         (Eq. 28)
//   TA_{j+1} = TA_j + ½(x_m[j+1] + x_m[j])·(x_c[j+1] − x_c[j])                         (Eq. 29)
//   TI_{j+1} = ½(A_{j+1} − TA_{j+1})                                                    (Eq. 27)
//
// TI is the signed area enclosed by the (x_c, x_m) path (unit²). For x_c = a·sin ωt and a
// measurement lagging by τ, x_m = a·sin ω(t − τ), TI grows by π·a²·sin(ωτ) per period: positive
// for a lag, negative for a lead (DESIGN.md §7; the FCU paper's text reads its Figure 12 the other
// way round).
//
// Delay estimate: the lag k (steps, positive when x_m lags x_c) maximising the normalised
// cross-correlation r(k) of x_c[i] and x_m[i+k] over the N − |k| overlapping samples (Pearson:
// means and variances of the overlapping segments, so r = 1 exactly at the lag of a delayed copy
// and the window's edges do not bias the peak), refined below a step by the vertex of the
// parabola through r(k−1), r(k), r(k+1).
//
// Tracking errors with e = x_m − x_c: RMS √(mean e²), peak max|e|, and normalised versions
// NRMS = RMS/(max x_c − min x_c) and normalised peak = peak/max|x_c| (dimensionless).

#include <cstddef>
#include <span>

namespace hyloop::core {

/// Streaming tracking indicator. RT-safe (no allocation, no exception).
class TrackingIndicator {
 public:
  /// Adds the sample pair of step j+1 and returns TI_{j+1}; the first pair only starts the sums.
  double update(double command, double measured) noexcept;
  void reset() noexcept;

  [[nodiscard]] double value() const noexcept { return 0.5 * (area_ - complementary_area_); }
  [[nodiscard]] double area() const noexcept { return area_; }                              ///< A
  [[nodiscard]] double complementary_area() const noexcept { return complementary_area_; }  ///< TA

 private:
  bool started_ = false;
  double command_ = 0.0;
  double measured_ = 0.0;
  double area_ = 0.0;
  double complementary_area_ = 0.0;
};

struct TrackingErrors {
  std::size_t samples = 0;
  double rms = 0.0;              ///< √(mean e²), unit of the signal
  double peak = 0.0;             ///< max|e|
  double command_range = 0.0;    ///< max x_c − min x_c
  double command_peak = 0.0;     ///< max|x_c|
  double nrms = 0.0;             ///< rms/command_range (0 if the range is 0)
  double normalised_peak = 0.0;  ///< peak/command_peak (0 if the peak is 0)
};

/// Streaming RMS and peak tracking errors. RT-safe.
class TrackingErrorAccumulator {
 public:
  void update(double command, double measured) noexcept;
  void reset() noexcept { *this = TrackingErrorAccumulator{}; }
  [[nodiscard]] TrackingErrors result() const noexcept;

 private:
  std::size_t samples_ = 0;
  double sum_squares_ = 0.0;
  double peak_ = 0.0;
  double command_min_ = 0.0;
  double command_max_ = 0.0;
  double command_peak_ = 0.0;
};

struct DelayEstimate {
  double lag_steps = 0.0;    ///< sub-step lag, positive when the measurement lags
  int integer_lag = 0;       ///< lag of the largest r(k)
  double correlation = 0.0;  ///< r at integer_lag (normalised, ≤ 1)
  bool at_boundary = false;  ///< peak at ±max_lag: widen the search (no sub-step refinement)
  [[nodiscard]] double delay(double step) const noexcept { return lag_steps * step; }  ///< s
};

/// Cross-correlation delay estimate over lags in [−max_lag_steps, max_lag_steps].
/// Not RT (O(N·max_lag)), but does not allocate.
/// @throws std::invalid_argument when the sizes differ, max_lag_steps is not in [1, N − 2], or a
/// signal is constant or not finite.
DelayEstimate estimate_delay(std::span<const double> command, std::span<const double> measured,
                             int max_lag_steps);

/// Final TI over whole series (same sizes). @throws std::invalid_argument if the sizes differ.
double tracking_indicator(std::span<const double> command, std::span<const double> measured);

/// Errors over whole series. @throws std::invalid_argument if the sizes differ or are empty.
TrackingErrors tracking_errors(std::span<const double> command, std::span<const double> measured);

}  // namespace hyloop::core
