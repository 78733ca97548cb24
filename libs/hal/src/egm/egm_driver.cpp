#include "hyloop/hal/egm_driver.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "hyloop/hal/latest_force.hpp"
#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

void validate(const EgmAxis& axis) {
  const int max_index = axis.mode == EgmMode::kCartesian ? 2
                        : axis.mode == EgmMode::kJoint   ? static_cast<int>(egm::kJoints) - 1
                                                         : 0;
  require(axis.index >= 0 && axis.index <= max_index, "axis.index", axis.index,
          axis.mode == EgmMode::kCartesian ? "0..2 (x, y, z)"
          : axis.mode == EgmMode::kJoint   ? "0..5 (joint)"
                                           : "0 (the whole pose)");
  require(std::isfinite(axis.scale) && axis.scale != 0.0, "axis.scale", axis.scale,
          "finite and non-zero (wire units per loop unit)");
}

void validate_force_index(int force_index) {
  require(force_index >= -1 && force_index < static_cast<int>(egm::kJoints), "force_index",
          force_index, "-1 (none) or 0..5 (Fx, Fy, Fz, Tx, Ty, Tz)");
}

struct EgmDriver::Counters : ControllerLinkCounters {};

namespace {

std::span<const ActuatorLimits> paced_limits(const EgmDriverConfig& c) {
  if (c.axis.mode == EgmMode::kPose) return c.pose_limits;
  return {&c.limits, 1};
}

}  // namespace

struct EgmDriver::Session {
  egm::EgmCodec codec;
  bool active = false;
  std::uint32_t last_seqno = 0;
  egm::RobotMessage start;
  double start_value = 0.0;   ///< start[axis], wire units
  egm::LoopPose last_pose{};  ///< kPose
  std::uint32_t reply_seqno = 0;
  double last_value = 0.0;
  double last_clock = -1.0;
  // The EgmRobot awaiting its answer.
  egm::RobotMessage message;
  sockaddr_in from{};
  bool was_running = false;
  double opened_at = 0.0;
};

EgmDriver::EgmDriver(const EgmDriverConfig& config)
    : config_(config),
      robot_(to_sockaddr("robot", config.robot)),
      socket_("local", config.local),
      reply_(paced_limits(config_), config.reply_deadline, config.timeout),
      counters_(std::make_unique<Counters>()),
      session_(std::make_unique<Session>()),
      io_(socket_, {robot_, config.robot.port == 0, egm::kMaxDatagram, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  validate(config.axis);
  require(std::isfinite(config.period) && config.period > 0.0, "period", config.period,
          "finite and > 0 s");
  require(std::isfinite(config.reply_deadline) && config.reply_deadline > 0.0 &&
              config.reply_deadline < config.period,
          "reply_deadline", config.reply_deadline, "finite, in (0, period) s");
  require(std::isfinite(config.timeout) && config.timeout >= config.period, "timeout",
          config.timeout, "finite and >= period");
  validate_force_index(config.force_index);
  const bool pose = config.axis.mode == EgmMode::kPose;
  if (pose && config.force_index >= 0) {
    throw std::invalid_argument("force_index: the whole pose (axis.mode pose) reads the wrench");
  }
  if (!pose && config.wrench) {
    throw std::invalid_argument("wrench: only the whole pose (axis.mode pose) reads the wrench");
  }
  if (config.force_index >= 0) {
    force_ = std::make_unique<LatestForce<EgmDriver, &EgmSample::seqno>>(*this);
  }
  session_->opened_at = monotonic_seconds();
  io_.start(*this);
}

EgmDriver::~EgmDriver() { io_.stop(); }

ForceSensorDriver& EgmDriver::force_sensor() {
  if (!force_) {
    throw std::logic_error("the EGM driver has no force_index: no force in the EgmRobot");
  }
  return *force_;
}

DriverStatus EgmDriver::command(const ActuatorCommand& c) noexcept {
  return reply_.command(c, io_);  // kPose: one axis of six, rejected by PacedReply
}

DriverStatus EgmDriver::command_pose(
    std::span<const ActuatorCommand, egm::kPoseAxes> pose) noexcept {
  return reply_.command(std::span<const ActuatorCommand>(pose), io_);  // one axis: rejected
}

ActuatorState EgmDriver::state() const noexcept {
  const EgmSample s = sample_.load();
  return {s.position, s.velocity};
}

bool EgmDriver::emergency_stop_input() const noexcept { return reply_.link().device_stop(); }

DriverStatus EgmDriver::health() const noexcept { return reply_.health(); }

EgmDriverMetrics EgmDriver::metrics() const noexcept {
  return counters_->snapshot(reply_.metrics());
}

bool EgmDriver::wait_for_robot(double timeout) const {
  return poll_until([this] { return sample_.load().valid; }, timeout);
}

double EgmDriver::next_wake(double now) noexcept { return reply_.next_wake(now); }

void EgmDriver::before_receive(double now) noexcept {
  const PacedReply::Due due = reply_.due(now);
  if (due != PacedReply::Due::kNotYet) {
    answer(due == PacedReply::Due::kLate);
  }
}

double EgmDriver::wire_value(const egm::RobotMessage& m) const noexcept {
  const auto i = static_cast<std::size_t>(config_.axis.index);
  return config_.axis.mode == EgmMode::kJoint ? m.joints[i] : m.pose.pos[i];
}

void EgmDriver::on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                            double now) noexcept {
  egm::RobotMessage m;
  const bool joint = config_.axis.mode == EgmMode::kJoint;
  if (session_->codec.parse_robot(datagram, m) != egm::ParseResult::kOk ||
      (joint ? !m.has_joints : !m.has_pose) || ((force_ || config_.wrench) && !m.has_force)) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (!accept_sequence(m.seqno)) {
    return;
  }
  Session& s = *session_;
  if (reply_.awaiting()) {
    answer(true);  // the next EgmRobot is here: answer the previous one now
  }
  reply_.arrived(now);  // before the loop can see the message
  publish(m, now);
  s.message = m;
  s.from = from;
}

bool EgmDriver::accept_sequence(std::uint32_t seqno) noexcept {
  Session& s = *session_;
  if (!s.active || seqno == 0) {
    return true;  // a new session
  }
  const std::int64_t delta = sequence_delta(s.last_seqno, seqno, 32);
  if (delta == 0) {
    bump(counters_->duplicate);
    return false;
  }
  if (delta < 0) {
    bump(counters_->reordered);
    return false;
  }
  bump(counters_->lost, static_cast<std::uint64_t>(delta - 1));
  return true;
}

void EgmDriver::publish(const egm::RobotMessage& m, double now) noexcept {
  Session& s = *session_;
  const double value = wire_value(m);
  const double clock =
      m.has_clock ? static_cast<double>(m.clock_sec) + 1e-6 * static_cast<double>(m.clock_usec)
                  : -1.0;
  if (!s.active || m.seqno == 0) {
    s.active = true;
    s.start = m;
    s.start_value = value;
    s.reply_seqno = 0;
    reply_.restart();
    s.last_value = value;
    s.last_pose = egm::LoopPose{};
    s.last_clock = clock;
    s.was_running = false;
    bump(counters_->sessions);
  }
  double dt = config_.period;
  if (clock > 0.0 && s.last_clock > 0.0 && clock > s.last_clock) {
    dt = clock - s.last_clock;
  }
  EgmSample sample;
  sample.position = (value - s.start_value) / config_.axis.scale;
  sample.velocity = (value - s.last_value) / config_.axis.scale / dt;
  if (config_.force_index >= 0) {
    sample.force = m.force[static_cast<std::size_t>(config_.force_index)];
  }
  if (config_.axis.mode == EgmMode::kPose) {
    sample.pose = egm::loop_pose(m.pose, s.start.pose, config_.axis.scale);
    for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
      sample.twist[i] = (sample.pose[i] - s.last_pose[i]) / dt;
    }
    sample.position = sample.pose[0];
    sample.velocity = sample.twist[0];
    if (config_.wrench) sample.wrench = m.force;
    s.last_pose = sample.pose;
  }
  sample.seqno = m.seqno;
  sample.motor = m.motor;
  sample.mci = m.mci;
  sample.rapid = m.rapid;
  sample.received_at = now;
  sample.valid = true;
  sample_.store(sample);
  s.last_seqno = m.seqno;
  s.last_value = value;
  s.last_clock = clock;
  reply_.link().heard(now);
  bump(counters_->received);
  const bool running = m.motor == egm::MotorState::kOn && m.mci == egm::MciState::kRunning;
  if (s.was_running && !running) {
    reply_.link().device_stopped();
  }
  s.was_running = s.was_running || running;
}

void EgmDriver::answer(bool at_deadline) noexcept {
  Session& s = *session_;
  const egm::RobotMessage& m = s.message;
  const PacedReply::Answer a = reply_.take(at_deadline);
  egm::Correction c;
  c.seqno = s.reply_seqno++;
  c.tm = static_cast<std::uint32_t>(std::lround(1e3 * (reply_.received_at() - s.opened_at)));
  c.joint_mode = config_.axis.mode == EgmMode::kJoint;
  c.joints = m.joints;
  c.pose = m.pose;
  if (a.commanded) {
    // Commanded: the start pose, the loop's axis (or whole pose) moved to the target.
    const auto i = static_cast<std::size_t>(config_.axis.index);
    c.joints = s.start.joints;
    c.pose = s.start.pose;
    if (config_.axis.mode == EgmMode::kPose) {
      egm::LoopPose target{};
      std::copy_n(a.position.begin(), egm::kPoseAxes, target.begin());
      c.pose = egm::wire_pose(target, s.start.pose, config_.axis.scale);
    } else {
      (c.joint_mode ? c.joints[i] : c.pose.pos[i]) =
          s.start_value + config_.axis.scale * a.position[0];
    }
  }
  std::array<std::uint8_t, egm::kMaxDatagram> frame{};
  const std::size_t n = s.codec.encode_correction(c, frame);
  if (n > 0 && socket_.send_to({frame.data(), n}, s.from)) {
    reply_.sent(monotonic_seconds());
  }
}

}  // namespace hyloop::hal
