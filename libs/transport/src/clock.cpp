#include "hyloop/transport/clock.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <stdexcept>

namespace hyloop::transport {

std::int64_t monotonic_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool set_timer_slack_ns(unsigned long slack_ns) noexcept {
  return prctl(PR_SET_TIMERSLACK, slack_ns, 0UL, 0UL, 0UL) == 0;
}

namespace {

timespec to_timespec(std::int64_t ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return ts;
}

void sleep_until_ns(std::int64_t deadline_ns) noexcept {
  const timespec ts = to_timespec(deadline_ns);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// LatencyHistogram

std::size_t LatencyHistogram::bucket_of(std::int64_t value_ns) noexcept {
  const auto v = static_cast<std::uint64_t>(std::max<std::int64_t>(value_ns, 0));
  if (v < kSubBuckets) {
    return static_cast<std::size_t>(v);
  }
  const int exponent = std::min(static_cast<int>(std::bit_width(v)) - 1, kMaxExponent);
  if (exponent == kMaxExponent && (v >> kMaxExponent) > 1) {
    return kBuckets - 1;
  }
  const std::uint64_t sub = (v >> (exponent - kSubBucketBits)) & (kSubBuckets - 1);
  return static_cast<std::size_t>(exponent - kSubBucketBits + 1) * kSubBuckets +
         static_cast<std::size_t>(sub);
}

std::int64_t LatencyHistogram::bucket_low_ns(std::size_t bucket) noexcept {
  if (bucket < kSubBuckets) {
    return static_cast<std::int64_t>(bucket);
  }
  const int exponent = static_cast<int>(bucket / kSubBuckets) + kSubBucketBits - 1;
  const std::uint64_t sub = bucket % kSubBuckets;
  return static_cast<std::int64_t>(((std::uint64_t{1} << kSubBucketBits) | sub)
                                   << (exponent - kSubBucketBits));
}

std::int64_t LatencyHistogram::bucket_high_ns(std::size_t bucket) noexcept {
  if (bucket < kSubBuckets) {
    return static_cast<std::int64_t>(bucket) + 1;
  }
  const int exponent = static_cast<int>(bucket / kSubBuckets) + kSubBucketBits - 1;
  return bucket_low_ns(bucket) + (std::int64_t{1} << (exponent - kSubBucketBits));
}

void LatencyHistogram::record(std::int64_t value_ns) noexcept {
  const std::int64_t v = std::max<std::int64_t>(value_ns, 0);
  bump(bins_[bucket_of(v)], 1);
  bump(count_, 1);
  bump(sum_ns_, static_cast<std::uint64_t>(v));
  if (v > max_ns_.load(std::memory_order_relaxed)) {
    max_ns_.store(v, std::memory_order_relaxed);
  }
}

void LatencyHistogram::reset() noexcept {
  for (auto& b : bins_) {
    b.store(0, std::memory_order_relaxed);
  }
  count_.store(0, std::memory_order_relaxed);
  sum_ns_.store(0, std::memory_order_relaxed);
  max_ns_.store(0, std::memory_order_relaxed);
}

std::uint64_t LatencyHistogram::count() const noexcept {
  return count_.load(std::memory_order_relaxed);
}

std::int64_t LatencyHistogram::max_ns() const noexcept {
  return max_ns_.load(std::memory_order_relaxed);
}

double LatencyHistogram::mean_ns() const noexcept {
  const std::uint64_t n = count();
  return n == 0 ? 0.0
                : static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) /
                      static_cast<double>(n);
}

std::int64_t LatencyHistogram::percentile_ns(double q) const noexcept {
  std::uint64_t total = 0;
  for (const auto& b : bins_) {
    total += b.load(std::memory_order_relaxed);
  }
  if (total == 0) {
    return 0;
  }
  q = std::clamp(q, 0.0, 1.0);
  // Nearest-rank method: the ceil(q·n)-th smallest sample (1-based).
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
  rank = std::clamp<std::uint64_t>(rank, 1, total);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += bins_[i].load(std::memory_order_relaxed);
    if (seen >= rank) {
      const std::int64_t mid = (bucket_low_ns(i) + bucket_high_ns(i) - 1) / 2;
      return std::min(mid, max_ns());
    }
  }
  return max_ns();
}

// ---------------------------------------------------------------------------------------------
// PeriodicClock

PeriodicClock::PeriodicClock(PeriodicClockConfig config)
    : period_ns_(config.period.count()),
      spin_margin_ns_(std::max<std::int64_t>(config.spin_margin.count(), 0)),
      miss_threshold_ns_(config.miss_threshold.count() > 0 ? config.miss_threshold.count()
                                                           : config.period.count()),
      want_timer_slack_(config.set_timer_slack) {
  if (period_ns_ <= 0) {
    throw std::invalid_argument("PeriodicClock: period must be positive");
  }
}

void PeriodicClock::start(std::int64_t first_deadline_ns) {
  if (want_timer_slack_) {
    timer_slack_set_ = set_timer_slack_ns(1);
  }
  origin_ns_ = first_deadline_ns > 0 ? first_deadline_ns : monotonic_now_ns() + period_ns_;
  next_cycle_ = 0;
}

Tick PeriodicClock::wait_next() {
  Tick tick;
  std::int64_t now = monotonic_now_ns();
  std::int64_t deadline = origin_ns_ + static_cast<std::int64_t>(next_cycle_) * period_ns_;
  // Deadlines a full period or more in the past are skipped (no burst to catch up).
  if (now - deadline >= period_ns_) {
    const auto behind = static_cast<std::uint64_t>((now - deadline) / period_ns_);
    tick.skipped = behind;
    next_cycle_ += behind;
    deadline += static_cast<std::int64_t>(behind) * period_ns_;
    skipped_.store(skipped_.load(std::memory_order_relaxed) + behind, std::memory_order_relaxed);
  }
  if (now < deadline - spin_margin_ns_) {
    sleep_until_ns(deadline - spin_margin_ns_);
    now = monotonic_now_ns();
  }
  while (now < deadline) {
    now = monotonic_now_ns();
  }
  tick.cycle = next_cycle_;
  tick.deadline_ns = deadline;
  tick.wake_ns = now;
  tick.lateness_ns = now - deadline;
  tick.missed = tick.lateness_ns >= miss_threshold_ns_;
  ++next_cycle_;
  lateness_.record(tick.lateness_ns);
  ticks_.store(ticks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (tick.missed) {
    misses_.store(misses_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  return tick;
}

// ---------------------------------------------------------------------------------------------
// LockstepBarrier

std::size_t LockstepBarrier::add_input(std::string_view name) {
  if (names_.size() >= kMaxInputs) {
    throw std::length_error("LockstepBarrier: too many inputs");
  }
  names_.emplace_back(name);
  const std::size_t index = names_.size() - 1;
  all_mask_ |= std::uint64_t{1} << index;
  return index;
}

bool LockstepBarrier::arrive(std::size_t input, std::uint64_t cycle) noexcept {
  if (input >= names_.size() || cycle != cycle_ || !pending(input)) {
    ++mismatches_;
    return false;
  }
  arrived_mask_ |= std::uint64_t{1} << input;
  return true;
}

bool LockstepBarrier::pending(std::size_t input) const noexcept {
  return input < names_.size() && (arrived_mask_ & (std::uint64_t{1} << input)) == 0;
}

bool LockstepBarrier::ready() const noexcept {
  return !names_.empty() && arrived_mask_ == all_mask_;
}

bool LockstepBarrier::advance() noexcept {
  if (!ready()) {
    return false;
  }
  arrived_mask_ = 0;
  ++cycle_;
  return true;
}

void LockstepBarrier::reset(std::uint64_t first_cycle) noexcept {
  arrived_mask_ = 0;
  cycle_ = first_cycle;
}

}  // namespace hyloop::transport
