// Issue 27 (the coordinator's Start): the real-time loop latencies in bounded memory. Up to
// LatencyStats::kExact latencies the percentiles are the exact nearest-rank ones summary.json
// always reported; beyond, each within 0.1 % of the exact value and marked "exact": false.
#include "coordinator/latency_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace hyloop::services {
namespace {

// The exact percentiles of `v`, as the coordinator computed them before (nearest rank, µs).
nlohmann::json exact(std::vector<std::int64_t> v) {
  nlohmann::json j;
  j["n"] = v.size();
  std::sort(v.begin(), v.end());
  const auto at = [&v](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return static_cast<double>(v[std::min(i, v.size() - 1)]) * 1e-3;
  };
  j["p50_us"] = at(0.5);
  j["p99_us"] = at(0.99);
  j["p99_9_us"] = at(0.999);
  j["max_us"] = static_cast<double>(v.back()) * 1e-3;
  return j;
}

std::vector<std::int64_t> latencies(std::size_t n) {
  std::mt19937_64 rng(27);
  std::lognormal_distribution<double> body(std::log(150000.0), 0.4);  // ~150 µs
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = 1 + static_cast<std::int64_t>(body(rng)) + (i % 5000 == 0 ? 3000000 : 0);
  }
  return v;
}

TEST(LatencyStats, ExactUpToItsCapacity) {
  LatencyStats stats;
  stats.reset(1000);
  EXPECT_EQ(stats.percentiles(), nlohmann::json({{"n", 0}}));
  const std::vector<std::int64_t> v = latencies(LatencyStats::kExact);
  for (const std::int64_t x : v) stats.add(x);
  EXPECT_EQ(stats.percentiles(), exact(v));
  stats.reset(10);
  stats.add(42);
  EXPECT_EQ(stats.percentiles(), exact({42}));
}

TEST(LatencyStats, BeyondItsCapacityWithinATenthOfAPercent) {
  LatencyStats stats;
  stats.reset(LatencyStats::kExact * 3);
  const std::vector<std::int64_t> v = latencies(LatencyStats::kExact * 3);
  for (const std::int64_t x : v) stats.add(x);
  const nlohmann::json got = stats.percentiles();
  const nlohmann::json want = exact(v);
  EXPECT_EQ(got["n"], want["n"]);
  EXPECT_EQ(got["max_us"], want["max_us"]);
  EXPECT_EQ(got["exact"], false);
  for (const char* p : {"p50_us", "p99_us", "p99_9_us"}) {
    EXPECT_NEAR(got[p].get<double>(), want[p].get<double>(), 1e-3 * want[p].get<double>()) << p;
  }
}

}  // namespace
}  // namespace hyloop::services
