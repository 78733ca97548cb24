#pragma once
// Linear time-invariant SISO models: transfer function, zero/pole/gain and state space, the
// conversions between them, discretisation and its exact inverse, frequency response, and
// LtiSystem, a continuous plant advanced exactly over steps of a held input (the robot G_R of
// SITS, the servo-hydraulic actuator of the RHT, the FCU's motor; DESIGN §6).
//
// Forms (s for continuous, z for discrete models):
//   TransferFunction   G = (num[0]·s^m + … + num[m]) / (den[0]·s^n + … + den[n])   (DESCENDING)
//   ZeroPoleGain       G = gain·Π(s − zᵢ) / Π(s − pᵢ)                              (SITS Eq. 32)
//   StateSpace         ẋ = A·x + B·u,  y = C·x + D·u      (discrete: x[k+1] = A·x[k] + B·u[k])
//
// Discretisation with step T (s):
//   zero-order hold   [[A_d, B_d], [0, 1]] = exp([[A, B], [0, 0]]·T),   C_d = C, D_d = D
//   Tustin            W = I − A·T/2,  A_d = W⁻¹(I + A·T/2),  B_d = W⁻¹·B·T,
//                     C_d = C·W⁻¹,  D_d = D + C·W⁻¹·B·T/2       ⇔  G_d(z) = G(2(z − 1)/(T(z + 1)))
// continualise() is the exact inverse: the principal matrix logarithm for the hold (valid when no
// eigenvalue of A_d lies on the closed negative real axis, i.e. |Im λ(A)|·T < π), and
// A = (2/T)(A_d − I)(A_d + I)⁻¹ for Tustin.
//
// Units: time in s, angular frequency in rad/s; u and y in the units of the plant's signals.
// Only LtiSystem::reset/step/output/output_rate are real-time safe; every free function and
// the constructor allocate and may throw std::invalid_argument.

#include <Eigen/Core>
#include <complex>
#include <vector>

namespace hyloop::core {

inline constexpr int kMaxLtiOrder = 8;

using LtiMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor,
                                kMaxLtiOrder, kMaxLtiOrder>;
using LtiVector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxLtiOrder, 1>;
using LtiRow = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor, 1, kMaxLtiOrder>;

/// num and den in DESCENDING powers (MATLAB order) of s or z.
struct TransferFunction {
  std::vector<double> num;
  std::vector<double> den;
};

/// G = gain·Π(s − zeros) / Π(s − poles). Complex zeros and poles come in conjugate pairs.
struct ZeroPoleGain {
  std::vector<std::complex<double>> zeros;
  std::vector<std::complex<double>> poles;
  double gain = 1.0;
};

/// SISO state space of order n = a.rows() ≤ kMaxLtiOrder (n = 0 is a pure gain D).
struct StateSpace {
  LtiMatrix a;
  LtiVector b;
  LtiRow c;
  double d = 0.0;
};

enum class Discretisation { kZeroOrderHold, kTustin };

/// Controllable canonical form (MATLAB tf2ss): with den monic (÷ den[0]) as
/// sⁿ + a1·sⁿ⁻¹ + … + an and num padded to n + 1 coefficients b0 … bn,
///   A = [[−a1 … −an], [I_(n−1), 0]],  B = e1,  C = [b1 − b0·a1, …, bn − b0·an],  D = b0.
/// Leading zeros of num are ignored.
/// @throws std::invalid_argument if num or den is empty or not finite, den[0] == 0, the model is
///         improper (more numerator than denominator coefficients), or n > kMaxLtiOrder.
StateSpace to_state_space(const TransferFunction& tf);

/// G(s) = C(sI − A)⁻¹B + D with den = det(sI − A) (monic) and
/// num = det(sI − A + B·C) − det(sI − A) + D·det(sI − A); both of length n + 1.
/// Determinants from the Hessenberg form (no eigenvalues involved).
/// @throws std::invalid_argument if the dimensions are inconsistent or an entry is not finite.
TransferFunction to_transfer_function(const StateSpace& ss);

/// Roots of num and den (Polynomial::roots); gain = num_lead / den_lead (leading zeros ignored).
/// @throws std::invalid_argument as to_state_space for empty / non-finite / zero den.
ZeroPoleGain to_zero_pole_gain(const TransferFunction& tf);
/// num = gain·Π(s − zeros), den = Π(s − poles).
/// @throws std::invalid_argument if a complex zero or pole has no conjugate partner.
TransferFunction to_transfer_function(const ZeroPoleGain& zpk);

/// Discretises with step T = `step` (s). Formulas in the header comment.
/// @throws std::invalid_argument if step is not finite and > 0, the model is inconsistent, or
///         (Tustin) I − A·T/2 is singular.
StateSpace discretise(const StateSpace& continuous, double step, Discretisation method);

/// Exact inverse of discretise() for the same step and method.
/// @throws std::invalid_argument if step is not finite and > 0; for the hold if A_d has an
///         eigenvalue on the closed negative real axis (no real logarithm); for Tustin if
///         A_d + I is singular.
StateSpace continualise(const StateSpace& discrete, double step, Discretisation method);

/// G(jω) of a continuous transfer function, ω in rad/s. Not RT-safe (validates, may throw).
std::complex<double> frequency_response(const TransferFunction& continuous_tf, double omega_rad_s);
/// H(e^{jωT}) of a discrete transfer function in z with sampling step T = `step` (s).
std::complex<double> frequency_response_discrete(const TransferFunction& discrete_tf,
                                                 double omega_rad_s, double step);

/// A continuous SISO plant advanced exactly over steps with a held input.
///
/// Cycle convention (DESIGN §6): step(u[k]) holds u[k] over [t_k, t_k + T) and returns
///   y[k] = y(t_{k+1}) = C·x(t_{k+1}) + D·u[k],       x(t_{k+1}) = A_d·x(t_k) + B_d·u[k]
/// with A_d, B_d from discretise(continuous, T, method) (exact for the hold; the trapezoidal
/// rule under a held input for Tustin). x is the continuous model's state in both cases, so
/// C and D are those of the continuous model.
class LtiSystem {
 public:
  /// @param continuous the plant (order ≤ kMaxLtiOrder); @param step T > 0 in s.
  /// @throws std::invalid_argument naming the parameter (see discretise()).
  LtiSystem(const StateSpace& continuous, double step,
            Discretisation method = Discretisation::kZeroOrderHold);

  /// Puts the state at the DC equilibrium of the constant input u_steady: A·x + B·u = 0, i.e.
  /// x = −A⁻¹B·u_steady (zero state if u_steady == 0), and output() = C·x + D·u_steady.
  /// If A is singular (a pole at s = 0) no equilibrium exists for u_steady ≠ 0: the state is
  /// the least-squares (minimum-norm) solution, and has_equilibrium() is false.
  /// RT-safe (no allocation, no exception; the solution direction is precomputed).
  void reset(double u_steady) noexcept;

  /// Holds u over [t_k, t_k + T) and returns y at t_{k+1} (including D·u).
  /// RT-safe: no allocation, no exception.
  double step(double u) noexcept;

  /// y at the end of the last step (or after reset()). RT-safe.
  [[nodiscard]] double output() const noexcept { return y_; }

  /// dy/dt of the continuous model at the end of the last step, C·(A·x + B·u) with u the
  /// input of the last step (the derivative of D·u is taken as zero). Unit: unit of y per s.
  /// RT-safe.
  [[nodiscard]] double output_rate() const noexcept;

  /// The sampled model from u[k] to y[k] = y(t_{k+1}) under this end-of-step convention,
  /// as a discrete TF in z (descending powers, den[0] == 1):
  ///   H(z) = z·C(zI − A_d)⁻¹B_d + D.
  /// Not RT-safe (allocates).
  [[nodiscard]] TransferFunction sampled_transfer_function() const;

  [[nodiscard]] const StateSpace& continuous() const noexcept { return continuous_; }
  [[nodiscard]] const StateSpace& discrete() const noexcept { return discrete_; }
  [[nodiscard]] double step_size() const noexcept { return step_; }
  [[nodiscard]] Discretisation method() const noexcept { return method_; }
  [[nodiscard]] bool has_equilibrium() const noexcept { return has_equilibrium_; }
  /// The state x(t_k) (continuous coordinates of continuous().a).
  [[nodiscard]] const LtiVector& state() const noexcept { return x_; }

 private:
  StateSpace continuous_;
  StateSpace discrete_;
  double step_;
  Discretisation method_;
  LtiVector equilibrium_per_unit_input_;  // x such that A·x + B = 0 (least squares if singular)
  bool has_equilibrium_ = true;
  LtiRow rate_row_;         // C·A
  double rate_gain_ = 0.0;  // C·B
  LtiVector x_;
  LtiVector x_next_;
  double u_ = 0.0;
  double y_ = 0.0;
};

}  // namespace hyloop::core
