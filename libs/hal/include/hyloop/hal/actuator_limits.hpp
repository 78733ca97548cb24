#pragma once
// The last check before a value reaches an actuator: every command must be finite and within
// the position and velocity limits. A command that fails is rejected (the driver keeps the
// last good command) and counted. The window is in the unit of the kind's command signal:
// "position" is the commanded value (m for SITS, RHT and vrths; kg/s for the FCU's fuel-flow
// demand), and velocity and acceleration are its first and second time derivatives (m/s, m/s²;
// kg/s², kg/s³).

#include <cmath>
#include <cstdint>
#include <limits>

#include "hyloop/hal/drivers.hpp"

namespace hyloop::hal {

struct ActuatorLimits {
  double position_min = -std::numeric_limits<double>::infinity();  ///< m (kg/s for FCU)
  double position_max = std::numeric_limits<double>::infinity();   ///< m (kg/s for FCU)
  double velocity_max = std::numeric_limits<double>::infinity();   ///< |v|, m/s
  /// |a|, m/s². Not part of check_command (a single command has no acceleration); enforced on
  /// the output's implied motion by ActuatorSafety (actuator_safety.hpp).
  double acceleration_max = std::numeric_limits<double>::infinity();
};

/// Default |a| bound of the safety window for each kind's actuator class (issue 10: the window
/// had none). Each is what the class can physically execute with a wide margin, and above every
/// implied command acceleration of the shipped paper scenarios, whose runs stay bit for bit
/// (measured values and the reasoning: docs/scenarios.md, "Acceleration limit"). A lab sets its
/// actuator's rating in the scenario.
inline constexpr double kIndustrialRobotAccelerationMax = 500.0;      ///< m/s², SITS robot (TCP)
inline constexpr double kServoHydraulicAccelerationMax = 1.0e5;       ///< m/s², RHT actuator
inline constexpr double kFuelMeteringCommandAccelerationMax = 1.0e3;  ///< kg/s³, FCU command

enum class LimitVerdict : std::uint8_t { kOk, kNotFinite, kPositionLimit, kVelocityLimit };

/// RT-safe.
[[nodiscard]] inline LimitVerdict check_command(const ActuatorCommand& c,
                                                const ActuatorLimits& limits) noexcept {
  if (!std::isfinite(c.position) || !std::isfinite(c.velocity)) {
    return LimitVerdict::kNotFinite;
  }
  if (c.position < limits.position_min || c.position > limits.position_max) {
    return LimitVerdict::kPositionLimit;
  }
  if (std::abs(c.velocity) > limits.velocity_max) {
    return LimitVerdict::kVelocityLimit;
  }
  return LimitVerdict::kOk;
}

}  // namespace hyloop::hal
