// The stability guard (stability_guard.hpp): its ratio against the analytic one of a delayed
// sine, the floor, the hold, the latch, the errors, no allocation.
#include "hyloop/core/stability_guard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kT = 1.0 / 4096.0;

double sine(double t, double f) { return 0.004 * std::sin(2.0 * std::numbers::pi * f * t); }

// x_m = x_t delayed by τ: ρ = ‖x(t−τ) − x(t)‖/‖x(t)‖ = 2·sin(π·f·τ) over whole periods.
TEST(StabilityGuard, TheRatioOfADelayedSineIsTwoSinPiFTau) {
  for (const int d : {4, 19, 102}) {  // 1, 4.6, 25 ms
    StabilityGuardConfig c;
    c.window = 0.25;  // a whole number of 4 Hz periods
    c.max_tracking_ratio = 10.0;
    StabilityGuard g(c);
    const double f = 4.0;
    for (int k = 0; k < 4096; ++k) {
      g.update(k * kT, sine(k * kT, f), sine((k - d) * kT, f));
    }
    EXPECT_NEAR(g.max_ratio(), 2.0 * std::sin(std::numbers::pi * f * d * kT), 2e-3) << d;
    EXPECT_FALSE(g.tripped());
  }
}

TEST(StabilityGuard, TripsWhenTheRatioExceedsTheLimitAndLatches) {
  StabilityGuard g({});
  const double f = 3.6;
  const int d = 102;  // 25 ms: ρ = 0.55 > 0.3
  int k = 0;
  for (; k < 8192 && !g.update(k * kT, sine(k * kT, f), sine((k - d) * kT, f)); ++k) {
  }
  ASSERT_TRUE(g.tripped());
  EXPECT_EQ(k, 1023);  // as soon as the first window is full
  EXPECT_DOUBLE_EQ(g.tripped_at(), 1023 * kT);
  EXPECT_TRUE(g.update(1.0, 0.0, 0.0));  // latched
}

TEST(StabilityGuard, ACompensatedLoopAndSmallMotionDoNotTrip) {
  StabilityGuard compensated({});
  StabilityGuard quiet({});
  const double f = 3.6;
  for (int k = 0; k < 40000; ++k) {
    const double t = k * kT;
    EXPECT_FALSE(compensated.update(t, sine(t, f), sine(t - 19 * kT, f)));  // 4.6 ms: ρ = 0.10
    // 0.2 mm RMS, below the 0.5 mm floor: a 25 ms lag is not judged.
    EXPECT_FALSE(quiet.update(t, 0.07 * sine(t, f), 0.07 * sine(t - 102 * kT, f)));
  }
  // 0.105 over whole periods; the 0.25 s window holds 0.9 of a 3.6 Hz period: measured 0.116.
  EXPECT_GT(compensated.max_ratio(), 2.0 * std::sin(std::numbers::pi * f * 19 * kT));
  EXPECT_LT(compensated.max_ratio(), 0.13);
  EXPECT_EQ(quiet.max_ratio(), 0.0);
}

TEST(StabilityGuard, HoldCountsConsecutiveSamplesAndANonFiniteSampleTrips) {
  StabilityGuardConfig c;
  c.hold = 100;
  StabilityGuard g(c);
  const double f = 3.6;
  int k = 0;
  for (; k < 8192 && !g.update(k * kT, sine(k * kT, f), sine((k - 102) * kT, f)); ++k) {
  }
  EXPECT_EQ(k, 1023 + 99);
  StabilityGuard nan({});
  EXPECT_TRUE(nan.update(0.5, 0.0, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_DOUBLE_EQ(nan.tripped_at(), 0.5);
}

std::string error_of(const StabilityGuardConfig& c) {
  try {
    StabilityGuard g(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(StabilityGuard, BadConfigurationsNameTheField) {
  StabilityGuardConfig c;
  c.window = 1e-3;
  EXPECT_EQ(error_of(c), "window = 0.001: must hold 8 to 1e6 steps");
  c = {};
  c.max_tracking_ratio = 0.0;
  EXPECT_EQ(error_of(c), "max_tracking_ratio = 0: must be finite and > 0");
  c = {};
  c.hold = 0;
  EXPECT_EQ(error_of(c), "hold = 0: must be >= 1");
  c = {};
  c.amplitude_floor = -1.0;
  EXPECT_EQ(error_of(c), "amplitude_floor = -1: must be finite and >= 0");
}

TEST(StabilityGuard, UpdateAllocatesNothing) {
  StabilityGuard g({});
  const testing::AllocGuard guard;
  for (int k = 0; k < 5000; ++k) g.update(k * kT, sine(k * kT, 2.0), sine((k - 3) * kT, 2.0));
  EXPECT_EQ(guard.allocations(), 0U);
}

}  // namespace
}  // namespace hyloop::core
