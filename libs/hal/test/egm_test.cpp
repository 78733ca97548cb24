#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <thread>
#include <vector>

#include "hyloop/hal/egm_codec.hpp"
#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/egm_robot_emulator.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "udp_test_layouts.hpp"

namespace hyloop::hal {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::eventually;

// Little-endian doubles, by hand: 0.0, 1.5 (0x3ff8…), 250.0 (0x406f4…), 180.0 (0x40668…),
// 90.0 (0x40568…).
const Bytes kZero{0, 0, 0, 0, 0, 0, 0, 0};
const Bytes kOneAndHalf{0, 0, 0, 0, 0, 0, 0xf8, 0x3f};
const Bytes k250{0, 0, 0, 0, 0, 0x40, 0x6f, 0x40};
const Bytes k180{0, 0, 0, 0, 0, 0x80, 0x66, 0x40};
const Bytes k90{0, 0, 0, 0, 0, 0x80, 0x56, 0x40};

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

/// A length-delimited field: tag, one-byte length, body.
Bytes sub(std::uint8_t tag, const Bytes& body) {
  return cat({{tag, static_cast<std::uint8_t>(body.size())}, body});
}

/// x, y, z as fields 1, 2, 3 (fixed64 tags 0x09, 0x11, 0x19).
Bytes xyz(const Bytes& x, const Bytes& y, const Bytes& z) {
  return cat({{0x09}, x, {0x11}, y, {0x19}, z});
}

const Bytes kPose =
    cat({sub(0x0a, xyz(kOneAndHalf, kZero, k250)), sub(0x1a, xyz(k180, kZero, k90))});

egm::Pose pose() { return {{1.5, 0.0, 250.0}, {180.0, 0.0, 90.0}}; }

TEST(EgmCodec, CartesianCorrectionGoldenFrame) {
  // header {seqno 1, tm 4, mtype CORRECTION 3}, planned {cartesian {pos, euler}}
  const Bytes golden =
      cat({sub(0x0a, {0x08, 0x01, 0x10, 0x04, 0x18, 0x03}), sub(0x12, sub(0x12, kPose))});
  ASSERT_EQ(golden.size(), 70U);
  egm::EgmCodec codec;
  egm::Correction c;
  c.seqno = 1;
  c.tm = 4;
  c.pose = pose();
  Bytes out(egm::kMaxDatagram);
  out.resize(codec.encode_correction(c, out));
  EXPECT_EQ(out, golden);
  egm::Correction back;
  ASSERT_EQ(codec.parse_correction(golden, back), egm::ParseResult::kOk);
  EXPECT_EQ(back.seqno, 1U);
  EXPECT_FALSE(back.joint_mode);
  EXPECT_EQ(back.pose.pos, c.pose.pos);
  EXPECT_EQ(back.pose.euler, c.pose.euler);
}

TEST(EgmCodec, JointCorrectionGoldenFrame) {
  // planned {joints {1.5, 0, 250, 180, 0, 90}}: proto2 repeated double, not packed (tag 0x09 each)
  const Bytes joints = cat(
      {{0x09}, kOneAndHalf, {0x09}, kZero, {0x09}, k250, {0x09}, k180, {0x09}, kZero, {0x09}, k90});
  const Bytes golden =
      cat({sub(0x0a, {0x08, 0x00, 0x10, 0x00, 0x18, 0x03}), sub(0x12, sub(0x0a, joints))});
  egm::EgmCodec codec;
  egm::Correction c;
  c.joint_mode = true;
  c.joints = {1.5, 0.0, 250.0, 180.0, 0.0, 90.0};
  Bytes out(egm::kMaxDatagram);
  out.resize(codec.encode_correction(c, out));
  EXPECT_EQ(out, golden);
  egm::Correction back;
  ASSERT_EQ(codec.parse_correction(golden, back), egm::ParseResult::kOk);
  EXPECT_TRUE(back.joint_mode);
  EXPECT_EQ(back.joints, c.joints);
}

TEST(EgmCodec, OrientFromZyxEuler) {
  const auto near = [](const std::array<double, 4>& q, const std::array<double, 4>& want) {
    for (std::size_t i = 0; i < 4; ++i) {
      if (std::abs(q[i] - want[i]) > 1e-15) return false;
    }
    return true;
  };
  EXPECT_TRUE(near(egm::orient_from_euler({0.0, 0.0, 0.0}), {1.0, 0.0, 0.0, 0.0}));
  EXPECT_TRUE(near(egm::orient_from_euler({180.0, 0.0, 180.0}), {0.0, 0.0, 1.0, 0.0}));
  const double h = std::sqrt(0.5);
  EXPECT_TRUE(near(egm::orient_from_euler({0.0, 0.0, 90.0}), {h, 0.0, 0.0, h}));
  EXPECT_TRUE(near(egm::orient_from_euler({90.0, 0.0, 0.0}), {h, h, 0.0, 0.0}));
  EXPECT_TRUE(near(egm::orient_from_euler({0.0, 90.0, 0.0}), {h, 0.0, h, 0.0}));
}

TEST(EgmCodec, ACorrectionWithJointsAndAPoseParsesBoth) {
  // header {2, 8, CORRECTION}, planned {joints {1.5, 0, 250, 180, 0, 90}, cartesian {pos, euler}}:
  // what ABB's libegm sends for a six-axis robot, whichever motion the robot runs.
  const Bytes joints = cat(
      {{0x09}, kOneAndHalf, {0x09}, kZero, {0x09}, k250, {0x09}, k180, {0x09}, kZero, {0x09}, k90});
  const Bytes golden = cat({sub(0x0a, {0x08, 0x02, 0x10, 0x08, 0x18, 0x03}),
                            sub(0x12, cat({sub(0x0a, joints), sub(0x12, kPose)}))});
  egm::EgmCodec codec;
  egm::Correction c;
  ASSERT_EQ(codec.parse_correction(golden, c), egm::ParseResult::kOk);
  EXPECT_TRUE(c.has_joints);
  EXPECT_TRUE(c.has_pose);
  EXPECT_EQ(c.joints[2], 250.0);
  EXPECT_EQ(c.pose.pos, pose().pos);
}

/// EgmRobot {header {7, 28, DATA}, feedBack {cartesian, time {1 s, 500 µs}}, motors ON,
/// MCI RUNNING, convergence met, RAPID RUNNING}.
Bytes robot_frame(std::uint8_t seqno = 7, std::uint8_t mtype = 0x02) {
  return cat({sub(0x0a, {0x08, seqno, 0x10, 0x1c, 0x18, mtype}),
              sub(0x12, cat({sub(0x12, kPose), sub(0x22, {0x08, 0x01, 0x10, 0xf4, 0x03})})),
              {0x22, 0x02, 0x08, 0x01},
              {0x2a, 0x02, 0x08, 0x03},
              {0x30, 0x01},
              {0x42, 0x02, 0x08, 0x02}});
}

TEST(EgmCodec, RobotGoldenFrame) {
  const Bytes golden = robot_frame();
  egm::EgmCodec codec;
  egm::RobotMessage m;
  ASSERT_EQ(codec.parse_robot(golden, m), egm::ParseResult::kOk);
  EXPECT_EQ(m.seqno, 7U);
  EXPECT_EQ(m.tm, 28U);
  EXPECT_TRUE(m.has_pose);
  EXPECT_FALSE(m.has_joints);
  EXPECT_EQ(m.pose.pos, pose().pos);
  EXPECT_EQ(m.pose.euler, pose().euler);
  EXPECT_EQ(m.clock_sec, 1U);
  EXPECT_EQ(m.clock_usec, 500U);
  EXPECT_EQ(m.motor, egm::MotorState::kOn);
  EXPECT_EQ(m.mci, egm::MciState::kRunning);
  EXPECT_EQ(m.rapid, egm::RapidState::kRunning);
  EXPECT_TRUE(m.convergence_met);
  Bytes out(egm::kMaxDatagram);
  out.resize(codec.encode_robot(m, out));
  EXPECT_EQ(out, golden) << "the emulator's encoding of the same message";
}

/// measuredForce (field 9): six unpacked doubles (tag 0x09 each); Fz = 250 N here.
Bytes force_field(const Bytes& fz) {
  return sub(0x4a, cat({{0x09},
                        kZero,
                        {0x09},
                        kZero,
                        {0x09},
                        fz,
                        {0x09},
                        kZero,
                        {0x09},
                        kZero,
                        {0x09},
                        kOneAndHalf}));
}

TEST(EgmCodec, RobotWithMeasuredForceGoldenFrame) {
  const Bytes golden = cat({robot_frame(), force_field(k250)});
  egm::EgmCodec codec;
  egm::RobotMessage m;
  ASSERT_EQ(codec.parse_robot(golden, m), egm::ParseResult::kOk);
  EXPECT_TRUE(m.has_force);
  EXPECT_EQ(m.force, (std::array<double, 6>{0.0, 0.0, 250.0, 0.0, 0.0, 1.5}));
  Bytes out(egm::kMaxDatagram);
  out.resize(codec.encode_robot(m, out));
  EXPECT_EQ(out, golden) << "the emulator's encoding of the same message";
  // Not six values, or not finite: the whole message is malformed.
  const Bytes five = cat(
      {robot_frame(),
       sub(0x4a, cat({{0x09}, kZero, {0x09}, kZero, {0x09}, k250, {0x09}, kZero, {0x09}, kZero}))});
  EXPECT_EQ(codec.parse_robot(five, m), egm::ParseResult::kMalformed);
  const Bytes nan = cat({robot_frame(), force_field({0, 0, 0, 0, 0, 0, 0xf8, 0x7f})});
  EXPECT_EQ(codec.parse_robot(nan, m), egm::ParseResult::kMalformed);
}

TEST(EgmCodec, RefusesMalformedWrongTypeAndIncompleteMessages) {
  egm::EgmCodec codec;
  egm::RobotMessage m;
  Bytes truncated = robot_frame();
  truncated.resize(40);
  EXPECT_EQ(codec.parse_robot(truncated, m), egm::ParseResult::kMalformed);
  EXPECT_EQ(codec.parse_robot(Bytes{0xff, 0xff, 0xff}, m), egm::ParseResult::kMalformed);
  EXPECT_EQ(codec.parse_robot(robot_frame(7, 0x03), m), egm::ParseResult::kWrongType);
  // EgmCartesian without its required z.
  const Bytes no_z = cat({sub(0x0a, {0x08, 0x01, 0x18, 0x02}),
                          sub(0x12, sub(0x12, sub(0x0a, cat({{0x09}, kZero, {0x11}, kZero}))))});
  EXPECT_EQ(codec.parse_robot(no_z, m), egm::ParseResult::kMalformed);
  const Bytes nan_x =
      cat({sub(0x0a, {0x08, 0x01, 0x18, 0x02}),
           sub(0x12, sub(0x12, sub(0x0a, xyz({0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, kZero, kZero))))});
  EXPECT_EQ(codec.parse_robot(nan_x, m), egm::ParseResult::kMalformed);
  EXPECT_EQ(codec.parse_robot(sub(0x0a, {0x08, 0x01, 0x18, 0x02}), m),
            egm::ParseResult::kIncomplete);
  egm::Correction c;
  EXPECT_EQ(codec.parse_correction(robot_frame(), c), egm::ParseResult::kWrongType);
}

TEST(EgmCodec, EveryTruncationOfARobotFrameIsRefusedOrAShorterCompleteMessage) {
  // A datagram cut inside the header or the feedback is refused; cut after the feedback it is
  // a complete message without the state fields, whose pose is the original's.
  const Bytes golden = robot_frame();
  const std::size_t feedback_end = 8 + 2 + 67;
  egm::EgmCodec codec;
  for (std::size_t n = 0; n < golden.size(); ++n) {
    egm::RobotMessage m;
    const egm::ParseResult r = codec.parse_robot({golden.data(), n}, m);
    if (n < feedback_end) {
      EXPECT_NE(r, egm::ParseResult::kOk) << "cut at " << n;
    } else if (r == egm::ParseResult::kOk) {
      EXPECT_EQ(m.pose.pos, pose().pos) << "cut at " << n;
      EXPECT_EQ(m.seqno, 7U);
    }
  }
}

/// A fake controller on the wire: sends hand-built EgmRobot frames, reads the replies.
struct FakeRobot {
  UdpSocket socket{"fake robot", {"127.0.0.1", 0}};
  EgmDriver driver{[this] {
    EgmDriverConfig c;
    c.local = {"127.0.0.1", 0};
    c.robot = {"127.0.0.1", socket.port()};
    c.limits = {-0.1, 0.1, 1.0};
    return c;
  }()};
  sockaddr_in to = to_sockaddr("driver", {"127.0.0.1", driver.local_port()});
  egm::EgmCodec codec;

  void send(std::uint32_t seqno, double z_mm, egm::MciState mci = egm::MciState::kRunning) {
    egm::RobotMessage m;
    m.seqno = seqno;
    m.has_pose = true;
    m.pose = {{600.0, 0.0, z_mm}, {180.0, 0.0, 180.0}};
    m.motor = egm::MotorState::kOn;
    m.mci = mci;
    m.rapid = egm::RapidState::kRunning;
    Bytes frame(egm::kMaxDatagram);
    frame.resize(codec.encode_robot(m, frame));
    ASSERT_TRUE(socket.send_to(frame, to));
  }
  /// The next reply (nullopt after 1 s).
  std::optional<egm::Correction> reply() {
    Bytes buffer(2048);
    sockaddr_in from{};
    long n = -1;
    if (!eventually([&] { return (n = socket.receive(buffer, from)) >= 0; }, 1.0)) {
      return std::nullopt;
    }
    buffer.resize(static_cast<std::size_t>(n));
    egm::Correction c;
    EXPECT_EQ(codec.parse_correction(buffer, c), egm::ParseResult::kOk);
    return c;
  }
};

TEST(EgmDriver, AnswersEachRobotMessageHoldingUntilCommandedThenMovingTheAxis) {
  FakeRobot robot;
  robot.send(0, 500.0);
  auto r = robot.reply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seqno, 0U);
  EXPECT_EQ(r->pose.pos[2], 500.0) << "before a command: the feedback itself";
  EXPECT_EQ(robot.driver.state().position, 0.0);
  ASSERT_EQ(robot.driver.command({0.0125, 0.0}), DriverStatus::kOk);
  robot.send(1, 502.0);
  r = robot.reply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seqno, 1U);
  EXPECT_DOUBLE_EQ(r->pose.pos[2], 512.5) << "start 500 mm + 12.5 mm";
  EXPECT_EQ(r->pose.pos[0], 600.0);
  EXPECT_EQ(r->pose.euler[2], 180.0);
  EXPECT_DOUBLE_EQ(robot.driver.state().position, 0.002);
  EXPECT_DOUBLE_EQ(robot.driver.state().velocity, 0.002 / 0.004) << "no clock: the period";
  EXPECT_EQ(robot.driver.command({0.5, 0.0}), DriverStatus::kRejected);
  EXPECT_EQ(robot.driver.command({std::nan(""), 0.0}), DriverStatus::kRejected);
  robot.send(2, 503.0);
  r = robot.reply();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->pose.pos[2], 512.5) << "a rejected command leaves the last one";
  EXPECT_EQ(robot.driver.metrics().late_replies, 2U) << "1 and 2 were answered at the deadline";
  robot.send(3, 504.0);
  ASSERT_TRUE(eventually([&] { return robot.driver.latest().seqno == 3; }));
  ASSERT_EQ(robot.driver.command({0.02, 0.0}), DriverStatus::kOk);
  r = robot.reply();
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->pose.pos[2], 520.0) << "answered with the command given after it";
  // A reply is counted once its send returned, which can be after the robot received it.
  ASSERT_TRUE(eventually([&] { return robot.driver.metrics().replies == 4U; }));
  const EgmDriverMetrics m = robot.driver.metrics();
  EXPECT_EQ(m.late_replies, 2U);
  EXPECT_EQ(m.late_weight, 1U + 2U);
  EXPECT_EQ(m.replies, 4U);
}

TEST(EgmDriver, SequenceRulesLossDuplicatesReorderingAndSessionRestart) {
  FakeRobot robot;
  for (std::uint32_t s : {0U, 5U, 5U, 4U, 8U}) {
    robot.send(s, 500.0 + s);
  }
  ASSERT_TRUE(eventually([&] {
    const auto m = robot.driver.metrics();
    return m.received + m.duplicate + m.reordered == 5 && m.replies == 3;
  }));
  EgmDriverMetrics m = robot.driver.metrics();
  EXPECT_EQ(m.received, 3U);
  EXPECT_EQ(m.replies, 3U) << "dropped messages get no reply";
  EXPECT_EQ(m.duplicate, 1U);
  EXPECT_EQ(m.reordered, 1U);
  EXPECT_EQ(m.lost, 4U + 2U);
  EXPECT_DOUBLE_EQ(robot.driver.state().position, 0.008);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(robot.reply());
  }
  robot.send(0, 700.0);  // a new session: new start pose, reply seqno from 0
  const auto r = robot.reply();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seqno, 0U);
  EXPECT_EQ(robot.driver.metrics().sessions, 2U);
  EXPECT_EQ(robot.driver.state().position, 0.0);
}

TEST(EgmDriver, DropsForeignOversizedAndMalformedDatagramsWithoutAReply) {
  FakeRobot robot;
  const UdpSocket other_port("intruder", {"127.0.0.1", 0});
  const UdpSocket other_host("intruder", {"127.0.0.2", 0});
  const Bytes frame = robot_frame(0);
  ASSERT_TRUE(other_port.send_to(frame, robot.to));
  ASSERT_TRUE(other_host.send_to(frame, robot.to));
  ASSERT_TRUE(robot.socket.send_to(Bytes(2000, 0x08), robot.to));
  ASSERT_TRUE(robot.socket.send_to(Bytes{0x0a, 0x50, 0x01}, robot.to));
  ASSERT_TRUE(robot.socket.send_to(robot_frame(0, 0x03), robot.to));  // not DATA
  ASSERT_TRUE(eventually([&] {
    const auto m = robot.driver.metrics();
    return m.rejected_foreign == 2 && m.rejected_malformed == 3;
  }));
  EXPECT_EQ(robot.driver.metrics().received, 0U);
  EXPECT_EQ(robot.driver.metrics().replies, 0U);
  EXPECT_FALSE(robot.driver.latest().valid);
}

TEST(EgmDriver, AControllerThatStopsEgmIsAnEmergencyStopAndAFault) {
  FakeRobot robot;
  robot.send(0, 500.0);
  ASSERT_TRUE(robot.reply());
  ASSERT_EQ(robot.driver.command({0.0, 0.0}), DriverStatus::kOk);
  robot.send(1, 500.0, egm::MciState::kStopped);
  ASSERT_TRUE(eventually([&] { return robot.driver.emergency_stop_input(); }));
  EXPECT_EQ(robot.driver.command({0.0, 0.0}), DriverStatus::kFault);
}

TEST(EgmDriver, CycleMethodsAllocateNothing) {
  FakeRobot robot;
  robot.send(0, 500.0);
  ASSERT_TRUE(robot.reply());
  ActuatorDriver& actuator = robot.driver;
  double sum = 0.0;
  testing::AllocGuard guard;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(actuator.command({1e-5 * i, 0.0}), DriverStatus::kOk);
    sum += actuator.state().position + (actuator.emergency_stop_input() ? 1.0 : 0.0);
    sum += static_cast<double>(robot.driver.metrics().received);
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_GT(sum, 0.0);
}

// ---- against the robot-controller emulator -------------------------------------------------

constexpr double kEgmPeriod = 0.004;
constexpr double kGain = 0.5;

ServoActuatorConfig axis_plant() {
  ServoActuatorConfig p;
  p.step = kEgmPeriod;
  p.omega = 50.0;
  p.zeta = 0.8;
  return p;
}

struct EgmPair {
  std::unique_ptr<EgmDriver> driver;
  std::unique_ptr<EgmRobotEmulator> robot;
  EgmPair(const WireImpairments& w, double reply_timeout, double driver_timeout,
          const EgmAxis& axis = {}, int robot_force = -1, int driver_force = -1,
          double stiffness = 0.0) {
    const std::uint16_t driver_port = free_udp_port();
    EgmRobotEmulatorConfig e;
    e.sensor = {"127.0.0.1", driver_port};
    e.plant = axis_plant();
    e.reply_timeout = reply_timeout;
    e.impairments = w;
    e.latency_samples = 100000;
    e.axis = axis;
    e.force_index = robot_force;
    e.plant.specimen_stiffness = stiffness;
    robot = std::make_unique<EgmRobotEmulator>(e);
    EgmDriverConfig d;
    d.local = {"127.0.0.1", driver_port};
    d.robot = {"127.0.0.1", robot->port()};
    d.timeout = driver_timeout;
    d.limits = {-0.1, 0.1, 1.0};
    d.axis = axis;
    d.force_index = driver_force;
    driver = std::make_unique<EgmDriver>(d);
  }
};

double reference(std::int64_t j) {
  return 0.01 * std::sin(2.0 * std::numbers::pi * 0.5 * static_cast<double>(j) * kEgmPeriod);
}
double control(std::int64_t j, double y) { return reference(j + 1) + kGain * (reference(j) - y); }

TEST(EgmRobotEmulator, ClosedLoopInTheRobotsRhythmMatchesTheInProcessLoopWithinTheSlipBound) {
  // The loop answers each robot cycle j: u_j from y_j (the feedback of step j), applied in step
  // j + 1, exactly the in-process order. A step that ran on a command c cycles old (its
  // correction missing, or answered late, c times in a row) has an input error ≤ c·D_u; by
  // linearity max |y_wire − y_in| ≤ P·D_u·Σc (P: the largest output after a unit input
  // impulse; Σc the emulator's missing_weight + the driver's late_weight) plus the mm ↔ m
  // rounding (< 1e-12 m).
  constexpr int kCycles = 500;  // 2 s
  ServoActuatorEmulator plant(axis_plant());
  plant.reset(0.0);
  std::vector<double> y_in;
  double peak = 0.0;
  {
    ServoActuatorEmulator impulse(axis_plant());
    impulse.reset(0.0);
    for (int j = 0; j < 2000; ++j) {
      const double y =
          impulse.step(j == 0 ? 1.0 : -kGain * impulse.measurement().displacement).displacement;
      peak = std::max(peak, std::abs(y));
    }
  }
  for (std::uint64_t seed : {21U, 22U, 23U}) {
    EgmPair pair({5e-5, 2e-4, 0.01, 0.0, 0.0, seed}, 10.0, 10.0);  // stalls must not stop it
    ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
    std::vector<double> y_wire;
    std::vector<double> u_wire;
    std::vector<bool> seen;  // false where the feedback was lost on the wire
    const std::uint32_t first = pair.driver->latest().seqno + 1;
    const EgmRobotEmulatorStats before = pair.robot->stats();
    const EgmDriverMetrics before_d = pair.driver->metrics();
    while (y_wire.size() < static_cast<std::size_t>(kCycles)) {
      const EgmSample s = pair.driver->latest();
      const std::int64_t j = static_cast<std::int64_t>(s.seqno) - first;
      if (j < static_cast<std::int64_t>(y_wire.size())) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      while (static_cast<std::int64_t>(y_wire.size()) < j) {  // a feedback lost on the wire
        y_wire.push_back(0.0);
        u_wire.push_back(0.0);
        seen.push_back(false);
      }
      const double u = control(j, s.position);
      pair.driver->command({u, 0.0});
      y_wire.push_back(s.position);
      u_wire.push_back(u);
      seen.push_back(true);
    }
    const EgmRobotEmulatorStats st = pair.robot->stats();
    const double slips =
        static_cast<double>(st.missing_weight - before.missing_weight) +
        static_cast<double>(pair.driver->metrics().late_weight - before_d.late_weight);
    plant.reset(0.0);
    double deviation = 0.0;
    double d_u = 0.0;
    for (int j = 0; j < kCycles; ++j) {
      const double y = plant.measurement().displacement;
      plant.step(control(j, y));
      if (j > 0 && seen[j] && seen[j - 1]) {
        d_u = std::max(d_u, std::abs(u_wire[j] - u_wire[j - 1]));
      }
      if (j + 1 < kCycles && seen[j + 1]) {
        deviation = std::max(deviation, std::abs(y_wire[j + 1] - plant.measurement().displacement));
      }
    }
    const double bound = peak * d_u * slips + 1e-12;
    std::printf("EGM seed %llu: max |dy| = %.3e m, bound %.3e m (slips %.0f, lost %llu)\n",
                static_cast<unsigned long long>(seed), deviation, bound, slips,
                static_cast<unsigned long long>(pair.driver->metrics().lost));
    EXPECT_LE(deviation, bound) << "seed " << seed;
    EXPECT_EQ(pair.robot->stats().stopped, false);
  }
}

TEST(EgmRobotEmulator, AJointAxisInRadiansFollowsTheCommand) {
  // Joint 3 in degrees on the wire, radians in the loop (scale 180/π).
  EgmPair pair({}, 1.0, 1.0, {EgmMode::kJoint, 2, 180.0 / std::numbers::pi});
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  for (int j = 0; j < 150; ++j) {  // 0.6 s at 4 ms: the servo (ω = 50 rad/s) settles
    ASSERT_NE(pair.driver->command({0.05, 0.0}), DriverStatus::kFault);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  EXPECT_NEAR(pair.robot->plant().true_displacement, 0.05, 1e-5);
  EXPECT_NEAR(pair.driver->state().position, pair.robot->plant().displacement, 1e-4);
  EXPECT_EQ(pair.robot->stats().refused, 0U);
  EXPECT_GT(pair.robot->stats().corrections, 100U);
}

TEST(EgmRobotEmulator, MeasuredForceIsTheLoopsForce) {
  // The plant carries a 40 kN/m specimen; the robot reports its force as Fz (index 2).
  constexpr double kStiffness = 4e4;
  EgmPair pair({}, 1.0, 1.0, {}, 2, 2, kStiffness);
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  ForceSensorDriver& force = pair.driver->force_sensor();
  for (int j = 0; j < 150; ++j) {  // 0.6 s: the servo settles at 5 mm
    ASSERT_NE(pair.driver->command({0.005, 0.0}), DriverStatus::kFault);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  ForceSample f{};
  ASSERT_EQ(force.read(f), DriverStatus::kOk);
  EXPECT_NEAR(f.force, kStiffness * 0.005, 1e-3 * kStiffness * 0.005);
  EXPECT_NEAR(f.force, pair.robot->plant().force, 1e-2);
  EXPECT_EQ(pair.driver->metrics().rejected_malformed, 0U);
}

TEST(EgmRobotEmulator, ARobotWithoutTheForceTheDriverNeedsIsRefused) {
  // The driver reads Fz, the robot sends no measuredForce: nothing reaches the loop.
  EgmPair pair({}, 1.0, 1.0, {}, -1, 2);
  EXPECT_TRUE(eventually([&] { return pair.driver->metrics().rejected_malformed >= 5; }, 1.0));
  EXPECT_FALSE(pair.driver->latest().valid);
  EXPECT_THROW((void)EgmPair({}, 1.0, 1.0, {}, -1, 6), std::invalid_argument);
}

TEST(EgmRobotEmulator, SendsWhatAbbsLibraryRequiresAndFollowsTheAxisPartOfACorrection) {
  // A sensor of our own on a plain socket: every EgmRobot carries what abb_libegm's parse()
  // requires of a six-axis robot (feedback pose with its quaternion, planned joints, pose and
  // time); a correction carrying joints and a pose moves a Cartesian axis by its pose.
  UdpSocket sensor("sensor", {"127.0.0.1", 0});
  EgmRobotEmulatorConfig e;
  e.sensor = {"127.0.0.1", sensor.port()};
  e.plant = axis_plant();
  e.reply_timeout = 1.0;
  EgmRobotEmulator robot(e);
  egm::EgmCodec codec;
  std::array<std::uint8_t, egm::kMaxDatagram> buffer{};
  sockaddr_in from{};
  egm::RobotMessage m;
  ASSERT_TRUE(eventually([&] {
    const long n = sensor.receive(buffer, from);
    return n > 0 && codec.parse_robot({buffer.data(), static_cast<std::size_t>(n)}, m) ==
                        egm::ParseResult::kOk;
  }));
  EXPECT_TRUE(m.pose.has_orient);
  EXPECT_EQ(m.pose.orient, egm::orient_from_euler(e.start_pose.euler));
  EXPECT_TRUE(m.has_planned && m.planned.has_orient);
  EXPECT_TRUE(m.has_planned_joints);
  EXPECT_EQ(m.planned_joints, e.start_joints);
  EXPECT_TRUE(m.has_planned_clock && m.has_clock);
  // Both parts, the joints unchanged, the pose 5 mm up: the Cartesian z axis goes to 5 mm.
  for (std::uint32_t k = 0; k < 150; ++k) {
    egm::Correction c;
    c.seqno = k;
    c.joint_mode = true;
    c.joints = e.start_joints;
    egm::Correction pose_part;
    pose_part.pose = e.start_pose;
    pose_part.pose.pos[2] += 5.0;
    std::array<std::uint8_t, egm::kMaxDatagram> joints_frame{}, pose_frame{};
    const std::size_t nj = codec.encode_correction(c, joints_frame);
    const std::size_t np = codec.encode_correction(pose_part, pose_frame);
    // One EgmSensor with both: planned {joints, cartesian}. Each frame is the header (0x0a,
    // length, body), then planned (0x12, length < 128, body): the pose frame's planned body is
    // appended to the joints frame's, whose planned length grows by as much.
    Bytes both(joints_frame.begin(), joints_frame.begin() + static_cast<long>(nj));
    const std::size_t hj = 2U + both[1];
    const std::size_t hp = 2U + pose_frame[1];
    const Bytes pose_planned(pose_frame.begin() + static_cast<long>(hp + 2),
                             pose_frame.begin() + static_cast<long>(np));
    both[hj + 1] = static_cast<std::uint8_t>(both[hj + 1] + pose_planned.size());
    both.insert(both.end(), pose_planned.begin(), pose_planned.end());
    egm::Correction parsed;
    ASSERT_EQ(codec.parse_correction(both, parsed), egm::ParseResult::kOk);
    ASSERT_TRUE(parsed.has_joints && parsed.has_pose);
    ASSERT_TRUE(sensor.send_to(both, from));
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  EXPECT_NEAR(robot.plant().true_displacement, 0.005, 1e-5);
  EXPECT_EQ(robot.stats().rejected_malformed, 0U);
  EXPECT_GE(robot.stats().corrections, 140U);
}

TEST(EgmRobotEmulator, ADeadControllerFaultsTheDriverWithinItsTimeout) {
  // Never early; at the latest the timeout plus the longest the polling loop itself slept.
  EgmPair pair({}, 1.0, 0.1);
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  ASSERT_EQ(pair.driver->command({0.001, 0.0}), DriverStatus::kOk);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(pair.driver->command({0.001, 0.0}), DriverStatus::kOk);
  pair.robot->stop();
  const auto stopped_at = std::chrono::steady_clock::now();
  auto last = stopped_at;
  double max_gap = 0.0;
  while (pair.driver->command({0.001, 0.0}) != DriverStatus::kFault) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    const auto now = std::chrono::steady_clock::now();
    max_gap = std::max(max_gap, std::chrono::duration<double>(now - last).count());
    last = now;
  }
  const double after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  std::printf("fault %.1f ms after the controller died (timeout 100 ms, loop gap %.1f ms)\n",
              1e3 * after, 1e3 * max_gap);
  EXPECT_GT(after, 0.1 - 2 * kEgmPeriod);
  EXPECT_LT(after, 0.1 + max_gap + 0.005);
}

TEST(EgmRobotEmulator, ASilentSensorStopsEgmAndTheAxisComesToRest) {
  EgmPair pair({}, 0.2, 1.0);
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  for (int j = 0; j < 100; ++j) {
    pair.driver->command({0.01 * std::sin(2.0 * std::numbers::pi * j * kEgmPeriod), 0.0});
    std::this_thread::sleep_for(std::chrono::microseconds(4000));
  }
  if (pair.robot->stats().stopped) {
    GTEST_SKIP() << "the VM held the loop past the reply timeout before the sensor went silent";
  }
  pair.driver.reset();  // the sensor dies
  const auto silent_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return pair.robot->stats().stopped; }, 1.0));
  const double after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - silent_at).count();
  std::printf("EGM stopped %.1f ms after the sensor went silent (reply timeout 200 ms)\n",
              1e3 * after);
  EXPECT_GT(after, 0.2 - 2 * kEgmPeriod);
  EXPECT_LT(after, 0.2 + 0.3);  // the emulator's own thread can be stalled (≤ 300 ms seen here)
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const double x = pair.robot->plant().true_displacement;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_LT(std::abs(pair.robot->plant().velocity), 1e-6);
  EXPECT_LT(std::abs(pair.robot->plant().true_displacement - x), 1e-7);
  EXPECT_GT(pair.robot->stats().missing_replies, 20U);
}

}  // namespace
}  // namespace hyloop::hal
