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
// Units: u and y in any units (the SITS sweep: u = X_c in m, y = X_R in m); b in units of y per
// unit of u; the step T of the conversion in s; frequencies in Hz, phase in degrees.
// Nothing here is real-time safe: it is batch identification, run off the loop.

#include <Eigen/Core>
#include <cstddef>
#include <span>
#include <vector>

#include "hyloop/core/lti.hpp"

namespace hyloop::core {

struct ArxOrders {
  int n_a = 2;  // number of a coefficients (output lags), ≥ 0
  int n_b = 2;  // number of b coefficients, ≥ 1
  int n_k = 0;  // input delay in samples, ≥ 0
};

struct ArxModel {
  ArxOrders orders;
  std::vector<double> a;                // a1 … a_na
  std::vector<double> b;                // b0 … b_(nb−1)
  Eigen::MatrixXd covariance;           // p × p, parameter order θ = [a…, b…]
  double noise_variance = 0.0;          // σ², unit of y squared
  double residual_rms = 0.0;            // unit of y
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

}  // namespace hyloop::core
