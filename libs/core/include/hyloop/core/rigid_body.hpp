#pragma once
// A free-floating rigid body under a wrench applied at a contact frame: the first brick of the
// 6-DoF space target. Units: m, m/s, kg, kg·m², N, N·m, N·m·s, rad, rad/s, s, J.
//
// Body: mass m, inertia I about the centre of mass (CoM) in the body frame (symmetric, positive
// definite, principal moments satisfying the triangle inequality), the contact frame's origin
// at r_c from the CoM (body frame), time step T. State: CoM position x and velocity v (world),
// attitude q (unit quaternion, body → world, R its matrix), body angular velocity ω.
//
// One step under the force F (world, N) and the moment M about the contact point (world, N·m):
//
//   translation, exactly PointMass per component:   v ← v + T·F/m,   x ← x + T·v
//   torque about the CoM:                            τ = M + (R·r_c) × F
//   kick:                                            L_b ← L_b + T·Rᵀτ      (L_b = I·ω)
//   drift: the torque-free flow of H = Σ L_i²/(2I_i) over T, split symmetrically in the
//   principal frame into exact rotations about the principal axes e₁, e₂, e₃:
//
//     Φ₁(T/2) ∘ Φ₂(T/2) ∘ Φ₃(T) ∘ Φ₂(T/2) ∘ Φ₁(T/2),
//     Φ_i(h): θ = L_i/I_i·h,   L_p ← Rot(e_i, −θ)·L_p,   q ← q ⊗ (cos θ/2, sin θ/2·e_i)
//
//   then q ← q/|q|.
//
// Each Φ_i is the exact flow of L_i²/(2I_i), so the drift is symplectic and time-reversible
// (Strang splitting): the world angular momentum L_w = R·L_b is conserved to rounding, the
// energy ½ωᵀIω oscillates within O(T²) with no secular drift, and ω(t) has an O(T²) phase
// error. The symplectic-Euler kick-then-drift makes the scheme first order under a torque,
// like PointMass.
//
// The principal frame is found once, at construction: a diagonal I keeps the body frame as is
// (axes and order as given, no rounding); otherwise Eigen's SelfAdjointEigenSolver gives the
// axes (moments ascending, made right-handed). With zero torque and ω = 0 every angle is 0,
// cos 0 = 1 and sin 0 = 0 exactly, so the attitude does not move by a bit.
//
// step() is RT-safe: no allocation, no exception, no lock. The constructor validates and throws
// std::invalid_argument naming the field.

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace hyloop::core {

struct RigidBodyConfig {
  double mass = 1.0;                                         ///< m, kg, > 0
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Identity();     ///< I at the CoM, body, kg·m²
  Eigen::Vector3d contact_offset = Eigen::Vector3d::Zero();  ///< r_c, body frame, m
  double step = 0.001;                                       ///< T, s, > 0
};

struct RigidBodyState {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();            ///< x, CoM, world, m
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();            ///< v, CoM, world, m/s
  Eigen::Quaterniond attitude = Eigen::Quaterniond::Identity();  ///< q, body → world
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();    ///< ω, body frame, rad/s
};

/// A frame's pose in the world: origin (m) and orientation (frame → world).
struct FramePose {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
};

/// A frame's twist in the world: origin velocity (m/s) and angular velocity (rad/s).
struct FrameTwist {
  Eigen::Vector3d linear = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular = Eigen::Vector3d::Zero();
};

/// @throws std::invalid_argument naming `mass`, `inertia`, `contact_offset` or `step`.
void validate(const RigidBodyConfig& config);

class RigidBody {
 public:
  /// Relative asymmetry |I − Iᵀ|max/|I|max accepted (a rotated tensor R·D·Rᵀ is not exactly
  /// symmetric in floating point); the symmetric part is used.
  static constexpr double kSymmetryTolerance = 1e-12;
  /// Relative slack of the triangle inequality I_a + I_b ≥ I_c (a flat plate is on its edge).
  static constexpr double kTriangleTolerance = 1e-12;

  /// @throws std::invalid_argument naming the config field, or `initial` when a state
  ///         component is not finite or the attitude quaternion is zero.
  explicit RigidBody(const RigidBodyConfig& config, const RigidBodyState& initial = {});

  /// One step under the force F (world, N) at the contact point and the moment M (world, N·m)
  /// about it. RT-safe.
  void step(const Eigen::Vector3d& force, const Eigen::Vector3d& moment) noexcept;

  /// Sets the state (the attitude normalised). RT-safe.
  void reset(const RigidBodyState& state) noexcept;

  [[nodiscard]] const RigidBodyState& state() const noexcept { return state_; }
  /// L_b = I·ω, body frame (N·m·s).
  [[nodiscard]] Eigen::Vector3d body_angular_momentum() const noexcept;
  /// L_w = R·I·ω, world frame, about the CoM (N·m·s).
  [[nodiscard]] Eigen::Vector3d world_angular_momentum() const noexcept;
  /// ½m|v|² + ½ωᵀIω (J).
  [[nodiscard]] double kinetic_energy() const noexcept;
  /// The contact frame: p_c = x + R·r_c, orientation R.
  [[nodiscard]] FramePose contact_pose() const noexcept;
  /// The contact frame's twist: ṗ_c = v + (Rω) × (R·r_c), angular velocity Rω.
  [[nodiscard]] FrameTwist contact_twist() const noexcept;

  /// The principal moments, in the order of principal_axes() (kg·m²).
  [[nodiscard]] const Eigen::Vector3d& principal_moments() const noexcept { return moments_; }
  /// Columns: the principal axes in the body frame (a rotation; identity for a diagonal I).
  [[nodiscard]] const Eigen::Matrix3d& principal_axes() const noexcept { return axes_; }
  [[nodiscard]] const RigidBodyConfig& config() const noexcept { return config_; }
  [[nodiscard]] double step_size() const noexcept { return config_.step; }

 private:
  void rotate_about(int axis, double duration) noexcept;  // the exact flow Φ_axis

  RigidBodyConfig config_;
  Eigen::Matrix3d axes_ = Eigen::Matrix3d::Identity();  // principal → body
  Eigen::Vector3d moments_ = Eigen::Vector3d::Ones();
  Eigen::Vector3d momentum_ = Eigen::Vector3d::Zero();  // L in the principal frame
  RigidBodyState state_;
};

}  // namespace hyloop::core
