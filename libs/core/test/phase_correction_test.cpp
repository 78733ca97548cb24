#include "hyloop/core/phase_correction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "hyloop/core/tracking_differentiator.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kMass = 500.0;
constexpr double kStiffness = 20000.0;
constexpr double kStep = 0.002;
const double kOmega0 = std::sqrt(kStiffness / kMass);

PhaseCorrectionConfig enabled() {
  PhaseCorrectionConfig c;
  c.enabled = true;
  return c;
}

struct Result {
  double k_x = 0.0;
  double phase = 0.0;
  double max_abs_k_x = 0.0;
  double max_abs_rate = 0.0;
};

// A mass on a spring stiffer by `extra` (N/m) than its twin's, both by semi-implicit Euler; the
// correction adds K_x·x to the hybrid's force.
Result simulate(const PhaseCorrectionConfig& config, double extra, double duration) {
  PhaseCorrection pc(config, kOmega0, kStiffness, kStep);
  double x = 0.0, v = 0.05, xi = 0.0, vi = 0.05;
  Result r;
  double previous = pc.k_x();
  const auto n = static_cast<int>(duration / kStep);
  for (int k = 0; k < n; ++k) {
    const double t = k * kStep;
    const double k_x = pc.update(t, x, v, xi, vi);
    r.max_abs_k_x = std::max(r.max_abs_k_x, std::abs(k_x));
    r.max_abs_rate = std::max(r.max_abs_rate, std::abs(k_x - previous) / kStep);
    previous = k_x;
    v += kStep * (-(kStiffness + extra) * x + pc.force(x)) / kMass;
    x += kStep * v;
    vi += kStep * (-kStiffness * xi) / kMass;
    xi += kStep * vi;
  }
  r.k_x = pc.k_x();
  r.phase = pc.phase();
  return r;
}

TEST(PhaseCorrection, PhaseAgainstTwinIsTheLeadOfTheHybridWhateverTheAmplitudes) {
  for (double phi : {-0.3, -0.01, 0.0, 0.002, 0.25}) {
    for (double theta : {0.0, 0.7, 2.0, 4.5}) {
      const double a = 0.004, b = 0.009;  // different amplitudes
      const double x = a * std::sin(theta + phi), v = a * kOmega0 * std::cos(theta + phi);
      const double xi = b * std::sin(theta), vi = b * kOmega0 * std::cos(theta);
      EXPECT_NEAR(phase_against_twin(x, v, xi, vi, kOmega0), phi, 1e-12)
          << "phi " << phi << " theta " << theta;
    }
  }
  EXPECT_EQ(phase_against_twin(0.0, 0.0, 0.01, 0.0, kOmega0), 0.0);
}

TEST(PhaseCorrection, ConvergesToTheStiffnessErrorAndLocksThePhase) {
  for (double extra : {-60.0, 12.0, 24.0, 100.0}) {
    const Result r = simulate(enabled(), extra, 60.0);
    EXPECT_NEAR(r.k_x, extra, 0.01 * std::abs(extra)) << extra;
    EXPECT_LT(std::abs(r.phase), 1e-4) << extra;
  }
}

TEST(PhaseCorrection, StaysWithinItsBoundAndRateLimit) {
  PhaseCorrectionConfig c = enabled();
  c.k_x_max = 50.0;
  c.rate_max = 5.0;
  const Result r = simulate(c, 400.0, 60.0);
  EXPECT_DOUBLE_EQ(r.max_abs_k_x, 50.0);  // reaches the bound, never beyond
  EXPECT_LE(r.max_abs_rate, 5.0 * (1.0 + 1e-9));
}

TEST(PhaseCorrection, OffGivesZeroAndHoldsBeforeStartAndBelowTheAmplitudeFloor) {
  PhaseCorrection off(PhaseCorrectionConfig{}, kOmega0, kStiffness, kStep);
  EXPECT_EQ(off.update(1.0, 0.01, 0.0, 0.0, 0.06), 0.0);
  EXPECT_EQ(off.force(0.01), 0.0);
  PhaseCorrectionConfig c = enabled();
  c.k_x_initial = 7.0;
  c.start_time = 10.0;
  PhaseCorrection late(c, kOmega0, kStiffness, kStep);
  EXPECT_EQ(late.update(5.0, 0.01, 0.0, 0.0, 0.06), 7.0);  // a large phase, before t_start
  EXPECT_NE(late.update(10.0, 0.01, 0.0, 0.0, 0.06), 7.0);
  c.start_time = 0.0;
  c.min_amplitude = 1e-3;
  PhaseCorrection small(c, kOmega0, kStiffness, kStep);
  EXPECT_EQ(small.update(0.0, 1e-4, 0.0, 0.0, 6e-4), 7.0);  // both below 1 mm
}

TEST(PhaseCorrection, AnUpdateAllocatesNothing) {
  PhaseCorrection pc(enabled(), kOmega0, kStiffness, kStep);
  testing::AllocGuard guard;
  double sum = 0.0;
  for (int k = 0; k < 10000; ++k) {
    const double t = k * kStep;
    sum +=
        pc.update(t, 0.01 * std::sin(kOmega0 * t + 0.01), 0.0, 0.01 * std::sin(kOmega0 * t), 0.0);
    sum += pc.force(0.01);
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_TRUE(std::isfinite(sum));
}

TEST(PhaseCorrection, InvalidConfigurationNamesTheField) {
  const auto message = [](PhaseCorrectionConfig c) {
    try {
      validate(c);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  PhaseCorrectionConfig c;
  c.k_x_max = -1.0;
  EXPECT_NE(message(c).find("k_x_max_n_per_m"), std::string::npos);
  c = {};
  c.k_x_initial = 500.0;
  EXPECT_NE(message(c).find("k_x_initial_n_per_m"), std::string::npos);
  c = {};
  c.rate_max = 0.0;
  EXPECT_NE(message(c).find("rate_max_n_per_m_s"), std::string::npos);
  c = {};
  c.bandwidth = std::nan("");
  EXPECT_NE(message(c).find("bandwidth_rad_s"), std::string::npos);
  c = {};
  c.damping = 0.0;
  EXPECT_NE(message(c).find("damping"), std::string::npos);
  c = {};
  c.start_time = -1.0;
  EXPECT_NE(message(c).find("start_time_s"), std::string::npos);
  c = {};
  c.min_amplitude = -1.0;
  EXPECT_NE(message(c).find("min_amplitude_m"), std::string::npos);
  EXPECT_THROW(PhaseCorrection(enabled(), 0.0, kStiffness, kStep), std::invalid_argument);
}

TEST(PhaseCorrection, ModelValueIsZeroWithoutLagAndGrowsWithTheVelocityEstimatesLag) {
  PhaseCorrectionModel m;
  m.sensor_delay_steps = 0.0;
  m.hold_steps = 1;
  m.k_h = 0.0;
  EXPECT_NEAR(model_stiffness_correction(m), 0.0, 1e-9);
  // K_h·v̂ with v̂ = V·X_R adds the stiffness K_h·Re[V]; K_x = −K_h·Re[V]. Re[V] measured by
  // running the tracking differentiator on a sine at ω0 (least squares of sin and cos).
  m.k_h = -80.0;
  TrackingDifferentiatorConfig td = m.td;
  td.step = m.step;
  TrackingDifferentiator diff(td);
  double ss = 0.0, sc = 0.0, cc = 0.0, ys = 0.0, yc = 0.0;
  for (int k = 0; k < 20000; ++k) {
    const double s = std::sin(kOmega0 * k * m.step), c = std::cos(kOmega0 * k * m.step);
    const double y = diff.update(0.001 * s) / 0.001;
    if (k < 5000) continue;  // transient
    ss += s * s, sc += s * c, cc += c * c, ys += y * s, yc += y * c;
  }
  const double re_v = (ys * cc - yc * sc) / (ss * cc - sc * sc);
  const double expected = 80.0 * re_v;
  EXPECT_GT(expected, 5.0);
  EXPECT_NEAR(model_stiffness_correction(m), expected, 0.01 * expected);
  PhaseCorrectionConfig c;
  EXPECT_EQ(analysis_stiffness_correction(c, 30.0), 0.0);
  c.enabled = true;
  EXPECT_EQ(analysis_stiffness_correction(c, 30.0), 30.0);
  EXPECT_EQ(analysis_stiffness_correction(c, 900.0), 200.0);
}

}  // namespace
}  // namespace hyloop::core
