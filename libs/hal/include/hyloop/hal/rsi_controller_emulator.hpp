#pragma once
// The KUKA controller's side of RSI, shipped as product: on a real UDP socket it sends a <Rob>
// (rsi_codec.hpp) to the sensor PC every cycle (4 or 12 ms) and moves the servo actuator
// emulator (servo_actuator_emulator.hpp, the robot's axis) by the corrections it gets back.
//
// Each cycle, on its own clock (absolute deadlines): first the reply to the previous <Rob> is
// judged: a <Sen> with its IPOC that arrived before this tick is applied; none is a late
// packet: Delay.D counts it and the correction is kept (HOLDON=1) or reset to 0 (HOLDON=0).
// Then one plant step under the held target, then one <Rob>: RIst and AIPos (actual: the start
// pose with the axis moved by the plant), RSol and ASPos (set point: moved by the held
// target), Delay.D, and IPOC = the previous + the cycle in ms (starting at `ipoc_start`).
//
// Corrections are absolute (RSI_ON(#ABSOLUTE)): target = correction[axis] / scale loop units from
// the start, as the driver converts (rsi_driver.hpp). Accepted only from the sensor's address
// and port, as a <Sen> of the configured Type with the correction element and the current IPOC
// (an older IPOC: a late reply, discarded and counted; the <Rob> it answers was already counted
// late). A correction beyond ±`correction_limit` (wire units) is clipped to it (the
// POSCORR/AXISCORR object's limits); one beyond ±`monitor_limit` stops RSI (the ...MON object).
//
// The whole pose (axis mode kPose, pose6.hpp): RKorr's six values (clipped and monitored each)
// are the offset from the start pose (rsi::loop_pose of a zero start) that `pose_plant` is held
// at; RIst and RSol carry the plant's pose and that target from the start pose, the axis angles
// stay at the start (no kinematics), and with `wrench` the force tag carries the plant's six
// values as Fx..Tz. The pose plant steps from the sensor's first answer on (at rest before it),
// so that its time, and a capture it schedules, counts from the session's start.
//
// The reflex (the ETHERNET object's Timeout, 100 by default; KR C4 README of kuka_experimental,
// its issue #71; whether the count is consecutive is not stated, we count them all, as Delay.D
// does): at `late_limit` late packets RSI stops: the target freezes where the axis is (it comes
// to rest there) and the controller stops sending (latched). The reply latency (<Rob> sent →
// its <Sen> received) is kept, up to `latency_samples` values.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/rsi_codec.hpp"
#include "hyloop/hal/rsi_driver.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/hal/udp_socket.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::hal {

struct RsiControllerEmulatorConfig {
  UdpEndpoint local{"127.0.0.1", 0};  ///< bound; <Rob> goes out from here
  UdpEndpoint sensor{"127.0.0.1", 49152};
  RsiAxis axis;                     ///< as the driver's
  std::string sen_type = "ImFree";  ///< SENTYPE
  std::string correction_tag;       ///< "" = RKorr (Cartesian) or AK (axis)
  rsi::Values start_pose{445.0, 0.0, 890.0, 180.0, 0.0, 180.0};  ///< mm, degrees
  rsi::Values start_axes{0.0, -90.0, 90.0, 0.0, 90.0, 0.0};      ///< degrees
  ServoActuatorConfig plant;  ///< the axis in loop units; plant.step is the cycle (4 or 12 ms)
  /// When set, the axis instead of the servo `plant` (whose step stays the device's cycle).
  std::shared_ptr<AxisPlant> axis_plant;
  bool hold_on = true;  ///< HOLDON: keep the correction on a late packet (else reset to 0)
  std::uint64_t late_limit = 100;  ///< late packets that stop RSI (ETHERNET Timeout); ≥ 1
  /// Count late packets (and the reflex) only once the sensor first answered: an operator starts
  /// RSI when the sensor PC is up, and `hyloop up --emulate-wire` starts this controller ahead
  /// of the stack whose driver answers it. false: from the first <Rob>, as RSI_ON does.
  bool wait_for_sensor = true;
  double correction_limit = 500.0;  ///< |correction| clipped to this, wire units; > 0
  double monitor_limit = 1000.0;    ///< |correction| beyond this stops RSI; ≥ correction_limit
  std::uint64_t ipoc_start = 3393226;
  std::string force_tag;  ///< "" = none; else the plant's force goes out as <tag attr=".."/>
  std::string force_attribute = "Fz";
  double force_scale = 1.0;  ///< N per wire unit, as the driver's
  /// kPose: the six-axis plant the pose moves (required; plant.step stays the cycle).
  std::shared_ptr<PosePlant> pose_plant;
  /// kPose: force_tag carries pose_plant's wrench as Fx..Tz (force_attribute unused).
  bool wrench = false;
  WireImpairments impairments;
  std::size_t latency_samples = 0;  ///< reply latencies kept (memory reserved up front)
};

struct RsiControllerEmulatorStats {
  std::uint64_t sent = 0;         ///< <Rob> datagrams
  std::uint64_t corrections = 0;  ///< replies applied
  std::uint64_t late = 0;         ///< Delay.D: cycles without a reply in time
  /// Σ over late packets of how many cycles in a row were late (so far): the command lag the
  /// plant saw under HOLDON=1.
  std::uint64_t late_weight = 0;
  std::uint64_t late_replies = 0;  ///< replies that came with an old IPOC (discarded)
  std::uint64_t clipped = 0;
  std::uint64_t rejected_foreign = 0;
  std::uint64_t rejected_malformed = 0;  ///< unparsable, another Type, oversized
  std::uint64_t dropped_out = 0;
  std::uint64_t dropped_in = 0;
  std::uint64_t late_ticks = 0;  ///< cycles the emulator's own clock started late by > period
  std::uint64_t ipoc = 0;        ///< of the newest <Rob>
  bool stopped = false;          ///< the reflex fired (late_limit or monitor_limit)
};

class RsiControllerEmulator final : private IoHandler {
 public:
  /// @throws std::invalid_argument naming the field; std::system_error when binding fails.
  explicit RsiControllerEmulator(const RsiControllerEmulatorConfig& config);
  ~RsiControllerEmulator() override;
  RsiControllerEmulator(const RsiControllerEmulator&) = delete;
  RsiControllerEmulator& operator=(const RsiControllerEmulator&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return socket_.port(); }
  [[nodiscard]] RsiControllerEmulatorStats stats() const noexcept;
  /// The axis' newest plant step (loop units, relative to the start). Wait-free.
  [[nodiscard]] ServoMeasurement plant() const noexcept { return plant_view_.load(); }
  /// kPose: the plant's newest step (loop units and rad, relative to the start). Wait-free.
  [[nodiscard]] PoseMeasurement pose_plant() const noexcept { return pose_view_.load(); }
  /// Stops the controller (it dies) and joins the I/O thread; idempotent.
  void stop();
  /// The reply latencies recorded (s); after stop().
  [[nodiscard]] const std::vector<double>& reply_latencies() const noexcept { return latencies_; }

 private:
  struct Counters;

  [[nodiscard]] double next_wake(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  void after_receive(double now) noexcept override;
  void tick(double now) noexcept;
  void judge_reply() noexcept;
  void stop_rsi() noexcept;
  [[nodiscard]] rsi::RobotFrame frame(double actual, double target) const noexcept;
  [[nodiscard]] rsi::RobotFrame pose_frame(const PoseMeasurement& m,
                                           const LoopPose& target) const noexcept;
  [[nodiscard]] bool pose() const noexcept { return config_.axis.mode == RsiMode::kPose; }

  RsiControllerEmulatorConfig config_;
  rsi::SensorFormat format_;
  sockaddr_in sensor_{};
  UdpSocket socket_;
  std::shared_ptr<AxisPlant> plant_;  ///< config_.axis_plant, or a servo of config_.plant
  SeqLock<ServoMeasurement> plant_view_;
  SeqLock<PoseMeasurement> pose_view_;
  std::unique_ptr<Counters> counters_;
  std::vector<double> latencies_;

  // I/O thread only.
  WireImpairer wire_;
  rsi::Values correction_{};  ///< held, wire units (one axis: its index)
  std::uint64_t ipoc_ = 0;
  bool started_ = false;   ///< a <Rob> was sent
  bool answered_ = false;  ///< a correction was applied
  bool replied_ = false;   ///< a reply to the newest <Rob> arrived
  std::uint64_t late_run_ = 0;
  bool reply_pending_ = false;
  rsi::Values reply_{};  ///< wire units
  bool stopped_ = false;
  double last_sent_at_ = 0.0;
  ControllerClock clock_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
