#include "hyloop/core/tracking_differentiator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

// Velocity of a noisy sine (the SIT's motion: ω_n = 6.325 rad/s, amplitude V0/ω_n) estimated
// by the paper's tracking differentiator and by a backward difference, over the noise seeds 1–20.
TEST(TrackingDifferentiator, BeatsFiniteDifferenceOnNoisySine) {
  const double t_step = 0.002;
  const double w = std::sqrt(20000.0 / 500.0);
  const double amp = 0.05 / w;
  double worst_td = 0.0;
  double best_fd = 1e9;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    TrackingDifferentiator td({.r = 10000.0, .h = 0.0034, .step = t_step});
    td.reset(0.0, 0.05);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0.0, 2e-6);
    double prev = 0.0;
    double err_td = 0.0;
    double err_fd = 0.0;
    int n = 0;
    for (int k = 1; k < 10000; ++k) {
      const double t = k * t_step;
      const double measured = amp * std::sin(w * t) + noise(rng);
      const double v_td = td.update(measured);
      const double v_fd = (measured - prev) / t_step;
      prev = measured;
      const double v_true = amp * w * std::cos(w * t);
      if (k > 500) {
        err_td += (v_td - v_true) * (v_td - v_true);
        err_fd += (v_fd - v_true) * (v_fd - v_true);
        ++n;
      }
    }
    const double rms_td = std::sqrt(err_td / n);
    const double rms_fd = std::sqrt(err_fd / n);
    EXPECT_LT(rms_td, rms_fd) << "seed " << seed;
    EXPECT_LT(rms_td, 0.05 * 0.05) << "seed " << seed;  // within 5% of the velocity amplitude
    worst_td = std::max(worst_td, rms_td);
    best_fd = std::min(best_fd, rms_fd);
  }
  RecordProperty("rms_td_max", std::to_string(worst_td));
  RecordProperty("rms_fd_min", std::to_string(best_fd));
  std::printf(
      "noisy sine, seeds 1-20: RMS velocity error TD <= %.3e, backward difference >= %.3e\n",
      worst_td, best_fd);
}

TEST(TrackingDifferentiator, TracksARampWithoutSteadyError) {
  TrackingDifferentiator td({.r = 10000.0, .h = 0.0034, .step = 0.002});
  double v = 0.0;
  for (int k = 0; k < 2000; ++k) {
    v = td.update(0.3 * k * 0.002);
  }
  EXPECT_NEAR(v, 0.3, 1e-6);
}

TEST(TrackingDifferentiator, LinearRegionOfFhanMatchesFormula) {
  TrackingDifferentiator td({.r = 100.0, .h = 0.01, .step = 0.01});
  td.reset(0.0, 0.0);
  // y = -X, small: |y| <= d0 = r h^2 = 0.01, a = y/h, |a| <= d = 1: u = -r a / d
  const double measured = 0.001;
  const double y = -measured;
  const double a = y / 0.01;
  EXPECT_NEAR(td.fhan(measured), -100.0 * a / 1.0, 1e-12);
}

TEST(TrackingDifferentiator, RejectsFilterFactorBelowStep) {
  try {
    TrackingDifferentiator td({.r = 10000.0, .h = 0.001, .step = 0.002});
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("h = "), std::string::npos) << e.what();
  }
  EXPECT_THROW(TrackingDifferentiator({.r = -1.0, .h = 0.01, .step = 0.002}),
               std::invalid_argument);
}

TEST(TrackingDifferentiator, UpdateDoesNotAllocate) {
  TrackingDifferentiator td({});
  testing::AllocGuard guard;
  for (int k = 0; k < 1000; ++k) {
    td.update(std::sin(k * 0.01));
  }
  EXPECT_EQ(guard.allocations(), 0u);
}

}  // namespace
}  // namespace hyloop::core
