#pragma once
// Six-axis linear contact between the robot's tool frame and the fixed capture mock-up, for small
// deviations of the tool frame from its contact equilibrium (the 6-DoF extension of
// ContactModel, SITS paper Eq. 19).
//
// Pose q = (p, θ): p position (m), θ rotation vector (rad), both in the contact frame.
// Twist q̇ = (v, ω): v (m/s), ω (rad/s). The spring acts at the contact point, offset r (m) from
// the frame's origin, so force and torque couple:
//
//   d = p + θ × r,   u = v + ω × r          displacement / velocity of the contact point
//   F = −K_t∘d − B_t∘u                       (N; ∘ per axis)
//   M = r × F − K_r∘θ − B_r∘ω                (N·m, about the frame's origin)
//
// K_t in N/m, K_r in N·m/rad, B_t in N·s/m, B_r in N·m·s/rad (diagonal, one value per axis).
// With S = [r]× (S·x = r × x), θ × r = −S·θ, so d = J·q with J = [I, −S], and
//
//   W = (F; M) = −K6·q − B6·q̇,   K6 = Jᵀ·K_t·J + diag(0, K_r)
//                                    = [[K_t, −K_t·S], [S·K_t, −S·K_t·S + K_r]]
//                                B6 = [[B_t, −B_t·S], [S·B_t, −S·B_t·S + B_r]]
//
// both symmetric positive semidefinite (Sᵀ = −S). Elastic energy V = ½·qᵀ·K6·q
// = ½·Σ K_t,i·d_i² + ½·Σ K_r,i·θ_i² (J).
//
// wrench() computes F per axis as −k·d − b·u (no matrix product): with r = 0 and only p_x, v_x
// non-zero, wrench()[0] equals ContactModel::force(p_x, v_x) bit for bit, and
// potential_energy() equals ContactModel::potential_energy(p_x).

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace hyloop::core {

using Vector3 = Eigen::Matrix<double, 3, 1>;
using Vector6 = Eigen::Matrix<double, 6, 1>;
using Matrix6 = Eigen::Matrix<double, 6, 6>;

struct Contact6Config {
  Vector3 translational_stiffness{20000.0, 20000.0, 20000.0};  ///< K_t, N/m, each > 0
  Vector3 rotational_stiffness{200.0, 200.0, 200.0};           ///< K_r, N·m/rad, each ≥ 0
  Vector3 translational_damping{50.0, 50.0, 50.0};             ///< B_t, N·s/m, each ≥ 0
  Vector3 rotational_damping{0.5, 0.5, 0.5};                   ///< B_r, N·m·s/rad, each ≥ 0
  Vector3 contact_offset{0.0, 0.0, 0.0};                       ///< r, m, finite
};

class Contact6Model {
 public:
  /// @throws std::invalid_argument naming the field and axis (e.g. `rotational_damping[2]`)
  ///         when an entry is not finite or out of its range.
  explicit Contact6Model(const Contact6Config& config);

  /// The wrench (F; M) at the frame's origin, N and N·m. RT-safe.
  [[nodiscard]] Vector6 wrench(const Vector6& pose, const Vector6& twist) const noexcept;

  /// Elastic energy ½·qᵀ·K6·q in J. RT-safe.
  [[nodiscard]] double potential_energy(const Vector6& pose) const noexcept;

  /// K6 (symmetric, PSD): wrench(q, 0) = −K6·q.
  [[nodiscard]] const Matrix6& stiffness_matrix() const noexcept { return stiffness_; }
  /// B6 (symmetric, PSD): wrench(0, q̇) = −B6·q̇.
  [[nodiscard]] const Matrix6& damping_matrix() const noexcept { return damping_; }
  [[nodiscard]] const Contact6Config& config() const noexcept { return config_; }

 private:
  /// d = p + θ × r (or p exactly when r = 0).
  [[nodiscard]] Vector3 contact_point(const Vector3& p, const Vector3& theta) const noexcept;

  Contact6Config config_;
  bool has_offset_ = false;  // r ≠ 0
  Matrix6 stiffness_;
  Matrix6 damping_;
};

/// R(θ) of a rotation vector θ (rad; the identity at θ = 0). RT-safe.
[[nodiscard]] Eigen::AngleAxisd rotation_of(const Vector3& theta) noexcept;
/// The rotation vector φ of a rotation matrix (R = R(φ), |φ| in [0, π]). RT-safe.
[[nodiscard]] Vector3 rotation_vector(const Eigen::Matrix3d& r) noexcept;

/// The pose q relative to a rest pose q_c (a contact that grips at q_c): (p − p_c; φ), φ the
/// rotation vector of R(θ)·R(θ_c)ᵀ (world frame; θ, θ_c rotation vectors, angles < π). For an
/// isotropic K_r the moment −K_r·φ is the gradient of ½·K_r·|φ|² (the left Jacobian keeps φ),
/// where −K_r·(θ − θ_c) is not conservative once θ_c is not small. RT-safe.
[[nodiscard]] Vector6 relative_pose(const Vector6& pose, const Vector6& rest) noexcept;

}  // namespace hyloop::core
