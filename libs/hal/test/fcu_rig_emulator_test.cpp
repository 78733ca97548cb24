#include "hyloop/hal/fcu_rig_emulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace {

using hyloop::hal::FcuRigConfig;
using hyloop::hal::FcuRigEmulator;

FcuRigConfig paper_rig() {
  FcuRigConfig c;  // 1 ms, τ_A = 0.169 s, τ_F = 0.008 s
  c.fcu.valve_time_constant = 0.0;
  return c;
}

TEST(FcuRigEmulator, AtRestAtTheSteadyFlowItMetersThatFlow) {
  FcuRigEmulator rig(paper_rig());
  const double w0 = 0.3 * rig.config().fcu.flow_gain;
  rig.reset(w0);
  for (int k = 0; k < 500; ++k) {
    const auto& s = rig.step(w0);
    ASSERT_DOUBLE_EQ(s.x_m, w0);
    ASSERT_DOUBLE_EQ(s.fuel_flow, w0);
    ASSERT_FALSE(s.saturated);
  }
}

TEST(FcuRigEmulator, AStepReachesTheFlowMeterAfterTheMotorAndMeterDelays) {
  // With an instantaneous valve the step passes the motor after 169 steps and the meter after
  // 8 more: x_m[k] = x_a[k − 177].
  FcuRigEmulator rig(paper_rig());
  const double gain = rig.config().fcu.flow_gain;
  rig.reset(0.2 * gain);
  int first = -1;
  for (int k = 0; k < 400; ++k) {
    const auto& s = rig.step(0.5 * gain);
    if (first < 0 && s.x_m > 0.2 * gain + 1e-12) first = k;
    if (k == 168) {
      EXPECT_DOUBLE_EQ(s.x_motor, 0.2 * gain);
    }
    if (k == 169) {
      EXPECT_DOUBLE_EQ(s.x_motor, 0.5 * gain);
    }
  }
  EXPECT_EQ(first, 177);
  EXPECT_NEAR(rig.last().x_m, 0.5 * gain, 1e-12);
}

TEST(FcuRigEmulator, TheValveSaturatesOutsideItsRangeAndSaysSo) {
  FcuRigConfig c = paper_rig();
  c.motor_delay = 0.0;
  c.flow_meter_delay = 0.0;
  FcuRigEmulator rig(c);
  rig.reset(0.0);
  const auto& high = rig.step(3.0 * c.fcu.flow_gain);
  EXPECT_TRUE(high.saturated);
  EXPECT_DOUBLE_EQ(high.fuel_flow, c.fcu.flow_gain);
  const auto& low = rig.step(-1.0);
  EXPECT_TRUE(low.saturated);
  EXPECT_DOUBLE_EQ(low.fuel_flow, 0.0);
}

TEST(FcuRigEmulator, NoiseIsReproducibleFromTheSeedAndHasItsStandardDeviation) {
  // Every one of the seeds 1–20: RMS within 3 % of the set σ (6σ of its estimate at N = 20 000).
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    FcuRigConfig c = paper_rig();
    c.noise_std = 1e-3;
    c.seed = seed;
    FcuRigEmulator a(c), b(c);
    const double w0 = 0.3 * c.fcu.flow_gain;
    a.reset(w0);
    b.reset(w0);
    double sum2 = 0.0;
    constexpr int kN = 20000;
    for (int k = 0; k < kN; ++k) {
      const double x = a.step(w0).x_m;
      ASSERT_EQ(x, b.step(w0).x_m);
      sum2 += (x - w0) * (x - w0);
    }
    EXPECT_NEAR(std::sqrt(sum2 / kN), 1e-3, 3e-5) << "seed " << seed;
    a.reset(w0);  // reset restarts the generator
    FcuRigEmulator fresh(c);
    fresh.reset(w0);
    EXPECT_EQ(a.step(w0).x_m, fresh.step(w0).x_m);
  }
}

TEST(FcuRigEmulator, RejectsADelayShorterThanAStep) {
  FcuRigConfig c = paper_rig();
  c.motor_delay = 0.0004;
  EXPECT_THROW(FcuRigEmulator{c}, std::invalid_argument);
  c = paper_rig();
  c.noise_std = -1.0;
  EXPECT_THROW(FcuRigEmulator{c}, std::invalid_argument);
}

}  // namespace
