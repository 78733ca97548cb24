#pragma once
// A kind's rig behind the device rig.driver selects (rig_driver_fields.hpp; issue 24): the
// driver stands where the kind's in-process emulator stands, the rig service commands it and
// reads its measurement; the safety layer, watchdog, e-stop, guards and recording around the rig
// part are unchanged.
//
// One cycle (WireRig::step, RT-safe: no allocation, no lock, no exception):
//   actuator.command(applied)       the set point, checked finite and within the plan's limits by
//                                   the driver (a refused one is counted, the last one held);
//   wait for the reply (udp only)   with a command_echo field, poll (yielding the CPU, no lock)
//                                   at most kReplyWaitShare of the step for the measurement that
//                                   applied this command, so
//                                   that on time the cycle sees what the emulator's would (the
//                                   state at the end of its step); late, it takes the newest;
//   actuator.state(), force.read()  → [position, velocity, force] (force 0 without a channel).
// A driver fault (silent device, status fault) latches fault(); the rig service reports it and
// the coordinator stops the run through the supervisor.
//
// A device on its own clock (udp, rsi, egm: is_clocked_device) does not wait for a lockstep
// run's cycles: lockstep runs refuse it (wire_refusal()). An OpenFresco site answers each trial
// when it comes (the site paces the step: trial, getDaq, commit per cycle, each reply within
// rig.driver.timeout_s), so it runs in lockstep and in real time. `hyloop run`, whose in-process
// runner has no rig part, refuses every device.
// Supported types: udp (UdpTargetDriver), egm (EgmDriver), rsi (RsiDriver) and openfresco
// (openfresco::SiteDriver over a SiteClient).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/rig_driver_fields.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::experiment {

class LoadedScenario;

/// The longest wait for the device's reply to this cycle's command, as a share of the step.
inline constexpr double kReplyWaitShare = 0.25;

/// True for a rig.driver.type that names a device on the wire (not "emulator").
[[nodiscard]] bool is_wire_driver(const std::string& type) noexcept;
/// True for a device on its own clock (udp, egm, rsi), which a lockstep run cannot wait for.
[[nodiscard]] bool is_clocked_device(const std::string& type) noexcept;

/// Why `how` cannot drive a rig whose rig.driver.type is `type`: "rig.driver.type = udp: ...".
/// `how`: "lockstep" (a lockstep run) or "in_process" (hyloop run).
[[nodiscard]] std::string wire_refusal(const std::string& type, const std::string& how);

/// The rig.driver.type of a loaded scenario's plan ("emulator" for a kind without a plan).
[[nodiscard]] std::string rig_driver_type(const LoadedScenario& loaded);

class WireRig {
 public:
  /// Binds the driver (only d.local_*) and starts its I/O thread. `limits`: the plan's safety
  /// window; `period`: the loop step, s. @throws ScenarioError naming the rig.driver field (a
  /// force asked of a device that has none), std::invalid_argument/std::system_error from hal.
  WireRig(const RigDriverSettings& d, const hal::ActuatorLimits& limits, double period,
          bool needs_force);
  ~WireRig();
  WireRig(const WireRig&) = delete;
  WireRig& operator=(const WireRig&) = delete;

  /// One cycle: `out` = [position, velocity, force]. kFault once the driver latched a fault.
  /// RT-safe.
  hal::DriverStatus step(const hal::ActuatorCommand& applied, std::span<double, 3> out) noexcept;
  /// Commands the driver refused so far. RT-safe.
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept;
  /// Cycles whose reply did not come within the wait (udp with an echo field). RT-safe.
  [[nodiscard]] std::uint64_t late_replies() const noexcept { return late_replies_; }

 private:
  class NoForce;
  class Device;
  std::unique_ptr<Device> device_;
  std::uint64_t late_replies_ = 0;
};

/// What a kind's rig part measures and records over a WireRig.
struct WireRigShape {
  bool velocity = true;     ///< measurement (position, velocity, force), else (position, force)
  bool needs_force = true;  ///< the kind's loop needs the force: a device without one is refused
  /// truth[0] is the applied command (else: the measured position, the device's own account);
  /// every further truth value is NaN (a device reports no truth).
  bool command_truth = true;
};

/// A RigPart over a WireRig. @throws as WireRig.
std::unique_ptr<RigPart> make_wire_rig_part(const RigDriverSettings& d,
                                            const hal::ActuatorLimits& limits, double period,
                                            WireRigShape shape,
                                            std::vector<std::string> truth_names);

/// A rig of six axes over a robot's whole pose (rig.driver.type egm with egm.axis pose and
/// egm.force wrench, or rsi with rsi.axis pose and a force tag; validate_rig_driver(d, period,
/// 6)): each cycle commands the six applied set points at once (command_pose; `limits` per axis: x,
/// y, z in m, rx, ry, rz in rad) and writes the measurement as the pose (six) then the wrench
/// (six). Every truth value is NaN (a device reports no truth) but truth[command_truth], the
/// applied x (−1: none). A driver fault latches fault(). @throws ScenarioError naming the field,
/// std::system_error.
std::unique_ptr<RigPart> make_wire_pose_rig_part(const RigDriverSettings& d,
                                                 std::span<const hal::ActuatorLimits, 6> limits,
                                                 std::vector<std::string> truth_names,
                                                 int command_truth);

/// The device of an openfresco rig.driver: hyloop's own servo-hydraulic site
/// (hal::openfresco::ServoSite: `plant` behind `safety`, one plant step per trial) serving
/// rig.driver.peer_address:peer_port over rig.driver.openfresco.transport, on its own thread.
/// @throws ScenarioError naming the field; std::system_error when the port cannot be bound.
std::unique_ptr<WireEmulator> make_openfresco_site_emulator(const RigDriverSettings& d,
                                                            const hal::ServoActuatorConfig& plant,
                                                            const hal::SafetyConfig& safety);

/// The device of a udp rig.driver on a real socket (hal::UdpTargetEmulator): it binds
/// peer_address:peer_port, hears only local_address:local_port (which must not be 0), speaks
/// the scenario's packets and steps `plant` every `period` s (the plant's own step) from
/// `initial_position`, within `limits`. @throws ScenarioError naming the field.
std::unique_ptr<WireEmulator> make_udp_target_emulator(const RigDriverSettings& d,
                                                       std::shared_ptr<hal::AxisPlant> plant,
                                                       double period, double initial_position,
                                                       const hal::ActuatorLimits& limits,
                                                       const hal::WireImpairments& impairments);

/// The robot controller of an egm or rsi rig.driver on a real socket (hal::EgmRobotEmulator,
/// hal::RsiControllerEmulator): it binds peer_address:peer_port (0: any free port, which the
/// driver accepts), sends to local_address:local_port (which must not be 0) on its own cycle
/// (EGM 4 ms, RSI rig.driver.rsi.cycle_ms: robot_controller_cycle(), which must be `plant`'s
/// step), and moves `plant` by the corrections, reporting its force where the driver reads one.
/// @throws ScenarioError naming the field.
std::unique_ptr<WireEmulator> make_robot_controller_emulator(
    const RigDriverSettings& d, std::shared_ptr<hal::AxisPlant> plant,
    const hal::WireImpairments& impairments);

/// The robot controller of a six-axis rig.driver (egm or rsi, axis pose) on a real socket: as
/// make_robot_controller_emulator, moving the whole pose of `plant` (stepped every cycle,
/// robot_controller_cycle()) and reporting its wrench (EGM's measuredForce; RSI's force tag,
/// Fx..Tz). EGM refuses a correction with an axis further than `max_deviation` (m or rad) from
/// the start; RSI clips each correction value there (in mm and degrees) and stops beyond twice.
/// @throws ScenarioError naming the field.
std::unique_ptr<WireEmulator> make_robot_pose_emulator(const RigDriverSettings& d,
                                                       std::shared_ptr<hal::PosePlant> plant,
                                                       double max_deviation,
                                                       const hal::WireImpairments& impairments);

/// The cycle of an egm (4 ms) or rsi (rig.driver.rsi.cycle_ms) controller, s.
[[nodiscard]] double robot_controller_cycle(const RigDriverSettings& d);

}  // namespace hyloop::experiment
