#include "hyloop/core/cycle_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

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

// Bit equality of every field (a memcmp of the whole struct would also compare the padding after
// `index`, which neither form initialises).
bool same_record(const CycleRecord& a, const CycleRecord& b) {
  const auto same = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  return a.index == b.index && same(a.t_start, b.t_start) && same(a.t_end, b.t_end) &&
         same(a.e_r, b.e_r) && same(a.amplitude_ratio, b.amplitude_ratio) &&
         same(a.v_peak, b.v_peak) && same(a.v_ideal_peak, b.v_ideal_peak) &&
         same(a.energy_max, b.energy_max) && same(a.energy_ideal_max, b.energy_ideal_max) &&
         same(a.e_f_peak, b.e_f_peak) && same(a.e_v_peak, b.e_v_peak);
}

// Issue 27 (the coordinator's Start): a streamed CycleMetrics keeps no cycle and allocates
// nothing, hands each to its sink, and gives the kept form's figures bit for bit, the capacity
// included (a growing, noisy run with cycles beyond it and some NaN ratios).
TEST(CycleMetrics, StreamedGivesTheKeptFiguresBitForBit) {
  struct Sink final : CycleSink {
    std::vector<CycleRecord> got;
    void on_cycle(const CycleRecord& c) noexcept override { got.push_back(c); }
  } sink;
  sink.got.reserve(64);
  for (const std::size_t capacity : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    sink.got.clear();
    CycleMetrics kept(capacity, 12.0);
    testing::AllocGuard guard;
    CycleMetrics streamed(capacity, 12.0, sink);
    for (int k = 0; k <= 200000; ++k) {
      const double t = k * 1e-4;
      const double vi = std::sin(2 * M_PI * 1.7 * t) * (t > 3.0 && t < 4.0 ? 0.0 : 1.0);
      const double v = std::exp(0.03 * t) * std::sin(2 * M_PI * 1.7 * t - 0.2) + 1e-3 * std::cos(k);
      const MetricSample s{t, v, vi, v * v, vi * vi, std::sin(0.37 * k), v - vi};
      kept.add(s);
      streamed.add(s);
    }
    EXPECT_EQ(guard.allocations(), 0u) << capacity;
    ASSERT_EQ(sink.got.size(), kept.cycles().size()) << capacity;
    for (std::size_t i = 0; i < sink.got.size(); ++i) {
      EXPECT_TRUE(same_record(sink.got[i], kept.cycles()[i])) << capacity << " cycle " << i;
    }
    EXPECT_TRUE(streamed.cycles().empty());
    EXPECT_EQ(streamed.cycle_count(), kept.cycle_count());
    EXPECT_EQ(streamed.dropped_cycles(), kept.dropped_cycles());
    const auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
    EXPECT_TRUE(same(streamed.energy_ratio(), kept.energy_ratio())) << capacity;
    EXPECT_TRUE(same(streamed.amplitude_growth_rate(), kept.amplitude_growth_rate())) << capacity;
    const WindowMetrics a = streamed.window(), b = kept.window();
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_TRUE(same(a.e_r, b.e_r) && same(a.amplitude_ratio, b.amplitude_ratio) &&
                same(a.e_f_peak, b.e_f_peak) && same(a.e_v_peak, b.e_v_peak))
        << capacity;
  }
}

}  // namespace
}  // namespace hyloop::core
