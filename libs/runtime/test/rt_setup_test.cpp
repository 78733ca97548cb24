#include "hyloop/runtime/rt_setup.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <thread>

namespace hyloop::runtime {
namespace {

// Runs apply_rt_setup on a thread of its own (a SCHED_FIFO test thread on a shared 2-core
// machine would be rude) and checks the report against what the thread really got.
TEST(RtSetup, ReportMatchesTheThreadWhateverThePrivileges) {
  RtOptions options;
  options.enabled = true;
  options.priority = 10;
  options.cpu = 0;
  options.lock_memory = false;
  options.timer_slack_ns = 1;
  RtReport report;
  int policy = -1;
  bool on_cpu0_only = false;
  long slack = -1;
  std::thread([&] {
    EXPECT_NO_THROW(report = apply_rt_setup(options));
    sched_param param{};
    pthread_getschedparam(pthread_self(), &policy, &param);
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    on_cpu0_only = CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set);
    slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  }).join();
  EXPECT_EQ(report.fifo, policy == SCHED_FIFO);
  EXPECT_EQ(report.pinned, on_cpu0_only);
  // Recent kernels report a slack of 0 for real-time threads (they ignore slack).
  EXPECT_EQ(report.slack, slack == 1 || (report.fifo && slack == 0)) << slack;
  EXPECT_FALSE(report.locked);  // not requested
  const int failed = !report.fifo + !report.pinned + !report.slack;
  EXPECT_EQ(static_cast<int>(report.warnings.size()), failed);
}

TEST(RtSetup, LockMemoryNeverThrows) {
  RtOptions options;
  options.enabled = true;
  options.priority = 1;
  RtReport report;
  std::thread([&] { EXPECT_NO_THROW(report = apply_rt_setup(options)); }).join();
  if (report.locked) {
    munlockall();
  } else {
    EXPECT_FALSE(report.warnings.empty());
  }
}

TEST(RtSetup, DisabledDoesNothingAndImpossibleRequestsWarn) {
  const RtReport off = apply_rt_setup(RtOptions{});
  EXPECT_FALSE(off.fifo || off.locked || off.pinned || off.slack);
  EXPECT_TRUE(off.warnings.empty());

  RtOptions options;
  options.enabled = true;
  options.priority = 500;  // outside SCHED_FIFO's range
  options.cpu = 100000;    // no such CPU
  options.lock_memory = false;
  RtReport report;
  std::thread([&] { EXPECT_NO_THROW(report = apply_rt_setup(options)); }).join();
  EXPECT_FALSE(report.fifo);
  EXPECT_FALSE(report.pinned);
  EXPECT_GE(report.warnings.size(), 2u);
}

TEST(RtSetup, TheReportAsTelemetryFlags) {
  // loop.proto's Telemetry.realtime: 1 asked for, 2 fifo, 4 locked, 8 pinned, 16 slack.
  EXPECT_EQ(realtime_flags(RtReport{}), 1U);
  EXPECT_EQ(realtime_flags(
                {.fifo = true, .locked = true, .pinned = false, .slack = true, .warnings = {}}),
            23U);
  EXPECT_EQ(realtime_flags(
                {.fifo = false, .locked = false, .pinned = true, .slack = false, .warnings = {}}),
            9U);
}

}  // namespace
}  // namespace hyloop::runtime
