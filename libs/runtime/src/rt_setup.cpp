#include "hyloop/runtime/rt_setup.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "hyloop/runtime/logging.hpp"

namespace hyloop::runtime {
namespace {

void warn(RtReport& report, const std::string& what, int err) {
  std::string text = what + ": " + std::strerror(err) + " (continuing without it)";
  logger()->warn("rt setup: {}", text);
  report.warnings.push_back(std::move(text));
}

}  // namespace

RtReport apply_rt_setup(const RtOptions& options) {
  RtReport report;
  if (!options.enabled) return report;

  if (options.timer_slack_ns >= 1) {
    if (::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(options.timer_slack_ns), 0, 0, 0) ==
        0) {
      report.slack = true;
    } else {
      warn(report, "timer slack " + std::to_string(options.timer_slack_ns) + " ns", errno);
    }
  }

  if (options.lock_memory) {
    if (::mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
      report.locked = true;
    } else {
      warn(report, "mlockall", errno);
    }
  }

  const int lo = ::sched_get_priority_min(SCHED_FIFO);
  const int hi = ::sched_get_priority_max(SCHED_FIFO);
  if (options.priority < lo || options.priority > hi) {
    warn(report,
         "SCHED_FIFO priority " + std::to_string(options.priority) + " outside " +
             std::to_string(lo) + ".." + std::to_string(hi),
         EINVAL);
  } else {
    sched_param param{};
    param.sched_priority = options.priority;
    const int rc = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &param);
    if (rc == 0) {
      report.fifo = true;
    } else {
      warn(report, "SCHED_FIFO priority " + std::to_string(options.priority), rc);
    }
  }

  if (options.cpu >= 0) {
    if (options.cpu >= CPU_SETSIZE) {
      warn(report, "pin to CPU " + std::to_string(options.cpu), EINVAL);
    } else {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<std::size_t>(options.cpu), &set);
      const int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
      if (rc == 0) {
        report.pinned = true;
      } else {
        warn(report, "pin to CPU " + std::to_string(options.cpu), rc);
      }
    }
  }

  logger()->info("rt setup: fifo={} (priority {}) locked={} pinned={} (cpu {}) slack={} ({} ns)",
                 report.fifo, options.priority, report.locked, report.pinned, options.cpu,
                 report.slack, options.timer_slack_ns);
  return report;
}

std::uint32_t realtime_flags(const RtReport& r) noexcept {
  return 1U | (r.fifo ? 2U : 0U) | (r.locked ? 4U : 0U) | (r.pinned ? 8U : 0U) |
         (r.slack ? 16U : 0U);
}

}  // namespace hyloop::runtime
