#pragma once
// The numerical side of the six-axis SITS loop: the 1-D SitsDynamics::step on each axis of the
// target's contact frame, shared by the in-process runner and the dynamics service.
//
// Axes i = 0..5: x, y, z (m, m/s, N) and rx, ry, rz (rad, rad/s, N*m). The target is a
// core::RigidBody (mass m, inertia I about the CoM, contact frame at r_c from the CoM); its
// contact frame's pose X = (p, θ) and twist Ẋ = (ṗ, ω) in the world frame, θ the rotation
// vector of q·q0⁻¹ (sits6_scenario.hpp: the small/moderate-angle representation). In cycle k,
// from the measurement (robot pose X_R[k] (m, rad), the measured wrench W[k] (N, N*m)):
//
//   per axis i:  v̂_R,i = TD_i(X_R,i)
//                F_h,i = K_h,i[k]·v̂_R,i      (core::Compensator; axes 0..2 from `compensator`
//                                              in N*s/m, 3..5 from `rotational_compensator` in
//                                              N*m*s/rad; TDPA: −α·Ẋ_i)
//                F′_i  = W_i + F_h,i         (F′_0..2 the force on the body at the contact
//                                              point, F′_3..5 the moment about it; world)
//                ε_h,i = E_i·X_i,ideal − F′_i·X_R,i  (the compensator's energy observer, J)
//   target:      RigidBody::step(F′_0..2, F′_3..5)       (translation semi-implicit Euler,
//                                                          rotation kick + exact drift)
//   twin:        a second RigidBody under E = Contact6Model::wrench(X_ideal, Ẋ_ideal), the
//                nominal contact without delay, stepped the same way
//   energy:      Σ_{i<3} (½·m·v_i·v_i + ½·K_t,i·d_i·d_i) + ½·ωᵀ·I·ω + Σ_i ½·K_r,i·θ_i²   (J)
//                with v the CoM velocity and d = p + θ × r the contact point's displacement
//                (d = p when r = 0), each axis term in the 1-D expression's operation order
//   power:       Σ_i F′_i·Ẋ_i (W)
//
// and the candidate command of cycle k+1 is the contact frame's (X[k+1], Ẋ[k+1]) per axis. The
// run stops (the next command is not sent) when a value is not finite (not_finite), when a pose
// leaves its axis's window (displacement_limit) or when the energy guard trips on the energy
// (stability_guard). With motion on x only, r_c = r = 0 and q0 = 1, axis 0 computes exactly the
// 1-D SitsDynamics::step (same operations in the same order): the x-reduction test checks it bit
// for bit. The phase correction is left out. step() is RT-safe: no allocation, no exceptions.

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hyloop/core/compensator.hpp"
#include "hyloop/core/contact6_model.hpp"
#include "hyloop/core/energy_guard.hpp"
#include "hyloop/core/rigid_body.hpp"
#include "hyloop/core/tracking_differentiator.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"

namespace hyloop::experiment {

inline constexpr std::size_t kSits6Axes = 6;

/// The columns of each axis, in this order (axis a's column c at 1 + a·kSits6AxisColumns + c).
enum class Sits6AxisColumn : std::uint8_t {
  kPose,         ///< X_i: x[m] … rx[rad]
  kRate,         ///< Ẋ_i: v_x[m/s] … w_x[rad/s]
  kPoseIdeal,    ///< the twin's
  kRateIdeal,    ///< the twin's
  kRobot,        ///< X_R,i measured: x_robot[m]
  kWrenchMeas,   ///< W_i: f_x_meas[N] … m_x_meas[N*m]
  kWrenchIdeal,  ///< E_i
  kWrenchInput,  ///< F′_i
  kGain,         ///< K_h,i: k_h_x[N*s/m] … k_h_rx[N*m*s/rad]
  kEpsH,         ///< ε_h,i: eps_h_x[J]
  kCount
};
inline constexpr std::size_t kSits6AxisColumns = static_cast<std::size_t>(Sits6AxisColumn::kCount);
/// After the axes: energy[J], energy_ideal[J], power[W], power_ideal[W].
inline constexpr std::size_t kSits6Energy = 1 + kSits6Axes * kSits6AxisColumns;
inline constexpr std::size_t kSits6EnergyIdeal = kSits6Energy + 1;
inline constexpr std::size_t kSits6Power = kSits6Energy + 2;
inline constexpr std::size_t kSits6PowerIdeal = kSits6Energy + 3;
/// The dynamics' columns (time first).
inline constexpr std::size_t kSits6DynamicsColumns = kSits6Energy + 4;
/// The rig's truth columns: the true contact wrench (6), then x's held command.
inline constexpr std::size_t kSits6TruthColumns = 7;

/// Axis a's column c among the dynamics' columns.
constexpr std::size_t sits6_column(std::size_t axis, Sits6AxisColumn c) noexcept {
  return 1 + axis * kSits6AxisColumns + static_cast<std::size_t>(c);
}
/// "name[unit]" of the dynamics' columns and of the rig's truth columns.
std::vector<std::string> sits6_dynamics_names();
std::vector<std::string> sits6_truth_names();

/// I about the CoM (body frame) of the scenario, kg*m^2.
Eigen::Matrix3d sits6_inertia(const Sits6Scenario& s);
/// The rig emulator's configuration.
hal::Sits6RigConfig sits6_rig_config(const Sits6Scenario& s);
/// The actuator safety layer's configuration per axis (axes 0..2 in m, 3..5 in rad).
std::array<hal::SafetyConfig, kSits6Axes> sits6_safety_configs(const Sits6Scenario& s);
/// The command held before cycle 0: the contact frame's initial pose and twist per axis.
std::array<hal::ActuatorCommand, kSits6Axes> sits6_initial_commands(const Sits6Scenario& s);
/// The initial pose of the contact frame ((p0, 0)).
core::Vector6 sits6_initial_pose(const Sits6Scenario& s);

/// The blocks' configurations from the scenario (as Sits6Dynamics builds its body and contact):
/// q0 of a rotation vector (exactly the identity for 0), the body, the contact.
Eigen::Quaterniond sits6_attitude(const Sits6Vector& rotation);
/// Any component non-zero (an offset, an attitude, a spin).
bool sits6_nonzero(const Sits6Vector& v);
core::RigidBodyConfig sits6_body_config(const Sits6Scenario& s);
core::Contact6Config sits6_contact_config(const Sits6Scenario& s);
/// The cycle of the capture, rig.contact.engage_at_s / T (0: in contact from the start).
std::int64_t sits6_engage_step(const Sits6Scenario& s);

class Sits6Dynamics {
 public:
  /// @throws std::invalid_argument from the blocks for a scenario that validate() refuses.
  explicit Sits6Dynamics(const Sits6Scenario& scenario);

  /// Cycle k: `measurement` the plan's 12 signals (pose, then wrench), `values` the
  /// kSits6DynamicsColumns columns, `next` the 6 candidate commands of cycle k+1. RT-safe.
  StopReason step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  std::span<hal::ActuatorCommand> next) noexcept;

  /// The contact frame's pose and twist of a body of this scenario.
  struct Frame {
    core::Vector6 pose = core::Vector6::Zero();
    core::Vector6 twist = core::Vector6::Zero();
  };
  [[nodiscard]] Frame frame(const core::RigidBody& body) const noexcept;
  /// The pose the contact's spring sees: the frame's pose, or after a capture the pose relative
  /// to `rest` (core::relative_pose).
  [[nodiscard]] core::Vector6 spring_pose(const Frame& f, const core::Vector6& rest) const noexcept;
  /// The mechanical energy (header) of a body with its spring at `spring` (spring_pose), or
  /// with none (nullptr: before a capture), J.
  [[nodiscard]] double energy(const core::RigidBody& body,
                              const core::Vector6* spring) const noexcept;

  [[nodiscard]] const core::RigidBody& target() const noexcept { return target_; }
  [[nodiscard]] const core::RigidBody& twin() const noexcept { return twin_; }
  [[nodiscard]] const core::Compensator& compensator(std::size_t axis) const noexcept {
    return compensator_[axis];
  }
  [[nodiscard]] const core::EnergyGuard& guard() const noexcept { return guard_; }

 private:
  /// Axis i of cycle k (time t): TD, compensator, input wrench, observer; its columns.
  void step_axis(std::size_t i, double t, double robot, double wrench, const Frame& x,
                 const Frame& xi, double ideal, std::span<double> values) noexcept;
  [[nodiscard]] StopReason check(const Frame& after, double e, double t) noexcept;

  double step_;
  double mass_;
  Eigen::Quaterniond initial_inverse_;
  bool body_offset_;     // r_c ≠ 0
  bool contact_offset_;  // r ≠ 0
  core::Contact6Config contact_config_;
  std::array<hal::ActuatorLimits, kSits6Axes> limits_;
  core::RigidBody target_;
  core::RigidBody twin_;
  core::Contact6Model contact_;
  std::array<core::TrackingDifferentiator, kSits6Axes> td_;
  std::array<core::Compensator, kSits6Axes> compensator_;
  core::Vector6 input_ = core::Vector6::Zero();  // F′ of the cycle
  bool body_observer_;                           // energy_observer = body
  std::int64_t engage_step_;  // the capture's cycle (0: in contact from the start)
  bool engaged_;
  core::Vector6 target_rest_ =
      core::Vector6::Zero();                         // the spring's rest, target's pose at capture
  core::Vector6 twin_rest_ = core::Vector6::Zero();  // and the twin's
  core::Vector6 eps_h_ = core::Vector6::Zero();      // ε_h of each axis in the cycle
  core::EnergyGuard guard_;
  bool guarded_;
};

}  // namespace hyloop::experiment
