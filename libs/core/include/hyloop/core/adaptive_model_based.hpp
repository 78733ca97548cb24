#pragma once
// Adaptive model-based (AMB) compensation of an actuator's dynamics (Fermandois & Spencer 2017,
// "Model-based framework for multi-axial real-time hybrid simulation testing", Earthq. Eng. Eng.
// Vib. 16(4); Fermandois 2019, MSSP, applied to the vRTHS benchmark; issue 13 §2).
//
// The command is a polynomial (feed-forward) inverse of a low-order actuator model, evaluated on
// the target displacement x_t and its backward differences (causal, one call per cycle):
//
//   u(k) = a0·x_t(k) + a1·∇x_t(k)/T + a2·∇²x_t(k)/T² + a3·∇³x_t(k)/T³         a1 s, a2 s², a3 s³
//   ∇x(k) = x(k) − x(k−1),  ∇²x(k) = x(k) − 2x(k−1) + x(k−2),
//   ∇³x(k) = x(k) − 3x(k−1) + 3x(k−2) − x(k−3)
//
// For an actuator G(s) = 1/(b0 + b1·s + b2·s² + b3·s³) the continuous inverse is a_i = b_i: a0 is
// 1/DC gain, a first-order lag τ gives a1 = τ, a second-order plant (ω_n, ζ) a1 = 2ζ/ω_n and
// a2 = 1/ω_n². The backward differences lag: for a cubic x, ∇x/T = ẋ − (T/2)·ẍ + (T²/6)·x⃛ and
// ∇²x/T² = ẍ − T·x⃛ (∇³x/T³ = x⃛ exactly). Before three targets have been seen the missing ones
// are taken equal to the first target (no kick at start).
//
// Cycle convention. command(x_t(k)) is called once in cycle k and its u(k) is sent; observe(x_m(k))
// then gives the displacement measured at the end of that cycle (read before the next command):
// x_m(k) pairs with the target x_t(k). A held command reaching x_t(k) by the end of its cycle is
// the goal. With a zero-order hold of u(k) over the cycle and a first-order lag, the exact sampled
// inverse is a0 = 1, a1 = T·β/(1 − β) = τ − T/2 + O(T²/τ), β = exp(−T/τ).
//
// Adaptation (what is implemented, and why). The papers' own adaptive law (their parametric model
// and filter) was not available to us; the public description (Gálmez & Fermandois's benchmark
// code) is "a gradient adaptive law ... with an adaptive gain matrix Γ". Ours is a gradient
// (MIT-rule) descent of ½·e² for the tracking error e(k) = x_t(k) − x_m(k). Its exact gradient is
// −e·G·∇ⁱx_t/Tⁱ (G the plant's sensitivity, unknown); we use the target derivatives themselves,
// φ_i = ∇ⁱx_t/Tⁱ (G taken as 1 in the band of the motion). Error and regressors pass through the
// same low-pass filter F (second-order Butterworth, cut-off f_c, bilinear, pre-warped at f_c):
//
//   e_f = F·e,   φ_f,i = F·φ_i,   P_i(k) = P_i(k−1) + (T/τ_p)·(φ_f,i² − P_i(k−1))
//   a_i(k+1) = clamp( a_i(k) + Γ_i·T·e_f(k)·φ_f,i(k) / (P_i(k) + ρ·P_0(k)·ω_r^(2i)),  min_i, max_i
//   )
//
// The step is normalised per coefficient by the mean-square P_i of its filtered regressor (τ_p =
// power_time_constant), so Γ_i is an adaptation rate in 1/s, independent of the motion's
// amplitude and of the units of a_i; the floor ρ·P_0·ω_r^(2i) (ρ = kPowerFloor, ω_r = 2π·f_c)
// stops a regressor with little excitation in the band (a ramp has no ẍ) from taking large steps:
// its coefficient then adapts slowly, as it matters little to that motion. Why this form:
//   - the regressors are the target's derivatives, free of measurement noise, so zero-mean noise on
//     x_m enters e only and does not bias the fixed point (differencing a noisy x_m three times
//     would, and would need a third-order filter);
//   - the fixed point is E[e_f·φ_f,i] = 0, i.e. e = 0 when the polynomial can invert the plant
//     (the first-order lag above); otherwise the error left is orthogonal to the target's
//     derivatives;
//   - locally a(k) − a* obeys δ ← δ − T·Γ·D·E[φ_f·(G·φ_f)ᵀ]·δ (D = diag(1/P_i)): it converges when
//     Re G(jω) > 0 over the band of the motion (a lag, or a second-order plant below ω_n), for
//     adaptation slow against the motion: Γ_i ≲ 2π·f_min, f_min its lowest frequency (on the
//     test's multi-sine, f_min = 0.7 Hz, f_c = 20 Hz: Γ = 10/s converged, Γ = 20/s cycled within
//     the bounds; with f_c = 2 Hz, which leaves mostly the two lowest lines, Γ = 5/s ran to the
//     bounds and Γ = 1/s converged). The filter's own phase cancels in E[e_f·φ_f,i] because both
//     pass through it (with an unfiltered e, f_c = 5 Hz diverges on that multi-sine). A plant
//     whose phase passes −90° inside the band of the motion can make it diverge (the MIT rule's
//     known limit); the bounds then hold the coefficients. Default ranges and gains are ours.
// Adaptation runs only with `adapt` set, once the power estimate has seen τ_p of paired samples,
// and while the RMS of the filtered target √P_0 ≥ adapt_threshold (below it the motion is too small
// to adapt on: the coefficients stay). Bounds are applied after every step.
//
// Non-finite input: command(NaN or ±inf) returns the previous command and changes nothing;
// observe(NaN or ±inf) is ignored (the pair stays open for a finite measurement); both counted.
// observe() without a command since the last pairing is ignored (counted).
//
// Units: displacement in m (any unit works), time in s. command() and observe() are RT-safe
// (fixed-size state, no allocation, no exception, no lock); the constructor validates.

#include <array>
#include <cstdint>

namespace hyloop::core {

struct AdaptiveModelBasedConfig {
  double step = 1.0 / 4096.0;                         ///< T, s; > 0, finite
  std::array<double, 4> initial{1.0, 0.0, 0.0, 0.0};  ///< a before adaptation, within the bounds
  std::array<double, 4> min{0.5, 0.0, 0.0, -1e-5};    ///< a0 [-], a1 [s], a2 [s²], a3 [s³]
  std::array<double, 4> max{2.0, 0.1, 1e-3, 1e-5};
  std::array<double, 4> gain{2.0, 2.0, 2.0, 2.0};  ///< Γ_i, 1/s; ≥ 0 (0 freezes a_i), Γ_i·T ≤ 0.1
  double filter_cutoff = 20.0;                     ///< f_c, Hz; in (0, 0.25/T)
  double power_time_constant = 1.0;  ///< τ_p, s; ≥ 8 samples: the regressors' mean-square window
  double adapt_threshold = 1e-4;     ///< RMS of the filtered target, m, below which a stays; ≥ 0
  bool adapt = true;                 ///< false: a stays at `initial` (plain feed-forward)
};

class AdaptiveModelBased {
 public:
  /// ρ: the normalisation floor relative to P_0·ω_r^(2i).
  static constexpr double kPowerFloor = 1e-6;

  /// @throws std::invalid_argument naming the field (FIELD = VALUE: allowed).
  explicit AdaptiveModelBased(const AdaptiveModelBasedConfig& config);

  /// u(k) for the target x_t(k) of this cycle, with the current coefficients; opens the pair that
  /// observe() closes. One call per cycle. RT-safe.
  [[nodiscard]] double command(double target) noexcept;
  /// x_m(k), measured at the end of the cycle of the last command(): closes the pair and adapts.
  /// RT-safe.
  void observe(double measured) noexcept;

  /// [a0 a1 a2 a3].
  [[nodiscard]] const std::array<double, 4>& coefficients() const noexcept { return a_; }
  /// Adaptation steps taken.
  [[nodiscard]] std::uint64_t updates() const noexcept { return updates_; }
  /// Pairs not adapted on because √P_0 < adapt_threshold (after the power window filled).
  [[nodiscard]] std::uint64_t quiet_updates() const noexcept { return quiet_; }
  /// Non-finite targets or measurements, and observe() calls with no open pair: all ignored.
  [[nodiscard]] std::uint64_t rejected_inputs() const noexcept { return rejected_; }
  [[nodiscard]] const AdaptiveModelBasedConfig& config() const noexcept { return config_; }

 private:
  // Second-order section, transposed direct form II; one state per filtered signal.
  struct FilterState {
    double s1 = 0.0, s2 = 0.0;
  };
  double filter(FilterState& s, double x) const noexcept;

  AdaptiveModelBasedConfig config_;
  std::array<double, 4> a_;
  std::array<double, 5> b_{};        // b0 b1 b2 a1 a2 of F
  std::array<double, 4> floor_{};    // ω_r^(2i)·ρ
  std::int64_t window_ = 0;          // τ_p in samples
  std::array<double, 3> history_{};  // x_t(k−1), x_t(k−2), x_t(k−3)
  bool started_ = false;
  bool open_ = false;            // a command waits for its measurement
  std::array<double, 4> phi_{};  // φ(k) of the open pair
  double target_ = 0.0, last_u_ = 0.0;
  std::array<FilterState, 5> state_{};  // e, φ0..φ3
  std::array<double, 4> power_{};
  std::int64_t paired_ = 0;
  std::uint64_t updates_ = 0, quiet_ = 0, rejected_ = 0;
};

}  // namespace hyloop::core
