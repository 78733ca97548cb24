#include "hyloop/core/cycle_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

// v_i = sin(w t), v = g(t)·sin(w t − φ): known per-cycle ratios and growth.
TEST(CycleMetrics, CutsCyclesAtUpwardCrossingsAndMeasuresRatios) {
  const double w = 2.0 * M_PI;  // 1 s cycles
  const double dt = 1e-4;
  const double sigma = 0.05;
  CycleMetrics metrics(100, 15.0);
  for (int k = 0; k <= 200000; ++k) {  // 20 s
    const double t = k * dt - 0.25;    // start at the bottom of v_i so the first crossing is late
    const double vi = std::sin(w * t);
    const double v = std::exp(sigma * t) * std::sin(w * t);
    metrics.add({.t = t,
                 .v = v,
                 .v_ideal = vi,
                 .energy = v * v,
                 .energy_ideal = vi * vi,
                 .e_f = 0.1,
                 .e_v = v - vi});
  }
  ASSERT_EQ(metrics.cycles().size(), 19u);
  const CycleRecord& c = metrics.cycles()[3];
  EXPECT_NEAR(c.t_end - c.t_start, 1.0, 2 * dt);
  // |v_i| peaks at the cycle's second quarter: t = t_start + 0.25 (and +0.75, equal height)
  EXPECT_NEAR(c.e_r, std::exp(sigma * (c.t_start + 0.25)), 1e-3);
  EXPECT_NEAR(c.amplitude_ratio, std::exp(sigma * (c.t_start + 0.75)), 2e-3);
  EXPECT_NEAR(metrics.amplitude_growth_rate(), sigma, 1e-3);
  EXPECT_NEAR(metrics.energy_ratio(), std::exp(2 * sigma * 18.0),
              0.02 * std::exp(2 * sigma * 18.0));
  const WindowMetrics win = metrics.window();
  EXPECT_EQ(win.cycles, 5);
  EXPECT_DOUBLE_EQ(win.e_f_peak, 0.1);
  EXPECT_NEAR(win.amplitude_ratio, metrics.cycles().back().amplitude_ratio, 1e-12);
}

TEST(CycleMetrics, CountsCyclesBeyondCapacityAndDoesNotAllocate) {
  CycleMetrics metrics(3, 0.0);
  testing::AllocGuard guard;
  for (int k = 0; k < 100000; ++k) {
    const double t = k * 1e-3;
    const double v = std::sin(2 * M_PI * t);
    metrics.add({t, v, v, 0.0, 0.0, 0.0, 0.0});
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_EQ(metrics.cycles().size(), 3u);
  EXPECT_EQ(metrics.dropped_cycles(), 95u);  // crossings at t = 1 … 99 s: 98 cycles
  EXPECT_TRUE(std::isnan(CycleMetrics(4, 0.0).energy_ratio()));
}

}  // namespace
}  // namespace hyloop::core
