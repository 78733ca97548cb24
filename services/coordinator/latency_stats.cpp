#include "coordinator/latency_stats.hpp"

#include <algorithm>
#include <bit>

namespace hyloop::services {

LatencyStats::LatencyStats() : histogram_((kOctaves + 1) * kSubBuckets, 0) {}

void LatencyStats::reset(std::size_t expected) {
  exact_.clear();
  exact_.shrink_to_fit();
  exact_.reserve(std::min(expected, kExact));
  std::fill(histogram_.begin(), histogram_.end(), 0);
  count_ = 0;
  max_ = 0;
}

std::size_t LatencyStats::bucket_of(std::uint64_t v) noexcept {
  // Values below kSubBuckets: one bucket each; above: octave o (v in [2^(o+kSubBits-1),
  // 2^(o+kSubBits))), kSubBuckets/2 … kSubBuckets-1 sub-buckets of it by its top bits.
  if (v < kSubBuckets) return static_cast<std::size_t>(v);
  const int shift = static_cast<int>(std::bit_width(v)) - kSubBits;  // ≥ 1
  return static_cast<std::size_t>(shift) * kSubBuckets + static_cast<std::size_t>(v >> shift);
}

double LatencyStats::bucket_mid(std::size_t b) noexcept {
  const std::size_t shift = b / kSubBuckets;
  const std::uint64_t top = b % kSubBuckets;
  if (shift == 0) return static_cast<double>(top);
  const double low = static_cast<double>(top << shift);
  const double width = static_cast<double>(std::uint64_t{1} << shift);
  return low + 0.5 * (width - 1.0);
}

void LatencyStats::add(std::int64_t ns) {
  if (ns <= 0) return;
  if (exact_.size() < kExact) exact_.push_back(ns);
  ++histogram_[bucket_of(static_cast<std::uint64_t>(ns))];
  ++count_;
  max_ = std::max(max_, ns);
}

double LatencyStats::ranked(std::uint64_t i) const noexcept {
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < histogram_.size(); ++b) {
    seen += histogram_[b];
    if (seen > i) return bucket_mid(b);
  }
  return static_cast<double>(max_);
}

nlohmann::json LatencyStats::percentiles() const {
  nlohmann::json j;
  j["n"] = count_;
  if (count_ == 0) {
    return j;
  }
  const bool exact = count_ <= kExact;
  std::vector<std::int64_t> v;
  if (exact) {
    v = exact_;
    std::sort(v.begin(), v.end());
  }
  const auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(count_ - 1) + 0.5);
    if (exact) return static_cast<double>(v[std::min(i, v.size() - 1)]) * 1e-3;
    return std::min(ranked(i), static_cast<double>(max_)) * 1e-3;
  };
  j["p50_us"] = at(0.5);
  j["p99_us"] = at(0.99);
  j["p99_9_us"] = at(0.999);
  j["max_us"] = static_cast<double>(max_) * 1e-3;
  if (!exact) j["exact"] = false;
  return j;
}

}  // namespace hyloop::services
