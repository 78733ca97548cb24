#include "hyloop/core/tracking_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kPi = std::numbers::pi;

// Band-limited test signal: four sinusoids between 0.7 and 4.1 Hz.
double band_limited(double t) {
  return 1.0 * std::sin(2.0 * kPi * 0.7 * t + 0.3) + 0.6 * std::sin(2.0 * kPi * 1.3 * t + 1.1) +
         0.4 * std::sin(2.0 * kPi * 2.9 * t + 2.0) + 0.25 * std::sin(2.0 * kPi * 4.1 * t + 0.7);
}

struct Pair {
  std::vector<double> command;
  std::vector<double> measured;
};

Pair delayed(double step, double delay, double duration) {
  Pair p;
  const auto n = static_cast<std::size_t>(duration / step);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) * step;
    p.command.push_back(band_limited(t));
    p.measured.push_back(band_limited(t - delay));
  }
  return p;
}

TEST(TrackingMetrics, PureDelayOf27msIsEstimatedWithinOneStepAndBelow) {
  const double step = 0.001;
  const Pair p = delayed(step, 0.027, 20.0);
  const DelayEstimate est = estimate_delay(p.command, p.measured, 100);
  std::printf("27 ms at 1 ms: integer lag %d, sub-step %.4f steps, r = %.6f\n", est.integer_lag,
              est.lag_steps, est.correlation);
  EXPECT_EQ(est.integer_lag, 27);
  EXPECT_FALSE(est.at_boundary);
  EXPECT_NEAR(est.delay(step), 0.027, 0.05 * step);
  EXPECT_GT(est.correlation, 0.99);
}

TEST(TrackingMetrics, FractionalDelayIsResolvedBelowAStep) {
  // 27 ms at the RHT step of 10 ms is 2.7 steps; and 27.4 ms at 1 ms.
  for (const auto& [step, delay] : {std::pair{0.01, 0.027}, std::pair{0.001, 0.0274}}) {
    const Pair p = delayed(step, delay, 30.0);
    const DelayEstimate est = estimate_delay(p.command, p.measured, 50);
    std::printf("%.4f s at %.3f s: integer lag %d, sub-step %.4f steps (true %.4f)\n", delay, step,
                est.integer_lag, est.lag_steps, delay / step);
    EXPECT_NEAR(est.lag_steps, delay / step, 0.05);
  }
}

TEST(TrackingMetrics, LeadingMeasurementGivesNegativeLag) {
  const Pair p = delayed(0.001, -0.012, 10.0);
  const DelayEstimate est = estimate_delay(p.command, p.measured, 40);
  EXPECT_NEAR(est.lag_steps, -12.0, 0.05);
}

TEST(TrackingMetrics, DelayBeyondTheSearchIsFlaggedAtTheBoundary) {
  const Pair p = delayed(0.001, 0.027, 10.0);
  const DelayEstimate est = estimate_delay(p.command, p.measured, 10);
  EXPECT_TRUE(est.at_boundary);
  EXPECT_EQ(est.integer_lag, 10);
}

TEST(TrackingMetrics, TrackingIndicatorIsTheEnclosedAreaPositiveForALag) {
  // x_c = a sin ωt, x_m = a sin ω(t − τ): TI = π a² sin(ωτ) per period (the ellipse's area).
  const double a = 0.02;
  const double f = 1.0;
  const double step = 0.001;
  const int periods = 5;
  for (double tau : {0.027, -0.010}) {
    TrackingIndicator ti;
    const int n = static_cast<int>(periods / f / step);
    hyloop::testing::AllocGuard guard;
    for (int i = 0; i <= n; ++i) {
      const double t = i * step;
      ti.update(a * std::sin(2.0 * kPi * f * t), a * std::sin(2.0 * kPi * f * (t - tau)));
    }
    EXPECT_EQ(guard.allocations(), 0u);
    const double expected = periods * kPi * a * a * std::sin(2.0 * kPi * f * tau);
    std::printf("tau %+.3f s: TI = %.6e (closed form %.6e)\n", tau, ti.value(), expected);
    EXPECT_NEAR(ti.value(), expected, 1e-3 * std::abs(expected));
    EXPECT_EQ(ti.value() > 0.0, tau > 0.0);
    EXPECT_NEAR(ti.value(), 0.5 * (ti.area() - ti.complementary_area()), 1e-15);
  }
}

TEST(TrackingMetrics, TrackingIndicatorFollowsEq27To29Literally) {
  TrackingIndicator ti;
  EXPECT_EQ(ti.update(1.0, 0.0), 0.0);  // the first pair only starts the sums
  ti.update(2.0, 1.0);
  // A = ½(2 + 1)(1 − 0) = 1.5, TA = ½(1 + 0)(2 − 1) = 0.5, TI = 0.5
  EXPECT_DOUBLE_EQ(ti.area(), 1.5);
  EXPECT_DOUBLE_EQ(ti.complementary_area(), 0.5);
  EXPECT_DOUBLE_EQ(ti.value(), 0.5);
  const std::vector<double> c{1.0, 2.0};
  const std::vector<double> m{0.0, 1.0};
  EXPECT_DOUBLE_EQ(tracking_indicator(c, m), 0.5);
  // A perfect measurement keeps TI at zero.
  TrackingIndicator perfect;
  for (int i = 0; i < 100; ++i) {
    perfect.update(std::sin(0.1 * i), std::sin(0.1 * i));
  }
  EXPECT_NEAR(perfect.value(), 0.0, 1e-15);
}

TEST(TrackingMetrics, NormalisedErrorsOfAKnownErrorSignal) {
  // x_c = a sin θ, x_m = x_c + c cos θ over whole periods: RMS = c/√2, peak = c,
  // NRMS = c/(√2·2a), normalised peak = c/a.
  const double a = 2.0;
  const double c = 0.1;
  const int per_period = 200;
  std::vector<double> xc;
  std::vector<double> xm;
  for (int i = 0; i < 3 * per_period; ++i) {
    const double th = 2.0 * kPi * i / per_period;
    xc.push_back(a * std::sin(th));
    xm.push_back(a * std::sin(th) + c * std::cos(th));
  }
  const TrackingErrors e = tracking_errors(xc, xm);
  EXPECT_EQ(e.samples, xc.size());
  EXPECT_NEAR(e.rms, c / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(e.peak, c, 1e-12);
  EXPECT_NEAR(e.command_range, 2.0 * a, 1e-12);
  EXPECT_NEAR(e.command_peak, a, 1e-12);
  EXPECT_NEAR(e.nrms, c / std::sqrt(2.0) / (2.0 * a), 1e-12);
  EXPECT_NEAR(e.normalised_peak, c / a, 1e-12);
}

TEST(TrackingMetrics, RejectsMismatchedOrDegenerateInput) {
  const std::vector<double> a(100, 1.0);
  const std::vector<double> b(99, 1.0);
  EXPECT_THROW(estimate_delay(a, b, 10), std::invalid_argument);
  EXPECT_THROW(tracking_indicator(a, b), std::invalid_argument);
  EXPECT_THROW(tracking_errors(a, b), std::invalid_argument);
  try {
    estimate_delay(a, a, 10);
    FAIL() << "constant signal accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("command"));
  }
  std::vector<double> s(100);
  for (std::size_t i = 0; i < s.size(); ++i) {
    s[i] = std::sin(0.3 * static_cast<double>(i));
  }
  try {
    estimate_delay(s, s, 0);
    FAIL() << "max_lag 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("max_lag_steps = 0"));
  }
}

}  // namespace
}  // namespace hyloop::core
