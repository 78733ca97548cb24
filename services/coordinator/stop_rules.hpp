#pragma once
// The coordinator's stop rules: one predicate per way a distributed run ends, evaluated by its
// supervisor (Coordinator::apply_stop_rules) after each telemetry message or quiet 50 ms, in the
// order they are declared here. Each is a pure function of a LoopView, so each is unit-tested
// on its own (tests/services/stop_rules_test.cpp).

#include <hyloop/v1/control.pb.h>
#include <hyloop/v2/loop.pb.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hyloop::services::stop_rules {

using Clock = std::chrono::steady_clock;

/// Real time: how long rows may stay incomplete after the rig ran its last cycle.
inline constexpr std::chrono::milliseconds kLostTailGrace{500};
/// How long the dynamics' stop waits for the rig's part of its last row.
inline constexpr std::chrono::milliseconds kStopRowGrace{500};
/// How long an emergency stop waits for the actuator's AT_REST "estop" before ending the run.
inline constexpr std::chrono::seconds kEstopRestTimeout{3};

/// Real time: a run in which more than this share of the cycles ran on a late command (the rig
/// held the previous one) did not run the scenario: it fails instead of finishing. Healthy runs
/// here stay below 1 % (docs/performance.md); commands that never arrive give ~100 %.
inline constexpr double kLateCommandLimit = 0.5;

/// What the supervisor sees of a run at one instant.
struct LoopView {
  std::uint64_t total_cycles = 0;     // cycles the scenario runs
  std::uint64_t next_record = 0;      // the next cycle the recorder takes in order
  std::uint64_t recorded_cycles = 0;  // rows the recorder holds
  std::uint64_t rig_last_cycle = 0;   // the newest cycle the rig reported
  bool real_time = false;
  v2::LoopEvent event = v2::LOOP_EVENT_NONE;  // the newest loop event
  std::string_view event_detail;              // its detail (stop reason, fault, what rests)
  bool failing = false;                       // the run is already failed (the watchdog rule fired)
  bool stop_requested = false;                // Experiment.Stop (or the journal failed)
  bool estop_requested = false;               // Experiment.EmergencyStop
  Clock::time_point now;
  Clock::time_point rig_done_at;   // when rig_done was first seen ({}: not yet)
  Clock::time_point estop_since;   // when estop_requested was first seen ({}: not yet)
  Clock::time_point next_health;   // when the services are polled next
  bool stop_seen = false;          // the dynamics stopped (its STOP event arrived)
  bool stop_row_pending = false;   // the dynamics stopped; its last row lacks the rig's part
  Clock::time_point stop_seen_at;  // when the dynamics' stop arrived
};

/// Every cycle of the scenario is recorded.
[[nodiscard]] bool finished(const LoopView& v);
/// Real time: the rig has run its last cycle (starts the lost-tail grace period).
[[nodiscard]] bool rig_done(const LoopView& v);
/// Real time: rows still incomplete kLostTailGrace after the rig's last cycle lost a message.
[[nodiscard]] bool lost_tail(const LoopView& v);
/// The dynamics ended the run (STOP, detail the model's own stop criterion), once its last row
/// is recorded whole or kStopRowGrace passed waiting for the rig's part of it; not while an
/// e-stop or an operator's stop is ending the run (the model may stop as the rig leaves it).
[[nodiscard]] bool dynamics_stopped(const LoopView& v);
/// A loop service reported a FAULT (e.g. the rig lost its actuator) while nothing
/// else is ending the run.
[[nodiscard]] bool loop_fault(const LoopView& v);
/// The actuator's watchdog brought the rig to rest (commands stopped arriving): the run fails,
/// draining on.
[[nodiscard]] bool watchdog_at_rest(const LoopView& v);
/// An operator's stop (or the recording failed).
[[nodiscard]] bool operator_stop(const LoopView& v);
/// An emergency stop, once the actuator reports the rig at rest or kEstopRestTimeout passed.
[[nodiscard]] bool emergency_stop_done(const LoopView& v);
/// The services are due a health poll (service_fault on each).
[[nodiscard]] bool health_due(const LoopView& v);
/// Nothing can have ended the run since the last evaluation: keep reading telemetry.
[[nodiscard]] bool keep_reading(const LoopView& v);

/// Real time, at the end of a run that finished: why it fails instead ("N of M cycles ran on a
/// late command ..."), or "" when at most kLateCommandLimit of its `cycles` did.
[[nodiscard]] std::string late_commands_fault(std::uint64_t late, std::uint64_t cycles);

/// A loop event as the summary's distributed.loop_event shows it: "stop:REASON", "fault:WHY",
/// "estop:at_rest", "watchdog:at_rest", "identified"; "" for none.
[[nodiscard]] std::string describe(v2::LoopEvent event, std::string_view detail);

/// Why the service `name` in state `st` (std::nullopt: not answering) cannot carry the run on,
/// "" when it can: unreachable, ERROR, or (a loop service, `in_loop`) no longer ACTIVE.
[[nodiscard]] std::string service_fault(const std::string& name,
                                        const std::optional<v1::LifecycleReply>& st, bool in_loop);

}  // namespace hyloop::services::stop_rules
