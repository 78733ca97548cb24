#pragma once
// Prometheus metrics of a service (docs/metrics.md is the contract of the names).
//
// Declaring is done off the loop (construction, configure): a component asks the registry for a
// gauge, counter or histogram by its contract name and constant labels and keeps the small handle
// it gets back. Recording on the real-time path goes through the handles only:
//
//   GaugeSlot::set(v)          a relaxed atomic store into a preallocated cell
//   GaugeSlot::raise(v)        the same, keeping the largest value (peak gauges)
//   CounterSlot::add(n)        a relaxed atomic add
//   HistogramSlot::observe(s)  a push into a preallocated single-producer/single-consumer ring;
//                              a full ring drops the value and counts it, never blocks
//
// None of them takes a lock or allocates. A non-real-time exporter thread (start_exporter)
// copies the cells into prometheus-cpp families every `period` and at each scrape, and serves
// them with prometheus::Exposer at /metrics. Counters are exported as the delta since the last
// export (prometheus::Counter only increments). A registry without an exporter never exports:
// the handles still work, the values just stay in their cells (tests, `hyloop up --inproc`).
//
//   MetricsRegistry m;
//   GaugeSlot k_h = m.gauge("hyloop_compensator_gain_newton_seconds_per_meter", "K_h");
//   CounterSlot misses = m.counter("hyloop_deadline_misses_total", "…", {{"service", "rig"}});
//   HistogramSlot age = m.histogram("hyloop_message_age_seconds", "…", {{"service", "rig"}});
//   m.start_exporter("127.0.0.1:0");     // port 0: a free one, see exporter_address()
//   k_h.set(12.5); misses.add(1); age.observe(120e-6);   // on the loop
//
// Declaring the same name and labels again returns the same cell (re-configuration is cheap and
// keeps the series); a series exists, at 0, from its declaration. A histogram's ring has one
// producer: one thread observes into a handle at a time (a loop thread that is joined before the
// next one starts is fine). Gauges and counters may be written from any thread.
//
// Collectors: functions the exporter runs (under the registry's lock, on its thread) before each
// export, to pull values that live elsewhere (e.g. a channel's verdict counters) or to do
// non-real-time work on values the loop handed over. exclusive() runs a function while no
// collector runs, to change what a collector reads.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hyloop::runtime {

/// Prometheus's base unit of mass is the gram: a quantity in kg is exported ×1000 (g).
inline constexpr double kGramsPerKilogram = 1000.0;

/// Constant labels of one series, name → value.
using MetricLabels = std::map<std::string, std::string>;

/// Histogram buckets of every hyloop histogram (s): 10 µs … 100 ms, then +Inf.
inline constexpr std::array<double, 13> kLatencyBuckets = {
    10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 0.1};

/// Values a histogram's ring holds between two exports (a power of two).
inline constexpr std::size_t kHistogramRingCapacity = 4096;

/// How the exporter reads a gauge.
enum class GaugeKind : std::uint8_t {
  kLast,  ///< the last value set
  kPeak,  ///< the largest value raised since the previous scrape (then back to 0)
};

/// Single-producer/single-consumer ring of N values of T (N a power of two): push() on one
/// thread, pop() on another, lock-free, no allocation; a full ring drops and counts.
template <class T, std::size_t N>
class SpscRing {
  static_assert(N > 0 && (N & (N - 1)) == 0, "the capacity is a power of two");

 public:
  /// Producer: false (and counted) when the ring is full.
  bool push(const T& v) noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) >= N) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    buffer_[tail & (N - 1)] = v;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  /// Consumer: false when empty.
  bool pop(T& v) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) {
      return false;
    }
    v = buffer_[head & (N - 1)];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  [[nodiscard]] std::uint64_t dropped() const noexcept {
    return dropped_.load(std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  alignas(64) std::atomic<std::uint64_t> dropped_{0};
  std::array<T, N> buffer_{};
};

namespace detail {

static_assert(std::atomic<double>::is_always_lock_free, "gauges must be lock-free");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "counters must be lock-free");

struct GaugeCell {
  std::atomic<double> value{0.0};
  GaugeKind kind = GaugeKind::kLast;
};

struct CounterCell {
  std::atomic<std::uint64_t> value{0};
  std::uint64_t exported = 0;  // exporter only
};

struct HistogramCell {
  SpscRing<double, kHistogramRingCapacity> ring;
};

}  // namespace detail

/// A gauge's cell. Default-constructed: detached, every call does nothing.
class GaugeSlot {
 public:
  GaugeSlot() = default;
  void set(double v) const noexcept {
    if (cell_ != nullptr) cell_->value.store(v, std::memory_order_relaxed);
  }
  /// Keeps the larger of `v` and the current value (one writer at a time).
  void raise(double v) const noexcept {
    if (cell_ != nullptr && v > cell_->value.load(std::memory_order_relaxed)) {
      cell_->value.store(v, std::memory_order_relaxed);
    }
  }
  [[nodiscard]] double value() const noexcept {
    return cell_ != nullptr ? cell_->value.load(std::memory_order_relaxed) : 0.0;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return cell_ != nullptr; }

 private:
  friend class MetricsRegistry;
  explicit GaugeSlot(detail::GaugeCell* cell) : cell_(cell) {}
  detail::GaugeCell* cell_ = nullptr;
};

/// A counter's cell. Default-constructed: detached.
class CounterSlot {
 public:
  CounterSlot() = default;
  void add(std::uint64_t n = 1) const noexcept {
    if (cell_ != nullptr) cell_->value.fetch_add(n, std::memory_order_relaxed);
  }
  /// Everything added since the declaration.
  [[nodiscard]] std::uint64_t value() const noexcept {
    return cell_ != nullptr ? cell_->value.load(std::memory_order_relaxed) : 0;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return cell_ != nullptr; }

 private:
  friend class MetricsRegistry;
  explicit CounterSlot(detail::CounterCell* cell) : cell_(cell) {}
  detail::CounterCell* cell_ = nullptr;
};

/// A histogram's ring (values in seconds). Default-constructed: detached.
class HistogramSlot {
 public:
  HistogramSlot() = default;
  void observe(double seconds) const noexcept {
    if (cell_ != nullptr) (void)cell_->ring.push(seconds);
  }
  /// Observations dropped because the ring was full.
  [[nodiscard]] std::uint64_t dropped() const noexcept {
    return cell_ != nullptr ? cell_->ring.dropped() : 0;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return cell_ != nullptr; }

 private:
  friend class MetricsRegistry;
  explicit HistogramSlot(detail::HistogramCell* cell) : cell_(cell) {}
  detail::HistogramCell* cell_ = nullptr;
};

class MetricsRegistry {
 public:
  using CollectorId = std::uint64_t;

  MetricsRegistry();
  /// Stops the exporter.
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  /// Declares (or finds) a gauge series. @throws std::invalid_argument for a name or label that
  /// is not a valid Prometheus name, or a name already declared as another type.
  GaugeSlot gauge(const std::string& name, const std::string& help, const MetricLabels& labels = {},
                  GaugeKind kind = GaugeKind::kLast);
  /// Declares (or finds) a counter series; the name must end in `_total`.
  CounterSlot counter(const std::string& name, const std::string& help,
                      const MetricLabels& labels = {});
  /// Declares (or finds) a histogram series with kLatencyBuckets.
  HistogramSlot histogram(const std::string& name, const std::string& help,
                          const MetricLabels& labels = {});

  /// Adds a function the exporter runs before each export (see the file comment).
  CollectorId add_collector(std::function<void()> collector);
  /// Removes it; when this returns, it is not running and will not run again.
  void remove_collector(CollectorId id);
  /// Runs `f` while no collector and no export runs.
  void exclusive(const std::function<void()>& f);

  /// Serves /metrics on `address` ("HOST:PORT", port 0 for a free one) and exports every
  /// `period`. @throws std::invalid_argument for a malformed address, std::runtime_error if it
  /// cannot listen, std::logic_error if already started.
  void start_exporter(const std::string& address,
                      std::chrono::milliseconds period = std::chrono::milliseconds(150));
  /// Stops serving and the export thread. Safe to call twice.
  void stop_exporter() noexcept;
  /// "HOST:PORT" with the bound port; empty when not serving.
  [[nodiscard]] std::string exporter_address() const;

  /// One export now (runs the collectors, drains the rings), as the exporter thread does.
  void collect();
  /// What a scrape returns (Prometheus text format); counts as a scrape for peak gauges.
  [[nodiscard]] std::string text();

 private:
  struct Impl;
  class Scrape;
  std::shared_ptr<Impl> impl_;
};

}  // namespace hyloop::runtime
