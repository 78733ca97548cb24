#include "hyloop/hal/udp_target_emulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <numbers>
#include <thread>
#include <vector>

#include "hyloop/hal/actuator_safety.hpp"
#include "udp_test_layouts.hpp"

namespace hyloop::hal {
namespace {

using test::eventually;

constexpr double kPeriod = 0.001;  // 1 kHz
constexpr double kGain = 0.5;      // K of the tracking loop below

ServoActuatorConfig plant_config(double step = kPeriod) {
  ServoActuatorConfig p;
  p.step = step;
  p.omega = 50.0;
  p.zeta = 0.8;
  p.specimen_stiffness = 1e4;
  return p;
}

/// A driver and an emulator wired to each other over loopback.
struct WireRig {
  std::unique_ptr<UdpTargetEmulator> target;
  std::unique_ptr<UdpTargetDriver> driver;

  explicit WireRig(const WireImpairments& impairments, double command_timeout = 0.05,
                   double driver_timeout = 0.05, double step = kPeriod,
                   const PacketLayout& command = test::command_layout()) {
    const std::uint16_t driver_port = free_udp_port();
    UdpTargetEmulatorConfig e;
    e.host = {"127.0.0.1", driver_port};
    e.command = command;
    e.measurement = test::exact_measurement_layout();
    e.signals = test::signal_map();
    e.signals.measured_velocity = "velocity";
    e.plant = plant_config(step);
    e.command_timeout = command_timeout;
    e.impairments = impairments;
    target = std::make_unique<UdpTargetEmulator>(e);
    UdpTargetConfig d;
    d.local = {"127.0.0.1", driver_port};
    d.peer = {"127.0.0.1", target->port()};
    d.command = e.command;
    d.measurement = e.measurement;
    d.signals = e.signals;
    d.period = step;
    d.timeout = driver_timeout;
    d.limits.position_min = -0.1;
    d.limits.position_max = 0.1;
    d.limits.velocity_max = 1.0;
    driver = std::make_unique<UdpTargetDriver>(d);
  }
};

/// The tracking loop both runs share: u_k = r_{k+1} + K·(r_k − y_k), r = A·sin(2π f t).
double reference(std::int64_t k) {
  return 0.01 * std::sin(2.0 * std::numbers::pi * 1.0 * static_cast<double>(k) * kPeriod);
}
double control(std::int64_t k, double y) { return reference(k + 1) + kGain * (reference(k) - y); }

/// max_k |y_k| of the in-process closed loop after a unit impulse on the plant input at k = 0,
/// r = 0: the worst a one-step input error of size 1 moves the output later (the loop is linear).
double impulse_peak(int cycles) {
  ServoActuatorEmulator plant(plant_config());
  plant.reset(0.0);
  double peak = 0.0;
  for (int k = 0; k < cycles; ++k) {
    const double y = plant.measurement().displacement;
    peak = std::max(peak, std::abs(y));
    plant.step(-kGain * y + (k == 0 ? 1.0 : 0.0));
  }
  return peak;
}

struct LoopRun {
  std::vector<double> y;      ///< y_k used at cycle k
  std::vector<double> u;      ///< u_k commanded at cycle k
  std::vector<double> stale;  ///< |step expected − step used| at cycle k
};

/// The in-process run: y_k is the measurement of step k − 1 (the wire's one period of transport).
LoopRun run_in_process(int cycles, double step = kPeriod) {
  ServoActuatorEmulator plant(plant_config(step));
  plant.reset(0.0);
  LoopRun run;
  for (int k = 1; k <= cycles; ++k) {
    const double y = plant.measurement().displacement;
    const double u = control(k, y);
    run.y.push_back(y);
    run.u.push_back(u);
    plant.step(u);
  }
  return run;
}

/// The same loop over the wire, paced at kPeriod by absolute deadlines.
LoopRun run_over_wire(WireRig& rig, int cycles) {
  LoopRun run;
  std::vector<std::uint64_t> sequences;
  EXPECT_TRUE(rig.driver->wait_for_measurement(1.0));
  auto deadline = std::chrono::steady_clock::now();
  for (int k = 1; k <= cycles; ++k) {
    const UdpTargetSample s = rig.driver->latest();
    const double u = control(k, s.position);
    EXPECT_NE(rig.driver->command({u, 0.0}), DriverStatus::kFault) << "cycle " << k;
    run.y.push_back(s.position);
    run.u.push_back(u);
    sequences.push_back(s.sequence);
    deadline += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(kPeriod));
    std::this_thread::sleep_until(deadline);
  }
  // Step j goes out with measurement sequence base + j (the idle stream used 1..base); base is
  // the most common (sequence − (k − 1)) over the run, and a cycle's staleness its distance.
  std::map<std::int64_t, int> votes;
  for (int k = 1; k <= cycles; ++k) {
    ++votes[static_cast<std::int64_t>(sequences[k - 1]) - (k - 1)];
  }
  const std::int64_t base = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) {
                              return a.second < b.second;
                            })->first;
  for (int k = 1; k <= cycles; ++k) {
    const std::int64_t used =
        std::max<std::int64_t>(static_cast<std::int64_t>(sequences[k - 1]) - base, 0);
    run.stale.push_back(static_cast<double>(std::abs(used - (k - 1))));
  }
  return run;
}

double max_step(const std::vector<double>& v) {
  double d = 0.0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    d = std::max(d, std::abs(v[i] - v[i - 1]));
  }
  return d;
}

TEST(UdpTargetEmulator, ClosedLoopOverTheWireMatchesTheInProcessLoopWithinTheSlipBound) {
  // Tolerance (linear loop, so deviations superpose): a plant step driven by a command `lag`
  // steps old errs by ≤ lag·D_u on the input, a cycle reading a measurement `stale` steps off
  // errs by ≤ stale·D_y on y and K·stale·D_y on u; each unit input error moves y by at most
  // P = impulse_peak. So max_k |y_wire − y_in| ≤ P·(D_u·Σlag + K·D_y·Σstale), with D the largest
  // one-step change of u and y, plus 1e-12 m for the command's mm ↔ m rounding on the wire. The
  // deviation is that of the wire plant's steps, i.e. of the readings that are not stale.
  // (With no slip and no conversion the runs are equal bit for bit: the test below.)
  constexpr int kCycles = 1500;
  const LoopRun reference_run = run_in_process(kCycles);
  const double peak = impulse_peak(2000);
  struct Case {
    const char* name;
    WireImpairments w;
  };
  std::vector<Case> cases{{"clean", {}}};
  for (std::uint64_t seed : {11U, 12U, 13U, 14U}) {
    cases.push_back({"impaired", {1e-4, 3e-4, 0.01, 0.01, 0.01, seed}});
  }
  for (const Case& c : cases) {
    WireRig rig(c.w, 1.0, 1.0);  // a VM stall must not end the comparison (timeouts: below)
    const LoopRun wire = run_over_wire(rig, kCycles);
    const UdpTargetEmulatorStats st = rig.target->stats();
    double deviation = 0.0;
    double stale = 0.0;
    for (int k = 0; k < kCycles; ++k) {
      if (wire.stale[k] == 0.0) {  // a stale reading is not the plant's step k − 1: skip it
        deviation = std::max(deviation, std::abs(wire.y[k] - reference_run.y[k]));
      }
      stale += wire.stale[k];
    }
    const double lag = static_cast<double>(st.command_lag_steps);
    const double bound = peak * (max_step(wire.u) * lag + kGain * max_step(wire.y) * stale) + 1e-12;
    std::printf(
        "%s seed %llu: max |dy| = %.3e m, bound %.3e m (lag %.0f, stale %.0f, lost %llu"
        " in, %llu out, late replies %llu)\n",
        c.name, static_cast<unsigned long long>(c.w.seed), deviation, bound, lag, stale,
        static_cast<unsigned long long>(st.dropped_in),
        static_cast<unsigned long long>(st.dropped_out),
        static_cast<unsigned long long>(rig.driver->metrics().late));
    EXPECT_LE(deviation, bound) << c.name << " seed " << c.w.seed;
    if (std::string(c.name) == "impaired") {
      // 1 % each of ~1500 measurements: the driver saw the wire's loss, reordering, duplicates.
      const UdpTargetMetrics m = rig.driver->metrics();
      EXPECT_GT(st.dropped_in + st.dropped_out, 0U) << "the impairment must have acted";
      EXPECT_GE(m.lost, st.dropped_out) << "every lost measurement is a sequence gap";
      EXPECT_GT(m.duplicate, 0U);
      EXPECT_GT(m.reordered, 0U);
    }
  }
}

TEST(UdpTargetEmulator, ALoopWaitingForEachReplyEqualsTheInProcessLoopBitForBit) {
  // The same loop, each cycle waiting for the reply to its previous command instead of a timer,
  // on a 10 ms target (RHT's step), with f64 fields in metres (no unit conversion on the wire,
  // which would round the last bit): no datagram is late, so every plant step runs on its own
  // command (command_lag_steps 0 unless the VM stalls the loop for 15 ms) and the runs must
  // agree exactly.
  constexpr int kCycles = 500;
  constexpr double kStep = 0.01;
  const LoopRun reference_run = run_in_process(kCycles, kStep);
  int exact_runs = 0;
  for (int run = 0; run < 3; ++run) {
    WireRig rig({}, 1.0, 1.0, kStep, test::exact_command_layout());
    ASSERT_TRUE(rig.driver->wait_for_measurement(1.0));
    double deviation = 0.0;
    for (int k = 1; k <= kCycles; ++k) {
      if (k > 1) {
        ASSERT_TRUE(eventually([&] { return rig.driver->latest().echo == std::uint64_t(k - 1); }));
      }
      const double y = rig.driver->latest().position;
      deviation = std::max(deviation, std::abs(y - reference_run.y[k - 1]));
      ASSERT_EQ(rig.driver->command({control(k, y), 0.0}), DriverStatus::kOk);
    }
    const std::uint64_t lag = rig.target->stats().command_lag_steps;
    std::printf("run %d: max |dy| = %.3e m, command lag %llu steps\n", run, deviation,
                static_cast<unsigned long long>(lag));
    if (lag == 0) {
      EXPECT_EQ(deviation, 0.0);
      ++exact_runs;
    }
  }
  EXPECT_GE(exact_runs, 1) << "no run free of VM stalls: the exact comparison never ran";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// |velocity| and the position drift of the plant over `window` s.
void expect_at_rest(const UdpTargetEmulator& target, double window) {
  const double before = target.plant().true_displacement;
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  EXPECT_LT(std::abs(target.plant().velocity), 1e-6);
  EXPECT_LT(std::abs(target.plant().true_displacement - before), 1e-7);
}

// The fault-time tests never accept an early stop; the latest allowed is the timeout plus how
// late the loop itself ran (a VM stall holds the loop, and it sees the fault at its next cycle).
constexpr double kLinkTimeout = 0.2;  // s, as a real target's link supervision

TEST(UdpTargetEmulator, ADeadPeerFaultsTheDriverWithinItsTimeoutAndTheRigComesToRest) {
  WireRig rig({}, 10.0, kLinkTimeout);  // the target's own reflex out of the way
  SafetyConfig sc;
  sc.limits = {-0.1, 0.1, 1.0, 100.0};
  sc.step = kPeriod;
  sc.stop_deceleration = 2.0;
  ActuatorSafety safety(sc);
  safety.reset(0.0);
  ASSERT_TRUE(rig.driver->wait_for_measurement(1.0));
  auto muted_at = std::chrono::steady_clock::now();
  bool muted = false;
  double fault_after = -1.0;
  double max_gap = 0.0;  // the loop's longest time between two cycles after the mute
  auto last = std::chrono::steady_clock::now();
  auto deadline = last;
  for (int k = 1; k <= 1500; ++k) {
    const ActuatorCommand c{0.02 * std::sin(2.0 * std::numbers::pi * 2.0 * k * kPeriod), 0.0};
    const SafetyOutput out = safety.filter(fault_after < 0.0 ? &c : nullptr);
    if (rig.driver->command(out.command) == DriverStatus::kFault && fault_after < 0.0) {
      if (!muted) {  // the VM held the loop or the emulator longer than the timeout
        GTEST_SKIP() << "a stall of more than " << kLinkTimeout << " s before the peer went silent";
      }
      fault_after = seconds_since(muted_at);
      safety.emergency_stop();  // what the supervisor does on a driver fault
    }
    if (k == 300) {
      rig.target->mute(true);  // the target stops answering
      muted_at = std::chrono::steady_clock::now();
      muted = true;
    }
    if (muted && fault_after < 0.0) {
      max_gap = std::max(max_gap, seconds_since(last));
    }
    last = std::chrono::steady_clock::now();
    deadline += std::chrono::microseconds(1000);
    std::this_thread::sleep_until(deadline);
  }
  std::printf("fault %.1f ms after the peer went silent (timeout %.0f ms, loop gap %.1f ms)\n",
              1e3 * fault_after, 1e3 * kLinkTimeout, 1e3 * max_gap);
  EXPECT_GT(fault_after, kLinkTimeout - 2 * kPeriod);
  EXPECT_LT(fault_after, kLinkTimeout + max_gap + 0.005);
  EXPECT_TRUE(safety.at_rest());
  EXPECT_EQ(rig.target->stats().stopped, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // settles (ω = 50 rad/s)
  expect_at_rest(*rig.target, 0.1);
}

TEST(UdpTargetEmulator, AHostThatGoesSilentTripsTheTargetsReflex) {
  WireRig rig({}, kLinkTimeout, 1.0);
  ASSERT_TRUE(rig.driver->wait_for_measurement(1.0));
  auto deadline = std::chrono::steady_clock::now();
  for (int k = 1; k <= 300; ++k) {
    ASSERT_NE(rig.driver->command({0.01 * std::sin(2.0 * std::numbers::pi * k * kPeriod), 0.0}),
              DriverStatus::kFault);
    deadline += std::chrono::microseconds(1000);
    std::this_thread::sleep_until(deadline);
  }
  if (rig.target->stats().stopped) {
    GTEST_SKIP() << "the VM held the loop past the reflex's timeout before the host went silent";
  }
  const auto silent_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return rig.target->stats().stopped; }, 2.0));
  const double stopped_after = seconds_since(silent_at);
  std::printf("the target stopped %.1f ms after the host went silent (timeout %.0f ms)\n",
              1e3 * stopped_after, 1e3 * kLinkTimeout);
  EXPECT_GT(stopped_after, kLinkTimeout - 2 * kPeriod);
  // The emulator's own thread can be stalled too; 300 ms is the worst stall seen here.
  EXPECT_LT(stopped_after, kLinkTimeout + 0.3);
  EXPECT_GT(std::abs(rig.target->plant().velocity), 1e-4) << "it was moving when it stopped";
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // settles (ω = 50 rad/s)
  expect_at_rest(*rig.target, 0.1);
  ASSERT_TRUE(eventually([&] { return rig.driver->emergency_stop_input(); }, 1.0));
  EXPECT_EQ(rig.driver->command({0.05, 0.0}), DriverStatus::kFault);
  expect_at_rest(*rig.target, 0.1);  // latched: the command is ignored
}

TEST(UdpTargetEmulator, DropsCommandsFromOtherSourcesAndMalformedOnes) {
  WireRig rig({}, 1.0, 1.0);
  ASSERT_TRUE(rig.driver->wait_for_measurement(1.0));
  const PacketCodec codec("command", test::command_layout());
  std::vector<std::uint8_t> frame(codec.size());
  ASSERT_EQ(codec.encode(std::vector<double>{0.0, 0.05, 0.0}, 1, frame), frame.size());
  const UdpSocket intruder("intruder", {"127.0.0.1", 0});
  const sockaddr_in target = to_sockaddr("target", {"127.0.0.1", rig.target->port()});
  ASSERT_TRUE(intruder.send_to(frame, target));
  ASSERT_TRUE(eventually([&] { return rig.target->stats().rejected_foreign == 1; }));
  EXPECT_EQ(rig.target->stats().commands, 0U);
  EXPECT_EQ(rig.target->plant().true_displacement, 0.0);
  ASSERT_EQ(rig.driver->command({0.01, 0.0}), DriverStatus::kOk);
  ASSERT_TRUE(eventually([&] { return rig.target->stats().steps == 1; }));
  EXPECT_EQ(rig.target->stats().commands, 1U);
}

}  // namespace
}  // namespace hyloop::hal
