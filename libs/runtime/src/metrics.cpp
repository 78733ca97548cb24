#include "hyloop/runtime/metrics.hpp"

#include <netdb.h>
#include <prometheus/check_names.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

namespace hyloop::runtime {
namespace detail {
// A metric's Prometheus type (in detail, not the anonymous namespace: MetricsRegistry::Impl holds
// it).
enum class MetricType : std::uint8_t { kGauge, kCounter, kHistogram };
}  // namespace detail

namespace {

using Type = detail::MetricType;

const char* type_name(Type t) {
  switch (t) {
    case Type::kGauge:
      return "gauge";
    case Type::kCounter:
      return "counter";
    default:
      return "histogram";
  }
}

using SeriesKey = std::pair<std::string, MetricLabels>;

// Splits "HOST:PORT" (HOST may be [v6]); throws std::invalid_argument.
std::pair<std::string, int> split_address(const std::string& address) {
  const auto colon = address.rfind(':');
  const std::string why = "metrics address '" + address +
                          "': expected HOST:PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::]:9464; "
                          "port 0 picks a free one)";
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    throw std::invalid_argument(why);
  }
  const std::string port = address.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    throw std::invalid_argument(why);
  }
  return {address.substr(0, colon), std::stoi(port)};
}

// Connects to host:port and closes, again every 20 ms until `done`: civetweb's listener polls
// with a 2 s timeout and only sees the stop request when it wakes, so a stop would otherwise take
// up to 2 s.
void poke_until(const std::string& host, int port, const std::atomic<bool>& done) {
  std::string h = host;
  if (h == "0.0.0.0" || h == "*" || h.empty()) h = "127.0.0.1";
  if (h == "[::]") h = "::1";
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  while (!done.load()) {
    const int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    if (fd >= 0) {
      (void)::connect(fd, found->ai_addr, found->ai_addrlen);
      ::close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::freeaddrinfo(found);
}

}  // namespace

struct MetricsRegistry::Impl {
  struct GaugeSeries {
    std::unique_ptr<detail::GaugeCell> cell;
    prometheus::Gauge* metric = nullptr;
  };
  struct CounterSeries {
    std::unique_ptr<detail::CounterCell> cell;
    prometheus::Counter* metric = nullptr;
  };
  struct HistogramSeries {
    std::unique_ptr<detail::HistogramCell> cell;
    prometheus::Histogram* metric = nullptr;
  };

  std::mutex mutex;  // declarations, exports, collectors
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::map<std::string, Type> types;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauge_families;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counter_families;
  std::map<std::string, prometheus::Family<prometheus::Histogram>*> histogram_families;
  std::map<SeriesKey, GaugeSeries> gauges;
  std::map<SeriesKey, CounterSeries> counters;
  std::map<SeriesKey, HistogramSeries> histograms;
  std::map<CollectorId, std::function<void()>> collectors;
  CollectorId next_collector = 1;

  // Exporter.
  std::unique_ptr<prometheus::Exposer> exposer;
  std::shared_ptr<prometheus::Collectable> scrape;
  std::thread thread;
  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stop = false;
  std::string address;
  std::string host;
  int port = 0;

  void check(const std::string& name, const MetricLabels& labels, Type type) {
    if (!prometheus::CheckMetricName(name)) {
      throw std::invalid_argument("metric name '" + name + "' is not a valid Prometheus name");
    }
    for (const auto& [label, value] : labels) {
      if (!prometheus::CheckLabelName(label)) {
        throw std::invalid_argument("metric " + name + ": label name '" + label +
                                    "' is not a valid Prometheus label name");
      }
    }
    const auto [it, inserted] = types.emplace(name, type);
    if (!inserted && it->second != type) {
      throw std::invalid_argument("metric " + name + " is already declared as a " +
                                  type_name(it->second) + ", not a " + type_name(type));
    }
  }

  // Copies every cell into its prometheus-cpp metric. Holds `mutex`.
  void export_locked(bool scraping) {
    for (auto& [id, collector] : collectors) {
      collector();
    }
    for (auto& [key, s] : gauges) {
      if (s.cell->kind == GaugeKind::kPeak && scraping) {
        s.metric->Set(s.cell->value.exchange(0.0, std::memory_order_relaxed));
      } else {
        s.metric->Set(s.cell->value.load(std::memory_order_relaxed));
      }
    }
    for (auto& [key, s] : counters) {
      const std::uint64_t now = s.cell->value.load(std::memory_order_relaxed);
      if (now > s.cell->exported) {
        s.metric->Increment(static_cast<double>(now - s.cell->exported));
        s.cell->exported = now;
      }
    }
    for (auto& [key, s] : histograms) {
      double v = 0.0;
      while (s.cell->ring.pop(v)) {
        s.metric->Observe(v);
      }
    }
  }
};

// What the Exposer collects at each scrape: an export, then the registry's families.
class MetricsRegistry::Scrape final : public prometheus::Collectable {
 public:
  explicit Scrape(Impl& impl) : impl_(impl) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    const std::lock_guard lock(impl_.mutex);
    impl_.export_locked(true);
    return impl_.registry->Collect();
  }

 private:
  Impl& impl_;
};

MetricsRegistry::MetricsRegistry() : impl_(std::make_shared<Impl>()) {}

MetricsRegistry::~MetricsRegistry() { stop_exporter(); }

GaugeSlot MetricsRegistry::gauge(const std::string& name, const std::string& help,
                                 const MetricLabels& labels, GaugeKind kind) {
  const std::lock_guard lock(impl_->mutex);
  SeriesKey key{name, labels};
  if (const auto it = impl_->gauges.find(key); it != impl_->gauges.end()) {
    return GaugeSlot(it->second.cell.get());
  }
  impl_->check(name, labels, Type::kGauge);
  auto& family = impl_->gauge_families[name];
  if (family == nullptr) {
    family = &prometheus::BuildGauge().Name(name).Help(help).Register(*impl_->registry);
  }
  Impl::GaugeSeries s{std::make_unique<detail::GaugeCell>(), &family->Add(labels)};
  s.cell->kind = kind;
  auto* cell = s.cell.get();
  impl_->gauges.emplace(std::move(key), std::move(s));
  return GaugeSlot(cell);
}

CounterSlot MetricsRegistry::counter(const std::string& name, const std::string& help,
                                     const MetricLabels& labels) {
  const std::lock_guard lock(impl_->mutex);
  SeriesKey key{name, labels};
  if (const auto it = impl_->counters.find(key); it != impl_->counters.end()) {
    return CounterSlot(it->second.cell.get());
  }
  constexpr std::string_view kSuffix = "_total";
  if (name.size() <= kSuffix.size() ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    throw std::invalid_argument("counter " + name + ": a counter's name ends in _total");
  }
  impl_->check(name, labels, Type::kCounter);
  auto& family = impl_->counter_families[name];
  if (family == nullptr) {
    family = &prometheus::BuildCounter().Name(name).Help(help).Register(*impl_->registry);
  }
  Impl::CounterSeries s{std::make_unique<detail::CounterCell>(), &family->Add(labels)};
  auto* cell = s.cell.get();
  impl_->counters.emplace(std::move(key), std::move(s));
  return CounterSlot(cell);
}

HistogramSlot MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                         const MetricLabels& labels) {
  const std::lock_guard lock(impl_->mutex);
  SeriesKey key{name, labels};
  if (const auto it = impl_->histograms.find(key); it != impl_->histograms.end()) {
    return HistogramSlot(it->second.cell.get());
  }
  impl_->check(name, labels, Type::kHistogram);
  auto& family = impl_->histogram_families[name];
  if (family == nullptr) {
    family = &prometheus::BuildHistogram().Name(name).Help(help).Register(*impl_->registry);
  }
  const prometheus::Histogram::BucketBoundaries buckets(kLatencyBuckets.begin(),
                                                        kLatencyBuckets.end());
  Impl::HistogramSeries s{std::make_unique<detail::HistogramCell>(), &family->Add(labels, buckets)};
  auto* cell = s.cell.get();
  impl_->histograms.emplace(std::move(key), std::move(s));
  return HistogramSlot(cell);
}

MetricsRegistry::CollectorId MetricsRegistry::add_collector(std::function<void()> collector) {
  const std::lock_guard lock(impl_->mutex);
  const CollectorId id = impl_->next_collector++;
  impl_->collectors.emplace(id, std::move(collector));
  return id;
}

void MetricsRegistry::remove_collector(CollectorId id) {
  const std::lock_guard lock(impl_->mutex);
  impl_->collectors.erase(id);
}

void MetricsRegistry::exclusive(const std::function<void()>& f) {
  const std::lock_guard lock(impl_->mutex);
  f();
}

void MetricsRegistry::collect() {
  const std::lock_guard lock(impl_->mutex);
  impl_->export_locked(false);
}

std::string MetricsRegistry::text() {
  std::vector<prometheus::MetricFamily> families;
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->export_locked(true);
    families = impl_->registry->Collect();
  }
  return prometheus::TextSerializer().Serialize(families);
}

void MetricsRegistry::start_exporter(const std::string& address, std::chrono::milliseconds period) {
  if (impl_->exposer) {
    throw std::logic_error("MetricsRegistry::start_exporter called twice");
  }
  const auto [host, port] = split_address(address);
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(address, 2);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics on '" + address + "': " + e.what());
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    throw std::runtime_error("cannot serve metrics on '" + address + "': no listening port");
  }
  impl_->scrape = std::make_shared<Scrape>(*impl_);
  exposer->RegisterCollectable(impl_->scrape);
  impl_->exposer = std::move(exposer);
  impl_->address = host + ":" + std::to_string(ports.front());
  impl_->host = host;
  impl_->port = ports.front();
  {
    const std::lock_guard lock(impl_->stop_mutex);
    impl_->stop = false;
  }
  impl_->thread = std::thread([impl = impl_.get(), period] {
    std::unique_lock lock(impl->stop_mutex);
    while (!impl->stop_cv.wait_for(lock, period, [impl] { return impl->stop; })) {
      lock.unlock();
      {
        const std::lock_guard export_lock(impl->mutex);
        impl->export_locked(false);
      }
      lock.lock();
    }
  });
}

void MetricsRegistry::stop_exporter() noexcept {
  if (!impl_) return;
  {
    const std::lock_guard lock(impl_->stop_mutex);
    impl_->stop = true;
  }
  impl_->stop_cv.notify_all();
  if (impl_->thread.joinable()) {
    impl_->thread.join();
  }
  if (impl_->exposer) {
    std::atomic<bool> done{false};
    std::thread poke([this, &done] { poke_until(impl_->host, impl_->port, done); });
    impl_->exposer.reset();  // joins the HTTP threads
    done.store(true);
    poke.join();
  }
  impl_->scrape.reset();
  impl_->address.clear();
}

std::string MetricsRegistry::exporter_address() const { return impl_->address; }

}  // namespace hyloop::runtime
