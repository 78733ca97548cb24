// ATS (adaptive_time_series.hpp): the coefficients of known actuators, the published ranges,
// the adaptation threshold, the kept coefficients of an ill-conditioned fit, the rate limit,
// validation messages, no allocation.
#include "hyloop/core/adaptive_time_series.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kT = 1.0 / 2048.0;
constexpr double kTwoPi = 2.0 * std::numbers::pi;

// A broadband-enough target: two sines (a single sine makes x, ẋ, ẍ collinear).
struct Target {
  double amplitude = 0.002;  // m
  bool single = false;
  [[nodiscard]] std::array<double, 3> at(double t) const {
    std::array<double, 3> k{};
    const std::array<std::pair<double, double>, 2> parts = {
        {{1.0, kTwoPi * 1.0}, {single ? 0.0 : 0.6, kTwoPi * 3.7}}};
    for (const auto& [gain, w] : parts) {
      k[0] += amplitude * gain * std::sin(w * t);
      k[1] += amplitude * gain * w * std::cos(w * t);
      k[2] -= amplitude * gain * w * w * std::sin(w * t);
    }
    return k;
  }
};

// A plant: the displacement measured at the end of the cycle from the command of the cycle.
using Plant = std::function<double(double)>;

Plant delay_plant(int steps) {
  auto line = std::make_shared<std::deque<double>>(static_cast<std::size_t>(steps), 0.0);
  return [line](double u) {
    line->push_back(u);
    const double out = line->front();
    line->pop_front();
    return out;
  };
}

// x(k) = β·x(k−1) + (1 − β)·u(k), β = exp(−T/τ).
Plant lag_plant(double tau) {
  auto x = std::make_shared<double>(0.0);
  const double beta = std::exp(-kT / tau);
  return [x, beta](double u) { return *x = beta * *x + (1.0 - beta) * u; };
}

struct LoopResult {
  double rms_error = 0.0;  // over the last 2 s
  double rms_target = 0.0;
};

// Closed loop for `seconds`: u = ATS(target), x_m = plant(u), ATS observes (u, x_m).
LoopResult run(AdaptiveTimeSeries& ats, const Plant& plant, const Target& target, double seconds) {
  const auto steps = static_cast<int>(seconds / kT);
  const int tail = static_cast<int>(2.0 / kT);
  LoopResult r;
  for (int k = 0; k < steps; ++k) {
    const auto [x, v, a] = target.at(k * kT);
    const double u = ats.command(x, v, a);
    const double measured = plant(u);
    ats.observe(u, measured);
    if (k >= steps - tail) {
      r.rms_error += (measured - x) * (measured - x);
      r.rms_target += x * x;
    }
  }
  r.rms_error = std::sqrt(r.rms_error / tail);
  r.rms_target = std::sqrt(r.rms_target / tail);
  return r;
}

TEST(AdaptiveTimeSeries, AFirstOrderLagIsIdentifiedExactly) {
  // u(k) = x(k) + β·T/(1 − β)·(x(k) − x(k−1))/T: a0 = 1, a1 = β·T/(1 − β), a2 = 0.
  const double tau = 0.015;
  const double beta = std::exp(-kT / tau);
  AdaptiveTimeSeries ats({});
  run(ats, lag_plant(tau), {}, 8.0);
  EXPECT_NEAR(ats.coefficients()[0], 1.0, 1e-9);
  EXPECT_NEAR(ats.coefficients()[1], beta * kT / (1.0 - beta), 1e-9);
  EXPECT_NEAR(ats.coefficients()[2], 0.0, 1e-9);
  EXPECT_GT(ats.fits(), 850U);  // every 16 samples once the 1 s window is full
  EXPECT_EQ(ats.failed_fits(), 0U);
}

TEST(AdaptiveTimeSeries, APureDelayIsItsTaylorSeriesAndTrackingImprovesTenfold) {
  const int d = 20;  // 9.77 ms at 2048 Hz
  const double tau = d * kT;
  AdaptiveTimeSeries ats({});
  const LoopResult compensated = run(ats, delay_plant(d), {}, 10.0);
  EXPECT_NEAR(ats.coefficients()[0], 1.0, 0.01);
  EXPECT_NEAR(ats.coefficients()[1], tau, 0.05 * tau);
  EXPECT_NEAR(ats.coefficients()[2], tau * tau / 2.0, 0.25 * tau * tau / 2.0);
  AdaptiveTimeSeriesConfig frozen;
  frozen.adapt_threshold = 1e9;  // never adapts: u = x_t
  AdaptiveTimeSeries none(frozen);
  const LoopResult uncompensated = run(none, delay_plant(d), {}, 10.0);
  std::cout << "RMS tracking error / RMS target: "
            << uncompensated.rms_error / uncompensated.rms_target << " uncompensated, "
            << compensated.rms_error / compensated.rms_target << " with ATS\n";
  EXPECT_LT(compensated.rms_error, 0.1 * uncompensated.rms_error);
}

TEST(AdaptiveTimeSeries, CoefficientsStayWithinThePublishedRanges) {
  AdaptiveTimeSeries ats({});
  run(ats, lag_plant(0.1), {}, 10.0);  // a1 would be 0.0998 s
  EXPECT_DOUBLE_EQ(ats.coefficients()[1], 0.06);
  EXPECT_LE(ats.coefficients()[2], 0.0032);
  EXPECT_GE(ats.coefficients()[0], 0.9);
  EXPECT_LE(ats.coefficients()[0], 1.1);
}

// Sensor noise in x_m makes the differences noisy; unfiltered, the fit's a1 and a2 are biased
// towards 0 (noise in the regressors). The same filter on u and x_m removes the bias.
TEST(AdaptiveTimeSeries, FilteringBothSidesRemovesTheNoiseBiasOverTwentySeeds) {
  const double tau = 0.015;
  const double beta = std::exp(-kT / tau);
  const double a1 = beta * kT / (1.0 - beta);
  int filtered_good = 0, unfiltered_biased = 0;
  for (int seed = 1; seed <= 20; ++seed) {
    for (const double tau_f : {0.0, 0.01}) {
      AdaptiveTimeSeriesConfig c;
      c.filter_time_constant = tau_f;
      AdaptiveTimeSeries ats(c);
      std::mt19937_64 random(static_cast<std::uint64_t>(seed));
      std::normal_distribution<double> noise(0.0, 16e-6);  // the benchmark's LVDT, m
      const Plant lag = lag_plant(tau);
      const Plant noisy = [&](double u) { return lag(u) + noise(random); };
      run(ats, noisy, {}, 8.0);
      const double error = std::abs(ats.coefficients()[1] - a1) / a1;
      if (tau_f > 0.0 && error < 0.05) ++filtered_good;
      if (tau_f == 0.0 && ats.coefficients()[1] < 0.5 * a1) ++unfiltered_biased;
    }
  }
  EXPECT_EQ(filtered_good, 20);      // a1 within 5 % in every seed with the filter
  EXPECT_EQ(unfiltered_biased, 20);  // and below half of it in every seed without
}

TEST(AdaptiveTimeSeries, BelowTheThresholdTheInitialCoefficientsStay) {
  AdaptiveTimeSeriesConfig c;
  c.initial = {1.0, 0.01, 0.0};
  AdaptiveTimeSeries ats(c);
  Target quiet;
  quiet.amplitude = 1e-5;  // RMS ≈ 8e-6 m < 1e-4 m
  run(ats, delay_plant(20), quiet, 4.0);
  EXPECT_EQ(ats.coefficients(), c.initial);
  EXPECT_EQ(ats.fits(), 0U);
  EXPECT_GT(ats.quiet_updates(), 300U);
}

TEST(AdaptiveTimeSeries, AnIllConditionedFitKeepsThePreviousCoefficients) {
  // A steady single sine (no start-up in the window): x, ẋ, ẍ are collinear, XᵀX singular.
  AdaptiveTimeSeriesConfig c;
  c.initial = {1.0, 0.01, 0.0};
  AdaptiveTimeSeries ats(c);
  Target single;
  single.single = true;
  for (int k = 0; k < 4 * 2048; ++k) {
    ats.observe(single.at(k * kT)[0], single.at((k - 20) * kT)[0]);
  }
  EXPECT_EQ(ats.coefficients(), c.initial);
  EXPECT_GT(ats.failed_fits(), 300U);
  EXPECT_EQ(ats.fits(), 0U);
}

TEST(AdaptiveTimeSeries, EachUpdateMovesACoefficientAtMostItsRateLimit) {
  AdaptiveTimeSeriesConfig c;
  c.update_every = 1;
  AdaptiveTimeSeries ats(c);
  const Target target;
  const Plant plant = delay_plant(40);
  std::array<double, 3> before = ats.coefficients();
  double largest_a1_step = 0.0;
  for (int k = 0; k < 4 * 2048; ++k) {
    const auto [x, v, a] = target.at(k * kT);
    const double u = ats.command(x, v, a);
    ats.observe(u, plant(u));
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_LE(std::abs(ats.coefficients()[i] - before[i]), c.rate_limit[i] * (1 + 1e-12));
    }
    largest_a1_step = std::max(largest_a1_step, std::abs(ats.coefficients()[1] - before[1]));
    before = ats.coefficients();
  }
  EXPECT_DOUBLE_EQ(largest_a1_step, c.rate_limit[1]);  // the limit was reached, and held
}

std::string message_of(const AdaptiveTimeSeriesConfig& c) {
  try {
    AdaptiveTimeSeries ats(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(AdaptiveTimeSeries, BadConfigurationsNameTheField) {
  AdaptiveTimeSeriesConfig c;
  c.window = 0.001;
  EXPECT_EQ(message_of(c), "window = 0.001: must hold 8 to 1e7 samples of the step");
  c = {};
  c.initial[1] = 0.07;
  EXPECT_EQ(message_of(c), "initial.a1 = 0.07: must lie within [min, max]");
  c = {};
  c.rate_limit[2] = 0.0;
  EXPECT_EQ(message_of(c), "rate_limit.a2 = 0: must be finite and > 0");
  c = {};
  c.update_every = 0;
  EXPECT_EQ(message_of(c), "update_every = 0: must be >= 1");
  c = {};
  c.step = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(message_of(c), "step = nan: must be finite and > 0");
}

TEST(AdaptiveTimeSeries, ObserveAndCommandAllocateNothing) {
  AdaptiveTimeSeries ats({});
  const Target target;
  const Plant plant = delay_plant(20);
  std::vector<double> measured(4 * 2048);
  std::vector<double> commands(measured.size());
  for (std::size_t k = 0; k < measured.size(); ++k) {  // the plant's history, precomputed
    const auto [x, v, a] = target.at(static_cast<double>(k) * kT);
    commands[k] = x;
    measured[k] = plant(x);
  }
  const testing::AllocGuard guard;
  double sink = 0.0;
  for (std::size_t k = 0; k < measured.size(); ++k) {
    ats.observe(commands[k], measured[k]);
    sink += ats.command(1.0, 0.0, 0.0);
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_GT(ats.fits(), 0U);
  EXPECT_TRUE(std::isfinite(sink));
}

}  // namespace
}  // namespace hyloop::core
