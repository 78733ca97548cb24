#include "hyloop/hal/rsi_driver.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "hyloop/hal/latest_force.hpp"
#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

void validate(const RsiAxis& axis) {
  const int max_index = axis.mode == RsiMode::kCartesian ? 2
                        : axis.mode == RsiMode::kAxis    ? static_cast<int>(rsi::kValues) - 1
                                                         : 0;
  require(axis.index >= 0 && axis.index <= max_index, "axis.index", axis.index,
          axis.mode == RsiMode::kCartesian ? "0..2 (X, Y, Z)"
          : axis.mode == RsiMode::kAxis    ? "0..5 (A1..A6)"
                                           : "0 (the whole pose)");
  require(std::isfinite(axis.scale) && axis.scale != 0.0, "axis.scale", axis.scale,
          "finite and non-zero (wire units per loop unit)");
}

struct RsiDriver::Counters : ControllerLinkCounters {
  std::atomic<std::uint64_t> controller_delay{0};
};

struct RsiDriver::Session {
  bool active = false;
  std::uint64_t last_ipoc = 0;
  double last_heard = 0.0;
  double start_value = 0.0;  ///< wire units
  double last_value = 0.0;
  rsi::Values start_pose{};  ///< RIst at the start (kPose)
  LoopPose last_pose{};
  std::uint64_t ipoc = 0;  ///< of the <Rob> awaiting its answer
  sockaddr_in from{};
};

namespace {

rsi::SensorFormat format_of(const RsiDriverConfig& c) {
  const bool axis = c.axis.mode == RsiMode::kAxis;
  rsi::SensorFormat f{c.sen_type, c.correction_tag, axis};
  if (c.correction_tag.empty()) {
    f.tag = axis ? "AK" : "RKorr";
  }
  return f;
}

const RsiDriverConfig& checked(const RsiDriverConfig& c) {
  validate(c);
  return c;
}

std::span<const ActuatorLimits> paced_limits(const RsiDriverConfig& c) {
  if (c.axis.mode == RsiMode::kPose) return c.pose_limits;
  return {&c.limits, 1};
}

}  // namespace

void validate(const RsiDriverConfig& c) {
  validate(c.axis);
  require(c.period == kRsiCycleFast || c.period == kRsiCycleSlow, "period", c.period,
          "0.004 or 0.012 s (the RSI cycles)");
  require(std::isfinite(c.reply_deadline) && c.reply_deadline > 0.0 && c.reply_deadline < c.period,
          "reply_deadline", c.reply_deadline, "finite, in (0, period) s");
  require(std::isfinite(c.timeout) && c.timeout >= c.period, "timeout", c.timeout,
          "finite and >= period");
  require(std::isfinite(c.force_scale) && c.force_scale != 0.0, "force_scale", c.force_scale,
          "finite and non-zero (N per wire unit)");
  const bool pose = c.axis.mode == RsiMode::kPose;
  if (c.wrench && (!pose || c.force_tag.empty())) {
    throw std::invalid_argument(
        "wrench: the six-axis wrench is read for the whole pose (axis.mode pose) from a "
        "force_tag");
  }
  if (pose && !c.force_tag.empty() && !c.wrench) {
    throw std::invalid_argument("force_tag: the whole pose (axis.mode pose) reads the wrench");
  }
  if (!c.force_tag.empty() && (!rsi::is_name(c.force_tag) || !rsi::is_name(c.force_attribute))) {
    throw std::invalid_argument("force_tag = '" + c.force_tag + "', force_attribute = '" +
                                c.force_attribute + "': must be XML names (e.g. FT, Fz)");
  }
  // A writer that refuses the names would answer nothing: check once here.
  std::array<std::uint8_t, rsi::kMaxDatagram> probe{};
  if (rsi::write_sensor({}, format_of(c), probe) == 0) {
    throw std::invalid_argument("sen_type = '" + c.sen_type + "', correction_tag = '" +
                                c.correction_tag +
                                "': must be plain text and an XML name (e.g. ImFree, RKorr)");
  }
}

RsiDriver::RsiDriver(const RsiDriverConfig& config)
    : config_(checked(config)),
      format_(format_of(config_)),
      robot_(to_sockaddr("robot", config.robot)),
      socket_("local", config.local),
      reply_(paced_limits(config_), config.reply_deadline, config.timeout),
      counters_(std::make_unique<Counters>()),
      session_(std::make_unique<Session>()),
      io_(socket_, {robot_, config.robot.port == 0, rsi::kMaxDatagram, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  if (!config_.force_tag.empty() && !config_.wrench) {
    force_ = std::make_unique<LatestForce<RsiDriver, &RsiSample::ipoc>>(*this);
  }
  io_.start(*this);
}

RsiDriver::~RsiDriver() { io_.stop(); }

ForceSensorDriver& RsiDriver::force_sensor() {
  if (!force_) {
    throw std::logic_error("the RSI driver has no force_tag: no force in the <Rob>");
  }
  return *force_;
}

DriverStatus RsiDriver::command(const ActuatorCommand& c) noexcept {
  return reply_.command(c, io_);  // kPose: one axis of six, rejected by PacedReply
}

DriverStatus RsiDriver::command_pose(std::span<const ActuatorCommand, kPoseAxes> pose) noexcept {
  return reply_.command(std::span<const ActuatorCommand>(pose), io_);  // one axis: rejected
}

ActuatorState RsiDriver::state() const noexcept {
  const RsiSample s = sample_.load();
  return {s.position, s.velocity};
}

bool RsiDriver::emergency_stop_input() const noexcept { return reply_.link().device_stop(); }

DriverStatus RsiDriver::health() const noexcept { return reply_.health(); }

RsiDriverMetrics RsiDriver::metrics() const noexcept {
  RsiDriverMetrics m{counters_->snapshot(reply_.metrics())};
  m.controller_delay = counters_->controller_delay.load(std::memory_order_relaxed);
  return m;
}

bool RsiDriver::wait_for_robot(double timeout) const {
  return poll_until([this] { return sample_.load().valid; }, timeout);
}

double RsiDriver::next_wake(double now) noexcept { return reply_.next_wake(now); }

void RsiDriver::before_receive(double now) noexcept {
  const PacedReply::Due due = reply_.due(now);
  if (due != PacedReply::Due::kNotYet) {
    answer(due == PacedReply::Due::kLate);
  }
}

double RsiDriver::wire_value(const rsi::RobotFrame& f) const noexcept {
  const auto i = static_cast<std::size_t>(config_.axis.index);
  return config_.axis.mode == RsiMode::kAxis ? f.aipos[i] : f.rist[i];
}

void RsiDriver::on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                            double now) noexcept {
  rsi::RobotFrame f;
  const bool axis = config_.axis.mode == RsiMode::kAxis;
  const rsi::Extra force{config_.force_tag, config_.force_attribute, config_.wrench};
  if (rsi::parse_robot(datagram, f, force) != rsi::ParseResult::kOk ||
      (axis ? !f.has_aipos : !f.has_rist) ||
      (!force.tag.empty() && !(config_.wrench ? f.has_wrench : f.has_extra))) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (!accept_ipoc(f.ipoc, now)) {
    return;
  }
  if (reply_.awaiting()) {
    answer(true);  // the next <Rob> is here: answer the previous one now
  }
  reply_.arrived(now);  // before the loop can see the frame
  publish(f, now);
  session_->ipoc = f.ipoc;
  session_->from = from;
}

bool RsiDriver::accept_ipoc(std::uint64_t ipoc, double now) noexcept {
  Session& s = *session_;
  if (!s.active || now - s.last_heard > config_.timeout) {
    s.active = false;
    return true;  // a new session
  }
  if (ipoc == s.last_ipoc) {
    bump(counters_->duplicate);
    return false;
  }
  if (ipoc < s.last_ipoc) {
    bump(counters_->reordered);
    return false;
  }
  const auto cycle_ms = static_cast<double>(std::lround(1e3 * config_.period));
  const auto cycles = std::llround(static_cast<double>(ipoc - s.last_ipoc) / cycle_ms);
  bump(counters_->lost, static_cast<std::uint64_t>(std::max(cycles - 1, 0LL)));
  return true;
}

void RsiDriver::publish(const rsi::RobotFrame& f, double now) noexcept {
  Session& s = *session_;
  const double value = wire_value(f);
  double dt = config_.period;
  if (!s.active) {
    s.active = true;
    s.start_value = value;
    s.start_pose = f.rist;
    s.last_pose = LoopPose{};
    reply_.restart();
    s.last_value = value;
    bump(counters_->sessions);
  } else {
    dt = 1e-3 * static_cast<double>(f.ipoc - s.last_ipoc);
  }
  RsiSample sample;
  sample.position = (value - s.start_value) / config_.axis.scale;
  sample.velocity = (value - s.last_value) / config_.axis.scale / dt;
  sample.ipoc = f.ipoc;
  sample.force = config_.force_scale * f.extra;
  sample.delay = f.delay;
  if (config_.axis.mode == RsiMode::kPose) {
    sample.pose = rsi::loop_pose(f.rist, s.start_pose, config_.axis.scale);
    for (std::size_t i = 0; i < kPoseAxes; ++i) {
      sample.twist[i] = (sample.pose[i] - s.last_pose[i]) / dt;
      sample.wrench[i] = config_.force_scale * f.wrench[i];
    }
    sample.position = sample.pose[0];
    sample.velocity = sample.twist[0];
    s.last_pose = sample.pose;
  }
  sample.received_at = now;
  sample.valid = true;
  sample_.store(sample);
  s.last_ipoc = f.ipoc;
  s.last_value = value;
  s.last_heard = now;
  reply_.link().heard(now);
  bump(counters_->received);
  counters_->controller_delay.store(f.delay, std::memory_order_relaxed);
  if (config_.late_limit > 0 && f.delay > config_.late_limit) {
    reply_.link().device_stopped();
  }
}

void RsiDriver::answer(bool at_deadline) noexcept {
  const PacedReply::Answer a = reply_.take(at_deadline);
  rsi::SensorFrame reply;
  reply.ipoc = session_->ipoc;
  if (a.commanded && config_.axis.mode == RsiMode::kPose) {
    LoopPose target{};
    std::copy_n(a.position.begin(), kPoseAxes, target.begin());
    reply.correction = rsi::wire_pose(target, {}, config_.axis.scale);  // offset from the start
  } else if (a.commanded) {
    reply.correction[static_cast<std::size_t>(config_.axis.index)] =
        config_.axis.scale * a.position[0];
  }
  std::array<std::uint8_t, rsi::kMaxDatagram> frame{};
  const std::size_t n = rsi::write_sensor(reply, format_, frame);
  if (n > 0 && socket_.send_to({frame.data(), n}, session_->from)) {
    reply_.sent(monotonic_seconds());
  }
}

}  // namespace hyloop::hal
