// InputDeadline (issue 27, finding 8): lost at t ⇔ armed ∧ t ≥ t_last + n·P; unarmed before the
// first message and in lockstep; n bounded; the service --config key input_deadline_periods.
#include "hyloop/runtime/input_deadline.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "hyloop/runtime/service_config.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::runtime {
namespace {

using ::testing::HasSubstr;
constexpr std::int64_t kMs = 1'000'000;

TEST(InputDeadline, ExpiresAtTwoPeriodsAfterTheLastArrivalNotBefore) {
  InputDeadline d;
  d.configure(std::chrono::milliseconds(4), kDefaultInputDeadlinePeriods,
              std::chrono::milliseconds(0), true);
  EXPECT_TRUE(d.enabled());
  EXPECT_FALSE(d.armed());  // no message yet: nothing to lose
  EXPECT_FALSE(d.expired(1000 * kMs));
  EXPECT_EQ(d.due_ns(), std::numeric_limits<std::int64_t>::max());
  d.arrived(100 * kMs);
  EXPECT_EQ(d.deadline_ns(), 8 * kMs);
  EXPECT_EQ(d.due_ns(), 108 * kMs);
  EXPECT_FALSE(d.expired(108 * kMs - 1));
  EXPECT_TRUE(d.expired(108 * kMs));
  d.arrived(107 * kMs);  // a message resets it
  EXPECT_FALSE(d.expired(114 * kMs));
  EXPECT_TRUE(d.expired(115 * kMs));
  d.disarm();
  EXPECT_FALSE(d.expired(10'000 * kMs));
}

TEST(InputDeadline, LockstepAndAMissingPeriodNeverArm) {
  InputDeadline d;
  d.configure(std::chrono::milliseconds(4), 2, std::chrono::milliseconds(20), false);  // lockstep
  d.arrived(1);
  EXPECT_FALSE(d.enabled());
  EXPECT_FALSE(d.expired(std::numeric_limits<std::int64_t>::max() - 1));
  d.configure(std::chrono::nanoseconds(0), 2, std::chrono::milliseconds(20), true);
  d.arrived(1);
  EXPECT_FALSE(d.expired(std::numeric_limits<std::int64_t>::max() - 1));
}

// The loop thread calls these every cycle: no allocation.
TEST(InputDeadline, TheLoopPathDoesNotAllocate) {
  InputDeadline d;
  d.configure(std::chrono::milliseconds(4), 2, std::chrono::milliseconds(0), true);
  std::size_t allocations = 0;
  int lost = 0;
  {
    testing::AllocGuard guard;
    for (std::int64_t t = 1; t < 100000; ++t) {
      if (t % 10 == 0) d.arrived(t * kMs);
      lost += d.expired(t * kMs) ? 1 : 0;
      (void)d.due_ns();
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  EXPECT_GT(lost, 0);
}

TEST(InputDeadline, PeriodsAreClampedIntoTheirBounds) {
  InputDeadline d;
  d.configure(std::chrono::milliseconds(1), 1, std::chrono::milliseconds(0), true);
  EXPECT_EQ(d.deadline_ns(), kMinInputDeadlinePeriods * kMs);
  d.configure(std::chrono::milliseconds(1), 1000, std::chrono::milliseconds(0), true);
  EXPECT_EQ(d.deadline_ns(), kMaxInputDeadlinePeriods * kMs);
}

// The floor: a host without real-time scheduling stalls processes for up to ~13 ms.
TEST(InputDeadline, TheFloorHoldsShortPeriodsAboveTheMachinesStalls) {
  InputDeadline d;
  d.configure(std::chrono::milliseconds(4), 2, std::chrono::milliseconds(20), true);
  EXPECT_EQ(d.deadline_ns(), 20 * kMs);  // max(2 x 4 ms, 20 ms)
  d.configure(std::chrono::milliseconds(40), 2, std::chrono::milliseconds(20), true);
  EXPECT_EQ(d.deadline_ns(), 80 * kMs);  // the periods when longer
  d.configure(std::chrono::milliseconds(4), 2, std::chrono::milliseconds(5000), true);
  EXPECT_EQ(d.deadline_ns(), kMaxInputDeadlineFloorMs * kMs);
}

TEST(InputDeadline, TheServiceConfigKeyIsBoundedAndNamed) {
  EXPECT_EQ(default_service_config("actuator").input_deadline_periods, 2);
  EXPECT_EQ(default_service_config("actuator").input_deadline_floor_ms, 20);
  EXPECT_EQ(parse_service_config("input_deadline_floor_ms: 0\n", "a.yaml").input_deadline_floor_ms,
            0);
  EXPECT_THAT(hyloop::testing::invalid_argument_message(
                  [] { (void)parse_service_config("input_deadline_floor_ms: 1001\n", "a.yaml"); }),
              HasSubstr("input_deadline_floor_ms"));
  EXPECT_EQ(parse_service_config("input_deadline_periods: 5\n", "a.yaml").input_deadline_periods,
            5);
  for (const char* bad : {"input_deadline_periods: 1\n", "input_deadline_periods: 11\n",
                          "input_deadline_periods: 2.5\n"}) {
    EXPECT_THAT(hyloop::testing::invalid_argument_message(
                    [&] { (void)parse_service_config(bad, "a.yaml"); }),
                HasSubstr("input_deadline_periods"))
        << bad;
  }
}

}  // namespace
}  // namespace hyloop::runtime
