#include "hyloop/core/turbojet_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::core {
namespace {

using hyloop::testing::invalid_argument_message;

constexpr double kStep = 0.001;

TEST(TurbojetModel, SteadyStateLineAndTimeConstantSchedule) {
  const TurbojetModel engine({}, kStep, 0.6);
  EXPECT_DOUBLE_EQ(engine.steady_speed(0.02), 0.6);
  EXPECT_DOUBLE_EQ(engine.steady_speed(0.10), 1.0);
  EXPECT_NEAR(engine.steady_fuel(0.8), 0.06, 1e-15);
  EXPECT_NEAR(engine.steady_speed(engine.steady_fuel(0.73)), 0.73, 1e-15);
  EXPECT_DOUBLE_EQ(engine.time_constant(0.6), 1.5);
  EXPECT_DOUBLE_EQ(engine.time_constant(1.0), 0.4);
  EXPECT_NEAR(engine.time_constant(0.8), 0.95, 1e-15);
  EXPECT_DOUBLE_EQ(engine.time_constant(0.3), 1.5);  // clamped below idle
  EXPECT_DOUBLE_EQ(engine.time_constant(1.2), 0.4);  // clamped above design
}

TEST(TurbojetModel, HoldsSpeedUnderItsSteadyFuel) {
  TurbojetModel engine({}, kStep, 0.85);
  const double w = engine.steady_fuel(0.85);
  for (int k = 0; k < 5000; ++k) engine.step(w);
  EXPECT_NEAR(engine.speed(), 0.85, 1e-14);
}

TEST(TurbojetModel, ConstantTimeConstantStepIsTheExponential) {
  // τ_idle = τ_design = 0.7 s: n(t) = n_ss + (n0 − n_ss)·e^(−t/τ).
  TurbojetConfig c;
  c.idle_time_constant = 0.7;
  c.design_time_constant = 0.7;
  TurbojetModel engine(c, kStep, 0.6);
  const double w = 0.08;
  const double n_ss = engine.steady_speed(w);  // 0.9
  double worst = 0.0;
  for (int k = 1; k <= 4000; ++k) {
    engine.step(w);
    const double t = k * kStep;
    worst = std::max(worst, std::abs(engine.speed() - (n_ss + (0.6 - n_ss) * std::exp(-t / 0.7))));
  }
  EXPECT_LT(worst, 1e-12);  // RK4: local error O(Δt⁵/τ⁵)
}

TEST(TurbojetModel, SpeedVaryingTimeConstantMatchesTheSeparableSolution) {
  // τ(n) = a + b·n inside [n_idle, 1] (no clamping on the way), dn/dt = (c − n)/(a + b·n):
  //   t(n) = (a + b·c)·ln((c − n0)/(c − n)) − b·(n − n0).
  TurbojetModel engine({}, kStep, 0.6);
  const TurbojetConfig& cfg = engine.config();
  const double b = (cfg.design_time_constant - cfg.idle_time_constant) / (1.0 - cfg.idle_speed);
  const double a = cfg.idle_time_constant - b * cfg.idle_speed;
  const double w = 0.09;
  const double c = engine.steady_speed(w);  // 0.95
  const double n0 = 0.6;
  double worst = 0.0;
  for (int k = 1; k <= 3000; ++k) {
    engine.step(w);
    const double n = engine.speed();
    const double t_exact = (a + b * c) * std::log((c - n0) / (c - n)) - b * (n - n0);
    worst = std::max(worst, std::abs(t_exact - k * kStep));
  }
  EXPECT_LT(worst, 1e-9);  // s
}

TEST(TurbojetModel, StepIsRtSafe) {
  TurbojetModel engine({}, kStep, 0.7);
  const hyloop::testing::AllocGuard guard;
  for (int k = 0; k < 1000; ++k) engine.step(0.05 + 0.01 * std::sin(k * 0.01));
  EXPECT_EQ(guard.allocations(), 0u);
}

TEST(TurbojetModel, RejectsBadParametersNamingThem) {
  TurbojetConfig c;
  c.design_fuel = 0.01;
  EXPECT_THAT(invalid_argument_message([&] { TurbojetModel(c, kStep, 0.7); }),
              ::testing::HasSubstr("design_fuel"));
  c = {};
  c.idle_speed = 1.2;
  EXPECT_THAT(invalid_argument_message([&] { TurbojetModel(c, kStep, 0.7); }),
              ::testing::HasSubstr("idle_speed"));
  c = {};
  c.idle_time_constant = 0.0;
  EXPECT_THAT(invalid_argument_message([&] { TurbojetModel(c, kStep, 0.7); }),
              ::testing::HasSubstr("idle_time_constant"));
  EXPECT_THAT(invalid_argument_message([&] { TurbojetModel({}, 0.0, 0.7); }),
              ::testing::HasSubstr("step"));
}

TEST(EngineControlUnit, SpeedScheduleFromThePowerLever) {
  const EngineControlUnit ecu({}, {}, kStep);
  EXPECT_DOUBLE_EQ(ecu.speed_demand(20.0), 0.6);
  EXPECT_DOUBLE_EQ(ecu.speed_demand(90.0), 1.0);
  EXPECT_NEAR(ecu.speed_demand(55.0), 0.8, 1e-15);
  EXPECT_DOUBLE_EQ(ecu.speed_demand(0.0), 0.6);
  EXPECT_DOUBLE_EQ(ecu.speed_demand(120.0), 1.0);
}

TEST(EngineControlUnit, UnlimitedPiIsProportionalPlusRamp) {
  // Constant error e inside the limits: w_c[k] = K_p·e + I0 + K_i·Δt·e·k.
  EngineControlUnitConfig c;
  c.kp = 0.04;
  c.ki = 0.4;
  EngineControlUnit ecu(c, {}, kStep);
  ecu.reset(0.06);
  const double n = 0.79;  // demand 0.8 at 55°: e = 0.01
  for (int k = 0; k < 500; ++k) {
    const double w = ecu.step(55.0, n);
    EXPECT_NEAR(w, 0.04 * 0.01 + 0.06 + 0.4 * kStep * 0.01 * k, 1e-13) << k;  // summed rounding
    EXPECT_EQ(ecu.last_limit(), EcuLimit::kNone);
  }
}

TEST(EngineControlUnit, AccelerationAndDecelerationLimitsWithoutWindUp) {
  EngineControlUnitConfig c;
  c.kp = 1.0;
  EngineControlUnit ecu(c, {}, kStep);
  const TurbojetModel schedule({}, kStep, 0.6);
  ecu.reset(schedule.steady_fuel(0.7));
  // A large positive error: the demand sits on the acceleration limit 1.5·w_ss(n).
  for (int k = 0; k < 2000; ++k) {
    EXPECT_NEAR(ecu.step(90.0, 0.7), 1.5 * schedule.steady_fuel(0.7), 1e-15);
    EXPECT_EQ(ecu.last_limit(), EcuLimit::kAcceleration);
  }
  // The integrator did not wind up: it is where it started.
  EXPECT_NEAR(ecu.integrator(), schedule.steady_fuel(0.7), 1e-15);
  // A large negative error: the deceleration limit 0.5·w_ss(n).
  EXPECT_NEAR(ecu.step(20.0, 0.95), 0.5 * schedule.steady_fuel(0.95), 1e-15);
  EXPECT_EQ(ecu.last_limit(), EcuLimit::kDeceleration);
}

TEST(EngineControlUnit, RejectsBadParametersNamingThem) {
  EngineControlUnitConfig c;
  c.pla_max = 10.0;
  EXPECT_THAT(invalid_argument_message([&] { EngineControlUnit(c, {}, kStep); }),
              ::testing::HasSubstr("pla_max"));
  c = {};
  c.accel_ratio = 0.9;
  EXPECT_THAT(invalid_argument_message([&] { EngineControlUnit(c, {}, kStep); }),
              ::testing::HasSubstr("accel_ratio"));
  c = {};
  c.decel_ratio = 0.0;
  EXPECT_THAT(invalid_argument_message([&] { EngineControlUnit(c, {}, kStep); }),
              ::testing::HasSubstr("decel_ratio"));
  c = {};
  c.ki = -1.0;
  EXPECT_THAT(invalid_argument_message([&] { EngineControlUnit(c, {}, kStep); }),
              ::testing::HasSubstr("ki"));
}

TEST(FuelControlUnit, StepResponseIsTheExactFirstOrderLag) {
  // From closed, a constant command u: w_f[k] = K_v·u·(1 − e^(−(k+1)Δt/τ_v)).
  FuelControlUnitConfig c;
  c.valve_time_constant = 0.005;
  c.flow_gain = 0.15;
  FuelControlUnit fcu(c, kStep, 0.0);
  for (int k = 0; k < 50; ++k) {
    const double w = fcu.step(0.4);
    EXPECT_NEAR(w, 0.15 * 0.4 * (1.0 - std::exp(-(k + 1) * kStep / 0.005)), 1e-15) << k;
  }
  EXPECT_NEAR(fcu.command_for(0.06), 0.4, 1e-15);
}

TEST(FuelControlUnit, ValvePositionIsClampedAndSaturationReported) {
  FuelControlUnit fcu({0.0, 0.15}, kStep, 0.5);
  EXPECT_DOUBLE_EQ(fcu.step(1.7), 0.15);  // τ_v = 0: within the step, clamped at fully open
  EXPECT_TRUE(fcu.saturated());
  EXPECT_DOUBLE_EQ(fcu.step(-0.3), 0.0);
  EXPECT_TRUE(fcu.saturated());
  EXPECT_DOUBLE_EQ(fcu.step(0.2), 0.15 * 0.2);
  EXPECT_FALSE(fcu.saturated());
}

TEST(FuelControlUnit, RtSafeAndRejectsBadParameters) {
  FuelControlUnit fcu({}, kStep, 0.3);
  {
    const hyloop::testing::AllocGuard guard;
    for (int k = 0; k < 1000; ++k) fcu.step(0.3 + 0.1 * std::sin(k * 0.02));
    EXPECT_EQ(guard.allocations(), 0u);
  }
  EXPECT_THAT(invalid_argument_message([] {
                FuelControlUnit({-0.1, 0.15}, kStep, 0.0);
              }),
              ::testing::HasSubstr("valve_time_constant"));
  EXPECT_THAT(invalid_argument_message([] {
                FuelControlUnit({0.005, 0.0}, kStep, 0.0);
              }),
              ::testing::HasSubstr("flow_gain"));
}

}  // namespace
}  // namespace hyloop::core
