#pragma once
// Results of the ring benchmark: latency summaries, the console table and the results JSON
// (bench/results/ring.json, read by docs/performance.md "Loop rings"; its keys are checked by
// bench/ring/test_ring_json.py).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runners.hpp"

namespace hyloop::bench {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Options {
  std::uint64_t roundtrips = 20'000;
  double seconds = 5.0;
  std::uint64_t warmup = 1'000;
  std::vector<int> rates{500, 1000, 2000};
  std::vector<std::string> transports{"uds", "zmq", "hyloop"};
  std::vector<std::string> placements{"process", "thread"};
  int spin_us = 100;
  bool quick = false;
  std::string out = "bench/results/ring.json";
};

/// Latency percentiles (nearest rank) in µs; NaN when there is no sample.
struct Summary {
  std::uint64_t n = 0;
  double p50_us = kNaN, p90_us = kNaN, p99_us = kNaN, p999_us = kNaN, max_us = kNaN, mean_us = kNaN;
};

Summary summarise(std::vector<std::int64_t> v);

struct Row {
  std::string transport;  ///< uds / zmq / hyloop / timer
  std::string placement;  ///< process / thread / none (timer)
  int rate_hz = 0;        ///< 0: back to back
  RunResult result;
  Summary latency;
  [[nodiscard]] double miss_rate() const;
  [[nodiscard]] std::string pacing() const;
};

struct LoadAverage {
  double one = kNaN, five = kNaN, fifteen = kNaN;
};

LoadAverage load_average();
std::string utc_now();
/// x with `digits` decimals, as text ("null" when not finite).
std::string num(double x, int digits = 2);

/// What the JSON records about the run besides the rows.
struct RunInfo {
  std::size_t message_bytes = 0;
  LoadAverage before, after;
  std::string started;
  double wall_s = 0.0;
};

void print_table(const std::vector<Row>& rows);
nlohmann::ordered_json results_json(const Options& opt, const std::vector<Row>& rows,
                                    const RunInfo& info);
/// Writes results_json to `path`; throws std::runtime_error when it cannot.
void write_json(const std::string& path, const Options& opt, const std::vector<Row>& rows,
                const RunInfo& info);

}  // namespace hyloop::bench
