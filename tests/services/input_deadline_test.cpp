// Issue 27, finding 8: a silent upstream is detected within two periods. The actuator in process,
// the test standing in for the dynamics (commands every step T) and the rig (it times the frames),
// a CPU hog beside them (one spinning thread per core). The dynamics falls silent; the first
// stopping command of the watchdog's ramp must reach the rig within the input deadline
// (2 control periods h·T) plus one control period for the wake-up of a loaded machine, as a rate
// over many runs. Before the deadline the actuator counted missed latches, each after a wait of
// 1.5·T that began when the previous one ended: 10 latches = 20 waits, 60 ms at the least, and
// every late wake-up under load added to it (500 ms and more, past the rig's silence limit).
// Lockstep (virtual time) has no deadline: a slow dynamics never trips it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actuator/actuator_component.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace {

namespace fs = std::filesystem;
using namespace hyloop;

const fs::path kSource = HYLOOP_SOURCE_DIR;

// One spinning thread per core while it lives.
class CpuHog {
 public:
  CpuHog() {
    const unsigned n = std::max(1U, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        volatile std::uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
    }
  }
  ~CpuHog() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }
  CpuHog(const CpuHog&) = delete;
  CpuHog& operator=(const CpuHog&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

struct Trial {
  double detection_ms = -1.0;   // last command sent -> first stopping command at the rig
  double silence_ms = -1.0;     // the actuator's own: last arrival -> trip
  double longest_gap_ms = 0.0;  // the fake dynamics' own longest gap between two commands
  bool watchdog_at_rest = false;
};

class InputDeadline : public ::testing::Test {
 protected:
  void SetUp() override {
    actuator_.set_context(&context_);
    actuator_.set_input_deadline_floor_ms(0);  // the 2-period contract (a real-time host's)
    const experiment::SitsScenario s =
        experiment::load_scenario((kSource / "scenarios/sits/table1_scvg.yaml").string(),
                                  {"timing.duration_s=30", "metrics.window_s=1"});
    step_ = s.timing.step;
    h_ = s.hold_steps();
    yaml_ = experiment::to_yaml(s);
  }
  void TearDown() override { actuator_.shutdown(); }

  double control_period_ms() const { return step_ * static_cast<double>(h_) * 1e3; }

  // Configures and activates a run, with the fake dynamics, rig and coordinator bound.
  void start(int run, v1::ClockMode mode) {
    const std::string n = std::to_string(run);
    v1::ConfigureRequest c;
    c.set_run_id("run-" + n);
    c.set_mode(mode);
    c.set_scenario_yaml(yaml_);
    const experiment::LoopPlan plan = experiment::loop_plan(yaml_);
    transport::add_loop_layouts(plan.measurement, plan.command, *c.mutable_layouts());
    c.mutable_endpoints()->set_dynamics_to_actuator("inproc://cmd-" + n);
    c.mutable_endpoints()->set_actuator_to_rig("inproc://rig-" + n);
    c.mutable_endpoints()->set_telemetry("inproc://telemetry-" + n);
    telemetry_ = std::make_unique<transport::Channel>(
        context_, transport::ChannelConfig{.endpoint = "inproc://telemetry-" + n,
                                           .pattern = transport::Pattern::kPull,
                                           .role = transport::Role::kBind,
                                           .recv_hwm = 100000});
    dynamics_ = std::make_unique<transport::Channel>(
        context_, transport::ChannelConfig{.endpoint = "inproc://cmd-" + n,
                                           .pattern = transport::Pattern::kPush,
                                           .role = transport::Role::kBind});
    run_id_ = c.run_id();
    ASSERT_EQ(actuator_.configure(c).state(), v1::LIFECYCLE_STATE_INACTIVE);
    rig_ = std::make_unique<transport::Channel>(
        context_, transport::ChannelConfig{.endpoint = "inproc://rig-" + n,
                                           .pattern = transport::Pattern::kPull,
                                           .role = transport::Role::kConnect,
                                           .recv_hwm = 100000});
    ASSERT_EQ(actuator_.activate().state(), v1::LIFECYCLE_STATE_ACTIVE);
    ASSERT_TRUE(receive_rig(std::chrono::milliseconds(2000)).has_value());  // cycle 0
  }
  void stop() {
    actuator_.deactivate();
    rig_.reset();
    dynamics_.reset();
    telemetry_.reset();
  }

  std::optional<v2::Frame> receive_rig(std::chrono::milliseconds timeout) {
    std::array<std::byte, 4096> buffer{};
    auto got = rig_->receive(buffer, timeout);
    if (!got) return std::nullopt;
    v2::Frame m;
    EXPECT_TRUE(m.ParseFromArray(got->bytes.data(), static_cast<int>(got->bytes.size())));
    return m;
  }
  void send_command(std::uint64_t cycle) {
    v2::Frame m;
    m.mutable_header()->set_run_id(run_id_);
    m.mutable_header()->set_cycle(cycle);
    m.mutable_header()->set_send_time_ns(transport::monotonic_now_ns());
    m.add_values(0.0);  // at rest where the run started
    m.add_values(0.0);
    const std::string bytes = m.SerializeAsString();
    (void)dynamics_->try_send(std::as_bytes(std::span(bytes.data(), bytes.size())));
  }

  // Real time: `commands` commands at T, then silence; when does the rig see the ramp?
  Trial silent_dynamics(int run, std::uint64_t commands);

  zmq::context_t context_;
  services::ActuatorComponent actuator_;
  std::unique_ptr<transport::Channel> telemetry_;
  std::unique_ptr<transport::Channel> dynamics_;
  std::unique_ptr<transport::Channel> rig_;
  std::string run_id_;
  std::string yaml_;
  double step_ = 0.0;
  std::int64_t h_ = 1;
};

Trial InputDeadline::silent_dynamics(int run, std::uint64_t commands) {
  Trial t;
  start(run, v1::CLOCK_MODE_REAL_TIME);
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(step_ * 1e9));
  auto next = std::chrono::steady_clock::now();
  std::int64_t last_sent = 0;
  for (std::uint64_t k = 1; k <= commands; ++k) {
    next += period;
    std::this_thread::sleep_until(next);
    send_command(k);
    const std::int64_t now = transport::monotonic_now_ns();
    if (last_sent != 0) {
      t.longest_gap_ms = std::max(t.longest_gap_ms, static_cast<double>(now - last_sent) * 1e-6);
    }
    last_sent = now;
    while (receive_rig(std::chrono::milliseconds(0))) {
    }
  }
  // The dynamics is gone: the first frame now is the watchdog ramp's (a cycle without a command
  // sends nothing in real time unless the watchdog or an e-stop moves the rig).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < give_up) {
    const auto frame = receive_rig(std::chrono::milliseconds(20));
    if (!frame && actuator_.loop_done()) break;  // stopped before the dynamics did (a stall)
    if (!frame) continue;
    if (frame->header().cycle() <= commands) continue;  // the echo of the last commands
    t.detection_ms = static_cast<double>(transport::monotonic_now_ns() - last_sent) * 1e-6;
    break;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!actuator_.loop_done() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  t.silence_ms = static_cast<double>(actuator_.silence_at_trip_ns()) * 1e-6;
  t.watchdog_at_rest = actuator_.loop_done() && actuator_.safety()->watchdog_tripped() &&
                       actuator_.safety()->at_rest();
  stop();
  return t;
}

// The contract as a rate: the first stopping command within 2 control periods (8 ms for SITS)
// + one more for the wake-up of a loaded machine, in >= 75% of the runs whose dynamics kept its
// pace. The fake dynamics shares the loaded cores: a run in which it was itself silent for the
// deadline before it stopped is a true early loss (the actuator must trip then too, and did
// when the silence it measured is >= the deadline), not a measurement of this detection.
TEST_F(InputDeadline, ASilentDynamicsIsDetectedWithinTwoPeriodsUnderLoad) {
  constexpr int kTrials = 25;
  const double deadline_ms = 2.0 * control_period_ms();
  const double bound_ms = 3.0 * control_period_ms();
  std::vector<double> detection;
  std::vector<double> silence;
  int paced = 0;
  int within = 0;
  int at_rest = 0;
  int stalled = 0;
  int late = 0;
  int deadline_trips = 0;
  {
    const CpuHog hog;
    for (int i = 0; i < kTrials; ++i) {
      const Trial t = silent_dynamics(i, 50);
      at_rest += t.watchdog_at_rest ? 1 : 0;
      if (t.silence_ms <= 0.0) {
        // The counting watchdog tripped first: commands kept coming, W periods late (the
        // loaded cores held the dynamics back); a run failed by load, not a silence.
        ++late;
        continue;
      }
      ++deadline_trips;
      silence.push_back(t.silence_ms);
      EXPECT_GE(t.silence_ms, deadline_ms - 0.01) << "run " << i << " tripped before its deadline";
      if (t.longest_gap_ms >= deadline_ms - 1.0) {
        ++stalled;  // the dynamics stalled on the loaded cores: not a run of this measurement
        continue;
      }
      ++paced;
      detection.push_back(t.detection_ms);
      within += t.detection_ms >= deadline_ms - 1.0 && t.detection_ms <= bound_ms ? 1 : 0;
    }
  }
  std::sort(detection.begin(), detection.end());
  std::sort(silence.begin(), silence.end());
  const auto at = [&](double q) {
    return detection.empty()
               ? -1.0
               : detection[static_cast<std::size_t>(q * static_cast<double>(detection.size() - 1))];
  };
  std::printf(
      "input deadline %.1f ms (control period %.1f ms), %d runs under a CPU hog: %d with the "
      "dynamics at pace, %d with it stalled past the deadline by the hog, %d ended by the "
      "counting watchdog on late commands\n",
      deadline_ms, control_period_ms(), kTrials, paced, stalled, late);
  std::printf(
      "  detection (last command sent -> first ramp frame at the rig), ms: min %.2f p50 "
      "%.2f p90 %.2f max %.2f; within %.1f ms: %d/%d\n",
      at(0.0), at(0.5), at(0.9), at(1.0), bound_ms, within, paced);
  if (!silence.empty()) {
    std::printf("  silence at the trip (the actuator's clock), ms: min %.2f p50 %.2f max %.2f\n",
                silence.front(), silence[silence.size() / 2], silence.back());
  }
  EXPECT_EQ(at_rest, kTrials) << "every run ends with the watchdog's ramp at rest";
  // Counted in the metric, once per deadline trip.
  const std::string text = actuator_.metrics().text();
  EXPECT_NE(text.find("hyloop_input_deadline_expired_total{channel=\"dynamics_to_actuator\","
                      "service=\"actuator\"} " +
                      std::to_string(deadline_trips)),
            std::string::npos)
      << text.substr(0, 4000);
  if (paced < kTrials / 3) {
    GTEST_SKIP() << "the machine held the test's own dynamics past the deadline in " << stalled
                 << " of " << kTrials << " runs: too loaded to measure the detection";
  }
  // 75%: the slack period covers a loaded wake-up (CFS, 1-4 ms), not the VM's own stalls of the
  // actuator (10-300 ms), which come in bursts: over 40 x 25 runs at a load average of 5-6 on
  // the 2 vCPUs, 778 of 813 paced runs (95.7%) were within 3 periods, the worst test run 18 of 23
  // (docs/reliability.md). The old counting watchdog: 0%.
  EXPECT_GE(within * 4, paced * 3) << "detected within 3 control periods in < 75% of runs";
}

// An e-stop silences the dynamics by design (it stops sending): the e-stop's ramp stops the rig,
// and the silence that follows is not an upstream lost (no trip, no count).
TEST_F(InputDeadline, TheSilenceAfterAnEstopIsNotALostUpstream) {
  start(2000, v1::CLOCK_MODE_REAL_TIME);
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(step_ * 1e9));
  auto next = std::chrono::steady_clock::now();
  for (std::uint64_t k = 1; k <= 20; ++k) {
    next += period;
    std::this_thread::sleep_until(next);
    send_command(k);
  }
  (void)actuator_.emergency_stop("test: e-stop, then the dynamics sends nothing");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!actuator_.loop_done() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(4 * control_period_ms())));
  ASSERT_TRUE(actuator_.loop_done());
  EXPECT_TRUE(actuator_.safety()->estopped());
  EXPECT_FALSE(actuator_.safety()->watchdog_tripped());
  EXPECT_EQ(actuator_.silence_at_trip_ns(), 0);
  EXPECT_NE(actuator_.metrics().text().find("hyloop_input_deadline_expired_total{channel=\""
                                            "dynamics_to_actuator\",service=\"actuator\"} 0"),
            std::string::npos);
  stop();
}

// Lockstep: no real-time clock, so no deadline. A dynamics 25 control periods slow per command
// (far past any deadline, within the lockstep wall timeout) never trips the watchdog.
TEST_F(InputDeadline, LockstepNeverFiresOnASlowDynamics) {
  start(1000, v1::CLOCK_MODE_LOCKSTEP);
  const auto slow = std::chrono::milliseconds(static_cast<int>(25.0 * control_period_ms()));
  for (std::uint64_t k = 1; k <= 8; ++k) {
    std::this_thread::sleep_for(slow);
    send_command(k);
    const auto frame = receive_rig(std::chrono::milliseconds(2000));
    ASSERT_TRUE(frame.has_value()) << "cycle " << k;
    EXPECT_EQ(frame->header().cycle(), k);
  }
  EXPECT_FALSE(actuator_.safety()->watchdog_tripped());
  EXPECT_EQ(actuator_.silence_at_trip_ns(), 0);
  EXPECT_EQ(actuator_.metrics().text().find("hyloop_input_deadline_expired_total{channel=\""
                                            "dynamics_to_actuator\",service=\"actuator\"} 1"),
            std::string::npos);
  stop();
}

// The deadline's periods are bounded: [2, 10] (2: the contract; 10: the old watchdog).
TEST_F(InputDeadline, ThePeriodsAreBounded) {
  EXPECT_THROW(actuator_.set_input_deadline_periods(1), std::invalid_argument);
  EXPECT_THROW(actuator_.set_input_deadline_periods(11), std::invalid_argument);
  EXPECT_NO_THROW(actuator_.set_input_deadline_periods(3));
  EXPECT_THROW(actuator_.set_input_deadline_floor_ms(-1), std::invalid_argument);
  EXPECT_THROW(actuator_.set_input_deadline_floor_ms(1001), std::invalid_argument);
}

// The default floor (20 ms) in force on this host's services: SITS's 2 x 4 ms is raised to it.
TEST_F(InputDeadline, TheDefaultFloorRaisesAShortDeadline) {
  services::ActuatorComponent actuator;
  zmq::context_t context;
  actuator.set_context(&context);
  v1::ConfigureRequest c;
  c.set_run_id("run-floor");
  c.set_mode(v1::CLOCK_MODE_REAL_TIME);
  c.set_scenario_yaml(yaml_);
  const experiment::LoopPlan plan = experiment::loop_plan(yaml_);
  transport::add_loop_layouts(plan.measurement, plan.command, *c.mutable_layouts());
  c.mutable_endpoints()->set_dynamics_to_actuator("inproc://cmd-floor");
  c.mutable_endpoints()->set_actuator_to_rig("inproc://rig-floor");
  c.mutable_endpoints()->set_telemetry("inproc://telemetry-floor");
  ASSERT_EQ(actuator.configure(c).state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_EQ(actuator.input_deadline_floor_ms(), runtime::kDefaultInputDeadlineFloorMs);
  EXPECT_EQ(actuator.input_deadline_periods(), runtime::kDefaultInputDeadlinePeriods);
  actuator.shutdown();
}

}  // namespace
