#pragma once
// The deadline of one loop input (issue 27, finding 8): the input expects a message every
// `period` P (the plan's control period h·T for the actuator's commands); after a silence of
// D = max(n·P, F) since the last accepted message arrived, its upstream counts as lost
// (n = input_deadline_periods, default 2, in [kMinInputDeadlinePeriods,
// kMaxInputDeadlinePeriods]; F = input_deadline_floor_ms, default 20 ms, in [0,
// kMaxInputDeadlineFloorMs]):
//
//   lost at t  ⇔  armed ∧ t ≥ t_last + D        (t, t_last: CLOCK_MONOTONIC, ns)
//
// The floor F is the machine's: a host without real-time scheduling stalls a process for
// 1–13 ms now and then (DESIGN.md §2), so a deadline below that fails healthy runs. With F = 0
// (a real-time host) D = n·P, the two periods of the contract.
//
// The deadline is absolute (from the arrival, not from the cycles the loop ran since), so a loop
// that wakes up late under load sees it the first time it looks, never later: detection takes D
// plus that one wake-up's lateness. Armed by the first message (a loop that is still connecting
// has no upstream to lose); real time only: in lockstep (virtual time) it is never armed, so a
// slow machine cannot fire it.
//
// RT-safe: every method is noexcept, no allocation, no lock. Single thread (the loop's).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace hyloop::runtime {

/// The bounds of input_deadline_periods: 2 is the contract (a silent upstream found within two
/// periods); 10 was the actuator's old command watchdog (W = 10 control periods).
inline constexpr int kDefaultInputDeadlinePeriods = 2;
inline constexpr int kMinInputDeadlinePeriods = 2;
inline constexpr int kMaxInputDeadlinePeriods = 10;
/// The floor F of the deadline, ms (0: none; the period's multiple alone).
inline constexpr int kDefaultInputDeadlineFloorMs = 20;
inline constexpr int kMaxInputDeadlineFloorMs = 1000;

class InputDeadline {
 public:
  /// Real time: D = max(periods·period, floor) (periods and floor clamped into their bounds;
  /// period ≤ 0: never armed). Lockstep: `enabled` false, never armed. Forgets the last arrival.
  void configure(std::chrono::nanoseconds period, int periods, std::chrono::milliseconds floor,
                 bool enabled) noexcept {
    const int n = periods < kMinInputDeadlinePeriods   ? kMinInputDeadlinePeriods
                  : periods > kMaxInputDeadlinePeriods ? kMaxInputDeadlinePeriods
                                                       : periods;
    const std::int64_t f_ms = floor.count() < 0                          ? 0
                              : floor.count() > kMaxInputDeadlineFloorMs ? kMaxInputDeadlineFloorMs
                                                                         : floor.count();
    const std::int64_t d = std::max<std::int64_t>(n * period.count(), f_ms * 1'000'000);
    deadline_ns_ = enabled && period.count() > 0 ? d : 0;
    last_ns_ = 0;
  }
  /// A message was accepted at `now_ns`: the deadline runs from here (arms it).
  void arrived(std::int64_t now_ns) noexcept { last_ns_ = now_ns; }
  /// Before a new run segment: unarmed until the next message.
  void disarm() noexcept { last_ns_ = 0; }

  [[nodiscard]] bool enabled() const noexcept { return deadline_ns_ > 0; }
  [[nodiscard]] bool armed() const noexcept { return enabled() && last_ns_ != 0; }
  /// D, ns (0: disabled).
  [[nodiscard]] std::int64_t deadline_ns() const noexcept { return deadline_ns_; }
  /// When the input is lost if nothing arrives (CLOCK_MONOTONIC ns); the far future unarmed.
  [[nodiscard]] std::int64_t due_ns() const noexcept {
    return armed() ? last_ns_ + deadline_ns_ : std::numeric_limits<std::int64_t>::max();
  }
  [[nodiscard]] bool expired(std::int64_t now_ns) const noexcept { return now_ns >= due_ns(); }
  /// Arrival of the last accepted message (0: none yet).
  [[nodiscard]] std::int64_t last_arrival_ns() const noexcept { return last_ns_; }

 private:
  std::int64_t deadline_ns_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace hyloop::runtime
