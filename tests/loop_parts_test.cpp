// The loop parts of every shipped kind under loop contract v2 (loop_parts.hpp): their layouts
// are valid and name each kind's own signals and units (the FCU's fuel flows in kg/s, not a
// position), the parts step in the layouts' sizes, and a cycle of rig part → dynamics part →
// actuator stage allocates nothing (AllocGuard) once warmed up, over the in-process emulators and
// over a device on the wire (rig.driver, rig_driver.hpp: the udp target emulator on loopback).
#include "hyloop/experiment/loop_parts.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/actuator_stage.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

const std::string kSource = HYLOOP_SOURCE_DIR;

std::string resolved(const std::string& scenario) {
  return make_experiment_from_text(read_scenario_text(kSource + "/" + scenario), scenario, {})
      ->resolved_yaml();
}

TEST(LoopLayouts, EachKindCarriesItsOwnSignalsAndUnits) {
  const LoopPlan sits = loop_plan(resolved("scenarios/sits/table1_scvg.yaml"));
  EXPECT_EQ(sits.measurement, (hal::SignalLayout{{{"x_robot", "m", "length"},
                                                  {"v_robot", "m/s", "velocity"},
                                                  {"f_meas", "N", "force"}}}));
  EXPECT_EQ(sits.command.signals.at(0), (hal::Signal{"x_cmd", "m", "length"}));
  const LoopPlan rht = loop_plan(resolved("scenarios/rht/p7.yaml"));
  EXPECT_EQ(rht.measurement,
            (hal::SignalLayout{{{"d_measured", "m", "length"}, {"force", "N", "force"}}}));
  const LoopPlan fcu = loop_plan(resolved("scenarios/fcu/polynomial.yaml"));
  // Fuel flow travels as fuel flow: its own names, kg/s, and its safety window in kg/s.
  EXPECT_EQ(fcu.measurement, (hal::SignalLayout{{{"x_m", "kg/s", "mass_flow"}}}));
  EXPECT_EQ(fcu.command, (hal::SignalLayout{{{"x_p", "kg/s", "mass_flow"},
                                             {"x_p_rate", "kg/s/s", "mass_flow_rate"}}}));
  EXPECT_EQ(fcu.measurement.find_quantity("force"), std::nullopt);
  EXPECT_GT(fcu.safety.limits.position_max, fcu.initial.position);
}

TEST(StepStatus, CarriesOnOrStopsWithAReason) {
  static_assert(!StepStatus::ok().stopped());
  static_assert(StepStatus::ok().reason() == nullptr);
  static_assert(StepStatus::stop("angle limit").stopped());
  EXPECT_STREQ(StepStatus::stop("angle limit").reason(), "angle limit");
  EXPECT_STREQ(StepStatus::stop(nullptr).reason(), "stopped");  // a stop never reads as ok
  EXPECT_FALSE(StepStatus::from_reason(nullptr).stopped());
  EXPECT_STREQ(StepStatus::from_reason("stroke_limit").reason(), "stroke_limit");
}

// One stop-reason type for every kind: each name reads back as its reason (a distributed run's
// recorder parses the dynamics' stop detail), the summaries' names are unchanged.
TEST(StopReasons, EachNameReadsBackAndTheShippedNamesStay) {
  for (const StopReason r :
       {StopReason::kNotFinite, StopReason::kDisplacementLimit, StopReason::kDriverFault,
        StopReason::kStrokeLimit, StopReason::kSpeedLimit, StopReason::kServiceFault,
        StopReason::kStabilityGuard}) {
    EXPECT_EQ(parse_stop_reason(to_string(r)), r) << to_string(r);
  }
  EXPECT_EQ(to_string(StopReason::kDisplacementLimit), "displacement_limit");  // SITS
  EXPECT_EQ(to_string(StopReason::kStrokeLimit), "stroke_limit");              // RHT
  EXPECT_EQ(to_string(StopReason::kSpeedLimit), "speed_limit");                // FCU
  EXPECT_EQ(parse_stop_reason("angle limit"), StopReason::kNone);
}

// A rig of scripted drivers: each call appends its letter to `calls`.
struct ScriptedRig final : hal::ActuatorDriver, hal::ForceSensorDriver, PlantClock {
  mutable std::string calls;
  hal::DriverStatus command_status = hal::DriverStatus::kOk;
  hal::DriverStatus read_status = hal::DriverStatus::kOk;
  hal::ActuatorCommand held;
  hal::DriverStatus command(const hal::ActuatorCommand& c) noexcept override {
    calls += 'c';
    if (command_status == hal::DriverStatus::kOk) held = c;
    return command_status;
  }
  hal::ActuatorState state() const noexcept override {
    calls += 's';
    return {held.position * 2.0, held.velocity * 2.0};
  }
  bool emergency_stop_input() const noexcept override { return false; }
  hal::DriverStatus read(hal::ForceSample& sample) noexcept override {
    calls += 'r';
    sample.force = -3.0;
    return read_status;
  }
  void tare() override {}
  void advance() noexcept override { calls += 'a'; }
};

TEST(DriverRig, CommandsAdvancesThenReadsStateAndForce) {
  ScriptedRig rig;
  std::array<double, 3> m{};
  EXPECT_EQ(step_drivers(rig, rig, &rig, {0.25, 1.5}, m), hal::DriverStatus::kOk);
  EXPECT_EQ(rig.calls, "casr");
  EXPECT_EQ(m, (std::array<double, 3>{0.5, 3.0, -3.0}));
  // Without a clock (real hardware advances on its own).
  rig.calls.clear();
  EXPECT_EQ(step_drivers(rig, rig, nullptr, {0.5, 0.0}, m), hal::DriverStatus::kOk);
  EXPECT_EQ(rig.calls, "csr");
}

TEST(DriverRig, ARejectedCommandHoldsTheLastAndAFaultOfEitherDriverIsReported) {
  ScriptedRig rig;
  std::array<double, 3> m{};
  ASSERT_EQ(step_drivers(rig, rig, &rig, {0.25, 0.0}, m), hal::DriverStatus::kOk);
  rig.command_status = hal::DriverStatus::kRejected;
  EXPECT_EQ(step_drivers(rig, rig, &rig, {9.0, 0.0}, m), hal::DriverStatus::kOk);
  EXPECT_EQ(m[0], 0.5);  // still the accepted 0.25, doubled by the scripted plant
  rig.command_status = hal::DriverStatus::kFault;
  EXPECT_EQ(step_drivers(rig, rig, &rig, {0.25, 0.0}, m), hal::DriverStatus::kFault);
  rig.command_status = hal::DriverStatus::kOk;
  rig.read_status = hal::DriverStatus::kFault;
  EXPECT_EQ(step_drivers(rig, rig, &rig, {0.25, 0.0}, m), hal::DriverStatus::kFault);
}

TEST(DriverRig, TheSitsRigPartReportsNoFaultOverItsEmulatedDrivers) {
  const auto rig = make_rig_part(resolved("scenarios/sits/table1_scvg.yaml"));
  std::array<double, 3> m{};
  std::array<double, 2> t{};
  for (int k = 0; k < 100; ++k) rig->step({0.0, 0.0}, m, t);
  EXPECT_EQ(rig->fault(), nullptr);
}

class LoopPartsAllocateNothing : public ::testing::TestWithParam<const char*> {};

struct AllocationCount {
  std::size_t allocations = 0;
  const char* stop = nullptr;
  std::int64_t cycles = 0;
};

// 3 warm-up cycles of rig part -> dynamics part -> actuator stage, then `n` under AllocGuard;
// `m` holds the last measurement.
AllocationCount count_cycle_allocations(const LoopPlan& plan, RigPart& rig, DynamicsPart& dynamics,
                                        std::span<double> m, int n) {
  std::array<double, kMaxTruth> truth{};
  std::vector<double> values(dynamics.names().size(), 0.0);
  const std::span<double> t(truth.data(), rig.truth_names().size());
  hal::ActuatorStage stage(plan.hold_steps, plan_safety(plan));  // as the actuator holds it
  const std::array<hal::ActuatorCommand, hal::kMaxAxes> initial = plan_initial(plan);
  stage.reset(std::span(initial.data(), stage.axes()));
  std::int64_t k = 0;
  const auto cycle = [&] {
    rig.step_axes(stage.applied(), m, t);
    std::array<hal::ActuatorCommand, hal::kMaxAxes> next{};
    const StepStatus status =
        dynamics.step_axes(k, m, values, std::span(next.data(), stage.axes()));
    ++k;
    (void)stage.update(k, next.data());
    return status.reason();
  };
  AllocationCount out;
  for (int i = 0; i < 3 && out.stop == nullptr; ++i) out.stop = cycle();  // warm-up
  if (out.stop != nullptr) return out;
  {
    hyloop::testing::AllocGuard guard;
    for (int i = 0; i < n && out.stop == nullptr; ++i) out.stop = cycle();
    out.allocations = guard.allocations();
  }
  out.cycles = k;
  return out;
}

TEST_P(LoopPartsAllocateNothing, RigThenDynamicsForACycle) {
  const std::string text = resolved(GetParam());
  const LoopPlan plan = loop_plan(text);
  auto rig = make_rig_part(text);
  auto dynamics = make_dynamics_part(text);
  std::array<double, hal::kMaxSignals> measurement{};
  const std::span<double> m(measurement.data(), plan.measurement.size());
  const AllocationCount c = count_cycle_allocations(plan, *rig, *dynamics, m, 500);
  EXPECT_EQ(c.allocations, 0U) << GetParam();
  EXPECT_EQ(c.stop, nullptr) << GetParam() << ": stopped at cycle " << c.cycles << ": " << c.stop;
  for (const double v : m) EXPECT_TRUE(std::isfinite(v));
}

INSTANTIATE_TEST_SUITE_P(
    ShippedKinds, LoopPartsAllocateNothing,
    ::testing::Values("scenarios/sits/table1_scvg.yaml", "scenarios/sits/undamped_all.yaml",
                      "scenarios/rht/p4_varying.yaml", "scenarios/rht/p4_noise.yaml",
                      "scenarios/rht/ats_noise.yaml", "scenarios/rht/amb_noise.yaml",
                      "scenarios/fcu/polynomial.yaml", "scenarios/fcu/inverse.yaml",
                      "scenarios/vrths/case1_sample.yaml", "scenarios/vrths/case2_ats.yaml",
                      "scenarios/vrths/case3_amb.yaml", "scenarios/sits6/translation_x.yaml",
                      "scenarios/sits6/off_centre.yaml", "scenarios/sits6/tumbling.yaml"));

// ---- a rig part over a device on the wire (rig.driver; rig_driver.hpp)

// A port free on 127.0.0.1 now for `type` (SOCK_DGRAM, SOCK_STREAM; the kernel's choice;
// closed again).
int free_port(int type) {
  const int fd = ::socket(AF_INET, type, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n), 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// `scenario` resolved, its rig.driver a udp target on loopback (`force`: a force field mapped),
// its step `step` s when > 0.
std::string with_udp_target(const std::string& scenario, bool force = true, double step = 0.0) {
  YAML::Node root = YAML::Load(resolved(scenario));
  if (step > 0.0) root["timing"]["step_s"] = step;
  YAML::Node d = YAML::Load(
      "{type: udp, timeout_s: 0.5, udp: {"
      "command: [{name: seq, type: u32}, {name: position, type: f64}],"
      "measurement: [{name: seq, type: u32}, {name: echo, type: u32}, {name: position, type: f64},"
      " {name: force, type: f64}, {name: status, type: u8}],"
      "signals: {command_echo: echo, status: status}}}");
  if (force) d["udp"]["signals"]["measured_force"] = "force";
  d["local_port"] = free_port(SOCK_DGRAM);
  d["peer_port"] = free_port(SOCK_DGRAM);
  root["rig"]["driver"] = d;
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

// The same scenario with its rig back on the in-process emulator.
std::string on_the_emulator(const std::string& text) {
  YAML::Node in_process = YAML::Load(text);
  in_process["rig"]["driver"]["type"] = "emulator";
  YAML::Emitter e;
  e << in_process;
  return e.c_str();
}

// A cycle of rig part (over the device `text` names, emulated) → dynamics part → actuator stage
// allocates nothing once warmed up.
// `at_least_cycles`: a device on its own clock may be stopped by a safety limit after that many;
// none given, the loop must run every cycle.
void expect_no_allocation_per_cycle_over_the_wire(
    const std::string& text, std::optional<std::int64_t> at_least_cycles = std::nullopt) {
  const auto device = load_scenario_text(text, "wire")->make_wire_emulator({});
  const LoopPlan plan = loop_plan(text);
  auto rig = make_rig_part(text);
  auto dynamics = make_dynamics_part(text);
  std::array<double, hal::kMaxSignals> measurement{};
  const std::span<double> m(measurement.data(), plan.measurement.size());
  const AllocationCount c = count_cycle_allocations(plan, *rig, *dynamics, m, 300);
  EXPECT_EQ(c.allocations, 0U);
  if (at_least_cycles) {
    EXPECT_GE(c.cycles, *at_least_cycles) << "stopped at cycle " << c.cycles << ": " << c.stop;
  } else {
    EXPECT_EQ(c.stop, nullptr) << "stopped at cycle " << c.cycles << ": " << c.stop;
  }
  EXPECT_EQ(rig->fault(), nullptr) << device->report();
  for (const double v : m) EXPECT_TRUE(std::isfinite(v));
}

TEST(WireRig, OnTheInProcessEmulatorTheResolvedScenarioHasNoDriverBlock) {
  for (const char* s : {"scenarios/sits/table1_scvg.yaml", "scenarios/rht/ats.yaml"}) {
    const std::string text = resolved(s);
    EXPECT_EQ(text.find("driver"), std::string::npos) << s;
    EXPECT_EQ(loop_plan(text).rig_driver, "emulator") << s;
  }
  EXPECT_EQ(loop_plan(with_udp_target("scenarios/rht/ats.yaml")).rig_driver, "udp");
}

// Steps the rig part over the wire and the in-process one with the same command,
// amplitude·sin(rate·k) m, for `cycles` cycles: how many measured exactly alike. `mw`/`tw` end
// as the wire part's last measurement and truth; every value it measured must be finite.
template <std::size_t M, std::size_t T>
int equal_cycles(RigPart& wire, RigPart& local, int cycles, double amplitude, double rate,
                 std::array<double, M>& mw, std::array<double, T>& tw) {
  std::array<double, M> ml{};
  std::array<double, T> tl{};
  int equal = 0;
  for (int k = 0; k < cycles; ++k) {
    const hal::ActuatorCommand c{amplitude * std::sin(rate * k), 0.0};
    wire.step(c, mw, tw);
    local.step(c, ml, tl);
    if (mw == ml) ++equal;
    for (const double v : mw) EXPECT_TRUE(std::isfinite(v)) << "cycle " << k;
  }
  return equal;
}

TEST(WireRig, OverTheUdpTargetEmulatorTheRhtRigMeasuresWhatTheInProcessServoDoes) {
  // At 0.1 s a step the target's own clock (a step on the held command after 1.5 steps without
  // one) never runs ahead of this unpaced loop on a loaded machine, and every reply is awaited.
  const std::string text = with_udp_target("scenarios/rht/p4_noise.yaml", true, 0.1);
  const auto device = load_scenario_text(text, "udp")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  const auto local = make_rig_part(on_the_emulator(text));
  std::array<double, 2> mw{}, tw{};
  constexpr int kCycles = 300;
  const int equal = equal_cycles(*wire, *local, kCycles, 0.01, 0.05, mw, tw);
  // Bit for bit whenever the reply came within the wait (kReplyWaitShare of the step).
  EXPECT_GE(equal, kCycles - 3) << device->report();
  EXPECT_EQ(wire->fault(), nullptr);
  EXPECT_EQ(wire->rejected_commands(), 0U);
}

TEST(WireRig, ACommandOutsideThePlansLimitsIsRefusedByTheDriverAndCounted) {
  const std::string text = with_udp_target("scenarios/rht/ats.yaml");
  const auto device = load_scenario_text(text, "udp")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  std::array<double, 2> m{}, t{};
  wire->step({0.001, 0.0}, m, t);
  wire->step({std::numeric_limits<double>::quiet_NaN(), 0.0}, m, t);
  wire->step({10.0, 0.0}, m, t);  // beyond servo.stroke_m
  EXPECT_EQ(wire->rejected_commands(), 2U);
  EXPECT_TRUE(std::isfinite(m[0]));
  EXPECT_LT(std::abs(m[0]), 0.01);
}

TEST(WireRig, AKindThatNeedsTheForceRefusesADeviceWithoutOneByField) {
  const std::string text = with_udp_target("scenarios/sits/table1_scvg.yaml", false);
  try {
    (void)make_rig_part(text);
    FAIL() << "a SITS rig without a force was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("rig.driver.udp.signals.measured_force"),
              std::string::npos)
        << e.what();
  }
}

TEST(WireLoopPartsAllocateNothing, RigOverTheUdpTargetThenDynamicsForACycle) {
  // The emulated target answers on its own thread against the wall clock: on a starved machine
  // (2 of 60 runs beside a build) late replies leave the loop on old measurements until a safety
  // limit stops it (the stability guard at cycle 226, or the stroke limit at 295, seen), which
  // ends the count early. The cycles before the stop still count, at least 150 of them.
  expect_no_allocation_per_cycle_over_the_wire(with_udp_target("scenarios/rht/p4_noise.yaml"), 150);
}

TEST(WireRig, OverTheUdpTargetEmulatorTheSitsRigMeasuresWhatTheInProcessRigDoes) {
  // The target steps the SITS rig (G_R, contact, force sensor delay: hal::SitsAxisPlant) on each
  // command; at 20 ms a step every reply is awaited on a loaded machine. Velocity on the wire too.
  YAML::Node root = YAML::Load(with_udp_target("scenarios/sits/table1_scvg.yaml", true));
  root["timing"]["step_s"] = 0.02;
  root["timing"]["control_period_s"] = 0.02;
  root["rig"]["sensor"]["delay_s"] = 0.04;  // two steps
  root["compensator"]["tracking_differentiator"]["h_s"] = 0.02;
  root["identification"]["chirp_end_hz"] = 5.0;
  root["rig"]["driver"]["udp"]["measurement"].push_back(YAML::Load("{name: velocity, type: f64}"));
  root["rig"]["driver"]["udp"]["signals"]["measured_velocity"] = "velocity";
  YAML::Emitter e;
  e << root;
  const std::string text = e.c_str();
  const auto device = load_scenario_text(text, "udp")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  const auto local = make_rig_part(on_the_emulator(text));
  std::array<double, 3> mw{};
  std::array<double, 2> tw{};
  constexpr int kCycles = 200;
  const int equal = equal_cycles(*wire, *local, kCycles, 0.002, 0.1, mw, tw);
  EXPECT_GE(equal, kCycles - 3) << device->report();
  EXPECT_NE(mw[2], 0.0);  // the contact pushes back
  EXPECT_EQ(wire->fault(), nullptr);
}

TEST(WireRig, OverTheUdpTargetEmulatorTheVrthsRigMeasuresWhatTheInProcessRigDoes) {
  // The benchmark's actuator and specimen (VrthsAxisPlant, noise included) behind a udp target,
  // at 1 ms a step (the longest the kind accepts; the plant re-discretised): each reply is
  // awaited a quarter step, which a loaded machine misses now and then (the cycle then reads the
  // previous measurement), so nine in ten cycles must be bit for bit unless the target slipped.
  const std::string text = with_udp_target("scenarios/vrths/case1_amb.yaml", true, 0.001);
  const auto device = load_scenario_text(text, "udp")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  const auto local = make_rig_part(on_the_emulator(text));
  std::array<double, 2> mw{};
  std::array<double, 3> tw{};
  constexpr int kCycles = 400;
  const int equal = equal_cycles(*wire, *local, kCycles, 0.002, 0.01, mw, tw);
  const std::string report = device->report();
  std::printf("vrths over a udp target: %d of %d cycles bit for bit; %s\n", equal, kCycles,
              report.c_str());
  // A stall of the loop longer than 1.5 steps makes the target step on its held command (it runs
  // on its own clock), after which the two plants differ for good: the only excuse it counts.
  if (report.find(" 0 steps on a held command") != std::string::npos) {
    EXPECT_GE(equal, kCycles * 9 / 10) << report;
  }
  EXPECT_TRUE(std::isnan(tw[1]) && std::isnan(tw[2]));  // a device reports no truth
  EXPECT_EQ(wire->fault(), nullptr);
}

// ---- a rig part over a robot controller (rig.driver.type egm | rsi), emulated on loopback

// `scenario` resolved, its rig.driver a robot of `type` reporting the specimen's force.
std::string with_robot(const std::string& scenario, const std::string& type) {
  YAML::Node root = YAML::Load(resolved(scenario));
  YAML::Node d = YAML::Load("{timeout_s: 0.5}");
  d["type"] = type;
  d["local_port"] = free_port(SOCK_DGRAM);
  d["peer_port"] = free_port(SOCK_DGRAM);
  if (type == "egm") {
    d["egm"]["force"] = "fz";
  } else {
    d["rsi"]["force_tag"] = "FT";
  }
  root["rig"]["driver"] = d;
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

class RobotRig : public ::testing::TestWithParam<const char*> {};

TEST_P(RobotRig, TheRhtRigOverTheEmulatedControllerSettlesWhereTheInProcessServoDoes) {
  // The controller steps the same servo and specimen at its own 4 ms cycle; held at 5 mm for
  // 0.6 s (20 servo time constants), the measured position and force are the in-process rig's.
  const std::string text = with_robot("scenarios/rht/ats.yaml", GetParam());
  const auto device = load_scenario_text(text, GetParam())->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  const auto local = make_rig_part(on_the_emulator(text));
  std::array<double, 2> mw{}, ml{}, tw{}, tl{};
  for (int k = 0; k < 150; ++k) {
    wire->step({0.005, 0.0}, mw, tw);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  for (int k = 0; k < 100; ++k) local->step({0.005, 0.0}, ml, tl);
  std::printf("%s: position %.9f m (in process %.9f), force %.6f N (in process %.6f); %s\n",
              GetParam(), mw[0], ml[0], mw[1], ml[1], device->report().c_str());
  EXPECT_NEAR(mw[0], ml[0], 1e-6);
  EXPECT_NEAR(mw[1], ml[1], 1e-3 * std::abs(ml[1]));
  EXPECT_EQ(wire->fault(), nullptr) << device->report();
  EXPECT_EQ(wire->rejected_commands(), 0U);
}

TEST_P(RobotRig, RigOverTheControllerThenDynamicsAllocatesNothingPerCycle) {
  expect_no_allocation_per_cycle_over_the_wire(with_robot("scenarios/rht/ats.yaml", GetParam()),
                                               150);
}

TEST(RobotRig, AnEgmRobotWithoutAForceIsRefusedByFieldForAKindThatNeedsOne) {
  YAML::Node root = YAML::Load(with_robot("scenarios/rht/ats.yaml", "egm"));
  root["rig"]["driver"]["egm"]["force"] = "none";
  YAML::Emitter e;
  e << root;
  try {
    (void)make_rig_part(e.c_str());
    FAIL() << "an RHT rig without a force was accepted";
  } catch (const ScenarioError& x) {
    EXPECT_NE(std::string(x.what()).find("rig.driver.egm.force"), std::string::npos) << x.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Controllers, RobotRig, ::testing::Values("egm", "rsi"));

// ---- a rig part over an OpenFresco site (rig.driver.type openfresco, issue 25 item 2)

// `scenario` resolved, its rig.driver hyloop's own site on loopback over `transport`.
std::string with_site(const std::string& scenario, const std::string& transport) {
  YAML::Node root = YAML::Load(resolved(scenario));
  YAML::Node d = YAML::Load("{type: openfresco, timeout_s: 1.0}");
  d["peer_port"] = free_port(transport == "udp" ? SOCK_DGRAM : SOCK_STREAM);
  d["openfresco"]["transport"] = transport;
  root["rig"]["driver"] = d;
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

class SiteRig : public ::testing::TestWithParam<const char*> {};

TEST_P(SiteRig, TheRhtRigOverHyloopsOwnSiteMeasuresWhatTheInProcessServoDoesBitForBit) {
  // A site answers each trial when it comes: no clock races the loop, so every cycle is exact.
  const std::string text = with_site("scenarios/rht/p4_noise.yaml", GetParam());
  EXPECT_EQ(loop_plan(text).rig_driver, "openfresco");
  const auto site = load_scenario_text(text, "site")->make_wire_emulator({});
  std::array<double, 2> mw{}, ml{}, tw{}, tl{};
  constexpr int kCycles = 500;
  {
    const auto wire = make_rig_part(text);
    const auto local = make_rig_part(on_the_emulator(text));
    for (int k = 0; k < kCycles; ++k) {
      const hal::ActuatorCommand c{0.01 * std::sin(0.05 * k), 0.0};
      wire->step(c, mw, tw);
      local->step(c, ml, tl);
      ASSERT_EQ(mw, ml) << "cycle " << k << ": " << site->report();
    }
    EXPECT_EQ(wire->fault(), nullptr);
    EXPECT_EQ(wire->rejected_commands(), 0U);
  }
  EXPECT_NE(site->report().find(std::to_string(kCycles) + " commits"), std::string::npos)
      << site->report();
}

TEST_P(SiteRig, ACommandOutsideThePlansLimitsIsNotSentAndCounted) {
  const std::string text = with_site("scenarios/rht/ats.yaml", GetParam());
  const auto site = load_scenario_text(text, "site")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  std::array<double, 2> m{}, t{};
  wire->step({0.001, 0.0}, m, t);
  wire->step({std::numeric_limits<double>::quiet_NaN(), 0.0}, m, t);
  wire->step({10.0, 0.0}, m, t);  // beyond servo.stroke_m
  EXPECT_EQ(wire->rejected_commands(), 2U);
  EXPECT_EQ(wire->fault(), nullptr);
  EXPECT_TRUE(std::isfinite(m[0]));
  EXPECT_LT(std::abs(m[0]), 0.01);
}

TEST_P(SiteRig, RigOverTheSiteThenDynamicsAllocatesNothingPerCycle) {
  expect_no_allocation_per_cycle_over_the_wire(
      with_site("scenarios/rht/p4_noise.yaml", GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Transports, SiteRig, ::testing::Values("tcp", "udp"));

TEST(SiteRig, NoSiteAtThePortIsRefusedWhenTheRigPartIsMadeAndALostSiteIsADriverFault) {
  const std::string text = with_site("scenarios/rht/ats.yaml", "tcp");
  EXPECT_THROW((void)make_rig_part(text), std::system_error);  // nothing listens there
  auto site = load_scenario_text(text, "site")->make_wire_emulator({});
  const auto wire = make_rig_part(text);
  std::array<double, 2> m{}, t{};
  wire->step({0.001, 0.0}, m, t);
  EXPECT_EQ(wire->fault(), nullptr);
  site.reset();  // the site goes away mid-run
  for (int k = 0; k < 3 && wire->fault() == nullptr; ++k) wire->step({0.001, 0.0}, m, t);
  ASSERT_NE(wire->fault(), nullptr);
  EXPECT_STREQ(wire->fault(), "driver_fault");
}

TEST(SiteRig, TheSiteIsNotAClockedDeviceSoLockstepRunsTakeIt) {
  EXPECT_TRUE(is_wire_driver("openfresco"));
  EXPECT_FALSE(is_clocked_device("openfresco"));
  for (const char* t : {"udp", "egm", "rsi"}) EXPECT_TRUE(is_clocked_device(t)) << t;
  EXPECT_FALSE(is_clocked_device("emulator"));
}

// ---- LoopChain, the generic runner's cycle (loop_experiment.hpp)

// A rig whose truth is the command it applied; its driver faults from cycle `fault_at`.
class EchoRig final : public RigPart {
 public:
  explicit EchoRig(int fault_at) : fault_at_(fault_at) {}
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    measurement[0] = 10.0 * applied.position;
    truth[0] = applied.position;
    if (++cycles_ > fault_at_) fault_ = "driver_fault";
  }
  std::vector<std::string> truth_names() const override { return {"applied[m]"}; }
  const char* fault() const noexcept override { return fault_; }

 private:
  int fault_at_;
  int cycles_ = 0;
  const char* fault_ = nullptr;
};

// Values: the cycle and the measurement; the next command k + 1; stops after cycle `stop_at`.
class CountingDynamics final : public DynamicsPart {
 public:
  explicit CountingDynamics(std::int64_t stop_at) : stop_at_(stop_at) {}
  const std::vector<std::string>& names() const override { return names_; }
  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    values[0] = static_cast<double>(k);
    values[1] = measurement[0];
    next = {static_cast<double>(k + 1), 0.0};
    return k == stop_at_ ? StepStatus::stop("enough") : StepStatus::ok();
  }

 private:
  std::int64_t stop_at_;
  std::vector<std::string> names_{"k[-]", "measured[m]"};
};

// A recorder that keeps what the chain gives it.
class Capture final : public Experiment {
 public:
  explicit Capture(std::vector<std::string> columns) : table_(std::move(columns), 16) {}
  bool step() noexcept override { return false; }
  std::int64_t cycle() const noexcept override { return cycle_; }
  std::int64_t total_steps() const noexcept override { return 16; }
  double step_size() const noexcept override { return 0.002; }
  const SampleTable& samples() const noexcept override { return table_; }
  std::string name() const override { return "capture"; }
  std::string kind() const override { return "test"; }
  nlohmann::json summary() const override { return {}; }
  std::string resolved_yaml() const override { return {}; }
  bool record_cycle(std::span<const double> row) noexcept override {
    ++cycle_;
    return table_.append(row);
  }
  void record_stop(std::string_view reason) noexcept override { stop = reason; }
  std::string_view stop;

 private:
  SampleTable table_;
  std::int64_t cycle_ = 0;
};

LoopPlan counting_plan() { return every_cycle_plan("test", 16, 0.002, hal::SafetyConfig{}, 0.5); }

TEST(LoopChain, PlacesEachValueByNameInTheRecordersColumnsAndAppliesTheNextCommand) {
  LoopPlan plan = counting_plan();
  plan.measurement = {{{"measured", "m", "length"}}};
  // The recorder's order is its own; a column neither part writes stays 0.
  Capture capture({"applied[m]", "extra[-]", "measured[m]", "k[-]"});
  LoopChain chain(plan, std::make_unique<EchoRig>(100), std::make_unique<CountingDynamics>(3),
                  capture.record_columns());
  std::size_t allocations = 0;
  {
    const hyloop::testing::AllocGuard guard;
    while (chain.step(capture)) {
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  ASSERT_EQ(capture.samples().rows(), 4U);  // cycles 0..3, the stopping cycle's row included
  for (std::size_t k = 0; k < 4; ++k) {
    const double applied = k == 0 ? 0.5 : static_cast<double>(k);  // the initial, then k
    const std::vector<double> row(capture.samples().row(k).begin(), capture.samples().row(k).end());
    EXPECT_EQ(row, (std::vector<double>{applied, 0.0, 10.0 * applied, static_cast<double>(k)}))
        << "cycle " << k;
  }
  EXPECT_EQ(capture.stop, "enough");
  EXPECT_TRUE(chain.stopped());
  EXPECT_FALSE(chain.step(capture));
  EXPECT_EQ(capture.samples().rows(), 4U);
}

TEST(LoopChain, ARigFaultStopsTheRunBeforeItsRow) {
  LoopPlan plan = counting_plan();
  plan.measurement = {{{"measured", "m", "length"}}};
  Capture capture({"k[-]", "measured[m]", "applied[m]"});
  LoopChain chain(plan, std::make_unique<EchoRig>(2), std::make_unique<CountingDynamics>(100),
                  capture.record_columns());
  while (chain.step(capture)) {
  }
  EXPECT_EQ(capture.samples().rows(), 2U);  // the faulting cycle is not recorded (as the services)
  EXPECT_EQ(capture.stop, "driver_fault");
}

TEST(LoopChain, RunsToTheEndWithoutAStop) {
  LoopPlan plan = counting_plan();
  plan.measurement = {{{"measured", "m", "length"}}};
  Capture capture({"k[-]", "measured[m]", "applied[m]"});
  LoopChain chain(plan, std::make_unique<EchoRig>(100), std::make_unique<CountingDynamics>(100),
                  capture.record_columns());
  int steps = 0;
  while (chain.step(capture)) ++steps;
  EXPECT_EQ(steps, 15);  // the 16th cycle's step returns false: the run is over
  EXPECT_EQ(capture.samples().rows(), 16U);
  EXPECT_TRUE(capture.stop.empty());
  EXPECT_FALSE(chain.stopped());
}

}  // namespace
}  // namespace hyloop::experiment
