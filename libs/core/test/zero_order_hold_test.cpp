#include "hyloop/core/zero_order_hold.hpp"

#include <gtest/gtest.h>

namespace hyloop::core {
namespace {

TEST(ZeroOrderHold, LatchesAtMultiplesOfThePeriod) {
  ZeroOrderHold<double> hold(2, -1.0);
  const double expected[] = {0.0, 0.0, 2.0, 2.0, 4.0, 4.0, 6.0};
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(hold.update(k, static_cast<double>(k)), expected[k]) << "k = " << k;
  }
}

TEST(ZeroOrderHold, PeriodOneIsTransparent) {
  ZeroOrderHold<double> hold(1);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(hold.update(k, 3.0 * k), 3.0 * k);
  }
}

TEST(ZeroOrderHold, RejectsNonPositivePeriod) {
  EXPECT_THROW(ZeroOrderHold<double>(0), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
