#pragma once
// The robot controller's side of EGM position guidance, shipped as product: on a real UDP
// socket it streams EgmRobot to the sensor every `period` and moves the servo actuator emulator
// (servo_actuator_emulator.hpp, the robot's axis) toward the newest EgmSensor correction.
//
// Each cycle, on its own clock (absolute deadlines): one plant step under the held target, then
// one EgmRobot: header (seqno from 0, +1 a message; tm = ms since start; DATA), feedBack (all six
// joints, the Cartesian pos with its orientation as Euler angles and as a quaternion,
// feedBack.time from the wall clock), planned (the held target as six joints and as a pose with
// both orientations, planned.time), motor state ON, MCI state, convergence, RAPID state RUNNING,
// required sub-fields complete: what ABB's own sensor library (abb_libegm) requires of a
// six-axis robot's message (its parse() refuses one without the quaternion, the planned joints
// or planned.time, and then never answers).
//
// Corrections are accepted only from the sensor's address and port, as EgmSensor CORRECTION
// carrying planned joints (joint axis) or cartesian.pos (Cartesian axis): a sensor may send both
// and the axis' mode (the RAPID motion, EGMActJoint or EGMActPose) picks one; finite, a seqno newer
// than the last (0 restarts); the axis value becomes the held target, converted as the driver
// does (egm_driver.hpp: relative to the start pose, `scale` wire units per loop unit). A target
// further than `max_deviation` from the start is refused and counted (the controller's
// position supervision); the held target stays.
//
// The whole pose (axis mode kPose, egm_pose.hpp): the six loop axes of a correction's
// cartesian pose (quaternion if present, else Euler) are the held target of `pose_plant`, each
// within `max_deviation` of the start (loop units and rad) or the whole correction is refused;
// feedBack and planned carry the plant's pose and the target, the joints stay at the start (no
// kinematics), and with `wrench` measuredForce carries the plant's six-axis reading. The pose
// plant steps from the first correction on (at rest before it), so that its time, and a capture
// it schedules, counts from the session's start, not the controller's.
//
// Reflex (ABB documents a communication timeout; its exact behaviour is in the EGM manual, not
// in the public sources: modelled here): once corrections flow, none for `reply_timeout` stops
// EGM: the target freezes where the axis is (it comes to rest there), MCI state becomes STOPPED
// and stays so (latched); streaming goes on. Cycles in which no new correction arrived since
// the previous EgmRobot count as missing replies; the delay from an EgmRobot to the first
// correction after it is the reply latency (kept, up to `latency_samples` values).

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "hyloop/hal/egm_codec.hpp"
#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/hal/udp_socket.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::hal {

struct EgmRobotEmulatorConfig {
  UdpEndpoint local{"127.0.0.1", 0};  ///< bound; EgmRobot goes out from here
  UdpEndpoint sensor{"127.0.0.1", 6511};
  EgmAxis axis;                                                    ///< as the driver's
  egm::Pose start_pose{{600.0, 0.0, 500.0}, {180.0, 0.0, 180.0}};  ///< mm, degrees
  std::array<double, egm::kJoints> start_joints{0.0, 20.0, 10.0, 0.0, 60.0, 0.0};  ///< degrees
  ServoActuatorConfig plant;  ///< the axis in loop units; plant.step is the EGM period
  /// When set, the axis instead of the servo `plant` (whose step stays the device's cycle).
  std::shared_ptr<AxisPlant> axis_plant;
  /// kPose: the six-axis plant the pose moves (required; plant.step stays the device's cycle).
  std::shared_ptr<PosePlant> pose_plant;
  /// kPose: measuredForce carries pose_plant's wrench (N, N·m).
  bool wrench = false;
  double reply_timeout = 0.1;  ///< s; ≥ 2·period
  double max_deviation = 0.5;  ///< loop units from the start; > 0
  /// measuredForce[force_index] carries the plant's force (N; the other five are 0), as a
  /// force/torque sensor wired to the controller reports it; −1: no measuredForce.
  int force_index = -1;
  WireImpairments impairments;
  std::size_t latency_samples = 0;  ///< reply latencies kept (memory reserved up front)
};

struct EgmRobotEmulatorStats {
  std::uint64_t sent = 0;  ///< EgmRobot messages
  std::uint64_t corrections = 0;
  std::uint64_t missing_replies = 0;
  /// Σ over missing replies of how many cycles in a row had none (so far).
  std::uint64_t missing_weight = 0;
  std::uint64_t refused = 0;  ///< beyond max_deviation
  std::uint64_t rejected_foreign = 0;
  std::uint64_t rejected_malformed = 0;
  std::uint64_t stale = 0;  ///< duplicate or older seqno
  std::uint64_t dropped_out = 0;
  std::uint64_t dropped_in = 0;
  std::uint64_t late_ticks = 0;  ///< cycles the emulator's own clock started late by > period
  bool stopped = false;          ///< the reflex fired
};

class EgmRobotEmulator final : private IoHandler {
 public:
  /// @throws std::invalid_argument naming the field; std::system_error when binding fails.
  explicit EgmRobotEmulator(const EgmRobotEmulatorConfig& config);
  ~EgmRobotEmulator() override;
  EgmRobotEmulator(const EgmRobotEmulator&) = delete;
  EgmRobotEmulator& operator=(const EgmRobotEmulator&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return socket_.port(); }
  [[nodiscard]] EgmRobotEmulatorStats stats() const noexcept;
  /// The axis' newest plant step (loop units, relative to the start). Wait-free.
  [[nodiscard]] ServoMeasurement plant() const noexcept { return plant_view_.load(); }
  /// kPose: the plant's newest step (loop units and rad, relative to the start). Wait-free.
  [[nodiscard]] PoseMeasurement pose_plant() const noexcept { return pose_view_.load(); }
  /// Stops streaming and joins the I/O thread (a controller that dies); idempotent.
  void stop();
  /// The reply latencies recorded (s); after stop().
  [[nodiscard]] const std::vector<double>& reply_latencies() const noexcept { return latencies_; }

 private:
  struct Counters;

  // The I/O thread (paced_io_loop.hpp): a tick every period on its own clock.
  [[nodiscard]] double next_wake(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  void after_receive(double now) noexcept override;
  void tick(double now) noexcept;
  void apply(const egm::Correction& c, double now) noexcept;
  [[nodiscard]] egm::Pose pose_at(double position) const noexcept;
  void fill_pose(egm::RobotMessage& r) noexcept;
  void apply_pose(const egm::Correction& c) noexcept;

  EgmRobotEmulatorConfig config_;
  sockaddr_in sensor_{};
  UdpSocket socket_;
  std::shared_ptr<AxisPlant> plant_;  ///< config_.axis_plant, or a servo of config_.plant
  SeqLock<ServoMeasurement> plant_view_;
  SeqLock<PoseMeasurement> pose_view_;
  std::unique_ptr<Counters> counters_;
  std::vector<double> latencies_;

  // I/O thread only.
  egm::EgmCodec codec_;
  WireImpairer wire_;
  double held_ = 0.0;          ///< target, loop units
  egm::LoopPose held_pose_{};  ///< kPose: the target
  std::uint32_t seqno_ = 0;
  bool have_correction_seqno_ = false;
  std::uint32_t correction_seqno_ = 0;
  bool flowing_ = false;
  bool stopped_ = false;
  bool answered_ = true;  ///< a correction arrived since the last EgmRobot
  std::uint64_t missing_run_ = 0;
  double last_sent_at_ = 0.0;
  double last_correction_at_ = 0.0;
  double started_at_ = 0.0;
  ControllerClock clock_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
