// The energy guard (energy_guard.hpp): the ratio to the first sample's energy, the floor, the
// hold, the latch, the amplitude bound, the errors, no allocation.
#include "hyloop/core/energy_guard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kT = 0.002;

// An oscillator whose energy grows (σ > 0) or decays (σ < 0) as e^(2σt) from E0.
double energy(double t, double e0, double sigma) { return e0 * std::exp(2.0 * sigma * t); }

TEST(EnergyGuard, TripsWhenTheEnergyExceedsTheLimitAndLatches) {
  EnergyGuard g({});
  int k = 0;
  for (; k < 100000 && !g.update(k * kT, energy(k * kT, 0.625, 0.07)); ++k) {
  }
  ASSERT_TRUE(g.tripped());
  // e^(0.14 t) = 1.2 at t = ln(1.2)/0.14 = 1.3023 s: the first sample above it.
  const double t_trip = std::log(1.2) / 0.14;
  EXPECT_GT(g.tripped_at(), t_trip);
  EXPECT_LE(g.tripped_at(), t_trip + kT);
  EXPECT_DOUBLE_EQ(g.reference(), 0.625);
  EXPECT_GT(g.max_ratio(), 1.2);
  EXPECT_TRUE(g.update(100.0, 0.0));  // latched
}

TEST(EnergyGuard, APassiveLoopAndALoopAtRestDoNotTrip) {
  EnergyGuard passive({});
  EnergyGuard rest({});
  for (int k = 0; k < 30000; ++k) {
    const double t = k * kT;
    // A small rise (a compensated loop's first cycle) and then decay.
    EXPECT_FALSE(passive.update(t, 0.625 * (1.0 + 0.02 * std::sin(t)) * std::exp(-0.1 * t)));
    // Starting at rest, 0.5 mJ of noise stays under the 1 mJ floor's 1.2 mJ.
    EXPECT_FALSE(rest.update(t, 5e-4 * (1.0 + std::sin(t))));
  }
  EXPECT_NEAR(passive.max_ratio(), 1.0, 0.02);
  EXPECT_DOUBLE_EQ(rest.reference(), 1e-3);
}

TEST(EnergyGuard, HoldCountsConsecutiveSamplesAndANonFiniteSampleTrips) {
  EnergyGuardConfig c;
  c.hold = 10;
  EnergyGuard g(c);
  EXPECT_FALSE(g.update(0.0, 1.0));
  for (int k = 1; k < 9; ++k) EXPECT_FALSE(g.update(k * kT, 2.0));
  EXPECT_FALSE(g.update(9 * kT, 1.0));  // the count restarts
  for (int k = 10; k < 19; ++k) EXPECT_FALSE(g.update(k * kT, 2.0));
  EXPECT_TRUE(g.update(19 * kT, 2.0));
  EXPECT_DOUBLE_EQ(g.tripped_at(), 19 * kT);
  EnergyGuard nan({});
  EXPECT_FALSE(nan.update(0.0, 1.0));
  EXPECT_TRUE(nan.update(0.5, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_DOUBLE_EQ(nan.tripped_at(), 0.5);
}

std::string error_of(const EnergyGuardConfig& c) {
  try {
    EnergyGuard g(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(EnergyGuard, BadConfigurationsNameTheField) {
  EnergyGuardConfig c;
  c.max_energy_ratio = 1.0;
  EXPECT_EQ(error_of(c), "max_energy_ratio = 1: must be finite and > 1");
  c = {};
  c.energy_floor = 0.0;
  EXPECT_EQ(error_of(c), "energy_floor = 0: must be finite and > 0");
  c = {};
  c.hold = 0;
  EXPECT_EQ(error_of(c), "hold = 0: must be >= 1");
}

TEST(EnergyGuard, UpdateAllocatesNothing) {
  EnergyGuard g({});
  const testing::AllocGuard guard;
  for (int k = 0; k < 5000; ++k) g.update(k * kT, energy(k * kT, 1.0, -0.01));
  EXPECT_EQ(guard.allocations(), 0U);
}

}  // namespace
}  // namespace hyloop::core
