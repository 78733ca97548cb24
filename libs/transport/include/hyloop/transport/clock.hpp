#pragma once
// Clocks for the two time modes of DESIGN.md §2.
//
//  - PeriodicClock: real time. Absolute deadlines on CLOCK_MONOTONIC, clock_nanosleep until
//    (deadline − spin margin) and then spin to the deadline. Counts missed deadlines and records
//    wake-up lateness in a fixed-size histogram (no allocation, readable from other threads).
//  - LockstepBarrier: virtual time. Cycle k starts when every registered input stamped with k
//    has arrived. A pure state machine: no I/O, no allocation after add_input().
//
// Units: all times are integer nanoseconds on CLOCK_MONOTONIC unless a name says otherwise.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::transport {

/// CLOCK_MONOTONIC now, in ns. RT-safe (vDSO, no syscall on x86-64).
[[nodiscard]] std::int64_t monotonic_now_ns() noexcept;

/// Sets this thread's timer slack to `slack_ns` (PR_SET_TIMERSLACK). Returns false if refused.
bool set_timer_slack_ns(unsigned long slack_ns) noexcept;

/// Log-linear histogram of non-negative durations in ns (32 sub-buckets per power of two, so a
/// reported percentile is within ~3% of the true value). Single writer; readers on other threads
/// see a consistent-enough view through relaxed atomics. record() is RT-safe and lock-free.
class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 5;
  static constexpr std::size_t kSubBuckets = std::size_t{1} << kSubBucketBits;
  static constexpr int kMaxExponent = 44;  // values up to 2^44 ns (~4.9 h); larger clamp here
  static constexpr std::size_t kBuckets = (kMaxExponent - kSubBucketBits + 2) * kSubBuckets;

  void record(std::int64_t value_ns) noexcept;
  void reset() noexcept;

  [[nodiscard]] std::uint64_t count() const noexcept;
  [[nodiscard]] std::int64_t max_ns() const noexcept;
  [[nodiscard]] double mean_ns() const noexcept;
  /// Value below which a fraction q (0..1) of the samples lie (bucket midpoint), 0 when empty.
  [[nodiscard]] std::int64_t percentile_ns(double q) const noexcept;

  [[nodiscard]] static std::size_t bucket_of(std::int64_t value_ns) noexcept;
  [[nodiscard]] static std::int64_t bucket_low_ns(std::size_t bucket) noexcept;
  [[nodiscard]] static std::int64_t bucket_high_ns(std::size_t bucket) noexcept;  // exclusive

 private:
  static void bump(std::atomic<std::uint64_t>& a, std::uint64_t by) noexcept {
    a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  std::array<std::atomic<std::uint64_t>, kBuckets> bins_{};
  std::atomic<std::uint64_t> count_{0};
  std::atomic<std::uint64_t> sum_ns_{0};
  std::atomic<std::int64_t> max_ns_{0};
};

/// One wake-up of a PeriodicClock.
struct Tick {
  std::uint64_t cycle = 0;       ///< grid index of the deadline (jumps when deadlines are skipped)
  std::int64_t deadline_ns = 0;  ///< absolute CLOCK_MONOTONIC deadline
  std::int64_t wake_ns = 0;      ///< when wait_next() returned
  std::int64_t lateness_ns = 0;  ///< wake_ns − deadline_ns, ≥ 0
  std::uint64_t skipped = 0;     ///< grid deadlines skipped before this one (already in the past)
  bool missed = false;           ///< lateness_ns ≥ miss threshold (woke too late for this one)
};

struct PeriodicClockConfig {
  std::chrono::nanoseconds period{std::chrono::milliseconds(1)};
  /// Wake this much before the deadline and spin the rest; 0 = pure sleep (no core burnt).
  std::chrono::nanoseconds spin_margin{0};
  /// A deadline counts as missed when the wake-up is at least this late; 0 = one period.
  std::chrono::nanoseconds miss_threshold{0};
  /// Set PR_SET_TIMERSLACK to 1 ns for the thread calling start().
  bool set_timer_slack = true;
};

/// Real-time periodic clock. start() and wait_next() must run on the loop thread; the counters
/// and the histogram may be read from any thread. wait_next() is RT-safe (no allocation, no lock).
/// Missed deadlines are tolerated: the clock never bursts to catch up; it skips the deadlines
/// already a full period in the past, keeps the original grid phase, and counts them.
/// Two counts, so one event is never counted twice: misses() = ticks served at least the miss
/// threshold late; skipped() = grid deadlines never served (the loop overran or the VM stalled).
/// missed_deadlines() is their sum, the figure to report.
class PeriodicClock {
 public:
  explicit PeriodicClock(PeriodicClockConfig config);

  /// Arms the clock: the first deadline is now + period (or `first_deadline_ns` if > 0).
  void start(std::int64_t first_deadline_ns = 0);
  /// Sleeps (then spins) until the next deadline and returns what happened.
  Tick wait_next();

  [[nodiscard]] std::uint64_t ticks() const noexcept {
    return ticks_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t misses() const noexcept {
    return misses_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t skipped() const noexcept {
    return skipped_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t missed_deadlines() const noexcept { return misses() + skipped(); }
  [[nodiscard]] const LatencyHistogram& lateness() const noexcept { return lateness_; }
  [[nodiscard]] bool timer_slack_set() const noexcept { return timer_slack_set_; }
  [[nodiscard]] std::int64_t period_ns() const noexcept { return period_ns_; }

 private:
  std::int64_t period_ns_;
  std::int64_t spin_margin_ns_;
  std::int64_t miss_threshold_ns_;
  bool want_timer_slack_;
  bool timer_slack_set_ = false;
  std::int64_t origin_ns_ = 0;    // deadline of grid cycle 0
  std::uint64_t next_cycle_ = 0;  // grid index of the next deadline
  std::atomic<std::uint64_t> ticks_{0};
  std::atomic<std::uint64_t> misses_{0};
  std::atomic<std::uint64_t> skipped_{0};
  LatencyHistogram lateness_;
};

/// Lockstep barrier: cycle k starts when every registered input stamped with cycle k has arrived.
/// Register inputs (add_input, allocates) before the run; arrive()/ready()/advance() are RT-safe.
/// Up to kMaxInputs inputs. Not thread-safe: drive it from the block's loop thread.
class LockstepBarrier {
 public:
  static constexpr std::size_t kMaxInputs = 64;

  explicit LockstepBarrier(std::uint64_t first_cycle = 0) : cycle_(first_cycle) {}

  /// Registers an input and returns its index. Throws std::length_error beyond kMaxInputs.
  std::size_t add_input(std::string_view name);
  [[nodiscard]] std::size_t inputs() const noexcept { return names_.size(); }
  [[nodiscard]] const std::string& name(std::size_t input) const { return names_.at(input); }

  /// Records that `input` delivered a message stamped `cycle`. Returns false (and counts a
  /// mismatch) when the cycle is not the current one or the input already arrived for it.
  bool arrive(std::size_t input, std::uint64_t cycle) noexcept;
  /// True when `input` has not yet arrived for the current cycle (poll only those channels).
  [[nodiscard]] bool pending(std::size_t input) const noexcept;
  /// True when every registered input has arrived for the current cycle.
  [[nodiscard]] bool ready() const noexcept;
  /// Moves to the next cycle if ready(); returns false (and changes nothing) otherwise.
  bool advance() noexcept;

  [[nodiscard]] std::uint64_t cycle() const noexcept { return cycle_; }
  [[nodiscard]] std::uint64_t mismatches() const noexcept { return mismatches_; }
  /// Resets to `first_cycle` with nothing arrived (keeps the registered inputs).
  void reset(std::uint64_t first_cycle) noexcept;

 private:
  std::vector<std::string> names_;
  std::uint64_t all_mask_ = 0;
  std::uint64_t arrived_mask_ = 0;
  std::uint64_t cycle_;
  std::uint64_t mismatches_ = 0;
};

}  // namespace hyloop::transport
