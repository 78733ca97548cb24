// Reply latency of the wire drivers against their emulators over loopback (docs/performance.md,
// "Wire drivers"), driver and emulator in one process, no impairment:
//   udp: UdpTargetDriver + UdpTargetEmulator at 4096 Hz (the RTHS benchmark), 1 kHz and 250 Hz,
//     a loop paced by absolute deadlines sending one command a cycle. The round trip is the
//     driver's own (I/O thread: command sent → measurement echoing it received); late = longer than
//     the period; missing = no reply to a command before the next cycle.
//   egm: EgmDriver + EgmRobotEmulator at 4 ms. Reply latency = the controller's view: EgmRobot
//     sent → first correction received. Two loops: "synced" answers each robot message (polls
//     the driver every 100 µs), "timer" runs on its own 4 ms timer as a rig service does.
//   rsi: RsiDriver + RsiControllerEmulator at 4 ms, the same two loops. Reply latency = the
//     controller's view: <Rob> sent → the <Sen> with its IPOC received; late = Delay.D, the
//     cycles whose reply was not back before the next tick (the controller's late packets).
// Run:
//   ./build/bin/wire_bench --seconds 60 --out bench/results/wire.json
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

#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/egm_robot_emulator.hpp"
#include "hyloop/hal/rsi_controller_emulator.hpp"
#include "hyloop/hal/rsi_driver.hpp"
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
  l.fields = {{"seq", hal::WireType::kU32},
              {"position", hal::WireType::kF64},
              {"force", hal::WireType::kF64},
              {"echo", hal::WireType::kU32},
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

nlohmann::json run_udp(double rate, double seconds) {
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
    wake_late.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - deadline).count());
  }
  const hal::UdpTargetMetrics m = driver.metrics();
  return {{"driver", "udp"},
          {"rate_hz", rate},
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

/// Commands a 10 mm sine for `seconds`: `synced` once per controller message (`stamp()` changed;
/// polled every 100 µs), else on its own timer of `period`.
template <typename Stamp>
void drive(hal::ActuatorDriver& driver, Stamp stamp, bool synced, double seconds, double period) {
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(period));
  std::uint64_t last = stamp();
  auto deadline = start;
  for (std::int64_t k = 0; std::chrono::steady_clock::now() < end; ++k) {
    if (synced) {
      const std::uint64_t now = stamp();
      if (now == last) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      last = now;
    } else {
      deadline += step;
      std::this_thread::sleep_until(deadline);
    }
    driver.command(
        {0.01 * std::sin(2.0 * std::numbers::pi * static_cast<double>(k) * period), 0.0});
  }
}

/// What an EGM or RSI run reports alike: the robot's messages, its reply latencies (s) and the
/// late counts of both sides.
nlohmann::json robot_run(const char* driver, bool synced, double period, double seconds,
                         std::uint64_t robot_messages, const std::vector<double>& lat,
                         std::uint64_t late_replies, std::uint64_t late_ticks) {
  return {{"driver", driver},
          {"loop", synced ? "synced to the robot" : "own 4 ms timer"},
          {"period_ms", 1e3 * period},
          {"seconds", seconds},
          {"robot_messages", robot_messages},
          {"replies_measured", lat.size()},
          {"reply_p50_us", 1e6 * percentile(lat, 0.5)},
          {"reply_p99_us", 1e6 * percentile(lat, 0.99)},
          {"reply_max_us", 1e6 * percentile(lat, 1.0)},
          {"late_replies_at_deadline", late_replies},
          {"controller_late_ticks", late_ticks}};
}

/// One EGM run: `synced` answers each robot message, else a 4 ms timer loop.
nlohmann::json run_egm(bool synced, double seconds) {
  constexpr double kPeriod = 0.004;
  const std::uint16_t driver_port = hal::free_udp_port();
  hal::EgmRobotEmulatorConfig e;
  e.sensor = {"127.0.0.1", driver_port};
  e.plant.step = kPeriod;
  e.reply_timeout = 1.0;
  e.latency_samples = static_cast<std::size_t>(seconds / kPeriod) + 1000;
  hal::EgmRobotEmulator robot(e);
  hal::EgmDriverConfig d;
  d.local = {"127.0.0.1", driver_port};
  d.robot = {"127.0.0.1", robot.port()};
  d.timeout = 1.0;
  hal::EgmDriver driver(d);
  driver.wait_for_robot(1.0);
  const hal::EgmRobotEmulatorStats before = robot.stats();
  drive(
      driver, [&] { return std::uint64_t{driver.latest().seqno}; }, synced, seconds, kPeriod);
  robot.stop();
  const hal::EgmRobotEmulatorStats st = robot.stats();
  const hal::EgmDriverMetrics m = driver.metrics();
  nlohmann::json j = robot_run("egm", synced, kPeriod, seconds, st.sent - before.sent,
                               robot.reply_latencies(), m.late_replies, st.late_ticks);
  j["missing_replies"] = st.missing_replies - before.missing_replies;
  return j;
}

/// One RSI run: `synced` answers each <Rob>, else a 4 ms timer loop.
nlohmann::json run_rsi(bool synced, double seconds) {
  constexpr double kPeriod = hal::kRsiCycleFast;
  const std::uint16_t driver_port = hal::free_udp_port();
  hal::RsiControllerEmulatorConfig e;
  e.sensor = {"127.0.0.1", driver_port};
  e.plant.step = kPeriod;
  e.late_limit = 1000000;  // measure, do not stop
  e.latency_samples = static_cast<std::size_t>(seconds / kPeriod) + 1000;
  hal::RsiControllerEmulator robot(e);
  hal::RsiDriverConfig d;
  d.local = {"127.0.0.1", driver_port};
  d.robot = {"127.0.0.1", robot.port()};
  d.timeout = 1.0;
  hal::RsiDriver driver(d);
  driver.wait_for_robot(1.0);
  const hal::RsiControllerEmulatorStats before = robot.stats();
  drive(
      driver, [&] { return driver.latest().ipoc; }, synced, seconds, kPeriod);
  robot.stop();
  const hal::RsiControllerEmulatorStats st = robot.stats();
  const hal::RsiDriverMetrics m = driver.metrics();
  nlohmann::json j = robot_run("rsi", synced, kPeriod, seconds, st.sent - before.sent,
                               robot.reply_latencies(), m.late_replies, st.late_ticks);
  j["controller_late_packets"] = st.late - before.late;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Wire drivers' reply latency over loopback"};
  double seconds = 60.0;
  std::string out = "bench/results/wire.json";
  app.add_option("--seconds", seconds, "duration per rate");
  app.add_option("--out", out, "results file");
  CLI11_PARSE(app, argc, argv);
  ::prctl(PR_SET_TIMERSLACK, 1UL);  // the threads created below inherit it
  nlohmann::json results = nlohmann::json::array();
  const auto record = [&](nlohmann::json row, const std::string& load) {
    row["loadavg_at_start"] = load;
    std::cout << row.dump() << "\n";
    results.push_back(std::move(row));
  };
  const auto loadavg = [] {
    std::string load;
    std::getline(std::ifstream("/proc/loadavg"), load);
    return load;
  };
  for (double rate : {4096.0, 1000.0, 250.0}) {
    const std::string load = loadavg();
    record(run_udp(rate, seconds), load);
  }
  for (bool synced : {true, false}) {
    const std::string load = loadavg();
    record(run_egm(synced, seconds), load);
  }
  for (bool synced : {true, false}) {
    const std::string load = loadavg();
    record(run_rsi(synced, seconds), load);
  }
  std::ofstream(out) << results.dump(2) << "\n";
  return 0;
}
