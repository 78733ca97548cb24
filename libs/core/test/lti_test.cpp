#include "hyloop/core/lti.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::core {
namespace {

using hyloop::testing::invalid_argument_message;

using ::testing::HasSubstr;
using Complex = std::complex<double>;

constexpr double kPi = std::numbers::pi;
constexpr double kRadToDeg = 180.0 / kPi;

// DESIGN §6 robot: G_R(s) = (ωn²/ωz)(s + ωz)/(s² + 2ζωn·s + ωn²).
struct RobotPreset {
  double omega_n;
  double zeta;
  double omega_z;
};
constexpr RobotPreset kDefaultRobot{2.0 * kPi * 40.0, 0.6, 300.0};
constexpr RobotPreset kPaperRobot{2.0 * kPi * 30.0, 0.35, 299.76};

TransferFunction robot_tf(const RobotPreset& r) {
  const double k = r.omega_n * r.omega_n / r.omega_z;
  return {{k, k * r.omega_z}, {1.0, 2.0 * r.zeta * r.omega_n, r.omega_n * r.omega_n}};
}

// Analytic phase of G_R(jω) in degrees.
double robot_phase_deg(const RobotPreset& r, double omega) {
  return (std::atan(omega / r.omega_z) -
          std::atan2(2.0 * r.zeta * r.omega_n * omega, r.omega_n * r.omega_n - omega * omega)) *
         kRadToDeg;
}

double relative_error(const LtiMatrix& a, const LtiMatrix& b) { return (a - b).norm() / b.norm(); }

TEST(LtiTest, ControllableCanonicalForm) {
  // G = (4s² + 2s + 6)/(2s² + 8s + 10) = (2s² + s + 3)/(s² + 4s + 5)
  const StateSpace ss = to_state_space({{4.0, 2.0, 6.0}, {2.0, 8.0, 10.0}});
  ASSERT_EQ(ss.a.rows(), 2);
  EXPECT_EQ(ss.a(0, 0), -4.0);
  EXPECT_EQ(ss.a(0, 1), -5.0);
  EXPECT_EQ(ss.a(1, 0), 1.0);
  EXPECT_EQ(ss.a(1, 1), 0.0);
  EXPECT_EQ(ss.b(0), 1.0);
  EXPECT_EQ(ss.b(1), 0.0);
  EXPECT_EQ(ss.c(0), 1.0 - 2.0 * 4.0);  // b1 − b0·a1
  EXPECT_EQ(ss.c(1), 3.0 - 2.0 * 5.0);  // b2 − b0·a2
  EXPECT_EQ(ss.d, 2.0);

  const TransferFunction back = to_transfer_function(ss);
  const std::vector<double> num{2.0, 1.0, 3.0};
  const std::vector<double> den{1.0, 4.0, 5.0};
  ASSERT_EQ(back.num.size(), 3U);
  ASSERT_EQ(back.den.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(back.num[i], num[i], 1e-14);
    EXPECT_NEAR(back.den[i], den[i], 1e-14);
  }
}

TEST(LtiTest, TransferFunctionOfAGeneralStateSpaceUsesItsDeterminants) {
  // A 3rd-order model not in canonical form; G(s) checked against C(sI − A)⁻¹B + D directly.
  StateSpace ss;
  ss.a.resize(3, 3);
  ss.a << -1.0, 2.0, 0.5, -3.0, -4.0, 1.0, 0.2, 0.0, -6.0;
  ss.b.resize(3);
  ss.b << 1.0, -0.5, 2.0;
  ss.c.resize(3);
  ss.c << 0.3, 1.0, -0.7;
  ss.d = 0.25;
  const TransferFunction tf = to_transfer_function(ss);
  EXPECT_EQ(tf.den[0], 1.0);
  for (double omega : {0.0, 0.7, 3.0, 25.0}) {
    const Complex s(0.0, omega);
    const Eigen::Matrix3cd resolvent =
        (s * Eigen::Matrix3cd::Identity() - ss.a.cast<Complex>()).inverse();
    const Complex expected =
        (ss.c.cast<Complex>() * resolvent * ss.b.cast<Complex>()).value() + ss.d;
    EXPECT_LT(std::abs(frequency_response(tf, omega) - expected), 1e-13 * std::abs(expected));
  }
}

TEST(LtiTest, ZeroPoleGainRoundTrip) {
  const TransferFunction tf = robot_tf(kDefaultRobot);
  const ZeroPoleGain zpk = to_zero_pole_gain(tf);
  ASSERT_EQ(zpk.zeros.size(), 1U);
  ASSERT_EQ(zpk.poles.size(), 2U);
  EXPECT_NEAR(zpk.zeros[0].real(), -300.0, 1e-10);
  const double sigma = kDefaultRobot.zeta * kDefaultRobot.omega_n;
  const double omega_d = kDefaultRobot.omega_n * std::sqrt(1.0 - 0.36);
  for (const Complex& p : zpk.poles) {
    EXPECT_NEAR(p.real(), -sigma, 1e-10);
    EXPECT_NEAR(std::abs(p.imag()), omega_d, 1e-10);
  }
  EXPECT_NEAR(zpk.gain, kDefaultRobot.omega_n * kDefaultRobot.omega_n / 300.0, 1e-12);
  const TransferFunction back = to_transfer_function(zpk);
  for (std::size_t i = 0; i < tf.num.size(); ++i) {
    EXPECT_NEAR(back.num[i], tf.num[i], 1e-12 * std::abs(tf.num[i]));
  }
  for (std::size_t i = 0; i < tf.den.size(); ++i) {
    EXPECT_NEAR(back.den[i], tf.den[i], 1e-12 * std::abs(tf.den[i]));
  }
}

TEST(LtiTest, RejectsInvalidTransferFunctions) {
  EXPECT_THAT(invalid_argument_message([] {
                to_state_space({{1.0, 0.0, 0.0}, {1.0, 1.0}});
              }),
              HasSubstr("improper"));
  EXPECT_THAT(invalid_argument_message([] {
                to_state_space({{1.0}, {0.0, 1.0}});
              }),
              HasSubstr("tf.den[0]"));
  EXPECT_THAT(invalid_argument_message([] { to_state_space({{}, {1.0}}); }), HasSubstr("tf.num"));
  EXPECT_THAT(invalid_argument_message([] {
                to_state_space({{1.0}, std::vector<double>(10, 1.0)});
              }),
              HasSubstr("kMaxLtiOrder"));
  EXPECT_THAT(invalid_argument_message([] {
                to_state_space({{1.0}, {1.0, std::nan("")}});
              }),
              HasSubstr("tf.den[1]"));
  // Leading zeros of the numerator are not improperness.
  EXPECT_NO_THROW(to_state_space({{0.0, 0.0, 1.0}, {1.0, 1.0}}));
}

TEST(LtiTest, ZeroOrderHoldOfFirstOrderLagIsExponential) {
  const double tau = 0.05;
  const double gain = 2.0;
  const double step = 0.002;
  const StateSpace ss = to_state_space({{gain}, {tau, 1.0}});
  const StateSpace d = discretise(ss, step, Discretisation::kZeroOrderHold);
  const double e = std::exp(-step / tau);
  EXPECT_NEAR(d.a(0, 0), e, 1e-15);
  EXPECT_NEAR((d.c * d.b).value(), gain * (1.0 - e), 1e-15);
  // As a discrete TF: gain(1 − e)/(z − e).
  const TransferFunction tf = to_transfer_function(d);
  EXPECT_NEAR(tf.num[1], gain * (1.0 - e), 1e-15);
  EXPECT_NEAR(tf.den[1], -e, 1e-15);
  const double omega = 2.0 * kPi * 7.0;
  const Complex z = std::polar(1.0, omega * step);
  EXPECT_LT(std::abs(frequency_response_discrete(tf, omega, step) - gain * (1.0 - e) / (z - e)),
            1e-14);
}

TEST(LtiTest, TustinOfFirstOrderLagIsTheBilinearFormula) {
  const double tau = 0.05;
  const double gain = 2.0;
  const double step = 0.002;
  const StateSpace d =
      discretise(to_state_space({{gain}, {tau, 1.0}}), step, Discretisation::kTustin);
  const double q = 2.0 * tau / step;
  // G(2(z − 1)/(T(z + 1))) = gain(z + 1)/((q + 1)z + (1 − q)).
  EXPECT_NEAR(d.a(0, 0), (q - 1.0) / (q + 1.0), 1e-15);
  const TransferFunction tf = to_transfer_function(d);
  EXPECT_NEAR(tf.num[0], gain / (q + 1.0), 1e-15);
  EXPECT_NEAR(tf.num[1], gain / (q + 1.0), 1e-15);
  EXPECT_NEAR(tf.den[1], (1.0 - q) / (q + 1.0), 1e-15);
}

TEST(LtiTest, TustinWarpsFrequencyAsTheBilinearMap) {
  // H(e^{jωT}) = G(j·(2/T)·tan(ωT/2)) for a 2nd-order model.
  const TransferFunction g = robot_tf(kDefaultRobot);
  const double step = 0.002;
  const TransferFunction h =
      to_transfer_function(discretise(to_state_space(g), step, Discretisation::kTustin));
  for (double f : {1.0, 10.0, 40.0, 120.0}) {
    const double omega = 2.0 * kPi * f;
    const Complex expected = frequency_response(g, 2.0 / step * std::tan(omega * step / 2.0));
    EXPECT_LT(std::abs(frequency_response_discrete(h, omega, step) - expected),
              1e-12 * std::abs(expected))
        << f;
  }
}

TEST(LtiTest, ContinualiseInvertsDiscretiseForSecondOrderSystems) {
  const std::vector<TransferFunction> systems{
      robot_tf(kDefaultRobot),
      robot_tf(kPaperRobot),
      {{1.0}, {1.0, 0.4, 4.0}},
      {{0.5, -1.0, 3.0}, {1.0, 3.0, 2.0}}};  // the last with a feedthrough
  double worst = 0.0;
  for (const TransferFunction& tf : systems) {
    const StateSpace c = to_state_space(tf);
    for (Discretisation method : {Discretisation::kZeroOrderHold, Discretisation::kTustin}) {
      for (double step : {0.002, 0.01}) {
        const StateSpace back = continualise(discretise(c, step, method), step, method);
        const double ea = relative_error(back.a, c.a);
        const double eb = (back.b - c.b).norm() / c.b.norm();
        const double ec = (back.c - c.c).norm() / c.c.norm();
        EXPECT_LT(ea, 1e-10);
        EXPECT_LT(eb, 1e-10);
        EXPECT_LT(ec, 1e-10);
        EXPECT_NEAR(back.d, c.d, 1e-10);
        worst = std::max({worst, ea, eb, ec});
      }
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("continualise(discretise(x)): worst relative error %.3g\n", worst);
}

TEST(LtiTest, ContinualiseRejectsNegativeRealEigenvalue) {
  StateSpace d;
  d.a = LtiMatrix::Constant(1, 1, -0.5);
  d.b = LtiVector::Constant(1, 1.0);
  d.c = LtiRow::Constant(1, 1.0);
  EXPECT_THAT(
      invalid_argument_message([&] { continualise(d, 0.01, Discretisation::kZeroOrderHold); }),
      HasSubstr("negative real axis"));
  EXPECT_THAT(invalid_argument_message([&] { discretise(d, 0.0, Discretisation::kZeroOrderHold); }),
              HasSubstr("step = 0"));
}

TEST(LtiTest, RobotPresetPhasesAtTenHertz) {
  const double omega = 2.0 * kPi * 10.0;
  const double phase_default =
      std::arg(frequency_response(robot_tf(kDefaultRobot), omega)) * kRadToDeg;
  const double phase_paper = std::arg(frequency_response(robot_tf(kPaperRobot), omega)) * kRadToDeg;
  EXPECT_NEAR(phase_default, robot_phase_deg(kDefaultRobot, omega), 1e-10);
  EXPECT_NEAR(phase_paper, robot_phase_deg(kPaperRobot, omega), 1e-10);
  EXPECT_NEAR(phase_default, -5.9, 0.05);  // DESIGN §6: −5.9°
  EXPECT_NEAR(phase_paper, -2.87, 0.005);  // DESIGN §6 and the paper: −2.87°
  const double peak = std::abs(frequency_response(robot_tf(kPaperRobot), 2.0 * kPi * 30.0));
  EXPECT_NEAR(peak, 1.69, 0.01);  // resonant peak ≈ 1.69 at 30 Hz
  std::printf("G_R phase at 10 Hz: default %.4f deg, paper preset %.4f deg; |G| at 30 Hz %.4f\n",
              phase_default, phase_paper, peak);
}

// Unit-step response of G_R and its derivative in closed form.
struct StepResponse {
  double y;
  double dy;
};
StepResponse robot_step(const RobotPreset& r, double t) {
  const double sigma = r.zeta * r.omega_n;
  const double wd = r.omega_n * std::sqrt(1.0 - r.zeta * r.zeta);
  const double wn2 = r.omega_n * r.omega_n;
  const double e = std::exp(-sigma * t);
  const double c = std::cos(wd * t);
  const double s = std::sin(wd * t);
  return {1.0 - e * (c + sigma / wd * s) + wn2 / (r.omega_z * wd) * e * s,
          wn2 / wd * e * s + wn2 / (r.omega_z * wd) * e * (wd * c - sigma * s)};
}

TEST(LtiTest, StepResponseMatchesClosedForm) {
  const double step = 0.002;
  LtiSystem robot(to_state_space(robot_tf(kDefaultRobot)), step);
  double worst_y = 0.0;
  double worst_rate = 0.0;
  for (int k = 0; k < 200; ++k) {
    const double y = robot.step(1.0);
    const StepResponse expected = robot_step(kDefaultRobot, (k + 1) * step);  // y(t_{k+1})
    worst_y = std::max(worst_y, std::abs(y - expected.y));
    worst_rate = std::max(worst_rate, std::abs(robot.output_rate() - expected.dy));
    EXPECT_EQ(robot.output(), y);
  }
  EXPECT_LT(worst_y, 1e-12);
  EXPECT_LT(worst_rate, 1e-9);  // ẏ peaks near 3·10² 1/s
  std::printf("step response: max |y - closed form| = %.3g, max |dy/dt - closed form| = %.3g\n",
              worst_y, worst_rate);
}

TEST(LtiTest, OutputRateMatchesFiniteDifference) {
  const double step = 1e-5;
  LtiSystem robot(to_state_space(robot_tf(kPaperRobot)), step);
  std::vector<double> y;
  std::vector<double> rate;
  for (int k = 0; k < 4000; ++k) {
    y.push_back(robot.step(1.0));
    rate.push_back(robot.output_rate());
  }
  double worst = 0.0;
  double scale = 0.0;
  for (std::size_t k = 1; k + 1 < y.size(); ++k) {
    const double fd = (y[k + 1] - y[k - 1]) / (2.0 * step);
    worst = std::max(worst, std::abs(fd - rate[k]));
    scale = std::max(scale, std::abs(rate[k]));
  }
  EXPECT_LT(worst, 1e-5 * scale);
  std::printf("output_rate vs central difference: max error %.3g (max |dy/dt| %.3g)\n", worst,
              scale);
}

// Runs the difference equation of a discrete TF (descending, den[0] == 1) on u.
std::vector<double> filter(const TransferFunction& h, const std::vector<double>& u) {
  std::vector<double> y(u.size(), 0.0);
  const std::size_t n = h.den.size() - 1;
  const std::size_t offset = h.den.size() - h.num.size();
  for (std::size_t k = 0; k < u.size(); ++k) {
    double acc = 0.0;
    for (std::size_t i = 0; i < h.num.size(); ++i) {
      const std::size_t lag = offset + i;
      if (k >= lag) {
        acc += h.num[i] * u[k - lag];
      }
    }
    for (std::size_t i = 1; i <= n; ++i) {
      if (k >= i) {
        acc -= h.den[i] * y[k - i];
      }
    }
    y[k] = acc;
  }
  return y;
}

TEST(LtiTest, SampledTransferFunctionReproducesTheEndOfStepOutputs) {
  std::vector<double> u(500);
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double x = static_cast<double>(k);
    u[k] = std::sin(0.05 * x) + 0.3 * std::cos(0.31 * x * x);
  }
  const std::vector<TransferFunction> plants{robot_tf(kDefaultRobot),
                                             {{0.5, -1.0, 3.0}, {1.0, 3.0, 2.0}}};
  for (const TransferFunction& plant : plants) {
    for (Discretisation method : {Discretisation::kZeroOrderHold, Discretisation::kTustin}) {
      LtiSystem system(to_state_space(plant), 0.002, method);
      const TransferFunction h = system.sampled_transfer_function();
      EXPECT_EQ(h.den[0], 1.0);
      const std::vector<double> expected = filter(h, u);
      double worst = 0.0;
      double scale = 0.0;
      for (std::size_t k = 0; k < u.size(); ++k) {
        worst = std::max(worst, std::abs(system.step(u[k]) - expected[k]));
        scale = std::max(scale, std::abs(expected[k]));
      }
      EXPECT_LT(worst, 1e-12 * scale);
    }
  }
}

TEST(LtiTest, ResetPutsTheStateAtTheDcEquilibrium) {
  const TransferFunction plant{{3.0, 6.0}, {1.0, 5.0, 4.0}};  // G(0) = 1.5
  LtiSystem system(to_state_space(plant), 0.002);
  EXPECT_TRUE(system.has_equilibrium());
  system.reset(2.0);
  EXPECT_NEAR(system.output(), 3.0, 1e-14);
  EXPECT_NEAR(system.output_rate(), 0.0, 1e-13);
  for (int k = 0; k < 100; ++k) {
    EXPECT_NEAR(system.step(2.0), 3.0, 1e-13);
  }
  system.reset(0.0);
  EXPECT_EQ(system.output(), 0.0);
  EXPECT_EQ(system.state().norm(), 0.0);

  // An integrator has no equilibrium for u ≠ 0.
  LtiSystem integrator(to_state_space({{1.0}, {1.0, 0.0}}), 0.01);
  EXPECT_FALSE(integrator.has_equilibrium());
  integrator.reset(0.0);
  EXPECT_NEAR(integrator.step(1.0), 0.01, 1e-15);  // ∫1 dt over one step
}

TEST(LtiTest, StepDoesNotAllocate) {
  LtiSystem robot(to_state_space(robot_tf(kDefaultRobot)), 0.002);
  LtiSystem tustin(to_state_space(robot_tf(kPaperRobot)), 0.002, Discretisation::kTustin);
  double sink = 0.0;
  hyloop::testing::AllocGuard guard;
  robot.reset(0.01);
  for (int k = 0; k < 10000; ++k) {
    const double u = 0.025 * std::sin(6.0 * kPi * 0.002 * k);
    sink += robot.step(u) + robot.output_rate() + tustin.step(u) + tustin.output();
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_TRUE(std::isfinite(sink));
}

TEST(LtiTest, SystemValidatesItsParameters) {
  const StateSpace plant = to_state_space(robot_tf(kDefaultRobot));
  EXPECT_THAT(invalid_argument_message([&] { LtiSystem(plant, -0.002); }),
              HasSubstr("step = -0.002"));
  EXPECT_THAT(invalid_argument_message([&] { LtiSystem(plant, std::nan("")); }), HasSubstr("step"));
  StateSpace broken = plant;
  broken.c.resize(1);
  EXPECT_THAT(invalid_argument_message([&] { LtiSystem(broken, 0.002); }), HasSubstr("dimensions"));
}

}  // namespace
}  // namespace hyloop::core
