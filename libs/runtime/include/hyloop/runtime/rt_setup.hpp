#pragma once
// Real-time setup of a loop thread (DESIGN.md §2): timer slack, locked memory, SCHED_FIFO,
// CPU pinning. Each step that is not permitted (no CAP_SYS_NICE, RLIMIT_MEMLOCK, a CPU outside
// the affinity mask) is skipped with a warning: a service without privileges still runs, only
// with more jitter. Call it at the start of the loop thread, never in a cycle.

#include <cstdint>
#include <string>
#include <vector>

namespace hyloop::runtime {

struct RtOptions {
  bool enabled = false;             // false: apply_rt_setup does nothing
  int priority = 80;                // SCHED_FIFO priority, 1..99
  int cpu = -1;                     // CPU to pin the thread to; -1: no pinning
  bool lock_memory = true;          // mlockall(MCL_CURRENT | MCL_FUTURE), process-wide
  std::int64_t timer_slack_ns = 1;  // PR_SET_TIMERSLACK of the thread
};

/// What apply_rt_setup achieved; each flag false when the step was not requested or failed.
struct RtReport {
  bool fifo = false;
  bool locked = false;
  bool pinned = false;
  bool slack = false;
  std::vector<std::string> warnings;  // one per step that failed, with the errno text
};

/// The report as Telemetry.realtime's flags (loop.proto): 1 asked for, 2 fifo, 4 locked, 8 pinned,
/// 16 slack.
[[nodiscard]] std::uint32_t realtime_flags(const RtReport& report) noexcept;

/// Applies `options` to the calling thread (memory locking to the process). Never throws for
/// lack of permission; failures are logged as warnings and listed in the report.
RtReport apply_rt_setup(const RtOptions& options);

}  // namespace hyloop::runtime
