#include "hyloop/runtime/metrics.hpp"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <limits>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/runtime/loop_component.hpp"
#include "hyloop/runtime/service_config.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/transport/clock.hpp"

namespace hyloop::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// GET http://address/metrics over a plain socket (HTTP/1.0: the server closes when done).
std::string http_get(const std::string& address, const std::string& path = "/metrics") {
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon);
  const int port = std::stoi(address.substr(colon + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &sa.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    throw std::runtime_error("connect to " + address + " failed");
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
  (void)::send(fd, request.data(), request.size(), 0);
  std::string response;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto body = response.find("\r\n\r\n");
  EXPECT_NE(response.find(" 200 "), std::string::npos) << response.substr(0, 200);
  return body == std::string::npos ? response : response.substr(body + 4);
}

// The value of the series line that starts with `series` ("name{labels}" or "name"), or NaN.
double value_of(const std::string& text, const std::string& series) {
  std::size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      const auto end = text.find('\n', at);
      return std::stod(text.substr(at + series.size() + 1, end - at - series.size() - 1));
    }
    at += series.size();
  }
  return std::numeric_limits<double>::quiet_NaN();
}

TEST(Metrics, RecordingOnTheLoopPathNeitherAllocatesNorLocks) {
  MetricsRegistry m;
  const GaugeSlot gauge = m.gauge("hyloop_test_gauge", "A gauge.");
  const GaugeSlot peak = m.gauge("hyloop_test_peak", "A peak gauge.", {}, GaugeKind::kPeak);
  const CounterSlot counter = m.counter("hyloop_test_events_total", "A counter.", {{"k", "a"}});
  const HistogramSlot histogram = m.histogram("hyloop_test_seconds", "A histogram.");
  constexpr int kCalls = 10000;
  std::size_t allocations = 0;
  {
    testing::AllocGuard guard;
    for (int i = 0; i < kCalls; ++i) {
      gauge.set(static_cast<double>(i));
      peak.raise(static_cast<double>(i % 7));
      counter.add(1);
      histogram.observe(1e-6 * static_cast<double>(i % 200));  // the ring fills, then drops
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  EXPECT_EQ(gauge.value(), kCalls - 1);
  EXPECT_EQ(peak.value(), 6.0);
  EXPECT_EQ(counter.value(), static_cast<std::uint64_t>(kCalls));
  EXPECT_EQ(histogram.dropped(), static_cast<std::uint64_t>(kCalls) - kHistogramRingCapacity);
  const std::string text = m.text();
  EXPECT_EQ(value_of(text, "hyloop_test_seconds_count"),
            static_cast<double>(kHistogramRingCapacity));
  EXPECT_EQ(value_of(text, "hyloop_test_events_total{k=\"a\"}"), kCalls);
}

// A loop component whose metric helpers the test calls as a loop would.
class ProbeLoop final : public LoopComponent {
 public:
  ProbeLoop() : LoopComponent("probe"), input_(declare_input("rig_to_sensor", "rig_to_sensor")) {}
  void record(const v2::Header& header, std::int64_t read_start) noexcept {
    note_received(input_, header, read_start);
    count_cycle();
    count_deadline_miss();
    observe_lateness(70'000);
    note_queue_depth(input_, 3);
  }
  void watch(const transport::VerdictCounters& counters) { watch_input(input_, counters); }

 protected:
  void configure_loop(const v1::ConfigureRequest& /*request*/) override {}
  void run_loop() noexcept override {}
  void release_loop() noexcept override {}
  void on_emergency_stop(std::string_view /*reason*/) noexcept override {}

 private:
  std::size_t input_;
};

TEST(Metrics, LoopComponentHelpersDoNotAllocate) {
  ProbeLoop loop;
  transport::VerdictCounters verdicts;
  loop.watch(verdicts);
  v2::Header header;
  std::size_t allocations = 0;
  {
    testing::AllocGuard guard;
    for (int i = 0; i < 1000; ++i) {
      // Sent 250 µs before each record (not before the whole loop: 1000 records under ASan on a
      // loaded machine took longer than the 250 µs left below the 0.5 ms bucket).
      const std::int64_t now = transport::monotonic_now_ns();
      header.set_send_time_ns(now - 250'000);
      loop.record(header, now);
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  verdicts.add(transport::Verdict::kStale);
  verdicts.add(transport::Verdict::kStale);
  verdicts.add(transport::Verdict::kDuplicate);
  const std::string text = loop.metrics().text();
  EXPECT_EQ(value_of(text, "hyloop_cycles_total{service=\"probe\"}"), 1000);
  EXPECT_EQ(value_of(text, "hyloop_deadline_misses_total{service=\"probe\"}"), 1000);
  EXPECT_EQ(value_of(text, "hyloop_lateness_seconds_count{service=\"probe\"}"), 1000);
  EXPECT_EQ(value_of(text, "hyloop_message_age_seconds_count{service=\"probe\"}"), 1000);
  EXPECT_EQ(value_of(text, "hyloop_loop_latency_seconds_count{hop=\"rig_to_sensor\"}"), 1000);
  // 250 µs old: above the 200 µs bucket, within 500 µs.
  EXPECT_EQ(
      value_of(text, "hyloop_loop_latency_seconds_bucket{hop=\"rig_to_sensor\",le=\"0.0002\"}"), 0);
  EXPECT_EQ(
      value_of(text, "hyloop_loop_latency_seconds_bucket{hop=\"rig_to_sensor\",le=\"0.0005\"}"),
      1000);
  EXPECT_EQ(value_of(text, "hyloop_rejected_messages_total{reason=\"stale\",service=\"probe\"}"),
            2);
  EXPECT_EQ(
      value_of(text, "hyloop_rejected_messages_total{reason=\"duplicate\",service=\"probe\"}"), 1);
  EXPECT_EQ(value_of(text, "hyloop_rejected_messages_total{reason=\"ahead\",service=\"probe\"}"),
            0);
  // Each message was sent before its read began: a run of 1000 waiting messages.
  EXPECT_EQ(value_of(text, "hyloop_queue_depth{channel=\"rig_to_sensor\",service=\"probe\"}"),
            1000);
  // A peak gauge starts again after a scrape.
  EXPECT_EQ(value_of(loop.metrics().text(),
                     "hyloop_queue_depth{channel=\"rig_to_sensor\",service=\"probe\"}"),
            0);
}

TEST(Metrics, ExporterServesPrometheusText) {
  MetricsRegistry m;
  const GaugeSlot gauge = m.gauge("hyloop_test_position_meters", "Position.");
  const CounterSlot counter = m.counter("hyloop_test_cycles_total", "Cycles.", {{"service", "x"}});
  const HistogramSlot histogram =
      m.histogram("hyloop_test_latency_seconds", "Latency.", {{"hop", "a_to_b"}});
  m.start_exporter("127.0.0.1:0", std::chrono::milliseconds(20));
  const std::string address = m.exporter_address();
  ASSERT_THAT(address, ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(address, "127.0.0.1:0");

  std::string text = http_get(address);
  EXPECT_THAT(text, HasSubstr("# TYPE hyloop_test_position_meters gauge"));
  EXPECT_THAT(text, HasSubstr("# HELP hyloop_test_cycles_total Cycles."));
  EXPECT_THAT(text, HasSubstr("# TYPE hyloop_test_cycles_total counter"));
  EXPECT_THAT(text, HasSubstr("# TYPE hyloop_test_latency_seconds histogram"));
  EXPECT_EQ(value_of(text, "hyloop_test_cycles_total{service=\"x\"}"), 0);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"1e-05\"}"), 0);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"+Inf\"}"), 0);

  gauge.set(0.125);
  counter.add(3);
  histogram.observe(15e-6);
  histogram.observe(3e-3);
  histogram.observe(0.5);
  text = http_get(address);
  EXPECT_EQ(value_of(text, "hyloop_test_position_meters"), 0.125);
  EXPECT_EQ(value_of(text, "hyloop_test_cycles_total{service=\"x\"}"), 3);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"1e-05\"}"), 0);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"2e-05\"}"), 1);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"0.005\"}"), 2);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"0.1\"}"), 2);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_bucket{hop=\"a_to_b\",le=\"+Inf\"}"), 3);
  EXPECT_EQ(value_of(text, "hyloop_test_latency_seconds_count{hop=\"a_to_b\"}"), 3);

  // Counters export the delta since the last export: the total stays right.
  counter.add(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // the periodic export too
  EXPECT_EQ(value_of(http_get(address), "hyloop_test_cycles_total{service=\"x\"}"), 5);
  m.stop_exporter();
  EXPECT_EQ(m.exporter_address(), "");
  m.stop_exporter();  // twice is fine
}

TEST(Metrics, DeclaringAgainReusesTheSeries) {
  MetricsRegistry m;
  const GaugeSlot a = m.gauge("hyloop_test_gauge", "G.", {{"bound", "min"}});
  const GaugeSlot b = m.gauge("hyloop_test_gauge", "G.", {{"bound", "min"}});
  const GaugeSlot c = m.gauge("hyloop_test_gauge", "G.", {{"bound", "max"}});
  a.set(1.5);
  EXPECT_EQ(b.value(), 1.5);
  EXPECT_EQ(c.value(), 0.0);
  const std::string text = m.text();
  EXPECT_EQ(value_of(text, "hyloop_test_gauge{bound=\"max\"}"), 0.0);  // exists before a value
  EXPECT_EQ(value_of(text, "hyloop_test_gauge{bound=\"min\"}"), 1.5);
}

TEST(Metrics, RejectsBadDeclarationsAndAddresses) {
  MetricsRegistry m;
  (void)m.gauge("hyloop_test_thing", "G.");
  EXPECT_THROW((void)m.counter("hyloop_test_thing", "C."), std::invalid_argument);    // no _total
  EXPECT_THROW((void)m.histogram("hyloop_test_thing", "H."), std::invalid_argument);  // a gauge
  EXPECT_THROW((void)m.gauge("hyloop test", "G."), std::invalid_argument);
  EXPECT_THROW((void)m.gauge("hyloop_x", "G.", {{"bad-label", "v"}}), std::invalid_argument);
  EXPECT_THROW(m.start_exporter("localhost"), std::invalid_argument);
  EXPECT_THROW(m.start_exporter("127.0.0.1:http"), std::invalid_argument);
  EXPECT_THROW(m.start_exporter("127.0.0.1:70000"), std::invalid_argument);
  // A detached handle does nothing.
  const GaugeSlot detached;
  detached.set(1.0);
  EXPECT_FALSE(detached);
  EXPECT_EQ(detached.value(), 0.0);
}

TEST(Metrics, CollectorsRunBeforeEachExportUntilRemoved) {
  MetricsRegistry m;
  const GaugeSlot g = m.gauge("hyloop_test_pulled", "Pulled.");
  int runs = 0;
  const auto id = m.add_collector([&] { g.set(++runs); });
  EXPECT_EQ(value_of(m.text(), "hyloop_test_pulled"), 1);
  m.collect();
  EXPECT_EQ(runs, 2);
  m.remove_collector(id);
  EXPECT_EQ(value_of(m.text(), "hyloop_test_pulled"), 2);
  EXPECT_EQ(runs, 2);
}

TEST(Metrics, ServiceConfigMetricsAddress) {
  EXPECT_EQ(default_service_config("x").metrics_address, "");
  EXPECT_EQ(parse_service_config("metrics_address: 0.0.0.0:9464\n", "f.yaml").metrics_address,
            "0.0.0.0:9464");
  EXPECT_EQ(parse_service_config("metrics_address: \"\"\n", "f.yaml").metrics_address, "");
  EXPECT_THROW((void)parse_service_config("metrics_address: 9464x\n", "f.yaml"),
               std::invalid_argument);
  EXPECT_THROW((void)parse_service_config("metrics_address: host\n", "f.yaml"),
               std::invalid_argument);
}

#ifdef HYLOOP_FAKE_SERVICE
// The service binary prints "… metrics HOST:PORT" after its gRPC line and serves /metrics there.
TEST(Metrics, ServiceBinaryServesMetricsOnItsAddressLine) {
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execl(HYLOOP_FAKE_SERVICE, HYLOOP_FAKE_SERVICE, "--log-level", "warn", "--insecure",
            "--metrics-address", "127.0.0.1:0", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string lines;
  char c = 0;
  while (std::count(lines.begin(), lines.end(), '\n') < 2 && ::read(out[0], &c, 1) == 1) {
    lines.push_back(c);
  }
  const std::regex expected(
      "hyloop-fake grpc 127\\.0\\.0\\.1:[0-9]+\nhyloop-fake metrics "
      "(127\\.0\\.0\\.1:[0-9]+)\n");
  std::smatch match;
  const bool ok = std::regex_match(lines, match, expected);
  EXPECT_TRUE(ok) << lines;
  if (ok) {
    const std::string text = http_get(match[1].str());
    EXPECT_THAT(text, HasSubstr("# TYPE"));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out[0]);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}
#endif

}  // namespace
}  // namespace hyloop::runtime
