#include "hyloop/core/inverse_delay_compensator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

TEST(InverseDelayCompensator, AlphaIs178ForTheFcuTransferSystem) {
  const InverseDelayCompensator comp({0.169 + 0.008, 0.001});
  EXPECT_NEAR(comp.alpha(), 178.0, 1e-9);
  EXPECT_NEAR(InverseDelayCompensator::alpha_for(0.177, 0.001), 178.0, 1e-9);
}

TEST(InverseDelayCompensator, DifferenceEquationIsEq8AsCorrected) {
  InverseDelayCompensator comp({0.177, 0.001}, 0.0);
  // x_p[j+1] = 178·x_c[j+1] − 177·x_c[j]
  EXPECT_NEAR(comp.step(1.0), 178.0, 1e-9);
  EXPECT_NEAR(comp.step(1.0), 1.0, 1e-9);
  EXPECT_NEAR(comp.step(3.0), 178.0 * 3.0 - 177.0, 1e-9);
  comp.reset(2.0);
  EXPECT_NEAR(comp.step(2.0), 2.0, 1e-9);  // bumpless after reset
}

TEST(InverseDelayCompensator, CancelsTheIdealisedTransferSystemExactly) {
  // G_d: x_m[j+1] = x_m[j] + (x_p[j+1] − x_m[j])/α (Eq. 4 driven by the compensated command).
  InverseDelayCompensator comp({0.177, 0.001}, 0.0);
  const double alpha = comp.alpha();
  double xm = 0.0;
  double worst = 0.0;
  hyloop::testing::AllocGuard guard;
  for (int j = 1; j <= 3000; ++j) {
    const double xc = std::sin(2.0 * std::numbers::pi * 0.5 * j * 0.001) +
                      0.3 * std::sin(2.0 * std::numbers::pi * 2.1 * j * 0.001);
    const double xp = comp.step(xc);
    xm = xm + (xp - xm) / alpha;
    worst = std::max(worst, std::abs(xm - xc));
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_LT(worst, 1e-10);
}

TEST(InverseDelayCompensator, RejectsADelayShorterThanAStep) {
  try {
    InverseDelayCompensator comp({0.0005, 0.001});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("delay = 0.0005"));
  }
  EXPECT_THROW(InverseDelayCompensator({-0.1, 0.001}), std::invalid_argument);
  try {
    InverseDelayCompensator comp({0.177, 0.0});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("step = 0"));
  }
  EXPECT_NO_THROW(InverseDelayCompensator({0.001, 0.001}));
}

}  // namespace
}  // namespace hyloop::core
