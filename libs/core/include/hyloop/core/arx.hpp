#pragma once
// ARX least-squares identification (SITS Eq. 27–30) and the conversion of the identified
// discrete model back to continuous zeros, poles and gain (Eq. 32), plus Bode evaluation.
//
// Model, orders n_a ≥ 0, n_b ≥ 1 (number of b coefficients), input delay n_k ≥ 0:
//   A(z⁻¹)·y[k] = B(z⁻¹)·u[k − n_k] + v[k]
//   A = 1 + a1·z⁻¹ + … + a_na·z^−na,   B = b0 + b1·z⁻¹ + … + b_(nb−1)·z^−(nb−1)
//   y[k] = φᵀ[k]·θ + v[k],   φ[k] = [−y[k−1] … −y[k−na], u[k−nk] … u[k−nk−nb+1]]ᵀ   (Eq. 28)
//   θ = [a1 … a_na, b0 … b_(nb−1)]ᵀ
// Rows k = k0 … N−1 with k0 = max(n_a, n_k + n_b − 1) form Φ and Y (Eq. 30); θ̂ minimises
// ‖Y − Φθ‖ (Eq. 29), computed by a column-pivoting Householder QR of Φ (never the normal
// equations).
//
// Reported with the estimate, for N_r = N − k0 rows and p = n_a + n_b parameters:
//   σ² = ‖Y − Φθ̂‖²/(N_r − p)            residual variance, degrees-of-freedom corrected
//   cov(θ̂) = σ²·(ΦᵀΦ)⁻¹                  from the triangular factor, (ΦᵀΦ)⁻¹ = P·R⁻¹R⁻ᵀ·Pᵀ
//   residual RMS = ‖Y − Φθ̂‖/√N_r
//   fit = 100·(1 − ‖y − ŷ‖/‖y − ȳ‖) %     (NRMSE fit) for the one-step prediction ŷ = Φθ̂ and
//                                          for the free-run simulation (ŷ fed back, started
//                                          from the first k0 measured outputs), over k ≥ k0
//   condition number of Φ (ratio of its extreme singular values)
//
// Instrumental-variable and output-error fits of the same model structure (fit_iv, fit_oe).
// With output noise, y[k] = G(q)u[k] + e[k] and e white, the ARX regressor holds y[k−i] and so
// the noise: the least-squares θ̂ is biased (it fits A(q)e[k] as if it were white). Two consistent
// estimators of the same θ, both started from the ARX estimate:
//   fit_iv  refined IV (Young's SRIV, the discrete-time Steiglitz–McBride with instruments),
//           iterated: with Â from the previous estimate, made stable by reflecting every root
//           |z| >= 1 to 1/z̄ (only to filter),
//             x = (B̂/Â)u (noise-free simulated output),   y_f = y/Â, u_f = u/Â, x_f = x/Â
//             φ_f[k] = [−y_f[k−1] … −y_f[k−na], u_f[k−nk] … u_f[k−nk−nb+1]]ᵀ
//             ζ_f[k] = [−x_f[k−1] … −x_f[k−na], u_f[k−nk] … u_f[k−nk−nb+1]]ᵀ   (instruments)
//             θ̂ ← (Σ ζ_f φ_fᵀ)⁻¹ Σ ζ_f y_f[k]
//           until ‖Δθ‖ <= tolerance·‖θ‖ (or ‖Δθ‖ <= 1e-6·‖θ‖ stops shrinking: rounding level)
//           or max_iterations. At convergence this is a stationary
//           point of the output-error cost; cov(θ̂) = σ²(Σ ζ_f ζ_fᵀ)⁻¹.
//   fit_oe  output error (prediction error with noise model H = 1, the maximum-likelihood fit
//           for white Gaussian output noise): minimises V(θ) = Σ_k (y[k] − ŷ[k; θ])² over every
//           sample k = 0 … N−1, with the simulation ŷ = (B/A)u started at rest (u, ŷ = 0 before
//           k = 0), by Levenberg–Marquardt on the Jacobian ∂ŷ/∂a_i = −ŷ[k−i]/A,
//           ∂ŷ/∂b_j = u[k−nk−j]/A, each step a QR least-squares solve of [J; √λ·D]δ = [e; 0]
//           (D = the column norms of J). The search stays in the admissible set: A stable and
//           without a root on the closed negative real axis, i.e. models that have a continuous
//           zero-order-hold preimage (identified_continuous_model never fails on them); a step
//           leaving it is refused. Two starts, the fit_iv and the fit_arx estimate, each moved
//           into the set (roots reflected into the unit circle, real roots r <= 0 mirrored to
//           max(−r, 1e-3)); the lower V wins (one sine leaves V with more than one minimum).
//           Stops when V falls by less than tolerance·V or after max_iterations;
//           cov(θ̂) = σ²(JᵀJ)⁻¹ (J of the last iteration).
// Both assume the record starts at rest (a sweep from standstill, DESIGN §6); a start away from
// rest enters as a transient the model has to explain. For iv and oe the reported σ², residual
// RMS and both NRMSE fits use the simulation error y − ŷ: an output-error model's one-step
// predictor is its simulation. Cost per iteration O(N·p²); the iteration counts are bounded.
// Which to use: docs/identification.md (the σ sweep: oe and iv agree to the Cramér–Rao bound;
// ARX is biased from σ ≈ 1e-5 m on).
//
// Units: u and y in any units (the SITS sweep: u = X_c in m, y = X_R in m); b in units of y per
// unit of u; the step T of the conversion in s; frequencies in Hz, phase in degrees.
// Nothing here is real-time safe: it is batch identification, run off the loop.

#include <Eigen/Core>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"

namespace hyloop::core {

struct ArxOrders {
  int n_a = 2;  // number of a coefficients (output lags), ≥ 0
  int n_b = 2;  // number of b coefficients, ≥ 1
  int n_k = 0;  // input delay in samples, ≥ 0
};

/// The estimator behind an ArxModel (see the header comment).
enum class FitMethod { kArx, kInstrumentalVariable, kOutputError };
/// "arx", "iv", "oe".
[[nodiscard]] const char* to_string(FitMethod method) noexcept;
/// @throws std::invalid_argument naming `field` and the allowed values for anything else.
FitMethod parse_fit_method(const std::string& text, const std::string& field);

struct IterativeFitOptions {
  int max_iterations = 100;  ///< >= 1
  double tolerance = 1e-10;  ///< relative, > 0
};

struct ArxModel {
  ArxOrders orders;
  FitMethod method = FitMethod::kArx;
  int iterations = 0;           // iv, oe: iterations run (0 for arx)
  bool converged = true;        // iv, oe: the tolerance was met before max_iterations
  int reflected_roots = 0;      // iv: roots of Â reflected into the unit circle in the last filter
  std::vector<double> a;        // a1 … a_na
  std::vector<double> b;        // b0 … b_(nb−1)
  Eigen::MatrixXd covariance;   // p × p, parameter order θ = [a…, b…]
  double noise_variance = 0.0;  // σ², unit of y squared
  double residual_rms = 0.0;    // unit of y
  double fit_prediction_percent = 0.0;  // NaN if y is constant over the rows used
  double fit_simulation_percent = 0.0;  // NaN if y is constant; −inf if the simulation diverges
  double condition_number = 0.0;
  std::size_t rows = 0;  // N_r, the number of equations used
  // B(z⁻¹)z^−nk / A(z⁻¹) as a TF in z (descending powers, den[0] == 1), both of length n + 1
  // with n = max(n_a, n_k + n_b − 1): num[n_k + j] = b_j, den[i] = a_i.
  TransferFunction transfer_function;

  /// √diag(covariance), in the order of θ.
  [[nodiscard]] std::vector<double> standard_deviations() const;
};

/// Least-squares ARX estimate from the input u and output y (same length N).
/// @throws std::invalid_argument naming the argument: u and y of different lengths, an order
///         out of range (n_a < 0, n_b < 1, n_k < 0, or n_a + n_b + n_k > 64), fewer than
///         k0 + p + 1 samples, a non-finite sample, or a rank-deficient Φ (input not persistently
///         exciting for these orders).
ArxModel fit_arx(std::span<const double> u, std::span<const double> y, const ArxOrders& orders);

/// Refined instrumental-variable estimate (SRIV), started from fit_arx (header comment).
/// @throws std::invalid_argument as fit_arx, for invalid options (naming the field), or if the
///         instrument matrix is singular.
ArxModel fit_iv(std::span<const double> u, std::span<const double> y, const ArxOrders& orders,
                const IterativeFitOptions& options = {});

/// Output-error estimate by Levenberg–Marquardt, started from fit_iv (header comment).
/// @throws std::invalid_argument as fit_iv.
ArxModel fit_oe(std::span<const double> u, std::span<const double> y, const ArxOrders& orders,
                const IterativeFitOptions& options = {});

/// fit_arx, fit_iv or fit_oe.
ArxModel fit(FitMethod method, std::span<const double> u, std::span<const double> y,
             const ArxOrders& orders, const IterativeFitOptions& options = {});

/// The identified model converted back to continuous time by the inverse of the zero-order-hold
/// discretisation with step T = `step` (s):
///   H(z)·z^(−advance)  →  cancel common factors z  →  to_state_space  →  continualise (ZOH)
/// advance = 0: the model is understood in the standard convention y[k] = y(t_k).
/// advance = 1: the end-of-step convention of LtiSystem::sampled_transfer_function()
///   (identify with n_k = 0 on y[k] = y(t_{k+1})); the factor z⁻¹ turns it into C(zI − A_d)⁻¹B_d.
/// A numerator coefficient that should vanish (relative degree > 1) comes back small but not
/// zero and gives a far-away zero.
/// @throws std::invalid_argument if step is not finite and > 0, advance < 0, the shifted model is
///         improper, keeps a pole at z = 0, has a pole on the negative real axis (no real
///         logarithm), or has more than kMaxLtiOrder poles.
TransferFunction identified_continuous_transfer_function(const ArxModel& model, double step,
                                                         int advance);
ZeroPoleGain identified_continuous_model(const ArxModel& model, double step, int advance);

/// One point of a Bode diagram.
struct BodePoint {
  double frequency_hz = 0.0;
  double magnitude = 0.0;     // |G(j2πf)|
  double magnitude_db = 0.0;  // 20·log10|G|
  double phase_deg = 0.0;     // unwrapped, see below
};

/// |G|, 20·log10|G| and the phase of a continuous model at the frequencies (Hz, finite, ≥ 0, in
/// any order). The phase is the continuous function
///   φ(ω) = arg(gain) + Σ arg(jω − zᵢ) − Σ arg(jω − pᵢ)
/// with each factor's branch continuous in ω (it jumps only where a root lies on the imaginary
/// axis), shifted by a multiple of 360° so that its low-frequency limit φ(0⁺) lies in
/// [−180°, 180°). So it does not depend on the frequency grid: 1/(s + 1)³ gives −253.7° at 10
/// rad/s. The value itself (magnitude and phase modulo 360°) is evaluated from the given form.
/// @throws std::invalid_argument for a non-finite or negative frequency (naming its index) or an
///         invalid model.
std::vector<BodePoint> bode(const TransferFunction& continuous_tf,
                            std::span<const double> frequencies_hz);
std::vector<BodePoint> bode(const ZeroPoleGain& continuous_zpk,
                            std::span<const double> frequencies_hz);

/// H(e^{j2πf·T}) of the discrete model's transfer_function times z^(−advance) (the same shift
/// as identified_continuous_transfer_function), as Bode points with the phase in (−180°, 180°]:
/// the discrete model's own response, which includes the hold's lag of about half a step
/// (−ωT/2). Used where no continuous model exists. @throws std::invalid_argument for a step
/// not finite and > 0, advance < 0, or a frequency not finite and >= 0.
std::vector<BodePoint> discrete_bode(const ArxModel& model, double step, int advance,
                                     std::span<const double> frequencies_hz);

}  // namespace hyloop::core
