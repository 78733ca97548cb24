#pragma once
// Hardware driver interfaces: the narrow boundary between the loop and a rig. A real robot,
// servo-hydraulic controller or force-sensor DAQ implements these; so does the shipped rig
// emulator. Every method is called from the loop cycle: implementations must be RT-safe
// (no allocation, no blocking, no exceptions) and report problems through DriverStatus.
//
// To write a driver for a new rig, copy docs/drivers.md's template: implement the three
// methods, validate the connection in the constructor, never block in command()/read().

#include <cstdint>

namespace hyloop::hal {

enum class DriverStatus : std::uint8_t {
  kOk,        ///< done
  kRejected,  ///< the request was refused (not finite, outside limits, e-stop active)
  kFault,     ///< the device reports a fault; the loop must stop
};

/// A position set point with its velocity feed-forward (m, m/s).
struct ActuatorCommand {
  double position = 0.0;
  double velocity = 0.0;
};

/// The actuator's measured state at the end of the last step (m, m/s).
struct ActuatorState {
  double position = 0.0;
  double velocity = 0.0;
};

/// A force measurement (N) and the step it belongs to.
struct ForceSample {
  double force = 0.0;
  std::int64_t cycle = 0;
};

class ActuatorDriver {
 public:
  virtual ~ActuatorDriver() = default;
  /// Commands the actuator for the next step. RT-safe.
  virtual DriverStatus command(const ActuatorCommand& command) noexcept = 0;
  /// The measured state. RT-safe.
  [[nodiscard]] virtual ActuatorState state() const noexcept = 0;
  /// A hardware emergency-stop input (a latched button or a controller fault line). RT-safe.
  [[nodiscard]] virtual bool emergency_stop_input() const noexcept = 0;
};

class ForceSensorDriver {
 public:
  virtual ~ForceSensorDriver() = default;
  /// Reads the newest force sample. RT-safe.
  virtual DriverStatus read(ForceSample& sample) noexcept = 0;
  /// Zeroes the sensor at the current load (before arming). Not RT-safe.
  virtual void tare() = 0;
};

}  // namespace hyloop::hal
