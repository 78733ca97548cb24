#include "hyloop/hal/egm_robot_emulator.hpp"

#include <sys/time.h>

#include <algorithm>
#include <cmath>

#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

struct EgmRobotEmulator::Counters {
  std::atomic<std::uint64_t> sent{0}, corrections{0}, missing_replies{0}, missing_weight{0},
      refused{0}, rejected_foreign{0}, rejected_malformed{0}, stale{0}, dropped_out{0},
      dropped_in{0}, late_ticks{0};
  std::atomic<bool> stopped{false};
};

namespace {

const EgmRobotEmulatorConfig& checked(const EgmRobotEmulatorConfig& c) {
  validate(c.axis);
  require(std::isfinite(c.reply_timeout) && c.reply_timeout >= 2.0 * c.plant.step, "reply_timeout",
          c.reply_timeout, "finite and >= 2 * plant.step");
  require(std::isfinite(c.max_deviation) && c.max_deviation > 0.0, "max_deviation", c.max_deviation,
          "finite and > 0 (loop units)");
  require(c.sensor.port != 0, "sensor.port", c.sensor.port, "1..65535");
  validate_force_index(c.force_index);
  const bool pose = c.axis.mode == EgmMode::kPose;
  if (pose && (!c.pose_plant || c.force_index >= 0)) {
    throw std::invalid_argument(
        "pose_plant: the whole pose (axis.mode pose) needs a six-axis plant and reports its "
        "wrench, not one force_index");
  }
  if (!pose && c.wrench) {
    throw std::invalid_argument("wrench: only the whole pose (axis.mode pose) reports the wrench");
  }
  return c;
}

}  // namespace

EgmRobotEmulator::EgmRobotEmulator(const EgmRobotEmulatorConfig& config)
    : config_(checked(config)),
      sensor_(to_sockaddr("sensor", config.sensor)),
      socket_("local", config.local),
      plant_(axis_or_servo(config_.axis_plant, config_.plant)),
      counters_(std::make_unique<Counters>()),
      wire_(config.impairments, 1.5 * config.plant.step),
      io_(socket_, {sensor_, false, egm::kMaxDatagram, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  latencies_.reserve(config.latency_samples);
  // The controller reports the orientation both ways (a sensor-side library may read either).
  config_.start_pose.orient = egm::orient_from_euler(config_.start_pose.euler);
  config_.start_pose.has_orient = true;
  plant_->reset(0.0);
  plant_view_.store(plant_->measurement());
  if (config_.pose_plant) {
    config_.pose_plant->reset({});
    pose_view_.store(config_.pose_plant->measurement());
  }
  started_at_ = monotonic_seconds();
  clock_.start(started_at_);
  io_.start(*this);
}

EgmRobotEmulator::~EgmRobotEmulator() { stop(); }

void EgmRobotEmulator::stop() { io_.stop(); }

EgmRobotEmulatorStats EgmRobotEmulator::stats() const noexcept {
  const Counters& c = *counters_;
  constexpr auto r = std::memory_order_relaxed;
  EgmRobotEmulatorStats s;
  s.sent = c.sent.load(r);
  s.corrections = c.corrections.load(r);
  s.missing_replies = c.missing_replies.load(r);
  s.missing_weight = c.missing_weight.load(r);
  s.refused = c.refused.load(r);
  s.rejected_foreign = c.rejected_foreign.load(r);
  s.rejected_malformed = c.rejected_malformed.load(r);
  s.stale = c.stale.load(r);
  s.dropped_out = c.dropped_out.load(r);
  s.dropped_in = c.dropped_in.load(r);
  s.late_ticks = c.late_ticks.load(r);
  s.stopped = c.stopped.load(r);
  return s;
}

double EgmRobotEmulator::next_wake(double /*now*/) noexcept {
  return wire_.next_due(clock_.next());
}

void EgmRobotEmulator::after_receive(double now) noexcept {
  const double period = config_.plant.step;
  bool slipped = false;
  if (clock_.due(now, period, slipped)) {
    if (slipped) bump(counters_->late_ticks);
    tick(now);
  }
  bump(counters_->sent, wire_.flush(socket_, sensor_, now));
}

egm::Pose EgmRobotEmulator::pose_at(double position) const noexcept {
  egm::Pose p = config_.start_pose;
  if (config_.axis.mode == EgmMode::kCartesian) {
    p.pos[static_cast<std::size_t>(config_.axis.index)] += config_.axis.scale * position;
  }
  return p;
}

void EgmRobotEmulator::tick(double now) noexcept {
  if (flowing_ && !stopped_ && now - last_correction_at_ > config_.reply_timeout) {
    stopped_ = true;  // the reflex: freeze where the axis is, latched
    held_ = plant_->measurement().true_displacement;
    if (config_.pose_plant) held_pose_ = config_.pose_plant->measurement().true_pose;
    counters_->stopped.store(true, std::memory_order_relaxed);
  }
  if (flowing_ && !answered_) {
    bump(counters_->missing_replies);
    bump(counters_->missing_weight, ++missing_run_);
  } else {
    missing_run_ = 0;
  }
  const ServoMeasurement& m =
      config_.axis.mode == EgmMode::kPose ? plant_->measurement() : plant_->step(held_);
  plant_view_.store(m);
  egm::RobotMessage r;
  r.seqno = seqno_++;
  r.tm = static_cast<std::uint32_t>(std::lround(1e3 * (now - started_at_)));
  r.has_joints = true;
  r.joints = config_.start_joints;
  r.has_pose = true;
  r.pose = pose_at(m.displacement);
  if (config_.axis.mode == EgmMode::kJoint) {
    r.joints[static_cast<std::size_t>(config_.axis.index)] += config_.axis.scale * m.displacement;
  }
  r.has_planned = true;
  r.planned = pose_at(held_);
  r.has_planned_joints = true;
  r.planned_joints = config_.start_joints;
  if (config_.axis.mode == EgmMode::kJoint) {
    r.planned_joints[static_cast<std::size_t>(config_.axis.index)] += config_.axis.scale * held_;
  }
  timeval wall{};
  ::gettimeofday(&wall, nullptr);
  r.has_clock = true;
  r.clock_sec = static_cast<std::uint64_t>(wall.tv_sec);
  r.clock_usec = static_cast<std::uint64_t>(wall.tv_usec);
  r.has_planned_clock = true;
  r.planned_clock_sec = r.clock_sec;
  r.planned_clock_usec = r.clock_usec;
  r.motor = egm::MotorState::kOn;
  r.mci = stopped_ ? egm::MciState::kStopped : egm::MciState::kRunning;
  r.rapid = egm::RapidState::kRunning;
  r.convergence_met = std::abs(m.true_displacement - held_) < 1e-4 * std::abs(config_.axis.scale);
  if (config_.force_index >= 0) {
    r.has_force = true;
    r.force[static_cast<std::size_t>(config_.force_index)] = m.force;
  }
  if (config_.axis.mode == EgmMode::kPose) fill_pose(r);
  std::array<std::uint8_t, egm::kMaxDatagram> frame{};
  const std::size_t n = codec_.encode_robot(r, frame);
  if (n == 0 || !wire_.submit({frame.data(), n}, now)) {
    bump(counters_->dropped_out);
  }
  last_sent_at_ = now;
  answered_ = false;
}

void EgmRobotEmulator::on_datagram(std::span<const std::uint8_t> datagram,
                                   const sockaddr_in& /*from*/, double now) noexcept {
  egm::Correction c;
  const bool joint = config_.axis.mode == EgmMode::kJoint;
  // The robot's motion (EGMActJoint or EGMActPose) decides which part it follows.
  if (codec_.parse_correction(datagram, c) != egm::ParseResult::kOk ||
      !(joint ? c.has_joints : c.has_pose)) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (wire_.lose_incoming()) {
    bump(counters_->dropped_in);
    return;
  }
  apply(c, now);
}

void EgmRobotEmulator::apply(const egm::Correction& c, double now) noexcept {
  if (have_correction_seqno_ && c.seqno != 0 &&
      sequence_delta(correction_seqno_, c.seqno, 32) <= 0) {
    bump(counters_->stale);
    return;
  }
  have_correction_seqno_ = true;
  correction_seqno_ = c.seqno;
  bump(counters_->corrections);
  if (!answered_ && latencies_.size() < latencies_.capacity()) {
    latencies_.push_back(now - last_sent_at_);
  }
  answered_ = true;
  flowing_ = true;
  last_correction_at_ = now;
  if (stopped_) {
    return;
  }
  if (config_.axis.mode == EgmMode::kPose) {
    apply_pose(c);
    return;
  }
  const auto i = static_cast<std::size_t>(config_.axis.index);
  const double wire = config_.axis.mode == EgmMode::kJoint
                          ? c.joints[i] - config_.start_joints[i]
                          : c.pose.pos[i] - config_.start_pose.pos[i];
  const double target = wire / config_.axis.scale;
  if (std::abs(target) > config_.max_deviation) {
    bump(counters_->refused);
    return;
  }
  held_ = target;
}

// The whole pose: one plant step under the held target, the pose and target on the wire.
void EgmRobotEmulator::fill_pose(egm::RobotMessage& r) noexcept {
  // The plant's time (a capture's engage cycle) starts with the session's first correction.
  const PoseMeasurement& m =
      flowing_ ? config_.pose_plant->step(held_pose_) : config_.pose_plant->measurement();
  pose_view_.store(m);
  r.pose = egm::wire_pose(m.pose, config_.start_pose, config_.axis.scale);
  r.planned = egm::wire_pose(held_pose_, config_.start_pose, config_.axis.scale);
  bool converged = true;
  for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
    converged = converged && std::abs(m.true_pose[i] - held_pose_[i]) < 1e-4;
  }
  r.convergence_met = converged;
  r.has_force = config_.wrench;
  if (config_.wrench) r.force = m.wrench;
}

void EgmRobotEmulator::apply_pose(const egm::Correction& c) noexcept {
  const egm::LoopPose target = egm::loop_pose(c.pose, config_.start_pose, config_.axis.scale);
  for (const double v : target) {
    if (!(std::abs(v) <= config_.max_deviation)) {
      bump(counters_->refused);
      return;
    }
  }
  held_pose_ = target;
}

}  // namespace hyloop::hal
