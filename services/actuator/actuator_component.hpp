#pragma once
// The actuator command service: the last stop before hardware. Commands of cycle k+1 from the
// dynamics go through hal::ActuatorStage (the hold of the control period, then
// hal::ActuatorSafety: position, velocity, acceleration limits, rate limit, watchdog, e-stop) to
// the driver; nothing outside the limits ever reaches it. Lockstep: a cycle runs when its
// command is there; if none arrives for `watchdog_wall_timeout`, the dynamics is taken as lost
// and the watchdog path runs cycle by cycle (the rig is stepped through the stopping ramp).
// Real time: each cycle waits at most 1.5·T for its command; a missing one counts towards the
// watchdog (the actuator holds). The command input has a deadline (runtime::InputDeadline,
// issue 27 finding 8): silent for max(input_deadline_periods control periods,
// input_deadline_floor_ms) (defaults 2 and 20 ms) since the last command arrived, the dynamics
// (or anything upstream of it) counts as lost and the
// watchdog trips at once, counted in hyloop_input_deadline_expired_total; the stop then goes as
// a watchdog stop always goes (its first ramp command at the next latch, sent without waiting).
// E-stop latches at once and takes effect at the next latch of the control period: in real time the
// wait for a command looks at the request every kEstopPoll, and once one is seen the cycles up to
// that latch go out at once, without waiting for commands (the e-stopped dynamics sends none), so
// the first command of the stopping ramp leaves within about kEstopPoll of the request instead of
// up to two command waits (1.5·T each) later; the ramp then runs at the loop's pace. The time from
// the request (the EmergencyStop call's arrival) to the first stopping command sent is measured and
// reported in telemetry (estop_latency[ns]). When the rig is at rest after a watchdog trip or an
// e-stop (also one latched because the coordinator was lost: runtime::LoopComponent), the loop ends
// and logs (warn) the cause, the time from the trip or request to the first stopping command and to
// rest: the numbers of docs/reliability.md. A Deactivate in the middle of a real-time run (the run
// stopped, or another client) ramps the rig to rest first (at most stop_ramp_limit()). Loop
// latency: arrival of the command − the rig's sample time it derives from.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/hal/actuator_stage.hpp"
#include "hyloop/runtime/loop_component.hpp"

namespace hyloop::services {

/// Real time: how long a Deactivate mid-run lets the safety layer's ramp bring the rig to rest
/// before the loop ends anyway (the rig then holds the last command): the ramp's own bound,
/// hal::kMaxStopTime + 2 control periods, plus 25% for the timer's lateness, so that the ramp
/// of an accepted scenario is never cut short.
[[nodiscard]] inline std::chrono::nanoseconds stop_ramp_limit(double control_period_s) noexcept {
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(1.25e9 * (hal::kMaxStopTime + 2.0 * control_period_s)));
}
/// Real time: how often the wait for a command looks for an emergency stop request.
inline constexpr std::chrono::milliseconds kEstopPoll{1};

class ActuatorComponent final : public runtime::LoopComponent {
 public:
  ActuatorComponent();

  /// Lockstep: the wall-clock time without a command after which the dynamics counts as lost.
  void set_watchdog_wall_timeout(std::chrono::milliseconds t) noexcept { wall_timeout_ = t; }
  /// The verdicts on received commands (malformed, wrong run, duplicate, …).
  [[nodiscard]] const transport::VerdictCounters* command_verdicts() const noexcept {
    return commands_ ? &commands_->counters() : nullptr;
  }
  /// The safety layer (limit, watchdog and e-stop counters); nullptr before configure.
  [[nodiscard]] const hal::ActuatorSafety* safety() const noexcept {
    return stage_ ? &stage_->safety() : nullptr;
  }
  /// Nanoseconds from the e-stop request to the first stopping command sent (0: not yet).
  [[nodiscard]] std::int64_t estop_latency_ns() const noexcept { return estop_latency_.load(); }
  /// Real time: nanoseconds from the last command's arrival to the trip when the input's
  /// deadline found the dynamics lost (0: it did not).
  [[nodiscard]] std::int64_t silence_at_trip_ns() const noexcept { return silence_ns_.load(); }
  /// Nanoseconds from the watchdog trip or e-stop request to the rig at rest (0: not yet).
  [[nodiscard]] std::int64_t time_to_rest_ns() const noexcept { return time_to_rest_.load(); }

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  /// Runs cycle c with `command` (nullptr: none). Returns false when the rig is at rest after a
  /// watchdog trip or an e-stop (nothing more to send).
  bool cycle(std::uint64_t c, const v2::Frame* command) noexcept;
  /// The command frame to the rig (set point, rate) after the safety layer.
  /// out_ = every axis's applied command.
  void set_out() noexcept;

  /// Real time: waits for the next command up to `rt_wait` (1.5·T) or the input's deadline,
  /// looking for a stop every kEstopPoll; past the deadline with none, trips the watchdog (the
  /// upstream is lost). nullptr: no command.
  const v2::Frame* wait_command(std::chrono::nanoseconds rt_wait) noexcept;
  /// An e-stop request or a watchdog trip that is not in the output yet (it is at the next
  /// latch): the cycles up to that latch go out without waiting.
  [[nodiscard]] bool stop_pending() const noexcept;
  /// The cause logged for a watchdog stop (with the silence when the input deadline tripped it).
  [[nodiscard]] std::string watchdog_cause() const;
  /// Real time, stopped mid-run at cycle c: ramps the rig to rest (at most stop_ramp_limit()),
  /// then reports the stop.
  void ramp_to_rest(std::uint64_t c) noexcept;
  /// Notes the time (and loop cycle) of the first stop request of the run. Any thread.
  void note_stop_request() noexcept;
  /// Logs (warn) and reports why the loop ended with the rig stopped: `cause`, the first
  /// stopping command and the time to rest after the request (`requested`) or the trip. Once,
  /// after the last cycle.
  void report_stop(std::uint64_t c, const std::string& cause, bool requested);
  /// Declares every registered kind's command gauges.
  void declare_command_gauges();
  /// Sets the gauges of the configured kind's command quantity (the others: NaN).
  void show_command_quantity(const experiment::CommandGauges& spec);
  /// Adds the safety layer's new limit hits to hyloop_actuator_limit_hits_total (loop thread).
  void count_limit_hits() noexcept;

  // Metrics: the input dynamics_to_actuator, sample_to_command, the output command, the limits,
  // limit hits by kind (position, velocity, acceleration, rate, not_finite), watchdog, e-stop.
  std::size_t input_;
  runtime::HistogramSlot sample_to_command_;
  /// The command gauges of every registered kind (experiment::CommandGauges), declared at
  /// construction: the configured kind's are set, the others read NaN.
  struct QuantityGauges {
    std::string metric;
    runtime::GaugeSlot command, limit_min, limit_max;
  };
  std::vector<QuantityGauges> command_gauges_;
  runtime::GaugeSlot command_;  // the configured kind's (detached: none)
  double command_scale_ = 1.0;  // loop unit → its metric's unit
  runtime::GaugeSlot watchdog_;
  runtime::GaugeSlot estop_;
  static constexpr std::size_t kLimitKinds = 5;
  std::array<runtime::CounterSlot, kLimitKinds> limit_hits_;
  std::array<std::uint64_t, kLimitKinds> limit_seen_{};

  experiment::LoopPlan plan_;
  std::optional<hal::ActuatorStage> stage_;
  std::unique_ptr<transport::LoopInput<v2::Frame>> commands_;
  std::unique_ptr<transport::LoopOutput> to_rig_;
  v2::Frame out_;
  std::chrono::milliseconds wall_timeout_{1000};
  std::atomic<std::int64_t> estop_request_ns_{0};
  std::atomic<std::int64_t> estop_latency_{0};
  // Loop cycles run, and at the stop request (any thread); the cycles between the request and
  // the first stopping command (wall time includes the OS scheduling; cycles do not).
  std::atomic<std::uint64_t> cycles_run_{0};
  std::atomic<std::uint64_t> estop_request_cycles_{0};
  std::atomic<std::uint64_t> estop_reaction_cycles_{0};
  std::int64_t trip_ns_ = 0;                 // loop thread: when the watchdog tripped (0: not)
  std::int64_t deadline_trip_ns_ = 0;        // loop thread: when the input deadline tripped it
  std::atomic<std::int64_t> silence_ns_{0};  // the input's silence then
  std::atomic<std::int64_t> time_to_rest_{0};
};

}  // namespace hyloop::services
