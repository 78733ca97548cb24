#pragma once
// The six-axis SITS rig emulator (rig side of the "sits6" kind): an industrial robot carrying a
// six-axis force/torque sensor presses a contact (Contact6Model) while tracking the commanded
// pose of a numerical target. The 6-DoF extension of SitsRigEmulator: with only the x axis
// moving and r = 0 it reproduces SitsRigEmulator bit for bit.
//
// Axes i = 0..5: x, y, z (m, m/s, N) and rx, ry, rz (rad, rad/s, N·m). Per step k (T s), under
// the held command (pose X_c, rate Ẋ_c):
//   robot      X_R,i[k], Ẋ_R,i[k] at the end of the step: G_R,i(s) advanced exactly with X_c,i
//              held (zero-order hold), or bypassed (X_R,i = X_c,i, Ẋ_R,i = Ẋ_c,i)
//   contact    W[k] = Contact6Model::wrench(X_R[k], Ẋ_R[k])                        (N, N·m)
//   sensor     W_meas,i[k] = W_i[k − d] + b_i + n_W,i[k],  d = τs/T (fractional allowed),
//              b the sensor's constant offset, n_W,i ~ N(0, σ_W,i²)
//   pose       X_R,meas,i[k] = X_R,i[k] + n_X,i[k],  n_X,i ~ N(0, σ_X,i²)
// A command with any axis not finite or outside that axis's limits (check_command) is rejected
// as a whole and the last good one held; the rejection is counted and its axis and reason kept.
// Noise: one generator per axis (axis 0 seeded with `seed`, axis i with seed +
// i·0x9E3779B97F4A7C15), each drawing as SitsRigEmulator does: the wrench draw (if σ_W,i > 0 and
// the reading is not frozen), then the pose draw (if σ_X,i > 0 and the pose feedback is not lost).
// Faults: a frozen wrench reading, lost pose feedback.

#include <array>
#include <cstdint>
#include <optional>
#include <random>

#include "hyloop/core/contact6_model.hpp"
#include "hyloop/core/delay_line.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"

namespace hyloop::hal {

inline constexpr int kSits6Axes = 6;
/// Axis i's generator is seeded with seed + i·kSits6SeedStride.
inline constexpr std::uint64_t kSits6SeedStride = 0x9E3779B97F4A7C15ULL;

struct Sits6RigConfig {
  double step = 0.002;  ///< T, s
  /// G_R,i(s) per axis (x, y, z, rx, ry, rz); empty: bypass.
  std::array<std::optional<core::TransferFunction>, kSits6Axes> robot;
  core::Contact6Config contact;                            ///< K_t, K_r, B_t, B_r, r
  double sensor_delay_steps = 1.0;                         ///< d = τs/T, in [0, 1e6]
  core::Vector6 wrench_noise_std = core::Vector6::Zero();  ///< σ_W, N and N·m, ≥ 0
  core::Vector6 wrench_bias = core::Vector6::Zero();       ///< b, N and N·m, finite
  core::Vector6 pose_noise_std = core::Vector6::Zero();    ///< σ_X, m and rad, ≥ 0
  std::uint64_t seed = 1;                                  ///< axis 0's generator seed
  std::array<ActuatorLimits, kSits6Axes> limits;           ///< m, m/s / rad, rad/s
  /// A capture: the contact acts from this cycle on, its spring at rest at the robot's pose of
  /// that cycle (W = −K6·q_rel − B6·q̇, q_rel = core::relative_pose(q, q_c)); before it the
  /// target floats and the sensor reads
  /// no wrench (bias and noise only). 0: from the start, at rest at q = 0. ≥ 0.
  std::int64_t engage_cycle = 0;
};

/// The pose set point and its rate feed-forward (m, rad; m/s, rad/s).
struct Pose6Command {
  core::Vector6 pose = core::Vector6::Zero();
  core::Vector6 rate = core::Vector6::Zero();
};

struct Sits6RigFaults {
  bool freeze_wrench = false;  ///< the DAQ keeps returning its last value
  bool lose_pose = false;      ///< pose feedback stops updating
};

class Sits6RigEmulator {
 public:
  /// @throws std::invalid_argument naming the field (and axis) that is out of range.
  explicit Sits6RigEmulator(const Sits6RigConfig& config);

  /// Sets the command held over the next step; rejected as a whole if any axis is not finite
  /// or beyond its limits (then rejected_axis() / rejection_reason() tell which and why). RT-safe.
  DriverStatus apply(const Pose6Command& command) noexcept;

  /// Advances the rig by one step and takes the measurements of that step. RT-safe.
  void advance() noexcept;

  /// Places the robot at rest at `pose` with the command there and the sensor history at the
  /// resulting contact wrench (a bumpless start). Reseeds the generators.
  void reset(const core::Vector6& pose);

  [[nodiscard]] const core::Vector6& measured_wrench() const noexcept { return measured_wrench_; }
  [[nodiscard]] const core::Vector6& contact_wrench() const noexcept { return contact_wrench_; }
  /// Measured pose and twist (the twist carries no noise, as in SitsRigEmulator).
  [[nodiscard]] const core::Vector6& robot_pose() const noexcept { return measured_pose_; }
  [[nodiscard]] const core::Vector6& robot_twist() const noexcept { return measured_twist_; }
  [[nodiscard]] const core::Vector6& true_robot_pose() const noexcept { return pose_; }
  [[nodiscard]] const core::Vector6& true_robot_twist() const noexcept { return twist_; }
  [[nodiscard]] const Pose6Command& held_command() const noexcept { return command_; }
  [[nodiscard]] std::int64_t cycle() const noexcept { return cycle_; }
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept { return rejected_; }
  /// Axis (0..5) that caused the most recent rejection; −1 if none was rejected yet.
  [[nodiscard]] int rejected_axis() const noexcept { return rejected_axis_; }
  /// Why the most recent rejection happened (kOk if none yet).
  [[nodiscard]] LimitVerdict rejection_reason() const noexcept { return rejection_reason_; }
  [[nodiscard]] const Sits6RigConfig& config() const noexcept { return config_; }
  /// The contact acts (from engage_cycle on); its spring's rest pose q_c.
  [[nodiscard]] bool engaged() const noexcept { return engaged_; }
  [[nodiscard]] const core::Vector6& rest_pose() const noexcept { return rest_; }
  [[nodiscard]] const core::Contact6Model& contact() const noexcept { return contact_; }
  /// Axis i's robot model, or nullptr when bypassed.
  [[nodiscard]] const core::LtiSystem* robot(int axis) const noexcept {
    return robot_[axis] ? &*robot_[axis] : nullptr;
  }
  void set_faults(const Sits6RigFaults& faults) noexcept { faults_ = faults; }

 private:
  Sits6RigConfig config_;
  std::array<std::optional<core::LtiSystem>, kSits6Axes> robot_;
  core::Contact6Model contact_;
  std::array<core::DelayLine, kSits6Axes> sensor_delay_;
  std::array<std::mt19937_64, kSits6Axes> rng_;
  std::array<std::normal_distribution<double>, kSits6Axes> unit_noise_;
  Sits6RigFaults faults_;
  Pose6Command command_;
  core::Vector6 pose_ = core::Vector6::Zero();
  core::Vector6 twist_ = core::Vector6::Zero();
  core::Vector6 measured_pose_ = core::Vector6::Zero();
  core::Vector6 measured_twist_ = core::Vector6::Zero();
  core::Vector6 contact_wrench_ = core::Vector6::Zero();
  core::Vector6 measured_wrench_ = core::Vector6::Zero();
  std::int64_t cycle_ = -1;
  bool engaged_ = true;
  core::Vector6 rest_ = core::Vector6::Zero();
  std::uint64_t rejected_ = 0;
  int rejected_axis_ = -1;
  LimitVerdict rejection_reason_ = LimitVerdict::kOk;
};

/// What a wire emulator of a six-axis device (a robot's whole pose: egm_pose.hpp) steps, the
/// AxisPlant of a pose: x, y, z (m) and a rotation vector (rad), and the measured wrench (N, N·m).
struct PoseMeasurement {
  std::array<double, kSits6Axes> pose{};       ///< as measured (noise included)
  std::array<double, kSits6Axes> true_pose{};  ///< the robot's own
  std::array<double, kSits6Axes> wrench{};     ///< the F/T sensor's reading
  double time = 0.0;                           ///< s since reset
};

class PosePlant {
 public:
  PosePlant() = default;
  PosePlant(const PosePlant&) = default;
  PosePlant& operator=(const PosePlant&) = default;
  virtual ~PosePlant() = default;
  /// At rest at `pose`, time 0 (a reset run repeats exactly).
  virtual void reset(const std::array<double, kSits6Axes>& pose) = 0;
  /// Holds `command` over one step, advances, and returns the measurement at its end. RT-safe.
  virtual const PoseMeasurement& step(const std::array<double, kSits6Axes>& command) noexcept = 0;
  [[nodiscard]] virtual const PoseMeasurement& measurement() const noexcept = 0;
};

/// The six-axis SITS rig as a wire emulator's pose (the robot, its F/T sensor and the contact):
/// each step holds the pose command, its rate the command's difference over the step (the wire
/// carries no rate; only a bypassed G_R reads it), as SitsAxisPlant does for one axis.
class Sits6PosePlant final : public PosePlant {
 public:
  /// @throws std::invalid_argument as Sits6RigEmulator.
  explicit Sits6PosePlant(const Sits6RigConfig& config) : rig_(config) { reset({}); }
  void reset(const std::array<double, kSits6Axes>& pose) override;
  const PoseMeasurement& step(const std::array<double, kSits6Axes>& command) noexcept override;
  [[nodiscard]] const PoseMeasurement& measurement() const noexcept override {
    return measurement_;
  }
  [[nodiscard]] const Sits6RigEmulator& rig() const noexcept { return rig_; }

 private:
  void measure() noexcept;

  Sits6RigEmulator rig_;
  core::Vector6 last_command_ = core::Vector6::Zero();
  PoseMeasurement measurement_;
};

}  // namespace hyloop::hal
