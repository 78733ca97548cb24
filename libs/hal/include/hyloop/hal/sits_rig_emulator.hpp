#pragma once
// The SITS rig emulator: an industrial robot carrying a contact spring and a force sensor,
// standing where the robot controller and the sensor's DAQ stand (DESIGN.md §1, §6).
//
// Per step k (T s), under the held command X_c[k]:
//   robot      X_R[k], Ẋ_R[k] at the end of the step: G_R(s) advanced exactly with X_c held
//              (zero-order hold), or bypassed (X_R = X_c, Ẋ_R = commanded velocity)
//   contact    F[k] = −K_tc·X_R[k] − B_tc·Ẋ_R[k]                               (N)
//   sensor     F_meas[k] = F[k − d] + n_F[k],  d = τs/T (fractional allowed), n_F ~ N(0, σ_F²)
//   position   X_R,meas[k] = X_R[k] + n_X[k],  n_X ~ N(0, σ_X²)
// Commands that are not finite or outside the limits are rejected and the last good one held.
// Faults can be injected: a frozen force reading, lost position feedback.

#include <cstdint>
#include <optional>
#include <random>

#include "hyloop/core/contact_model.hpp"
#include "hyloop/core/delay_line.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"

namespace hyloop::hal {

struct SitsRigConfig {
  double step = 0.002;                          ///< T, s
  std::optional<core::TransferFunction> robot;  ///< G_R(s); empty: bypass
  core::ContactConfig contact;                  ///< K_tc, B_tc
  double sensor_delay_steps = 1.0;              ///< d = τs/T
  double force_noise_std = 0.0;                 ///< σ_F, N
  double position_noise_std = 0.0;              ///< σ_X, m
  std::uint64_t seed = 1;                       ///< noise generator seed
  ActuatorLimits limits;
};

struct SitsRigFaults {
  bool freeze_force = false;   ///< the DAQ keeps returning its last value
  bool lose_position = false;  ///< position feedback stops updating
};

class SitsRigEmulator {
 public:
  /// @throws std::invalid_argument naming the field that is out of range.
  explicit SitsRigEmulator(const SitsRigConfig& config);

  /// Sets the command held over the next step; rejected if not finite or beyond limits. RT-safe.
  DriverStatus apply(const ActuatorCommand& command) noexcept;

  /// Advances the rig by one step and takes the measurements of that step. RT-safe.
  void advance() noexcept;

  /// Places the robot at rest at `position` with the command there and the sensor history at
  /// the resulting contact force (a bumpless start). Not RT-safe only in that it reseeds noise.
  void reset(double position) noexcept;

  [[nodiscard]] double measured_force() const noexcept { return measured_force_; }
  [[nodiscard]] double contact_force() const noexcept { return contact_force_; }
  [[nodiscard]] ActuatorState robot_state() const noexcept { return measured_state_; }
  [[nodiscard]] ActuatorState true_robot_state() const noexcept { return state_; }
  [[nodiscard]] const ActuatorCommand& held_command() const noexcept { return command_; }
  [[nodiscard]] std::int64_t cycle() const noexcept { return cycle_; }
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept { return rejected_; }
  [[nodiscard]] const SitsRigConfig& config() const noexcept { return config_; }
  [[nodiscard]] const core::LtiSystem* robot() const noexcept {
    return robot_ ? &*robot_ : nullptr;
  }
  void set_faults(const SitsRigFaults& faults) noexcept { faults_ = faults; }

 private:
  SitsRigConfig config_;
  std::optional<core::LtiSystem> robot_;
  core::ContactModel contact_;
  core::DelayLine sensor_delay_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> unit_noise_{0.0, 1.0};
  SitsRigFaults faults_;
  ActuatorCommand command_;
  ActuatorState state_;
  ActuatorState measured_state_;
  double contact_force_ = 0.0;
  double measured_force_ = 0.0;
  std::int64_t cycle_ = -1;
  std::uint64_t rejected_ = 0;
};

/// The SITS rig as the axis of a wire emulator (a robot controller or a UDP target standing for
/// the robot and its force sensor): each step holds the position command (the wire carries no
/// velocity: the commanded velocity is the command's difference over the step, which only a
/// bypassed G_R reads), advances the rig, and reports displacement = the measured robot
/// position, true_displacement and velocity = the robot's, force = the force sensor's reading.
class SitsAxisPlant final : public AxisPlant {
 public:
  explicit SitsAxisPlant(const SitsRigConfig& config) : rig_(config) { reset(0.0); }
  void reset(double position) noexcept override;
  const ServoMeasurement& step(double command) noexcept override;
  [[nodiscard]] const ServoMeasurement& measurement() const noexcept override {
    return measurement_;
  }
  [[nodiscard]] const SitsRigEmulator& rig() const noexcept { return rig_; }

 private:
  void measure() noexcept;

  SitsRigEmulator rig_;
  double last_command_ = 0.0;
  ServoMeasurement measurement_;
};

/// The robot side of the emulator behind the driver interface.
class EmulatedActuator final : public ActuatorDriver {
 public:
  explicit EmulatedActuator(SitsRigEmulator& rig) : rig_(rig) {}
  DriverStatus command(const ActuatorCommand& command) noexcept override {
    return rig_.apply(command);
  }
  [[nodiscard]] ActuatorState state() const noexcept override { return rig_.robot_state(); }
  [[nodiscard]] bool emergency_stop_input() const noexcept override { return estop_; }
  void press_emergency_stop(bool pressed) noexcept { estop_ = pressed; }

 private:
  SitsRigEmulator& rig_;
  bool estop_ = false;
};

/// The force-sensor DAQ side of the emulator behind the driver interface.
class EmulatedForceSensor final : public ForceSensorDriver {
 public:
  explicit EmulatedForceSensor(SitsRigEmulator& rig) : rig_(rig) {}
  DriverStatus read(ForceSample& sample) noexcept override {
    sample.force = rig_.measured_force() - offset_;
    sample.cycle = rig_.cycle();
    return DriverStatus::kOk;
  }
  void tare() override { offset_ = rig_.measured_force(); }

 private:
  SitsRigEmulator& rig_;
  double offset_ = 0.0;
};

}  // namespace hyloop::hal
