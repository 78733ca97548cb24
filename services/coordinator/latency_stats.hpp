#pragma once
// The loop latencies of a real-time run (rig sample → command at the actuator, ns) for
// summary.json's latency_sample_to_command, in memory that does not grow with the run's length
// (issue 27): the first kExact latencies are kept, and their p50/p99/p99.9/max are exact (the
// nearest rank of the sorted values, as before); every latency also goes into a log-linear
// histogram (kSubBuckets per power of two: a bucket spans at most 0.2 % of its values), from
// which a run with more latencies than kExact reports its percentiles (each its bucket's
// midpoint, within 0.1 % of the exact value), with "exact": false. n and max are always exact.
// Memory: 8 MiB of exact values + 440 KiB of histogram, whatever the run's length.

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace hyloop::services {

class LatencyStats {
 public:
  /// Latencies kept exactly: 2^20 (8 MiB), 35 min of a 2 ms loop.
  static constexpr std::size_t kExact = std::size_t{1} << 20;
  static constexpr int kSubBits = 10;  ///< 1024 sub-buckets per power of two
  static constexpr std::size_t kSubBuckets = std::size_t{1} << kSubBits;
  static constexpr int kOctaves = 64 - kSubBits;

  LatencyStats();

  /// Forgets the previous run's latencies; reserves room for `expected` exact ones (at most
  /// kExact).
  void reset(std::size_t expected);
  /// One latency, ns (> 0).
  void add(std::int64_t ns);
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// {"n"} and, when n > 0, {"p50_us", "p99_us", "p99_9_us", "max_us"} (+ "exact": false
  /// beyond kExact).
  [[nodiscard]] nlohmann::json percentiles() const;

 private:
  [[nodiscard]] static std::size_t bucket_of(std::uint64_t v) noexcept;
  /// The midpoint of bucket b's values (ns).
  [[nodiscard]] static double bucket_mid(std::size_t b) noexcept;
  /// The value of rank i (0-based) of the histogram.
  [[nodiscard]] double ranked(std::uint64_t i) const noexcept;

  std::vector<std::int64_t> exact_;
  std::vector<std::uint64_t> histogram_;  ///< (kOctaves + 1) · kSubBuckets counts
  std::uint64_t count_ = 0;
  std::int64_t max_ = 0;
};

}  // namespace hyloop::services
