#pragma once
// An ABB robot under Externally Guided Motion (EGM), position guidance, behind ActuatorDriver:
// we are the sensor, a UDP server. The robot controller paces the exchange: every cycle (≥ 4 ms)
// it sends an EgmRobot and steers toward the newest EgmSensor correction at its next cycle
// (egm_codec.hpp). The I/O thread publishes each EgmRobot to the loop and answers it as
// paced_reply.hpp does: with the first command the loop gives after it arrived, so a loop that
// runs on the robot's messages drives step j + 1 with the command computed from step j, the
// in-process order; else at `reply_deadline` with the newest command (a late reply, counted).
//
// One axis of the robot is the loop's actuator: Cartesian x, y or z of the TCP (mm on the wire),
// or one joint (degrees). With `scale` wire units per loop unit (1000 mm per m; 180/π degrees
// per rad), the loop's position is relative to the pose where the session started:
//   position = (feedback[axis] − start[axis]) / scale,   target[axis] = start[axis] + scale·command
// and every other coordinate of the target stays at the start pose. Velocity is the difference
// of two feedbacks over their feedBack.time (the period when the controller sends no clock).
// Or the loop drives the TCP's whole pose (EgmMode::kPose, egm_pose.hpp): six axes x, y, z and
// a rotation vector, commanded together (command_pose(); each axis within its own limits, one
// out of them rejects the whole pose) and read back as latest().pose; with `wrench`, the six
// measuredForce values are the loop's wrench (latest().wrench).
//
// Sessions and sequence (as libegm): the first EgmRobot, or one with seqno 0, starts a session:
// the start pose is captured, our own reply seqno restarts at 0, and until the loop commands
// the reply is the feedback itself (no jump). A robot seqno gap of g counts g − 1 lost; an
// equal or older seqno is dropped (duplicate / reordered) and not answered.
//
// Security and faults: binds only `local`; datagrams from anywhere but the robot's address (and
// port, when given) are dropped and counted, as are ones larger than egm::kMaxDatagram, not
// EgmRobot DATA, or with non-finite feedback; none of them reaches the loop or gets a reply. Once
// the loop commands, a robot silent for `timeout` latches a fault; so does motors off or an MCI
// state other than RUNNING after it was running (the controller stopped EGM): command() returns
// kFault and emergency_stop_input() reports the controller's stop. With `force_index`, one of
// measuredForce's six values is the loop's force (force_sensor()); a message without it is
// malformed. A command is sent only when
// finite and within the limits (check_command); else kRejected and the last one stays.
//
// RT-safety: command(), state(), emergency_stop_input(), health() and metrics() are wait-free
// (seqlocks, relaxed atomics, one eventfd write); protobuf runs on the I/O thread only.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/egm_codec.hpp"
#include "hyloop/hal/egm_pose.hpp"
#include "hyloop/hal/link_watch.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/paced_reply.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/udp_packet.hpp"
#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

/// kPose: the TCP's whole pose, six loop axes (egm_pose.hpp).
enum class EgmMode : std::uint8_t { kCartesian, kJoint, kPose };

/// Which coordinate of the robot the loop drives, and in what wire units per loop unit.
struct EgmAxis {
  EgmMode mode = EgmMode::kCartesian;
  int index = 2;          ///< x, y, z = 0, 1, 2 (Cartesian) or joint 0..5; 0 for kPose
  double scale = 1000.0;  ///< wire units (mm or degrees) per loop unit; finite, ≠ 0 (kPose: mm)
};

/// @throws std::invalid_argument naming the field.
void validate(const EgmAxis& axis);
/// measuredForce's index: −1 (none) or 0..5. @throws std::invalid_argument naming force_index.
void validate_force_index(int force_index);

struct EgmDriverConfig {
  UdpEndpoint local{"127.0.0.1", 6511};  ///< bound (libegm's default port)
  UdpEndpoint robot{"127.0.0.1", 0};     ///< the controller; port 0 = any port of that address
  EgmAxis axis;
  double period = 0.004;  ///< s, the controller's cycle
  /// s after an EgmRobot arrives: answer with what the loop has by then; in (0, period).
  double reply_deadline = 0.002;
  double timeout = 0.1;   ///< s without an EgmRobot once the loop commands → fault; ≥ period
  ActuatorLimits limits;  ///< loop units
  /// kPose: each axis' limits (x, y, z in loop units, rx, ry, rz in rad); `limits` is unused.
  std::array<ActuatorLimits, egm::kPoseAxes> pose_limits{};
  /// kPose: the six measuredForce values (N, N·m) are the loop's wrench (latest().wrench); an
  /// EgmRobot without measuredForce is then malformed.
  bool wrench = false;
  /// measuredForce[force_index] (N or N·m) is the loop's force, read through force_sensor();
  /// an EgmRobot without measuredForce is then malformed. −1: no force.
  int force_index = -1;
};

/// The link's counts (paced_reply.hpp; a message is an EgmRobot).
using EgmDriverMetrics = ControllerLinkMetrics;

/// The newest robot state, in loop units.
struct EgmSample {
  double position = 0.0;
  double velocity = 0.0;
  double force = 0.0;      ///< measuredForce[force_index], before tare
  egm::LoopPose pose{};    ///< kPose: the six axes (position and velocity are pose[0], twist[0])
  egm::LoopPose twist{};   ///< kPose: their differences over feedBack.time, per s
  egm::LoopPose wrench{};  ///< kPose with `wrench`: measuredForce, N and N·m
  std::uint32_t seqno = 0;
  egm::MotorState motor = egm::MotorState::kUndefined;
  egm::MciState mci = egm::MciState::kUndefined;
  egm::RapidState rapid = egm::RapidState::kUndefined;
  double received_at = 0.0;  ///< monotonic_seconds()
  bool valid = false;
};

class EgmDriver final : public ActuatorDriver, private IoHandler {
 public:
  /// @throws std::invalid_argument naming the field; std::system_error when binding fails.
  explicit EgmDriver(const EgmDriverConfig& config);
  ~EgmDriver() override;
  EgmDriver(const EgmDriver&) = delete;
  EgmDriver& operator=(const EgmDriver&) = delete;

  /// One axis; kRejected in kPose (use command_pose).
  DriverStatus command(const ActuatorCommand& command) noexcept override;
  /// kPose: the six axes at once (x, y, z, rx, ry, rz); kRejected in another mode. RT-safe.
  DriverStatus command_pose(std::span<const ActuatorCommand, egm::kPoseAxes> pose) noexcept;
  [[nodiscard]] ActuatorState state() const noexcept override;
  [[nodiscard]] bool emergency_stop_input() const noexcept override;
  /// The force channel. @throws std::logic_error when no force_index is configured.
  ForceSensorDriver& force_sensor();

  [[nodiscard]] DriverStatus health() const noexcept;
  [[nodiscard]] EgmDriverMetrics metrics() const noexcept;
  [[nodiscard]] EgmSample latest() const noexcept { return sample_.load(); }
  [[nodiscard]] std::uint16_t local_port() const noexcept { return socket_.port(); }
  /// Waits (not RT) until the robot was heard or `timeout` s passed: before arming.
  bool wait_for_robot(double timeout) const;

 private:
  struct Counters;
  struct Session;

  // The I/O thread (paced_io_loop.hpp).
  [[nodiscard]] double next_wake(double now) noexcept override;
  void before_receive(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  bool accept_sequence(std::uint32_t seqno) noexcept;
  void publish(const egm::RobotMessage& m, double now) noexcept;
  void answer(bool at_deadline) noexcept;
  [[nodiscard]] double wire_value(const egm::RobotMessage& m) const noexcept;

  EgmDriverConfig config_;
  sockaddr_in robot_{};
  UdpSocket socket_;
  PacedReply reply_;
  SeqLock<EgmSample> sample_;
  std::unique_ptr<Counters> counters_;
  std::unique_ptr<Session> session_;  ///< I/O thread only
  std::unique_ptr<ForceSensorDriver> force_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
