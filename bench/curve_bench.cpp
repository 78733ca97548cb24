// What CURVE costs on a loop channel (docs/performance.md, "CURVE on the loop plane"): the same
// hyloop Channel pair over tcp://127.0.0.1, plain and with CURVE (ZAP allow-list), two threads
// of one process:
//   round trip: A sends, B echoes, A receives; percentiles over N round trips after a warm-up;
//   stream: A sends N messages back to back through a lossless send, B counts them; the time per
//   message is the sender's elapsed time over N.
// Message sizes 64 B (a loop message is 40-90 B) and 1 KiB. Run:
//   ./build/bin/curve_bench --out bench/results/curve.json
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/curve.hpp"

namespace {

namespace tp = hyloop::transport;
using namespace std::chrono_literals;

struct Keys {
  std::pair<std::string, std::string> a = tp::make_curve_key_pair();
  std::pair<std::string, std::string> b = tp::make_curve_key_pair();
};

// A one-way channel from `from` to `to` (the binder is the receiver, as the telemetry is).
std::pair<std::unique_ptr<tp::Channel>, std::unique_ptr<tp::Channel>> make_link(
    zmq::context_t& ctx, bool curve, const std::pair<std::string, std::string>& rx_keys,
    const std::pair<std::string, std::string>& tx_keys) {
  tp::ChannelConfig rc;
  rc.endpoint = "tcp://127.0.0.1:*";
  rc.pattern = tp::Pattern::kPull;
  rc.role = tp::Role::kBind;
  rc.recv_hwm = 100000;
  tp::ChannelConfig tc;
  tc.pattern = tp::Pattern::kPush;
  tc.role = tp::Role::kConnect;
  tc.send_hwm = 100000;
  if (curve) {
    rc.security.curve = {.public_key = rx_keys.first,
                         .secret_key = rx_keys.second,
                         .allowed_clients = {tx_keys.first}};
    tc.security.curve = {
        .public_key = tx_keys.first, .secret_key = tx_keys.second, .server_key = rx_keys.first};
  } else {
    rc.security.allow_plain_tcp = true;
    tc.security.allow_plain_tcp = true;
  }
  auto rx = std::make_unique<tp::Channel>(ctx, rc);
  tc.endpoint = rx->endpoint();
  auto tx = std::make_unique<tp::Channel>(ctx, tc);
  return {std::move(rx), std::move(tx)};
}

struct Result {
  std::string mode;
  std::size_t bytes = 0;
  std::size_t n = 0;
  double p50_us = 0, p99_us = 0, p99_9_us = 0, max_us = 0;
  double stream_us_per_message = 0;
};

double pct(std::vector<std::int64_t>& v, double q) {
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[std::min(i, v.size() - 1)]) * 1e-3;
}

Result measure(bool curve, std::size_t bytes, std::size_t n, const Keys& keys) {
  zmq::context_t ctx;
  auto [a_rx, b_tx] = make_link(ctx, curve, keys.a, keys.b);  // B → A
  auto [b_rx, a_tx] = make_link(ctx, curve, keys.b, keys.a);  // A → B
  std::vector<std::byte> msg(bytes, std::byte{0x5a});
  std::vector<std::byte> buf(bytes + 16);
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> stream_seen{0};
  std::atomic<bool> streaming{false};
  std::thread echo([&] {
    std::vector<std::byte> eb(bytes + 16);
    while (!stop.load()) {
      if (auto r = b_rx->receive(eb, 20ms)) {
        if (streaming.load()) {
          stream_seen.fetch_add(1);
        } else {
          (void)b_tx->send(r->bytes, 2000ms);
        }
      }
    }
  });
  const std::size_t warmup = 1000;
  std::vector<std::int64_t> rtt;
  rtt.reserve(n);
  for (std::size_t i = 0; i < warmup + n; ++i) {
    const std::int64_t t0 = tp::monotonic_now_ns();
    if (!a_tx->send(msg, 5000ms)) throw std::runtime_error("send timed out");
    if (!a_rx->receive(buf, 5000ms)) throw std::runtime_error("no echo");
    if (i >= warmup) rtt.push_back(tp::monotonic_now_ns() - t0);
  }
  streaming = true;
  const std::int64_t s0 = tp::monotonic_now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    if (!a_tx->send(msg, 5000ms)) throw std::runtime_error("stream send timed out");
  }
  while (stream_seen.load() < n) std::this_thread::sleep_for(100us);
  const std::int64_t s1 = tp::monotonic_now_ns();
  stop = true;
  echo.join();
  std::sort(rtt.begin(), rtt.end());
  Result r;
  r.mode = curve ? "curve" : "plain";
  r.bytes = bytes;
  r.n = n;
  r.p50_us = pct(rtt, 0.5);
  r.p99_us = pct(rtt, 0.99);
  r.p99_9_us = pct(rtt, 0.999);
  r.max_us = static_cast<double>(rtt.back()) * 1e-3;
  r.stream_us_per_message = static_cast<double>(s1 - s0) * 1e-3 / static_cast<double>(n);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("CURVE cost on a hyloop loop channel (tcp loopback)");
  std::string out;
  std::size_t n = 20000;
  int repeats = 2;
  bool quick = false;
  app.add_option("--out", out, "JSON results file");
  app.add_option("--messages", n, "round trips (and stream messages) per measurement");
  app.add_option("--repeats", repeats, "alternating plain/curve repeats");
  app.add_flag("--quick", quick, "1000 messages, one repeat (smoke)");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    n = 1000;
    repeats = 1;
  }
  const Keys keys;
  std::vector<Result> results;
  for (int rep = 0; rep < repeats; ++rep) {
    for (const std::size_t bytes : {std::size_t{64}, std::size_t{1024}}) {
      for (const bool curve : {false, true}) {
        results.push_back(measure(curve, bytes, n, keys));
        const Result& r = results.back();
        std::cout << r.mode << " " << r.bytes << " B: round trip p50 " << r.p50_us << " us, p99 "
                  << r.p99_us << " us, p99.9 " << r.p99_9_us << " us, max " << r.max_us
                  << " us; stream " << r.stream_us_per_message << " us/message\n";
      }
    }
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << "{\n  \"what\": \"hyloop Channel PUSH/PULL pair over tcp://127.0.0.1, two threads, "
         "plain vs CURVE\",\n  \"results\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      f << "    {\"mode\": \"" << r.mode << "\", \"bytes\": " << r.bytes << ", \"n\": " << r.n
        << ", \"rtt_p50_us\": " << r.p50_us << ", \"rtt_p99_us\": " << r.p99_us
        << ", \"rtt_p99_9_us\": " << r.p99_9_us << ", \"rtt_max_us\": " << r.max_us
        << ", \"stream_us_per_message\": " << r.stream_us_per_message << "}"
        << (i + 1 < results.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }
  return 0;
}
