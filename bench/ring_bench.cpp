// Ring benchmark (issue 5): hyloop's loop plane against a bare ZeroMQ ring of the same hops and
// message size, and a raw Unix-socket ring as the floor; back to back and paced by
// transport::PeriodicClock; as separate processes and as threads of one process. A standalone
// program (it forks), not Google Benchmark. Results: docs/performance.md, "Loop rings".
//
// The ring has the loop's four hops: rig (node 0) → sensor → dynamics → actuator → rig. Node 0
// stamps each message with its CLOCK_MONOTONIC time, sends it, and measures the round trip when
// it comes back (latency = arrival − origin); nodes 1..3 block on receive and forward.
//
// ring/: one file per backend (uds_io, zmq_io, hyloop_io behind node_io.hpp; backends.cpp
// makes a node), the measurement loops and placements (runners.cpp), the console table and
// the results JSON (report.cpp). This file: the command line and the order of the rings.
//
// Run: build/bin/ring_bench --out bench/results/ring.json       (--quick: smoke test, seconds)

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "ring/backends.hpp"
#include "ring/hyloop_io.hpp"
#include "ring/report.hpp"
#include "ring/runners.hpp"

namespace {

using namespace hyloop::bench;

/// The bare timer at `spec.rate_hz`: the miss rate the rings are compared with.
Row timer_row(const RunSpec& spec) {
  Row row;
  row.transport = "timer";
  row.placement = "none";
  row.rate_hz = spec.rate_hz;
  row.result = run_origin(nullptr, spec);
  std::fprintf(stderr, "  timer %d Hz: %llu/%llu missed\n", spec.rate_hz,
               static_cast<unsigned long long>(row.result.missed),
               static_cast<unsigned long long>(row.result.deadlines));
  return row;
}

Row ring_row(Transport transport, Placement placement, const RunSpec& spec,
             std::size_t message_bytes, const std::string& tag) {
  RingSetup ring;
  ring.transport = transport;
  ring.message_bytes = message_bytes;
  Row row;
  row.transport = std::string(name_of(transport));
  row.placement = std::string(name_of(placement));
  row.rate_hz = spec.rate_hz;
  row.result = placement == Placement::kProcess ? run_processes(ring, spec, tag)
                                                : run_threads(ring, spec, tag);
  row.latency = summarise(row.result.latency_ns);
  std::fprintf(stderr, "  %s %s %s: n=%llu p50=%s us p99=%s us%s%s\n", row.transport.c_str(),
               row.placement.c_str(), row.pacing().c_str(),
               static_cast<unsigned long long>(row.latency.n), num(row.latency.p50_us, 1).c_str(),
               num(row.latency.p99_us, 1).c_str(),
               row.result.error.empty() ? "" : " ERROR: ", row.result.error.c_str());
  return row;
}

/// Every ring: back to back, then each rate of `opt` (the bare timer first).
std::vector<Row> run_all(const Options& opt, const std::vector<Transport>& transports,
                         const std::vector<Placement>& placements, std::size_t message_bytes) {
  std::vector<int> pacings{0};
  pacings.insert(pacings.end(), opt.rates.begin(), opt.rates.end());
  std::vector<Row> rows;
  int run = 0;
  for (const int rate : pacings) {
    const RunSpec spec{.rate_hz = rate,
                       .roundtrips = opt.roundtrips,
                       .seconds = opt.seconds,
                       .warmup = opt.warmup,
                       .spin_margin = std::chrono::microseconds(opt.spin_us)};
    if (rate != 0) rows.push_back(timer_row(spec));
    for (const Placement placement : placements) {
      for (const Transport transport : transports) {
        const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(run++);
        rows.push_back(ring_row(transport, placement, spec, message_bytes, tag));
      }
    }
  }
  return rows;
}

int run_bench(const Options& opt) {
  std::vector<Transport> transports;
  for (const auto& t : opt.transports) transports.push_back(parse_transport(t));
  std::vector<Placement> placements;
  for (const auto& p : opt.placements) placements.push_back(parse_placement(p));
  for (const int rate : opt.rates) {
    if (rate <= 0 || rate > 100'000) throw std::invalid_argument("bad rate");
  }
  std::signal(SIGPIPE, SIG_IGN);
  RunInfo info;
  info.message_bytes = hyloop_message_bytes();
  info.started = utc_now();
  info.before = load_average();
  const std::int64_t t0 = now_ns();
  std::printf("ring_bench: 4 hops, %zu-byte messages, spin margin %d us, load %.2f %.2f %.2f\n",
              info.message_bytes, opt.spin_us, info.before.one, info.before.five,
              info.before.fifteen);
  const std::vector<Row> rows = run_all(opt, transports, placements, info.message_bytes);
  info.after = load_average();
  info.wall_s = 1e-9 * static_cast<double>(now_ns() - t0);
  print_table(rows);
  std::printf("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; wall %.1f s\n",
              info.before.one, info.before.five, info.before.fifteen, info.after.one,
              info.after.five, info.after.fifteen, info.wall_s);
  if (!opt.out.empty()) {
    write_json(opt.out, opt, rows, info);
    std::printf("wrote %s\n", opt.out.c_str());
  }
  // The smoke test asserts only that every ring ran and produced rows.
  bool ok = !rows.empty();
  for (const Row& r : rows) {
    if (!r.result.error.empty() || (r.transport != "timer" && r.latency.n == 0)) ok = false;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"hyloop ring benchmark: hyloop vs bare ZeroMQ vs raw Unix sockets, 4 hops"};
  app.add_option("--roundtrips", opt.roundtrips, "back-to-back round trips per ring");
  app.add_option("--seconds", opt.seconds, "duration of each paced run (s)");
  app.add_option("--warmup", opt.warmup, "warm-up round trips before each ring's measurement");
  app.add_option("--rates", opt.rates, "paced rates (Hz)")->delimiter(',');
  app.add_option("--transports", opt.transports, "uds,zmq,hyloop")->delimiter(',');
  app.add_option("--placements", opt.placements, "process,thread")->delimiter(',');
  app.add_option("--spin-us", opt.spin_us, "PeriodicClock spin margin (µs) before each deadline");
  app.add_flag("--quick", opt.quick, "smoke test: a few seconds in all");
  app.add_option("--out", opt.out, "JSON output file");
  CLI11_PARSE(app, argc, argv);
  if (opt.quick) {
    opt.roundtrips = std::min<std::uint64_t>(opt.roundtrips, 300);
    opt.seconds = std::min(opt.seconds, 0.2);
    opt.warmup = std::min<std::uint64_t>(opt.warmup, 50);
  }
  try {
    return run_bench(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ring_bench: %s\n", e.what());
    return 2;
  }
}
