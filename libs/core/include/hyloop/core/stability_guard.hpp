#pragma once
// A stability guard (issue 13 §3): an online monitor that says when a hybrid loop is leaving its
// target, so the run can stop (the actuator ramped to rest by the safety layer) before the
// response grows past what the structure would do.
//
// Over a sliding window of N = window/T samples of the target x_t (what the rig should follow:
// the numerical substructure's interface displacement) and the measured x_m:
//
//   ρ(k) = √(Σ (x_m − x_t)²) / √(Σ x_t²)          the windowed tracking-error ratio
//
// and the guard trips when ρ > `max_tracking_ratio` for `hold` consecutive samples while the
// window's RMS of x_t is at least `amplitude_floor` (below it the ratio is noise over nothing).
// A loop made unstable by its delay (negative damping from a lagging specimen force) tracks
// with an error ratio near 2·sin(π·f·τ) before its amplitude grows: at the benchmark's 3.6 Hz
// a 25 ms lag gives 0.56, a compensated loop (≤ 5 ms) ≤ 0.11. Trips are latched.
// Also tracked for the summary: the largest ρ seen (above the floor) and when it was.
//
// Units: x in any unit (m), time in s. update() is RT-safe (a fixed ring sized at
// construction, no allocation, no exception); a non-finite sample trips the guard.

#include <cstdint>
#include <vector>

namespace hyloop::core {

struct StabilityGuardConfig {
  double step = 1.0 / 4096.0;       ///< T, s; > 0
  double window = 0.25;             ///< s; 8 to 1e6 samples
  double max_tracking_ratio = 0.3;  ///< ρ above which the guard counts; > 0
  double amplitude_floor = 5e-4;    ///< RMS of x_t below which ρ is not judged; ≥ 0
  int hold = 1;                     ///< consecutive samples above the limit; ≥ 1
};

class StabilityGuard {
 public:
  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit StabilityGuard(const StabilityGuardConfig& config);

  /// One sample at time t (s); true once the guard has tripped (latched). RT-safe.
  bool update(double t, double target, double measured) noexcept;

  [[nodiscard]] bool tripped() const noexcept { return tripped_; }
  /// The time of the trip, s (NaN while not tripped).
  [[nodiscard]] double tripped_at() const noexcept { return tripped_at_; }
  /// The largest ρ judged so far (above the amplitude floor; 0 before any).
  [[nodiscard]] double max_ratio() const noexcept { return max_ratio_; }
  [[nodiscard]] double max_ratio_at() const noexcept { return max_ratio_at_; }
  [[nodiscard]] const StabilityGuardConfig& config() const noexcept { return config_; }

 private:
  StabilityGuardConfig config_;
  std::size_t n_;
  std::vector<double> error2_, target2_;  // the window's squares (ring)
  std::size_t head_ = 0, count_ = 0;
  double sum_error2_ = 0.0, sum_target2_ = 0.0;
  std::int64_t since_resum_ = 0;
  int above_ = 0;
  bool tripped_ = false;
  double tripped_at_;
  double max_ratio_ = 0.0, max_ratio_at_ = 0.0;
};

}  // namespace hyloop::core
