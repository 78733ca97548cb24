#include "hyloop/core/sit_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hyloop::core {
namespace {

// Semi-implicit Euler on the undamped spring–mass: the discrete oscillation has
// cos(θ) = 1 − (ω_n·T)²/2 per step and bounded energy (symplectic), no growth or decay.
TEST(IdealTwin, UndampedEnergyStaysBoundedAndFrequencyMatchesScheme) {
  const double m = 500.0, k = 20000.0, dt = 0.002, v0 = 0.05;
  IdealTwin twin(m, dt, {.stiffness = k, .damping = 0.0}, {0.0, v0});
  const double e0 = 0.5 * m * v0 * v0;
  double e_min = e0, e_max = e0;
  int crossings = 0;
  double last_crossing = 0.0, first_crossing = -1.0;
  double prev_v = v0;
  for (int i = 1; i <= 100000; ++i) {
    twin.step();
    e_min = std::min(e_min, twin.energy());
    e_max = std::max(e_max, twin.energy());
    const double v = twin.state().velocity;
    if (prev_v < 0.0 && v >= 0.0) {
      if (first_crossing < 0.0) first_crossing = i * dt;
      last_crossing = i * dt;
      ++crossings;
    }
    prev_v = v;
  }
  const double wt = std::sqrt(k / m) * dt;
  const double theta = std::acos(1.0 - wt * wt / 2.0);
  const double period = 2.0 * M_PI / theta * dt;
  EXPECT_NEAR((last_crossing - first_crossing) / (crossings - 1), period, 2.0 * dt / crossings);
  // the modified energy is conserved; the plain energy oscillates by O(ωT) only
  EXPECT_LT((e_max - e_min) / e0, 2.0 * wt);
  EXPECT_GT(e_min / e0, 0.98);
}

TEST(IdealTwin, DampedDecayRateMatchesDampingRatio) {
  const double m = 500.0, k = 20000.0, b = 50.0, dt = 0.002;
  IdealTwin twin(m, dt, {.stiffness = k, .damping = b}, {0.0, 0.05});
  for (int i = 0; i < 10000; ++i) twin.step();  // 20 s
  const double e_expected = 0.5 * m * 0.05 * 0.05 * std::exp(-b / m * 20.0);
  EXPECT_NEAR(twin.energy() / e_expected, 1.0, 0.06);  // energy oscillates within a cycle
}

TEST(PointMass, RejectsNonPositiveMass) {
  EXPECT_THROW(PointMass(-1.0, 0.002), std::invalid_argument);
  EXPECT_THROW(PointMass(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(ContactModel({.stiffness = -5.0, .damping = 0.0}), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
