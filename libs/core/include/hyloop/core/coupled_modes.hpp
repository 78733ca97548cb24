#pragma once
// The normal modes of a rigid body held at its contact frame by a six-axis spring, and the growth
// each gets from a delayed force: what replaces the per-axis (1-D) analysis when an offset or an
// inertia couples the axes (issue 28).
//
// Linearised at rest about the attitude R, the contact frame's pose q = (p, θ) (m, rad; world)
// answers the wrench W = (F; M) at the frame (N, N·m; M about the frame's origin) as
//
//   q̈ = A·W,   A = J·M⁻¹·Jᵀ = [[1/m·𝟙 − S·I_w⁻¹·S,  −S·I_w⁻¹],
//                              [I_w⁻¹·S,            I_w⁻¹   ]]
//
// with r = R·r_c the CoM → frame arm, S = [r]×, I_w = R·I·Rᵀ (the CoM's p̈ = F/m − r × ω̇ and
// I_w·ω̇ = M + r × F; the centripetal and gyroscopic terms are second order and left out). A is
// symmetric positive definite (kg⁻¹ blocks mixed with m⁻¹ and kg⁻¹m⁻²).
//
// Under the spring W = −K6·q (contact6_model.hpp) the modes are the eigenpairs of A·K6:
// A·K6·φ_j = ω_j²·φ_j, real ω_j² ≥ 0 (A·K6 is similar to the symmetric A^½·K6·A^½), computed as
// φ_j = A^½·u_j from the symmetric problem. With the force measured τ late and nothing else in
// the loop (undamped, no hold, no robot, no compensation), each mode is the 1-D delay equation
//
//   s² + ω_j²·e^(−sτ) = 0,
//
// whose root near iω_j (delay_equation_root) gives the mode's growth rate σ_j = Re s (1/s).
// Units: SI. Nothing here is real-time safe (analysis).

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <complex>
#include <vector>

#include "hyloop/core/rigid_body.hpp"

namespace hyloop::core {

using Matrix6d = Eigen::Matrix<double, 6, 6>;
using Vector6d = Eigen::Matrix<double, 6, 1>;

/// A of the header: the contact frame's acceleration per unit wrench, at rest about `attitude`.
/// @throws std::invalid_argument as validate(config).
Matrix6d contact_inverse_inertia(const RigidBodyConfig& config, const Eigen::Quaterniond& attitude =
                                                                    Eigen::Quaterniond::Identity());

struct CoupledMode {
  double omega_n2 = 0.0;  ///< ω_j², 1/s² (≥ 0; rounding clipped to 0)
  Vector6d shape;         ///< φ_j in q, largest |entry| = 1 with that entry positive
};

/// The modes of A·K6, ω² ascending. @throws std::invalid_argument when A or K6 is not finite,
/// A not symmetric positive definite or K6 not symmetric.
std::vector<CoupledMode> coupled_modes(const Matrix6d& inverse_inertia, const Matrix6d& stiffness);

/// The root of s² + ω_n²·e^(−sτ) = 0 that continues s = iω_n from τ = 0 (Newton from iω_n), the
/// rightmost one for ω_n·τ < 1: its real part is the growth rate (≈ ω_n²·τ/2). ω_n² = 0 gives 0.
/// @throws std::invalid_argument for ω_n² < 0, τ < 0 or either not finite, or ω_n·τ ≥ 1.
std::complex<double> delay_equation_root(double omega_n2, double tau);

}  // namespace hyloop::core
