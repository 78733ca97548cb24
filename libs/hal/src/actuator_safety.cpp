#include "hyloop/hal/actuator_safety.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "require.hpp"

namespace hyloop::hal {

using detail::require;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxFinite = std::numeric_limits<double>::max();

/// x clamped into [lo, hi]; hi wins if rounding left lo > hi (hi carries the window bound).
double clip(double x, double lo, double hi) noexcept { return std::min(std::max(x, lo), hi); }

double finite_or_max(double v) noexcept {
  return std::isfinite(v) ? v : std::copysign(kMaxFinite, v);
}

double speed_bound(const SafetyConfig& c) noexcept {
  return std::min(c.rate_limit, c.limits.velocity_max);
}

double window_width(const SafetyConfig& c) noexcept {
  return c.limits.position_max - c.limits.position_min;
}

/// Refuses a ramp deceleration (stop_deceleration or limits.acceleration_max) below d_min.
void require_stop(double value, double d_min, const SafetyConfig& c, const char* field) {
  if (value >= d_min) {
    return;
  }
  std::ostringstream msg;
  msg << field << " = " << value << ": must be >= " << d_min
      << " m/s^2 so that a stop ramp reaches rest within " << kMaxStopTime
      << " s from the speed bound " << speed_bound(c) << " m/s or across the window "
      << window_width(c) << " m (bound the speed or the window, or stop at once: inf)";
  throw std::invalid_argument(msg.str());
}

}  // namespace

double min_stop_deceleration(const SafetyConfig& config) noexcept {
  constexpr double t = kMaxStopTime;
  return std::min(speed_bound(config) / t, 2.0 * window_width(config) / (t * t));
}

double max_stop_time(const SafetyConfig& config) noexcept {
  const double d = std::min(config.stop_deceleration, config.limits.acceleration_max);
  if (d == kInf) {
    return 0.0;
  }
  return std::min(speed_bound(config) / d, std::sqrt(2.0 * window_width(config) / d));
}

ActuatorSafety::ActuatorSafety(const SafetyConfig& config) : config_(config) {
  const ActuatorLimits& l = config.limits;
  require(std::isfinite(config.step) && config.step > 0.0, "step", config.step, "finite and > 0 s");
  require(!std::isnan(l.position_min) && l.position_min < l.position_max, "limits.position_min",
          l.position_min, "< limits.position_max (m)");
  require(!std::isnan(l.position_max) && l.position_max > l.position_min, "limits.position_max",
          l.position_max, "> limits.position_min (m)");
  require(l.velocity_max > 0.0, "limits.velocity_max", l.velocity_max, "> 0 m/s (inf allowed)");
  require(l.acceleration_max > 0.0, "limits.acceleration_max", l.acceleration_max,
          "> 0 m/s^2 (inf allowed)");
  require(config.rate_limit > 0.0, "rate_limit", config.rate_limit, "> 0 m/s (inf allowed)");
  require(config.watchdog_cycles >= 1, "watchdog_cycles", config.watchdog_cycles, ">= 1 cycles");
  require(config.stop_deceleration > 0.0, "stop_deceleration", config.stop_deceleration,
          "> 0 m/s^2 (inf: stop at once)");
  const double d_min = min_stop_deceleration(config);
  require_stop(config.stop_deceleration, d_min, config, "stop_deceleration");
  require_stop(l.acceleration_max, d_min, config, "limits.acceleration_max");
  speed_max_ = std::min(config.rate_limit, l.velocity_max);
  accel_step_ = l.acceleration_max * config.step;
  stop_decel_step_ = std::min(config.stop_deceleration, l.acceleration_max) * config.step;
  place_at_rest(0.0);
}

void ActuatorSafety::place_at_rest(double position) noexcept {
  if (!std::isfinite(position)) {
    position = last_output_.position;
  }
  last_output_.position =
      std::clamp(position, config_.limits.position_min, config_.limits.position_max);
  last_output_.velocity = 0.0;
  velocity_ = 0.0;
  rejoining_ = false;
  has_command_ = false;
}

void ActuatorSafety::reset(double position) noexcept {
  place_at_rest(position);
  watchdog_ = false;
  cycles_without_command_ = 0;
  rejected_not_finite_ = 0;
  rejected_position_ = 0;
  rejected_velocity_ = 0;
  rejected_acceleration_ = 0;
  rate_limited_ = 0;
  watchdog_trips_ = 0;
  missed_commands_ = 0;
}

double ActuatorSafety::stop_speed(double distance) const noexcept {
  // v·T + v²/(2a) ≤ s  ⇔  v ≤ 2s / (T·(1 + √(1 + 2s/(a·T²))))  (rationalised: no cancellation,
  // no overflow for large a; a = ∞ gives s/T).
  if (!(distance > 0.0)) {
    return 0.0;
  }
  if (distance == kInf) {
    return kInf;
  }
  const double t = config_.step;
  const double a = config_.limits.acceleration_max;
  if (a == kInf) {
    return distance / t;
  }
  return 2.0 * distance / (t * (1.0 + std::sqrt(1.0 + 2.0 * distance / (a * t * t))));
}

ActuatorSafety::Mode ActuatorSafety::decide(const ActuatorCommand* command, bool estop,
                                            SafetyEvent& event) noexcept {
  if (estop) {
    event = SafetyEvent::kEstopped;
    return Mode::kRamp;
  }
  if (watchdog_) {
    event = SafetyEvent::kWatchdogTripped;
    return Mode::kRamp;
  }
  if (command == nullptr) {
    event = SafetyEvent::kCommandMissed;
  } else {
    switch (check_command(*command, config_.limits)) {
      case LimitVerdict::kOk:
        cycles_without_command_ = 0;
        return Mode::kTrack;
      case LimitVerdict::kNotFinite:
        ++rejected_not_finite_;
        event = SafetyEvent::kRejectedNotFinite;
        break;
      case LimitVerdict::kPositionLimit:
        ++rejected_position_;
        event = SafetyEvent::kRejectedPosition;
        break;
      case LimitVerdict::kVelocityLimit:
        ++rejected_velocity_;
        event = SafetyEvent::kRejectedVelocity;
        break;
    }
  }
  if (++cycles_without_command_ >= config_.watchdog_cycles) {
    cycles_without_command_ = 0;
    watchdog_ = true;
    ++watchdog_trips_;
    event = SafetyEvent::kWatchdogTripped;
    return Mode::kRamp;
  }
  return Mode::kHold;
}

std::optional<double> ActuatorSafety::track(const ActuatorCommand& command, double lo, double hi,
                                            SafetyOutput& out) noexcept {
  const double t = config_.step;
  const double p0 = last_output_.position;
  // The command stream's own velocity: v_c = Δp_cmd / (n·T) over the n cycles since the last
  // valid command (0 when there is none since arming).
  double v_c = 0.0;
  if (has_command_) {
    v_c = finite_or_max((command.position - last_command_position_) /
                        (static_cast<double>(cycles_since_command_) * t));
  }
  has_command_ = true;
  last_command_position_ = command.position;
  cycles_since_command_ = 0;

  const double v_d = (command.position - p0) / t;
  if (v_d >= lo && v_d <= hi && (!rejoining_ || std::abs(v_d - v_c) <= accel_step_)) {
    rejoining_ = false;
    out.command = command;
    velocity_ = finite_or_max(v_d);
    last_output_ = out.command;
    return std::nullopt;
  }
  // Clip, and pursue the command so that the output does not overshoot it: relative to the
  // stream, |v − v_c| ≤ V_stop(|p_cmd − p⁻|).
  rejoining_ = true;
  double l = lo;
  double h = hi;
  const double s = command.position - p0;
  if (s > 0.0) {
    h = std::max(l, std::min(h, v_c + stop_speed(s)));
  } else if (s < 0.0) {
    l = std::min(h, std::max(l, v_c - stop_speed(-s)));
  }
  const double v = clip(v_d, l, h);
  out.limited = true;
  if (std::abs(v) >= speed_max_) {
    ++rate_limited_;
    out.event = SafetyEvent::kRateLimited;
  } else {
    ++rejected_acceleration_;
    out.event = SafetyEvent::kRejectedAcceleration;
  }
  return v;
}

SafetyOutput ActuatorSafety::filter(const ActuatorCommand* command) noexcept {
  SafetyOutput out;
  if (estop_request_.exchange(false, std::memory_order_acq_rel)) {
    estop_latched_.store(true, std::memory_order_release);
  }
  const bool estop = estop_latched_.load(std::memory_order_relaxed);
  if (command == nullptr) {
    ++missed_commands_;
  }
  if (has_command_) {
    ++cycles_since_command_;  // ≥ 1 from here on
  }

  // 1. What the output should do this cycle.
  const Mode mode = decide(command, estop, out.event);

  // 2. The admissible implied velocities: acceleration, speed, and able to stop in the window.
  const double t = config_.step;
  const double p0 = last_output_.position;
  const double v0 = velocity_;
  const double p_min = config_.limits.position_min;
  const double p_max = config_.limits.position_max;
  const double lo = std::max({v0 - accel_step_, -speed_max_, -stop_speed(p0 - p_min)});
  const double hi = std::min({v0 + accel_step_, speed_max_, stop_speed(p_max - p0)});

  double v = 0.0;
  if (mode == Mode::kTrack) {
    const std::optional<double> clipped = track(*command, lo, hi, out);
    if (!clipped) {  // the command itself, bit for bit
      out.watchdog = watchdog_;
      out.estopped = estop;
      return out;
    }
    v = *clipped;
  } else {
    double v_target = 0.0;  // hold
    if (mode == Mode::kRamp) {
      v_target = std::abs(v0) <= stop_decel_step_ ? 0.0 : v0 - std::copysign(stop_decel_step_, v0);
    }
    v = clip(v_target, lo, hi);
    out.limited = v != v_target;
  }

  // 3. Integrate, stay in the window and finite.
  double p = v == 0.0 ? p0 : std::clamp(p0 + v * t, p_min, p_max);
  if (!std::isfinite(p)) {
    p = p0;
  }
  const double implied = finite_or_max((p - p0) / t);
  velocity_ = implied;
  last_output_.position = p;
  last_output_.velocity =
      std::clamp(implied, -config_.limits.velocity_max, config_.limits.velocity_max);
  out.command = last_output_;
  out.watchdog = watchdog_;
  out.estopped = estop;
  return out;
}

void ActuatorSafety::emergency_stop() noexcept {
  estop_request_.store(true, std::memory_order_release);
}

bool ActuatorSafety::estopped() const noexcept {
  return estop_latched_.load(std::memory_order_acquire) ||
         estop_request_.load(std::memory_order_acquire);
}

bool ActuatorSafety::at_rest() const noexcept {
  return velocity_ == 0.0 && last_output_.velocity == 0.0;
}

bool ActuatorSafety::clear_emergency_stop() noexcept {
  // A request filter() has not yet taken stays pending: it must first ramp the output down.
  // A request arriving after this check is taken by the next filter() call, so none is lost.
  if (estop_request_.load(std::memory_order_acquire)) {
    return false;
  }
  if (!estop_latched_.load(std::memory_order_relaxed)) {
    return true;
  }
  if (!at_rest()) {
    return false;
  }
  estop_latched_.store(false, std::memory_order_release);
  cycles_without_command_ = 0;
  rejoining_ = false;
  has_command_ = false;
  return true;
}

void ActuatorSafety::trip_watchdog() noexcept {
  if (watchdog_) {
    return;
  }
  cycles_without_command_ = 0;
  watchdog_ = true;
  ++watchdog_trips_;
}

bool ActuatorSafety::rearm(double position) noexcept {
  if (!watchdog_) {
    return true;
  }
  if (estopped() || !at_rest()) {
    return false;
  }
  watchdog_ = false;
  cycles_without_command_ = 0;
  place_at_rest(position);
  return true;
}

}  // namespace hyloop::hal
