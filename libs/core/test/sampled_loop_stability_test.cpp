#include "hyloop/core/sampled_loop_stability.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "hyloop/core/delay_line.hpp"
#include "hyloop/core/force_conditioner.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/core/sit_model.hpp"
#include "hyloop/core/tracking_differentiator.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::core {
namespace {

using hyloop::testing::invalid_argument_message;
using ::testing::HasSubstr;

constexpr double kPi = std::numbers::pi;

// DESIGN §6 default robot: G_R = (ωn²/ωz)(s + ωz)/(s² + 2ζωn·s + ωn²).
TransferFunction default_robot() {
  const double wn = 2.0 * kPi * 40.0;
  return {{wn * wn / 300.0, wn * wn}, {1.0, 2.0 * 0.6 * wn, wn * wn}};
}

SampledSitsLoop table1(double k_h) {
  SampledSitsLoop l;
  l.step = 0.002;
  l.hold_steps = 2;
  l.force_delay_steps = 1.0;
  l.m_e = 500.0;
  l.k_tc = 20000.0;
  l.b_tc = 50.0;
  l.robot = default_robot();
  l.td = {10000.0, 0.0034, 0.002};
  l.k_h = k_h;
  return l;
}

// The loop assembled from the blocks the runner uses (cycle contract of DESIGN §6), every branch
// of the model on: fractional delay, acquisition filter, h = 3, K_x ≠ 0. Small amplitudes keep
// the tracking differentiator in its linear region.
TEST(SampledLoopStability, StepMatricesReproduceTheBlocksCycleByCycle) {
  SampledSitsLoop l = table1(-45.0);
  l.hold_steps = 3;
  l.force_delay_steps = 1.5;
  l.filter_time_constant = 0.001;
  l.k_x = 24.0;
  const SampledLoopLayout lay = sampled_loop_layout(l);
  ASSERT_EQ(lay.size, 2 + 2 + 2 + 2 + 1 + 2);
  const Eigen::MatrixXd hold = sampled_loop_step_matrix(l, false);
  const Eigen::MatrixXd latch = sampled_loop_step_matrix(l, true);

  LtiSystem robot(to_state_space(*l.robot), l.step);
  robot.reset(0.0);
  DelayLine delay(l.force_delay_steps, 0.0);
  ForceConditioner filter(false, l.filter_time_constant, l.step);
  filter.update(0.0);  // its first sample initialises it: at rest, as the model's y_f = 0
  TrackingDifferentiator td(l.td);
  td.reset(0.0, 0.0);
  PointMass target(l.m_e, l.step, {0.0, 0.01});
  double command = 0.0, command_velocity = 0.01;

  Eigen::VectorXd z = Eigen::VectorXd::Zero(lay.size);
  z(lay.v) = 0.01;
  z(lay.command_velocity) = 0.01;
  double worst = 0.0;
  for (int k = 0; k < 3000; ++k) {
    const double x_r = robot.step(command);
    const double v_r = robot.output_rate();
    const double force = -l.k_tc * x_r - l.b_tc * v_r;
    const double measured = filter.update(delay.push(force));
    const double v_est = td.update(x_r);
    target.step(measured + l.k_h * v_est + l.k_x * x_r);
    const bool latches = (k + 1) % l.hold_steps == 0;
    if (latches) {
      command = target.state().position;
      command_velocity = target.state().velocity;
    }
    z = (latches ? latch : hold) * z;
    const double scale = 0.01;
    worst = std::max({worst, std::abs(z(lay.v) - target.state().velocity) / scale,
                      std::abs(z(lay.x) - target.state().position) / scale,
                      std::abs(z(lay.command) - command) / scale,
                      std::abs(z(lay.td_x2) - td.rate()) / scale});
  }
  (void)command_velocity;
  EXPECT_LT(worst, 1e-10);
}

// Undamped, force delay alone (robot bypassed, h = 1, K_h = 0): DESIGN §6 gives the rightmost root
// of s² + ω_n²·e^{−sτ} = 0, 0.0400 1/s for Table 1; the sampled loop must grow at that rate.
TEST(SampledLoopStability, ForceDelayAloneGrowsAtTheDelayEquationsRate) {
  SampledSitsLoop l = table1(0.0);
  l.b_tc = 0.0;
  l.hold_steps = 1;
  l.robot.reset();
  const SampledLoopAnalysis a = analyse_sampled_loop(l);
  // Newton on s² + ω²·e^{−sτ} from jω (as the reproduction test does for the simulation).
  const double w = std::sqrt(20000.0 / 500.0);
  std::complex<double> s(0.0, w);
  for (int i = 0; i < 50; ++i) {
    const std::complex<double> e = std::exp(-s * 0.002);
    s -= (s * s + w * w * e) / (2.0 * s - 0.002 * w * w * e);
  }
  EXPECT_FALSE(a.stable());
  EXPECT_NEAR(a.growth_rate, s.real(), 0.01 * s.real());
  EXPECT_NEAR(a.modes.front().frequency_hz, w / (2.0 * kPi), 0.01);
}

TEST(SampledLoopStability, BoundariesHaveUnitSpectralRadiusAndSeparateStableFromUnstable) {
  const auto intervals = sampled_stable_gain_intervals(table1(0.0), 2.5e6);
  ASSERT_EQ(intervals.size(), 1u);
  const GainInterval g = intervals.front();
  EXPECT_LT(g.lower, -1e4);
  EXPECT_LT(g.upper, -10.0);
  EXPECT_GT(g.upper, -58.0);  // well inside Routh's (−∞, −58.9): the models differ here
  for (const double b : {g.lower, g.upper}) {
    EXPECT_NEAR(analyse_sampled_loop(table1(b)).spectral_radius, 1.0, 1e-9) << "K_h = " << b;
    EXPECT_TRUE(
        analyse_sampled_loop(table1(b + 0.01 * std::abs(b) * (b == g.lower ? 1 : -1))).stable());
    EXPECT_FALSE(
        analyse_sampled_loop(table1(b - 0.01 * std::abs(b) * (b == g.lower ? 1 : -1))).stable());
  }
}

// A positive K_x·X_R is an anti-restoring force: enough of it makes the contact too soft to hold.
TEST(SampledLoopStability, StiffnessCorrectionEntersTheLoop) {
  SampledSitsLoop l = table1(-80.0);
  EXPECT_TRUE(analyse_sampled_loop(l).stable());
  l.k_x = 1.5 * l.k_tc;
  EXPECT_FALSE(analyse_sampled_loop(l).stable());
  l.k_x = 24.0;
  const double with = analyse_sampled_loop(l).modes.front().frequency_hz;
  l.k_x = 0.0;
  EXPECT_LT(with, analyse_sampled_loop(l).modes.front().frequency_hz);  // softer: slower
}

// Eq. 34 with the correction: P0 gains −2·K_x·K_R·(2 + τ_s·s)·Π(s − z_j), checked at s = 3 + 40j.
TEST(SampledLoopStability, RouthCharacteristicCarriesKx) {
  const ZeroPoleGain robot = to_zero_pole_gain(default_robot());
  SitsLoopParameters p{500.0, 20000.0, 50.0, 0.002, 0.004};
  const SitsCharacteristic without = sits_characteristic(p, robot);
  p.k_x = 24.0;
  const SitsCharacteristic with = sits_characteristic(p, robot);
  const std::complex<double> s(3.0, 40.0);
  const std::complex<double> expected =
      -2.0 * 24.0 * robot.gain * (2.0 + 0.002 * s) * (s - robot.zeros.front());
  const std::complex<double> got = with.p0.evaluate(s) - without.p0.evaluate(s);
  EXPECT_NEAR(std::abs(got - expected), 0.0, 1e-9 * std::abs(expected));
  EXPECT_EQ(with.p1, without.p1);
  p.k_x = std::nan("");
  EXPECT_THAT(invalid_argument_message([&] { (void)sits_characteristic(p, robot); }),
              HasSubstr("k_x"));
}

TEST(SampledLoopStability, RejectsBadParametersNamingThem) {
  SampledSitsLoop l = table1(0.0);
  l.hold_steps = 0;
  EXPECT_THAT(invalid_argument_message([&] { (void)analyse_sampled_loop(l); }),
              HasSubstr("hold_steps"));
  l = table1(0.0);
  l.m_e = -1.0;
  EXPECT_THAT(invalid_argument_message([&] { (void)analyse_sampled_loop(l); }), HasSubstr("m_e"));
  l = table1(0.0);
  l.td.step = 0.001;
  EXPECT_THAT(invalid_argument_message([&] { (void)analyse_sampled_loop(l); }),
              HasSubstr("td.step"));
  l = table1(0.0);
  l.k_x = std::nan("");
  EXPECT_THAT(invalid_argument_message([&] { (void)analyse_sampled_loop(l); }), HasSubstr("k_x"));
  EXPECT_THAT(
      invalid_argument_message([&] { (void)sampled_stable_gain_intervals(table1(0), 0.0); }),
      HasSubstr("k_limit"));
}

}  // namespace
}  // namespace hyloop::core
