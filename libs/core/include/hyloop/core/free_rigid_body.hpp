#pragma once
// The torque-free rigid body in closed form: the reference the RigidBody integrator is tested
// against.
//
// Jacobi elliptic functions of the parameter m = k² (0 ≤ m ≤ 1) by the arithmetic–geometric
// mean (Abramowitz & Stegun 16.4, 17.6): a₀ = 1, b₀ = √(1 − m), c₀ = √m,
//
//   aₙ = (aₙ₋₁ + bₙ₋₁)/2,  bₙ = √(aₙ₋₁·bₙ₋₁),  cₙ = (aₙ₋₁ − bₙ₋₁)/2    until cₙ ≤ ε·aₙ,
//   K(m) = π/(2·a_N),
//   φ_N = 2^N·a_N·u,  φₙ₋₁ = (φₙ + ψₙ)/2,  sin ψₙ = cₙ/aₙ·sin φₙ,
//     ψₙ = atan2(cₙ·sin φₙ, √(bₙ² + cₙ²·cos² φₙ)) (asin's argument nears 1 as m → 1: this
//     form keeps sn, cn and dn to ~5e-15 up to m = 1 − 2⁻⁵², |u| ≤ 20, checked with mpmath),
//   sn u = sin φ₀,  cn u = cos φ₀,  dn u = √(1 − m + m·cn² u)
//   (A&S's cos φ₀/cos(φ₁ − φ₀) for dn is 0/0 at u = K, this form has no cancellation),
//   F(φ|m): φₙ₊₁ = φₙ + atan(bₙ/aₙ·tan φₙ) (the continuous branch),  F = φ_N/(2^N·a_N).
//
// u is reduced modulo 4K before the recursion (the error grows like ε·|u|). m = 1 gives the
// limits sn = tanh u, cn = dn = sech u.
//
// FreeRigidBody: Euler's equations I₁ω̇₁ = (I₂ − I₃)ω₂ω₃ (and cyclic) for principal moments
// I₁ < I₂ < I₃ (kg·m²) and body angular velocity ω (rad/s), with 2E = Σ Iᵢωᵢ², L² = Σ Iᵢ²ωᵢ²
// (Landau & Lifshitz, Mechanics §37). With τ = λ·t + τ₀:
//
//   L² > 2E·I₂ (polhode about axis 3):  ω = (a₁ cn τ, a₂ sn τ, a₃ dn τ),
//     a₁² = (2E·I₃ − L²)/(I₁(I₃ − I₁)),  a₂² = (2E·I₃ − L²)/(I₂(I₃ − I₂)),
//     a₃² = (L² − 2E·I₁)/(I₃(I₃ − I₁)),  λ² = (I₃ − I₂)(L² − 2E·I₁)/(I₁I₂I₃),
//     m = (I₂ − I₁)(2E·I₃ − L²)/((I₃ − I₂)(L² − 2E·I₁)),  a₁ > 0, sign a₂ = sign a₃ = sign ω₃;
//   L² < 2E·I₂ (polhode about axis 1):  ω = (a₁ dn τ, a₂ sn τ, a₃ cn τ), the same with 1 ↔ 3,
//     a₃ > 0, sign a₁ = sign a₂ = sign ω₁.
//
// τ₀ = F(φ₀|m) with the amplitude φ₀ = atan2(sn τ₀, cn τ₀) read off ω(0). The polhode period
// (ω(t) returns to ω(0)) is 4K(m)/λ. 2E·I₃ − L² and L² − 2E·I₁ are formed as sums of
// non-negative terms (no cancellation). Moments given in any order are sorted; an odd
// permutation reverses the handedness, which ω → −ω undoes (Euler's equations are quadratic).

#include <Eigen/Core>
#include <array>

namespace hyloop::core {

struct JacobiElliptic {
  double sn = 0.0;
  double cn = 1.0;
  double dn = 1.0;
};

/// sn, cn, dn of u for the parameter m = k² in [0, 1] (NaN outside). RT-safe.
[[nodiscard]] JacobiElliptic jacobi_elliptic(double u, double m) noexcept;
/// The complete elliptic integral of the first kind K(m), m in [0, 1) (+∞ at 1, NaN outside).
[[nodiscard]] double elliptic_k(double m) noexcept;
/// The incomplete elliptic integral of the first kind F(φ|m), m in [0, 1) (NaN outside), any φ
/// (F(φ + nπ) = F(φ) + 2nK).
[[nodiscard]] double elliptic_f(double phi, double m) noexcept;

class FreeRigidBody {
 public:
  /// @param i1, i2, i3 principal moments (kg·m²), finite, > 0, pairwise distinct (relative
  ///        gap > kDistinctTolerance), in any order; @param omega0 ω(0) in that principal
  ///        frame (rad/s), finite and off the separatrix: |L² − 2E·I_mid| >
  ///        kSeparatrixTolerance·L².
  /// @throws std::invalid_argument naming `I1`, `I2`, `I3` or `omega0`.
  FreeRigidBody(double i1, double i2, double i3, const Eigen::Vector3d& omega0);

  static constexpr double kDistinctTolerance = 1e-9;
  static constexpr double kSeparatrixTolerance = 1e-10;

  /// ω(t) in the frame of the given moments (rad/s). RT-safe.
  [[nodiscard]] Eigen::Vector3d omega(double t) const noexcept;
  /// The period of ω(t), 4K(m)/λ (s).
  [[nodiscard]] double polhode_period() const noexcept { return period_; }
  /// The parameter m = k² of the elliptic functions.
  [[nodiscard]] double parameter() const noexcept { return m_; }
  /// λ, the rate of the elliptic argument τ = λ·t + τ₀ (1/s).
  [[nodiscard]] double rate() const noexcept { return rate_; }
  /// Whether the polhode circles the axis of the largest moment (L² > 2E·I_mid).
  [[nodiscard]] bool about_major_axis() const noexcept { return major_; }
  /// E = ½ Σ Iᵢωᵢ² (J) and |L| (N·m·s).
  [[nodiscard]] double energy() const noexcept { return energy_; }
  [[nodiscard]] double angular_momentum() const noexcept { return momentum_; }

 private:
  std::array<int, 3> order_{};                           // sorted axis s is given axis order_[s]
  double handedness_ = 1.0;                              // +1 even permutation, −1 odd
  Eigen::Vector3d amplitude_ = Eigen::Vector3d::Zero();  // a₁, a₂, a₃ (sorted frame)
  double rate_ = 0.0;
  double phase_ = 0.0;  // τ₀
  double m_ = 0.0;
  double period_ = 0.0;
  double energy_ = 0.0;
  double momentum_ = 0.0;
  bool major_ = true;
};

}  // namespace hyloop::core
