#include "hyloop/hal/servo_actuator_emulator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/core/tracking_metrics.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::hal {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(ServoActuatorEmulator, StepResponseMatchesTheClosedForm) {
  // Under-damped (ζ = 0.8), critically damped and over-damped: x(t) of a unit step from rest.
  for (double zeta : {0.8, 1.0, 1.6, 0.0}) {
    ServoActuatorConfig config;
    config.step = 0.001;
    config.omega = 50.0;
    config.zeta = zeta;
    ServoActuatorEmulator servo(config);
    servo.reset(0.0);
    const double w = config.omega;
    double worst = 0.0;
    for (int i = 0; i < 500; ++i) {
      const ServoMeasurement& m = servo.step(1.0);
      const double t = m.time;
      double x = 0.0;
      if (zeta < 1.0) {
        const double wd = w * std::sqrt(1.0 - zeta * zeta);
        x = 1.0 - std::exp(-zeta * w * t) *
                      (std::cos(wd * t) + zeta / std::sqrt(1.0 - zeta * zeta) * std::sin(wd * t));
      } else if (zeta == 1.0) {
        x = 1.0 - std::exp(-w * t) * (1.0 + w * t);
      } else {
        const double s1 = -w * (zeta - std::sqrt(zeta * zeta - 1.0));
        const double s2 = -w * (zeta + std::sqrt(zeta * zeta - 1.0));
        x = 1.0 + (s2 * std::exp(s1 * t) - s1 * std::exp(s2 * t)) / (s1 - s2);
      }
      worst = std::max(worst, std::abs(m.displacement - x));
    }
    EXPECT_LT(worst, 1e-12) << "zeta " << zeta;
  }
}

TEST(ServoActuatorEmulator, ClosedFormDiscretisationEqualsTheLtiZeroOrderHold) {
  for (double step : {0.001, 0.01, 0.05}) {
    ServoActuatorEmulator::Matrix2 a_d;
    ServoActuatorEmulator::Vector2 b_d;
    ServoActuatorEmulator::discretise(50.0, 0.8, step, a_d, b_d);
    // Same plant in the companion form of the transfer function: compare outputs, not states.
    core::LtiSystem lti(core::to_state_space({{2500.0}, {1.0, 80.0, 2500.0}}), step);
    lti.reset(0.0);
    ServoActuatorConfig config;
    config.step = step;
    ServoActuatorEmulator servo(config);
    servo.reset(0.0);
    double worst = 0.0;
    for (int i = 0; i < 300; ++i) {
      const double u = std::sin(0.37 * i) + 0.5 * std::cos(0.11 * i);
      worst = std::max(worst, std::abs(servo.step(u).displacement - lti.step(u)));
    }
    EXPECT_LT(worst, 1e-12) << "step " << step;
  }
}

// Delay of the measured displacement behind the command under the §6 timing, from the
// cross-correlation of a 1 Hz sine.
double measured_delay(double omega, double zeta, double step) {
  ServoActuatorConfig config;
  config.step = step;
  config.omega = omega;
  config.zeta = zeta;
  ServoActuatorEmulator servo(config);
  servo.reset(0.0);
  std::vector<double> command;
  std::vector<double> measured;
  const int n = static_cast<int>(20.0 / step);
  for (int i = 0; i < n; ++i) {
    const double c = 0.01 * std::sin(2.0 * kPi * 1.0 * i * step);
    command.push_back(c);
    measured.push_back(servo.step(c).displacement);
  }
  // Drop the first 2 s (start transient).
  const auto skip = static_cast<std::size_t>(2.0 / step);
  const std::span<const double> cs(command.data() + skip, command.size() - skip);
  const std::span<const double> ms(measured.data() + skip, measured.size() - skip);
  const core::DelayEstimate est = core::estimate_delay(cs, ms, static_cast<int>(0.1 / step));
  return est.delay(step);
}

TEST(ServoActuatorEmulator, MeasuredDelayOfThePaperServoIsAbout27ms) {
  const double step = 0.01;
  const double delay = measured_delay(50.0, 0.8, step);
  // Closed form at 1 Hz: phase lag of G over 2π·1 Hz, plus half a step for the hold, minus one
  // step because d_m(i) is sampled at the end of step i.
  const double w = 2.0 * kPi;
  const double r = w / 50.0;
  const double phase = std::atan2(2.0 * 0.8 * r, 1.0 - r * r);
  const double expected = phase / w + 0.5 * step - step;
  std::printf(
      "omega 50, zeta 0.8, step 10 ms, 1 Hz sine: measured delay %.3f ms "
      "(closed form %.3f ms, paper ~27 ms)\n",
      1e3 * delay, 1e3 * expected);
  EXPECT_NEAR(delay, expected, 2e-4);
  EXPECT_NEAR(delay, 0.027, 0.2 * 0.027);

  const double slow = measured_delay(44.0, 0.78, step);
  const double fast = measured_delay(54.0, 0.78, step);
  std::printf(
      "zeta 0.78: delay at omega 44 = %.3f ms, at 54 = %.3f ms, difference %.3f ms "
      "(paper: about 8 ms)\n",
      1e3 * slow, 1e3 * fast, 1e3 * (slow - fast));
  EXPECT_GT(slow - fast, 0.005);
  EXPECT_LT(slow - fast, 0.010);
}

TEST(ServoActuatorEmulator, VaryingOmegaFollowsTheSineAndKeepsTheStateContinuous) {
  ServoActuatorConfig config;
  config.step = 0.01;
  config.zeta = 0.78;
  config.omega_variation = {true, 44.0, 54.0, 4.0, 0.3};
  ServoActuatorEmulator servo(config);
  servo.reset(0.0);
  // Reference: RK4 with 200 sub-steps and the same ω held over each step.
  double x = 0.0;
  double v = 0.0;
  double worst = 0.0;
  double omega_min = 1e9;
  double omega_max = 0.0;
  for (int i = 0; i < 1000; ++i) {
    const double t0 = i * config.step;
    const double u = 0.02 * std::sin(2.0 * kPi * 1.3 * t0);
    const double w = 49.0 + 5.0 * std::sin(2.0 * kPi * (t0 + 0.005) / 4.0 + 0.3);
    auto acc = [&](double xx, double vv) { return w * w * (u - xx) - 2.0 * 0.78 * w * vv; };
    const int sub = 200;
    const double h = config.step / sub;
    for (int s = 0; s < sub; ++s) {
      const double k1x = v, k1v = acc(x, v);
      const double k2x = v + 0.5 * h * k1v, k2v = acc(x + 0.5 * h * k1x, v + 0.5 * h * k1v);
      const double k3x = v + 0.5 * h * k2v, k3v = acc(x + 0.5 * h * k2x, v + 0.5 * h * k2v);
      const double k4x = v + h * k3v, k4v = acc(x + h * k3x, v + h * k3v);
      x += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
      v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    const ServoMeasurement& m = servo.step(u);
    EXPECT_NEAR(m.omega, w, 1e-12);
    worst = std::max({worst, std::abs(m.displacement - x), 0.01 * std::abs(m.velocity - v)});
    omega_min = std::min(omega_min, m.omega);
    omega_max = std::max(omega_max, m.omega);
  }
  EXPECT_LT(worst, 1e-12);
  EXPECT_NEAR(omega_min, 44.0, 0.01);
  EXPECT_NEAR(omega_max, 54.0, 0.01);
}

TEST(ServoActuatorEmulator, MeasurementNoiseIsWhiteGaussianWithTheGivenStdAndRepeatable) {
  // Every one of the seeds 1–20: mean within 4σ/√N, std within 1 % (6σ of its estimate), lag-1
  // autocorrelation within 4/√N.
  const int n = 200000;
  std::vector<double> e(n);
  double worst_mean = 0.0, worst_std = 0.0, worst_rho = 0.0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ServoActuatorConfig config;
    config.noise_std = 1e-5;  // 0.01 mm
    config.seed = seed;
    ServoActuatorEmulator servo(config);
    servo.reset(0.002);
    for (int i = 0; i < n; ++i) {
      const ServoMeasurement& m = servo.step(0.002);
      e[static_cast<std::size_t>(i)] = m.displacement - m.true_displacement;
      ASSERT_NEAR(m.true_displacement, 0.002, 1e-15);
    }
    double mean = 0.0;
    for (double v : e) mean += v;
    mean /= n;
    double var = 0.0;
    double lag1 = 0.0;
    for (int i = 0; i < n; ++i) {
      const double d = e[static_cast<std::size_t>(i)] - mean;
      var += d * d;
      if (i > 0) lag1 += d * (e[static_cast<std::size_t>(i - 1)] - mean);
    }
    const double std_dev = std::sqrt(var / n);
    const double rho1 = lag1 / var;
    EXPECT_LT(std::abs(mean), 4.0 * 1e-5 / std::sqrt(n)) << "seed " << seed;
    EXPECT_NEAR(std_dev, 1e-5, 0.01e-5) << "seed " << seed;
    EXPECT_LT(std::abs(rho1), 4.0 / std::sqrt(n)) << "seed " << seed;
    worst_mean = std::max(worst_mean, std::abs(mean) / (1e-5 / std::sqrt(n)));
    worst_std = std::max(worst_std, std::abs(std_dev / 1e-5 - 1.0));
    worst_rho = std::max(worst_rho, std::abs(rho1) * std::sqrt(n));
    // Same seed after reset: the same sequence; another seed: another one.
    servo.reset(0.002);
    EXPECT_DOUBLE_EQ(servo.step(0.002).displacement - 0.002, e[0]);
    config.seed = seed + 100;
    ServoActuatorEmulator other(config);
    other.reset(0.002);
    EXPECT_NE(other.step(0.002).displacement - 0.002, e[0]);
  }
  std::printf(
      "noise, seeds 1-20 (N = %d): |mean| <= %.2f sigma/sqrt(N), |std/set - 1| <= %.4f, "
      "|lag-1 autocorrelation| <= %.2f/sqrt(N)\n",
      n, worst_mean, worst_std, worst_rho);
}

TEST(ServoActuatorEmulator, SpecimenForceIsStiffnessTimesDisplacementPlusDampingTimesVelocity) {
  ServoActuatorConfig config;
  config.noise_std = 1e-4;
  config.specimen_stiffness = 39478.4;
  config.specimen_damping = 120.0;
  ServoActuatorEmulator servo(config);
  servo.reset(0.0);
  for (int i = 0; i < 100; ++i) {
    const ServoMeasurement& m = servo.step(0.01 * std::sin(0.2 * i));
    EXPECT_DOUBLE_EQ(m.force, 39478.4 * m.true_displacement + 120.0 * m.velocity);
  }
}

TEST(ServoActuatorEmulator, StepDoesNotAllocate) {
  ServoActuatorConfig config;
  config.noise_std = 1e-5;
  config.omega_variation.enabled = true;
  ServoActuatorEmulator servo(config);
  servo.reset(0.0);
  double sum = 0.0;
  hyloop::testing::AllocGuard guard;
  for (int i = 0; i < 10000; ++i) {
    sum += servo.step(std::sin(0.01 * i)).displacement;
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_TRUE(std::isfinite(sum));
}

TEST(ServoActuatorEmulator, RejectsBadConfigurationNamingTheField) {
  auto message = [](ServoActuatorConfig c) -> std::string {
    try {
      ServoActuatorEmulator s(c);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  ServoActuatorConfig c;
  c.step = 0.0;
  EXPECT_THAT(message(c), ::testing::HasSubstr("step = 0"));
  c = {};
  c.omega = -50.0;
  EXPECT_THAT(message(c), ::testing::HasSubstr("omega = -50"));
  c = {};
  c.zeta = -0.1;
  EXPECT_THAT(message(c), ::testing::HasSubstr("zeta = -0.1"));
  c = {};
  c.noise_std = -1e-5;
  EXPECT_THAT(message(c), ::testing::HasSubstr("noise_std = -1e-05"));
  c = {};
  c.omega_variation = {true, 44.0, 40.0, 10.0, 0.0};
  EXPECT_THAT(message(c), ::testing::HasSubstr("omega_variation.omega_max = 40"));
  c.omega_variation = {true, 44.0, 54.0, 0.0, 0.0};
  EXPECT_THAT(message(c), ::testing::HasSubstr("omega_variation.period = 0"));
}

}  // namespace
}  // namespace hyloop::hal
