#include "hyloop/hal/rsi_controller_emulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

struct RsiControllerEmulator::Counters {
  std::atomic<std::uint64_t> sent{0}, corrections{0}, late{0}, late_weight{0}, late_replies{0},
      clipped{0}, rejected_foreign{0}, rejected_malformed{0}, dropped_out{0}, dropped_in{0},
      late_ticks{0}, ipoc{0};
  std::atomic<bool> stopped{false};
};

namespace {

const RsiControllerEmulatorConfig& checked(const RsiControllerEmulatorConfig& c) {
  validate(c.axis);
  require(c.plant.step == kRsiCycleFast || c.plant.step == kRsiCycleSlow, "plant.step",
          c.plant.step, "0.004 or 0.012 s (the RSI cycles)");
  require(c.late_limit >= 1, "late_limit", static_cast<double>(c.late_limit), ">= 1 packets");
  require(std::isfinite(c.correction_limit) && c.correction_limit > 0.0, "correction_limit",
          c.correction_limit, "finite and > 0 (wire units)");
  require(std::isfinite(c.monitor_limit) && c.monitor_limit >= c.correction_limit, "monitor_limit",
          c.monitor_limit, "finite and >= correction_limit");
  require(c.sensor.port != 0, "sensor.port", c.sensor.port, "1..65535");
  require(std::isfinite(c.force_scale) && c.force_scale != 0.0, "force_scale", c.force_scale,
          "finite and non-zero");
  if (!c.force_tag.empty() && (!rsi::is_name(c.force_tag) || !rsi::is_name(c.force_attribute))) {
    throw std::invalid_argument("force_tag, force_attribute: must be XML names (e.g. FT, Fz)");
  }
  const bool pose = c.axis.mode == RsiMode::kPose;
  if (pose && !c.pose_plant) {
    throw std::invalid_argument("pose_plant: the whole pose (axis.mode pose) needs a pose plant");
  }
  if (c.wrench && (!pose || c.force_tag.empty())) {
    throw std::invalid_argument("wrench: for the whole pose (axis.mode pose), under a force_tag");
  }
  return c;
}

}  // namespace

RsiControllerEmulator::RsiControllerEmulator(const RsiControllerEmulatorConfig& config)
    : config_(checked(config)),
      format_{config_.sen_type,
              config_.correction_tag.empty()
                  ? (config_.axis.mode == RsiMode::kAxis ? "AK" : "RKorr")
                  : std::string_view(config_.correction_tag),
              config_.axis.mode == RsiMode::kAxis},
      sensor_(to_sockaddr("sensor", config.sensor)),
      socket_("local", config.local),
      plant_(axis_or_servo(config_.axis_plant, config_.plant)),
      counters_(std::make_unique<Counters>()),
      wire_(config.impairments, 1.5 * config.plant.step),
      io_(socket_, {sensor_, false, rsi::kMaxDatagram, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  latencies_.reserve(config.latency_samples);
  plant_->reset(0.0);
  plant_view_.store(plant_->measurement());
  if (config_.pose_plant) {
    config_.pose_plant->reset({});
    pose_view_.store(config_.pose_plant->measurement());
  }
  clock_.start(monotonic_seconds());
  io_.start(*this);
}

RsiControllerEmulator::~RsiControllerEmulator() { stop(); }

void RsiControllerEmulator::stop() { io_.stop(); }

RsiControllerEmulatorStats RsiControllerEmulator::stats() const noexcept {
  const Counters& c = *counters_;
  constexpr auto r = std::memory_order_relaxed;
  RsiControllerEmulatorStats s;
  s.sent = c.sent.load(r);
  s.corrections = c.corrections.load(r);
  s.late = c.late.load(r);
  s.late_weight = c.late_weight.load(r);
  s.late_replies = c.late_replies.load(r);
  s.clipped = c.clipped.load(r);
  s.rejected_foreign = c.rejected_foreign.load(r);
  s.rejected_malformed = c.rejected_malformed.load(r);
  s.dropped_out = c.dropped_out.load(r);
  s.dropped_in = c.dropped_in.load(r);
  s.late_ticks = c.late_ticks.load(r);
  s.ipoc = c.ipoc.load(r);
  s.stopped = c.stopped.load(r);
  return s;
}

double RsiControllerEmulator::next_wake(double /*now*/) noexcept {
  return wire_.next_due(clock_.next());
}

void RsiControllerEmulator::after_receive(double now) noexcept {
  const double period = config_.plant.step;
  bool slipped = false;
  if (clock_.due(now, period, slipped)) {
    if (slipped) bump(counters_->late_ticks);
    tick(now);
  }
  bump(counters_->sent, wire_.flush(socket_, sensor_, now));
}

void RsiControllerEmulator::stop_rsi() noexcept {
  stopped_ = true;  // the reflex: freeze where the axis is, latched; no more <Rob>
  const auto i = static_cast<std::size_t>(config_.axis.index);
  if (pose()) {
    correction_ =
        rsi::wire_pose(config_.pose_plant->measurement().true_pose, {}, config_.axis.scale);
  } else {
    correction_[i] = config_.axis.scale * plant_->measurement().true_displacement;
  }
  counters_->stopped.store(true, std::memory_order_relaxed);
}

void RsiControllerEmulator::judge_reply() noexcept {
  if (reply_pending_) {
    reply_pending_ = false;
    const double limit = config_.correction_limit;
    const auto i = static_cast<std::size_t>(config_.axis.index);
    const std::size_t first = pose() ? 0 : i;
    const std::size_t last = pose() ? rsi::kValues : i + 1;
    bool clipped = false;
    for (std::size_t j = first; j < last; ++j) {
      if (std::abs(reply_[j]) > config_.monitor_limit) {
        stop_rsi();
        return;
      }
      clipped = clipped || std::abs(reply_[j]) > limit;
    }
    if (clipped) {
      bump(counters_->clipped);
    }
    for (std::size_t j = first; j < last; ++j)
      correction_[j] = std::clamp(reply_[j], -limit, limit);
    bump(counters_->corrections);
    late_run_ = 0;
    answered_ = true;
    return;
  }
  if (config_.wait_for_sensor && !answered_) {
    return;  // RSI is not on yet: the controller waits for the sensor
  }
  bump(counters_->late);
  bump(counters_->late_weight, ++late_run_);
  if (!config_.hold_on) {
    correction_ = {};  // HOLDON=0: the start pose again
  }
  if (counters_->late.load(std::memory_order_relaxed) >= config_.late_limit) {
    stop_rsi();
  }
}

rsi::RobotFrame RsiControllerEmulator::frame(double actual, double target) const noexcept {
  const auto i = static_cast<std::size_t>(config_.axis.index);
  const bool axis = config_.axis.mode == RsiMode::kAxis;
  rsi::RobotFrame f;
  f.has_rist = f.has_rsol = f.has_aipos = f.has_aspos = f.has_delay = true;
  f.rist = f.rsol = config_.start_pose;
  f.aipos = f.aspos = config_.start_axes;
  (axis ? f.aipos : f.rist)[i] += config_.axis.scale * actual;
  (axis ? f.aspos : f.rsol)[i] += config_.axis.scale * target;
  f.delay = counters_->late.load(std::memory_order_relaxed);
  f.has_extra = !config_.force_tag.empty();
  f.extra = plant_->measurement().force / config_.force_scale;
  f.ipoc = ipoc_;
  return f;
}

rsi::RobotFrame RsiControllerEmulator::pose_frame(const PoseMeasurement& m,
                                                  const LoopPose& target) const noexcept {
  rsi::RobotFrame f;
  f.has_rist = f.has_rsol = f.has_aipos = f.has_aspos = f.has_delay = true;
  f.rist = rsi::wire_pose(m.pose, config_.start_pose, config_.axis.scale);
  f.rsol = rsi::wire_pose(target, config_.start_pose, config_.axis.scale);
  f.aipos = f.aspos = config_.start_axes;
  f.delay = counters_->late.load(std::memory_order_relaxed);
  f.has_wrench = config_.wrench;
  for (std::size_t i = 0; i < rsi::kValues; ++i) f.wrench[i] = m.wrench[i] / config_.force_scale;
  f.ipoc = ipoc_;
  return f;
}

void RsiControllerEmulator::tick(double now) noexcept {
  if (started_ && !stopped_) {
    judge_reply();
  }
  const double target =
      correction_[static_cast<std::size_t>(config_.axis.index)] / config_.axis.scale;
  const LoopPose pose_target =
      pose() ? rsi::loop_pose(correction_, {}, config_.axis.scale) : LoopPose{};
  const ServoMeasurement& m = pose() ? plant_->measurement() : plant_->step(target);
  plant_view_.store(m);
  if (pose()) {
    // The pose plant's clock starts with the sensor's first answer.
    PosePlant& p = *config_.pose_plant;
    pose_view_.store(answered_ ? p.step(pose_target) : p.measurement());
  }
  if (stopped_) {
    return;
  }
  ipoc_ = started_ ? ipoc_ + static_cast<std::uint64_t>(std::lround(1e3 * config_.plant.step))
                   : config_.ipoc_start;
  started_ = true;
  replied_ = false;
  counters_->ipoc.store(ipoc_, std::memory_order_relaxed);
  std::array<std::uint8_t, rsi::kMaxDatagram> out{};
  const rsi::RobotFrame f = pose() ? pose_frame(config_.pose_plant->measurement(), pose_target)
                                   : frame(m.displacement, target);
  const std::size_t n =
      rsi::write_robot(f, out, {config_.force_tag, config_.force_attribute, config_.wrench});
  if (n == 0 || !wire_.submit({out.data(), n}, now)) {
    bump(counters_->dropped_out);
  }
  last_sent_at_ = now;
}

void RsiControllerEmulator::on_datagram(std::span<const std::uint8_t> datagram,
                                        const sockaddr_in& /*from*/, double now) noexcept {
  rsi::SensorFrame sen;
  if (rsi::parse_sensor(datagram, format_, sen) != rsi::ParseResult::kOk) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (wire_.lose_incoming()) {
    bump(counters_->dropped_in);
    return;
  }
  if (stopped_ || !started_ || sen.ipoc != ipoc_ || replied_) {
    bump(counters_->late_replies);  // an old IPOC (or a repeat): too late for its cycle
    return;
  }
  replied_ = true;
  reply_pending_ = true;
  reply_ = sen.correction;
  if (latencies_.size() < latencies_.capacity()) {
    latencies_.push_back(now - last_sent_at_);
  }
}

}  // namespace hyloop::hal
