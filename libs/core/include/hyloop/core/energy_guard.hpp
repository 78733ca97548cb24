#pragma once
// An energy (passivity) guard (issue 13 §3): an online monitor for a hybrid loop that has no
// energy source of its own, so that its observed energy can only decay. A delay in the loop
// makes the rig look active (negative damping); the loop's energy then grows past where it
// started, and that is the criterion:
//
//   r(k) = E(k) / E_ref,   E_ref = max(E(0), energy_floor)
//
// with E(k) the energy the caller observes (SITS: the target's ½·m·v² + ½·K_tc·x²) and E(0) the
// first sample's. The guard trips when r > `max_energy_ratio` for `hold` consecutive samples.
// Since ½·K·x² ≤ E, a loop stopped at r ≤ R never reached more than √R times the amplitude of
// its initial energy, √(2·E(0)/K): R = 1.2 bounds it by 1.095×. The floor keeps a loop that
// starts at rest from tripping on its first joule. Trips are latched; the largest r seen and
// when it was are kept for the summary.
//
// Units: E in J, time in s. update() is RT-safe (no allocation, no exception); a non-finite
// energy trips the guard.

namespace hyloop::core {

struct EnergyGuardConfig {
  double max_energy_ratio = 1.2;  ///< r above which the guard counts; finite and > 1
  double energy_floor = 1e-3;     ///< J; the least E_ref; finite and > 0
  int hold = 1;                   ///< consecutive samples above the limit; ≥ 1
};

class EnergyGuard {
 public:
  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit EnergyGuard(const EnergyGuardConfig& config);

  /// One sample of the observed energy at time t (s); true once the guard has tripped
  /// (latched). The first sample sets E_ref. RT-safe.
  bool update(double t, double energy) noexcept;

  [[nodiscard]] bool tripped() const noexcept { return tripped_; }
  /// The time of the trip, s (NaN while not tripped).
  [[nodiscard]] double tripped_at() const noexcept { return tripped_at_; }
  /// The largest r so far (0 before the first sample) and its time, s.
  [[nodiscard]] double max_ratio() const noexcept { return max_ratio_; }
  [[nodiscard]] double max_ratio_at() const noexcept { return max_ratio_at_; }
  /// E_ref, J (NaN before the first sample).
  [[nodiscard]] double reference() const noexcept { return reference_; }
  [[nodiscard]] const EnergyGuardConfig& config() const noexcept { return config_; }

 private:
  EnergyGuardConfig config_;
  double reference_;
  int above_ = 0;
  bool tripped_ = false;
  double tripped_at_;
  double max_ratio_ = 0.0, max_ratio_at_ = 0.0;
};

}  // namespace hyloop::core
