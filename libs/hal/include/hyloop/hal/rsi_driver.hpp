#pragma once
// A KUKA robot under RobotSensorInterface (RSI, rsi_codec.hpp) behind ActuatorDriver: we are
// the sensor PC, a UDP server. The controller paces the exchange: every cycle (4 or 12 ms) it
// sends a <Rob> stamped with IPOC and expects the <Sen> carrying the same IPOC back within the
// cycle. The I/O thread (paced_io_loop.hpp) publishes each <Rob> to the loop and answers it as
// paced_reply.hpp does: with the first command the loop gives after it arrived, or, at
// `reply_deadline`, with the newest command it has (a late reply, counted): never later, and
// never a packet the controller did not ask for.
//
// Corrections are absolute (RSI_ON(#ABSOLUTE), as kuka_experimental): an offset from the pose at
// the session's start. One coordinate is the loop's actuator: Cartesian X, Y or Z of the TCP
// (RIst, correction RKorr, mm) or one axis (AIPos, correction AK, degrees); with `scale` wire
// units per loop unit (1000 mm per m; 180/π degrees per rad):
//   position = (actual[axis] − start[axis]) / scale,   correction[axis] = scale · command
// and every other correction is 0. Until the loop commands, the correction is 0 (no jump).
// Velocity is the difference of two positions over their IPOC difference (ms).
// Or the loop drives the TCP's whole pose (RsiMode::kPose, pose6.hpp): six axes x, y, z and a
// rotation vector from RIst, commanded together (command_pose(); one axis out of its limits
// rejects the whole pose) as the RKorr that moves the start pose there (rsi::wire_pose); with
// `wrench`, the force tag's six attributes Fx..Tz (times force_scale) are the loop's wrench.
//
// Sessions and IPOC: the first <Rob>, or one after more than `timeout` of silence, starts a
// session (the start pose is captured). IPOC counts the controller's milliseconds (+4 per cycle
// at 4 ms, as a KR C4 log shows): an IPOC ahead by g cycles counts g − 1 lost; an equal or older
// one is dropped (duplicate / reordered) and not answered. Delay.D (the controller's count of
// late packets) is read back.
//
// The controller's reflex (modelled by rsi_controller_emulator.hpp): it counts replies not back
// within the cycle and stops RSI at its ETHERNET object's Timeout count; it then stops sending,
// so this driver sees silence: once the loop commands, a controller silent for `timeout`
// latches a fault (command() returns kFault). A Delay.D growing past `late_limit` is reported
// by emergency_stop_input() (the controller is about to stop).
//
// Security: binds only `local`; datagrams from anywhere but the robot's address (and port,
// when given) are dropped and counted, as are ones larger than rsi::kMaxDatagram, not a <Rob>,
// malformed, or without the axis' element; none reaches the loop or gets a reply. A command is
// sent only when finite and within the limits (check_command); else kRejected, the last stays.
//
// Force: with `force_tag`, one attribute of a user element of the <Rob> (a force sensor wired to
// the controller and added to its SEND section, e.g. TAG="FT.Fz" → <FT Fz=".."/>) times
// `force_scale` is the force in N, read through force_sensor() (ForceSensorDriver); a <Rob>
// without it is malformed.
//
// RT-safety: command(), state(), read(), emergency_stop_input(), health() and metrics() are
// wait-free (seqlocks, relaxed atomics, one eventfd write); XML runs on the I/O thread only.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/link_watch.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/paced_reply.hpp"
#include "hyloop/hal/rsi_codec.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

/// kPose: the TCP's whole pose, six loop axes (pose6.hpp).
enum class RsiMode : std::uint8_t { kCartesian, kAxis, kPose };

/// Which coordinate of the robot the loop drives, and in what wire units per loop unit.
struct RsiAxis {
  RsiMode mode = RsiMode::kCartesian;
  int index = 2;          ///< X, Y, Z = 0, 1, 2 (Cartesian) or axis A1..A6 = 0..5; 0 (kPose)
  double scale = 1000.0;  ///< wire units (mm or degrees) per loop unit; finite, ≠ 0
};

/// @throws std::invalid_argument naming the field.
void validate(const RsiAxis& axis);

/// The RSI cycles a KR C4 offers (s): 4 ms and 12 ms.
inline constexpr double kRsiCycleFast = 0.004;
inline constexpr double kRsiCycleSlow = 0.012;

struct RsiDriverConfig {
  UdpEndpoint local{"127.0.0.1", 49152};  ///< bound (kuka_experimental's port)
  UdpEndpoint robot{"127.0.0.1", 0};      ///< the controller; port 0 = any port of that address
  RsiAxis axis;
  std::string sen_type = "ImFree";  ///< the controller's SENTYPE
  std::string correction_tag;       ///< its RECEIVE element; "" = RKorr (Cartesian) or AK (axis)
  double period = kRsiCycleFast;    ///< s: kRsiCycleFast or kRsiCycleSlow
  /// s after a <Rob> arrives: answer with what the loop has by then; in (0, period).
  double reply_deadline = 0.002;
  double timeout = 0.1;          ///< s without a <Rob> once the loop commands → fault; ≥ period
  std::uint64_t late_limit = 0;  ///< Delay.D above this → emergency_stop_input(); 0 = never
  std::string force_tag;         ///< "" = no force in the <Rob>
  std::string force_attribute = "Fz";
  double force_scale = 1.0;  ///< N per wire unit; finite, ≠ 0
  ActuatorLimits limits;     ///< loop units
  /// kPose: each axis' limits (x, y, z in loop units, rx, ry, rz in rad); `limits` is unused.
  std::array<ActuatorLimits, kPoseAxes> pose_limits{};
  /// kPose: force_tag's six attributes Fx Fy Fz Tx Ty Tz (rsi::kWrenchNames) are the loop's
  /// wrench (latest().wrench); force_attribute is unused.
  bool wrench = false;
};

/// Everything the constructor checks but binding. @throws std::invalid_argument naming the field.
void validate(const RsiDriverConfig& config);

/// The link's counts (paced_reply.hpp; a message is a <Rob> datagram, malformed also means not
/// <Rob> or the axis missing) and the controller's newest Delay.D.
struct RsiDriverMetrics : ControllerLinkMetrics {
  std::uint64_t controller_delay = 0;
};

/// The newest robot state, in loop units.
struct RsiSample {
  double position = 0.0;
  double velocity = 0.0;
  std::uint64_t ipoc = 0;
  double force = 0.0;        ///< N (force_tag), before tare
  LoopPose pose{};           ///< kPose: the six axes (position, velocity are pose[0], twist[0])
  LoopPose twist{};          ///< kPose: their differences over the IPOC difference, per s
  LoopPose wrench{};         ///< kPose with `wrench`: N and N·m
  std::uint64_t delay = 0;   ///< Delay.D
  double received_at = 0.0;  ///< monotonic_seconds()
  bool valid = false;
};

class RsiDriver final : public ActuatorDriver, private IoHandler {
 public:
  /// @throws std::invalid_argument naming the field; std::system_error when binding fails.
  explicit RsiDriver(const RsiDriverConfig& config);
  ~RsiDriver() override;
  RsiDriver(const RsiDriver&) = delete;
  RsiDriver& operator=(const RsiDriver&) = delete;

  /// One axis; kRejected in kPose (use command_pose).
  DriverStatus command(const ActuatorCommand& command) noexcept override;
  /// kPose: the six axes at once (x, y, z, rx, ry, rz); kRejected in another mode. RT-safe.
  DriverStatus command_pose(std::span<const ActuatorCommand, kPoseAxes> pose) noexcept;
  [[nodiscard]] ActuatorState state() const noexcept override;
  [[nodiscard]] bool emergency_stop_input() const noexcept override;

  /// The force channel. @throws std::logic_error when no force_tag is configured.
  ForceSensorDriver& force_sensor();

  [[nodiscard]] DriverStatus health() const noexcept;
  [[nodiscard]] RsiDriverMetrics metrics() const noexcept;
  [[nodiscard]] RsiSample latest() const noexcept { return sample_.load(); }
  [[nodiscard]] std::uint16_t local_port() const noexcept { return socket_.port(); }
  /// Waits (not RT) until the robot was heard or `timeout` s passed: before arming.
  bool wait_for_robot(double timeout) const;

 private:
  struct Counters;
  struct Session;

  [[nodiscard]] double next_wake(double now) noexcept override;
  void before_receive(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  bool accept_ipoc(std::uint64_t ipoc, double now) noexcept;
  void publish(const rsi::RobotFrame& frame, double now) noexcept;
  void answer(bool at_deadline) noexcept;
  [[nodiscard]] double wire_value(const rsi::RobotFrame& frame) const noexcept;

  RsiDriverConfig config_;
  rsi::SensorFormat format_;  ///< views config_'s strings
  sockaddr_in robot_{};
  UdpSocket socket_;
  PacedReply reply_;
  SeqLock<RsiSample> sample_;
  std::unique_ptr<Counters> counters_;
  std::unique_ptr<Session> session_;  ///< I/O thread only
  std::unique_ptr<ForceSensorDriver> force_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
