#pragma once
// The safety layer of the actuator service: the last stop before hardware (DESIGN.md §1).
// Every cycle the newest command (or none) goes through filter(), and only its output is sent
// to the ActuatorDriver. No output ever leaves the limits below.
//
// Notation: T = step (s); p, p⁻ = this and the previous output position (m); v = (p − p⁻)/T the
// output's implied velocity (m/s), v⁻ the previous one; a = limits.acceleration_max (m/s²);
// V = min(rate_limit, limits.velocity_max) (m/s); [p_min, p_max] = the position window (m).
//
// Invariants of every output (checked on 100 000 random commands by a property test):
//   p finite and p_min ≤ p ≤ p_max
//   |v| ≤ V                          (|Δp| ≤ V·T per call)
//   |v − v⁻| ≤ a·T                   (|implied acceleration| ≤ a)
//   |velocity feed-forward| ≤ limits.velocity_max
// up to floating-point rounding of the last bit. The output is kept able to stop inside the
// window: braking at a from v covers at most v²/(2a) (a discrete ramp covers less), so
//   v·T + v²/(2a) ≤ p_max − p⁻   (v ≥ 0),   symmetrically toward p_min,
// i.e. v ≤ V_stop(s) = 2s / (T·(1 + √(1 + 2s/(a·T²)))),  s = distance to the edge (= s/T for
// a = ∞). The same bound toward the commanded position avoids overshooting a clipped step.
//
// Per call, in this order:
//   1. E-stop (emergency_stop(), any thread, latched): commands are ignored; output the ramp.
//   2. Watchdog tripped (latched): commands are ignored; output the ramp.
//   3. No command (nullptr): missed; output a hold. A command that is not finite, outside the
//      window or with |velocity| > velocity_max (check_command) is rejected and counted; output
//      a hold. Each such cycle without a valid command counts toward the watchdog: after
//      watchdog_cycles consecutive ones it trips (that cycle already outputs the ramp).
//      trip_watchdog() trips it at once (the caller's own evidence that the commands are gone:
//      the actuator service's input deadline); the next call outputs the ramp.
//   4. A valid command: the desired implied velocity v_d = (p_cmd − p⁻)/T must lie in
//        [max(v⁻ − a·T, −V, −V_stop(p⁻ − p_min)), min(v⁻ + a·T, V, V_stop(p_max − p⁻))].
//      If it does, the output IS the command, bit for bit (position and velocity feed-forward).
//      Otherwise v is clipped into that interval and, so as not to overshoot the command, to
//      |v − v_c| ≤ V_stop(|p_cmd − p⁻|) on the side of the command, where v_c = the command
//      stream's own velocity (Δp_cmd over the cycles since the previous valid command; 0 after
//      arming); p = p⁻ + v·T, the velocity feed-forward becomes the implied velocity, `limited`
//      is set and the clip is counted: kRateLimited when |v| = V (rate_limit or velocity_max),
//      else kRejectedAcceleration (acceleration or stopping-distance bound). A clip moves as far
//      toward the command as allowed; it never holds.
//      Rejoining: after a clip, the output passes commands through again only when it can land
//      on one moving with the stream, |v_d − v_c| ≤ a·T (else a static target would be reached
//      at speed and overshot). With a = ∞ (the default) this adds nothing.
//   Hold: target velocity 0, i.e. exactly the previous output position with velocity 0 when a
//      is infinite (the default), else braking at a toward rest.
//   Ramp (watchdog, e-stop): |v| = max(|v⁻| − d·T, 0) with d = min(stop_deceleration, a), in
//      the direction of motion, cut short at the window edge; then at rest. An infinite
//      stop_deceleration (and a) holds at once.
//
// Stop time: |v| ≤ V falls by at least d·T a call and never reverses, so the ramp reaches rest
// within V/d; and a ramp lasting t covers at least d·t²/2 ≤ W = p_max − p_min, so within
// √(2W/d). The constructor refuses a configuration in which min(V/d, √(2W/d)) > kMaxStopTime,
// i.e. d < min_stop_deceleration(). The output is then at rest at most kMaxStopTime + 2T after
// emergency_stop() (one period until filter() takes the request, one for the last partial step).
//
// The velocity feed-forward sent with a hold, ramp or clip is the implied velocity v.
//
// Threads: emergency_stop() and estopped() may be called from any thread or a signal handler
// (lock-free atomics). Everything else belongs to the control thread that calls filter().
// filter(), emergency_stop(), the clear/rearm/reset calls and the accessors are RT-safe: no
// allocation, no locks, no exceptions.

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"

namespace hyloop::hal {

struct SafetyConfig {
  ActuatorLimits limits;  ///< position window (p_min < p_max), |v| max > 0, |a| max > 0
  double step = 0.002;    ///< T, s; finite, > 0 (the period at which filter() is called)
  /// Max |Δposition| per second of the output, m/s; > 0 (the output moves at most
  /// rate_limit·T per call).
  double rate_limit = std::numeric_limits<double>::infinity();
  int watchdog_cycles = 10;  ///< ≥ 1 consecutive cycles without a valid command → trip
  /// d, m/s²; > 0 (∞: stop at once), the ramp to rest; min(d, a) ≥ min_stop_deceleration().
  double stop_deceleration = std::numeric_limits<double>::infinity();
};

/// The longest an e-stop or watchdog ramp may take to bring the output to rest, s, from any
/// motion the limits allow (see "Stop time" above).
inline constexpr double kMaxStopTime = 1.0;

/// The least ramp deceleration min(stop_deceleration, limits.acceleration_max) that reaches rest
/// within kMaxStopTime = t: min(V/t, 2W/t²) (∞ when V and W are both unbounded).
[[nodiscard]] double min_stop_deceleration(const SafetyConfig& config) noexcept;

/// The longest the ramp can take to reach rest, s: min(V/d, √(2W/d)); 0 for d = ∞.
[[nodiscard]] double max_stop_time(const SafetyConfig& config) noexcept;

enum class SafetyEvent : std::uint8_t {
  kNone,                  ///< the output is the command
  kCommandMissed,         ///< no command this cycle: hold
  kRejectedNotFinite,     ///< hold
  kRejectedPosition,      ///< outside [position_min, position_max]: hold
  kRejectedVelocity,      ///< |velocity feed-forward| > velocity_max: hold
  kRejectedAcceleration,  ///< clipped by the acceleration (or stopping-distance) bound
  kRateLimited,           ///< clipped by rate_limit or velocity_max
  kWatchdogTripped,       ///< watchdog latched: ramp to rest, commands ignored
  kEstopped,              ///< e-stop latched: ramp to rest, commands ignored
};

struct SafetyOutput {
  ActuatorCommand command;                 ///< what to send to the driver
  bool limited = false;                    ///< a motion bound changed the output this cycle
  bool watchdog = false;                   ///< the watchdog is tripped
  bool estopped = false;                   ///< the e-stop is latched
  SafetyEvent event = SafetyEvent::kNone;  ///< why the output is not the command (the cause)
};

class ActuatorSafety {
 public:
  /// Starts at rest at the window point nearest 0.
  /// @throws std::invalid_argument naming the field, its value and the allowed range.
  explicit ActuatorSafety(const SafetyConfig& config);

  ActuatorSafety(const ActuatorSafety&) = delete;
  ActuatorSafety& operator=(const ActuatorSafety&) = delete;

  /// At rest at `position` (bumpless arming at the rig's actual position): clamped into the
  /// window; a non-finite value keeps the last output position. Clears the watchdog and all
  /// counters. Does NOT clear a latched e-stop (only clear_emergency_stop() does).
  void reset(double position) noexcept;

  /// One cycle. `command` is the newest command received for this cycle, or nullptr when none
  /// arrived. Returns what to send to the driver.
  SafetyOutput filter(const ActuatorCommand* command) noexcept;

  /// Latches the e-stop. Any thread, async-signal-safe. The next filter() call (i.e. within one
  /// control period) outputs the first step of the ramp to rest.
  void emergency_stop() noexcept;

  /// Clears the e-stop latch, only when the output is at rest and no request is pending that
  /// filter() has not yet seen. Returns whether it is now clear. Control thread.
  bool clear_emergency_stop() noexcept;

  /// Trips the watchdog now, as watchdog_cycles missed commands would (latched, counted in
  /// watchdog_trips()); the next filter() outputs the first step of the ramp to rest. Nothing
  /// when it is already tripped. Control thread.
  void trip_watchdog() noexcept;

  /// Clears a tripped watchdog, only at rest and not e-stopped: the output is placed at rest at
  /// `position` (as reset(), counters kept). Returns whether the watchdog is now clear (true,
  /// doing nothing, when it was not tripped). A fresh command after a trip never resumes by
  /// itself. Control thread.
  bool rearm(double position) noexcept;

  [[nodiscard]] bool estopped() const noexcept;
  [[nodiscard]] bool watchdog_tripped() const noexcept { return watchdog_; }
  /// The last output has zero implied velocity and zero velocity feed-forward.
  [[nodiscard]] bool at_rest() const noexcept;

  [[nodiscard]] std::uint64_t rejected_not_finite() const noexcept { return rejected_not_finite_; }
  [[nodiscard]] std::uint64_t rejected_position() const noexcept { return rejected_position_; }
  [[nodiscard]] std::uint64_t rejected_velocity() const noexcept { return rejected_velocity_; }
  /// Commands clipped by the acceleration or stopping-distance bound.
  [[nodiscard]] std::uint64_t rejected_acceleration() const noexcept {
    return rejected_acceleration_;
  }
  /// Commands clipped by rate_limit or velocity_max.
  [[nodiscard]] std::uint64_t rate_limited() const noexcept { return rate_limited_; }
  [[nodiscard]] std::uint64_t watchdog_trips() const noexcept { return watchdog_trips_; }
  /// Cycles with no command (nullptr), latched or not.
  [[nodiscard]] std::uint64_t missed_commands() const noexcept { return missed_commands_; }

  [[nodiscard]] const ActuatorCommand& last_output() const noexcept { return last_output_; }
  /// The last output's implied velocity (p − p⁻)/T, m/s.
  [[nodiscard]] double output_velocity() const noexcept { return velocity_; }
  [[nodiscard]] const SafetyConfig& config() const noexcept { return config_; }

 private:
  enum class Mode : std::uint8_t { kTrack, kHold, kRamp };

  /// Step 1 of filter(): this cycle's mode and event. Counts a rejected command, and trips the
  /// watchdog after watchdog_cycles consecutive cycles without a valid one.
  Mode decide(const ActuatorCommand* command, bool estop, SafetyEvent& event) noexcept;
  /// Step 2 of filter() for a valid command: nothing (the output is the command, recorded) when
  /// its implied velocity lies in [lo, hi] and it may rejoin, else the clipped velocity (counted,
  /// `out` says why).
  std::optional<double> track(const ActuatorCommand& command, double lo, double hi,
                              SafetyOutput& out) noexcept;
  void place_at_rest(double position) noexcept;
  /// The largest speed from which braking at a stops within `distance` (m).
  [[nodiscard]] double stop_speed(double distance) const noexcept;

  SafetyConfig config_;
  double speed_max_;        ///< V = min(rate_limit, velocity_max)
  double accel_step_;       ///< a·T
  double stop_decel_step_;  ///< min(stop_deceleration, a)·T

  ActuatorCommand last_output_;
  double velocity_ = 0.0;  ///< implied velocity of the last output
  bool watchdog_ = false;
  int cycles_without_command_ = 0;         ///< consecutive cycles without a valid command
  bool rejoining_ = false;                 ///< a command was clipped; not yet back on the stream
  bool has_command_ = false;               ///< a valid command since arming (for v_c)
  double last_command_position_ = 0.0;     ///< its position
  std::int64_t cycles_since_command_ = 0;  ///< cycles since it

  std::atomic<bool> estop_request_{false};  ///< set by emergency_stop(), taken by filter()
  std::atomic<bool> estop_latched_{false};  ///< written by the control thread only
  static_assert(std::atomic<bool>::is_always_lock_free);

  std::uint64_t rejected_not_finite_ = 0;
  std::uint64_t rejected_position_ = 0;
  std::uint64_t rejected_velocity_ = 0;
  std::uint64_t rejected_acceleration_ = 0;
  std::uint64_t rate_limited_ = 0;
  std::uint64_t watchdog_trips_ = 0;
  std::uint64_t missed_commands_ = 0;
};

}  // namespace hyloop::hal
