#include "hyloop/core/delay_line.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

TEST(DelayLine, ZeroDelayPassesThrough) {
  DelayLine line(0.0);
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(line.push(k * 1.5), k * 1.5);
  }
}

TEST(DelayLine, IntegerDelayShiftsBySteps) {
  DelayLine line(3.0, -1.0);
  for (int k = 0; k < 20; ++k) {
    const double y = line.push(static_cast<double>(k));
    EXPECT_EQ(y, k < 3 ? -1.0 : static_cast<double>(k - 3)) << "k = " << k;
  }
}

TEST(DelayLine, FractionalDelayInterpolatesLinearly) {
  DelayLine line(2.25);
  for (int k = 0; k < 20; ++k) {
    const double y = line.push(2.0 * k + 1.0);  // a ramp is delayed exactly by interpolation
    if (k >= 3) {
      EXPECT_NEAR(y, 2.0 * (k - 2.25) + 1.0, 1e-12);
    }
  }
}

TEST(DelayLine, FractionalDelayOfSineMatchesPhaseShift) {
  const double dt = 0.001;
  const double w = 2.0 * M_PI * 5.0;
  DelayLine line(7.5);
  double worst = 0.0;
  for (int k = 0; k < 2000; ++k) {
    const double y = line.push(std::sin(w * k * dt));
    if (k > 10) {
      worst = std::max(worst, std::abs(y - std::sin(w * (k - 7.5) * dt)));
    }
  }
  EXPECT_LT(worst, w * w * dt * dt / 8.0 + 1e-12);  // linear interpolation error bound
}

TEST(DelayLine, ResetFillsHistory) {
  DelayLine line(2.0);
  line.push(5.0);
  line.reset(7.0);
  EXPECT_EQ(line.push(1.0), 7.0);
  EXPECT_EQ(line.push(2.0), 7.0);
  EXPECT_EQ(line.push(3.0), 1.0);
}

TEST(DelayLine, RejectsNegativeAndNonFiniteDelays) {
  EXPECT_THROW(DelayLine(-1.0), std::invalid_argument);
  EXPECT_THROW(DelayLine{std::numeric_limits<double>::quiet_NaN()}, std::invalid_argument);
  try {
    DelayLine bad(-0.5);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("delay_steps"), std::string::npos);
  }
}

TEST(DelayLine, PushDoesNotAllocate) {
  DelayLine line(4.5);
  testing::AllocGuard guard;
  double sum = 0.0;
  for (int k = 0; k < 1000; ++k) {
    sum += line.push(k);
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_GT(sum, 0.0);
}

}  // namespace
}  // namespace hyloop::core
