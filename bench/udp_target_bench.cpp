// Reply latency of the UDP real-time target driver over loopback (docs/performance.md, "Wire
// drivers"): the driver and its wire emulator (udp_target_emulator.hpp, no impairment) in one
// process, a loop paced by absolute deadlines at each rate sending one command a cycle. The
// round trip is the driver's own (I/O thread: command sent → measurement echoing it received);
// a reply is late when it takes longer than the period, missing when no reply to a command came
// before the next cycle. Run:
//   ./build/bin/udp_target_bench --seconds 60 --out bench/results/udp_target.json
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/hal/udp_target_driver.hpp"
#include "hyloop/hal/udp_target_emulator.hpp"

namespace {

namespace hal = hyloop::hal;

hal::PacketLayout command_layout() {
  hal::PacketLayout l;
  l.fields = {{"seq", hal::WireType::kU32}, {"position", hal::WireType::kF64}};
  l.sequence = "seq";
  return l;
}

hal::PacketLayout measurement_layout() {
  hal::PacketLayout l;
  l.fields = {{"seq", hal::WireType::kU32},   {"position", hal::WireType::kF64},
              {"force", hal::WireType::kF64}, {"echo", hal::WireType::kU32},
              {"status", hal::WireType::kU8}};
  l.sequence = "seq";
  return l;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) {
    return 0.0;
  }
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

nlohmann::json run(double rate, double seconds) {
  const double period = 1.0 / rate;
  hal::UdpSignalMap signals;
  signals.measured_force = "force";
  signals.command_echo = "echo";
  signals.status = "status";
  const std::uint16_t driver_port = hal::free_udp_port();
  hal::UdpTargetEmulatorConfig e;
  e.host = {"127.0.0.1", driver_port};
  e.command = command_layout();
  e.measurement = measurement_layout();
  e.signals = signals;
  e.plant.step = period;
  e.plant.specimen_stiffness = 1e4;
  e.command_timeout = 1.0;
  hal::UdpTargetEmulator target(e);
  hal::UdpTargetConfig d;
  d.local = {"127.0.0.1", driver_port};
  d.peer = {"127.0.0.1", target.port()};
  d.command = e.command;
  d.measurement = e.measurement;
  d.signals = signals;
  d.period = period;
  d.timeout = 1.0;
  hal::UdpTargetDriver driver(d);
  driver.wait_for_measurement(1.0);

  const auto cycles = static_cast<std::int64_t>(seconds * rate);
  std::vector<double> rtt;
  std::vector<double> wake_late;
  rtt.reserve(static_cast<std::size_t>(cycles));
  wake_late.reserve(static_cast<std::size_t>(cycles));
  std::uint64_t missing = 0;
  std::uint64_t seen = 0;
  auto deadline = std::chrono::steady_clock::now();
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(period));
  for (std::int64_t k = 1; k <= cycles; ++k) {
    const hal::UdpTargetMetrics m = driver.metrics();
    if (k > 1) {
      if (m.round_trips > seen) {
        rtt.push_back(m.round_trip_last);
      } else {
        ++missing;
      }
      seen = m.round_trips;
    }
    const double x = 0.01 * std::sin(2.0 * std::numbers::pi * static_cast<double>(k) * period);
    driver.command({x, 0.0});
    deadline += step;
    std::this_thread::sleep_until(deadline);
    wake_late.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - deadline)
                            .count());
  }
  const hal::UdpTargetMetrics m = driver.metrics();
  return {{"rate_hz", rate},
          {"seconds", seconds},
          {"cycles", cycles},
          {"replies", m.round_trips},
          {"round_trip_p50_us", 1e6 * percentile(rtt, 0.5)},
          {"round_trip_p99_us", 1e6 * percentile(rtt, 0.99)},
          {"round_trip_max_us", 1e6 * m.round_trip_max},
          {"late_replies", m.late},
          {"missing_at_next_cycle", missing},
          {"target_fallback_steps", target.stats().fallback_steps},
          {"loop_wake_late_p50_us", 1e6 * percentile(wake_late, 0.5)},
          {"loop_wake_late_p99_us", 1e6 * percentile(wake_late, 0.99)},
          {"loop_wake_late_max_us", 1e6 * percentile(wake_late, 1.0)},
          {"lost", m.lost},
          {"reordered", m.reordered}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"UDP target driver reply latency over loopback"};
  double seconds = 60.0;
  std::string out = "bench/results/udp_target.json";
  app.add_option("--seconds", seconds, "duration per rate");
  app.add_option("--out", out, "results file");
  CLI11_PARSE(app, argc, argv);
  ::prctl(PR_SET_TIMERSLACK, 1UL);  // the threads created below inherit it
  nlohmann::json results = nlohmann::json::array();
  for (double rate : {1000.0, 250.0}) {
    std::string load;
    std::getline(std::ifstream("/proc/loadavg"), load);
    results.push_back(run(rate, seconds));
    results.back()["loadavg_at_start"] = load;
    std::cout << results.back().dump() << "\n";
  }
  std::ofstream(out) << results.dump(2) << "\n";
  return 0;
}
