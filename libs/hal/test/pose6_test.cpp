// The robot's whole pose (pose6.hpp) over EGM (EgmMode::kPose) and RSI (RsiMode::kPose): the
// loop ↔ wire pose conversions, and each six-axis driver against its controller emulator moving
// the SITS6 rig.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <thread>

#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/egm_pose.hpp"
#include "hyloop/hal/egm_robot_emulator.hpp"
#include "hyloop/hal/rsi_codec.hpp"
#include "hyloop/hal/rsi_controller_emulator.hpp"
#include "hyloop/hal/rsi_driver.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "udp_test_layouts.hpp"

namespace hyloop::hal {
namespace {

using test::eventually;

const egm::Pose kStart{{600.0, -20.0, 500.0}, {170.0, 10.0, -150.0}};

TEST(EgmPose, ZyxAnglesInvertOrientFromEuler) {
  for (const std::array<double, 3>& e : {std::array<double, 3>{0.0, 0.0, 0.0},
                                         {180.0, 0.0, 90.0},
                                         {30.0, -45.0, 120.0},
                                         {-170.0, 89.0, -10.0}}) {
    const std::array<double, 4> o = egm::orient_from_euler(e);
    const std::array<double, 3> back = zyx_angles(Eigen::Quaterniond(o[0], o[1], o[2], o[3]));
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(back[i], e[i], 1e-6) << i;
  }
}

TEST(EgmPose, ARotationAboutZOfTheLoopTurnsTheWiresYaw) {
  // Start with no rotation: θ = (0, 0, 10°) is a yaw of 10°, 2 mm along x is 2 mm on the wire.
  const egm::Pose start{{100.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
  const double yaw = 10.0 * std::numbers::pi / 180.0;
  const egm::Pose w = egm::wire_pose({0.002, 0.0, 0.0, 0.0, 0.0, yaw}, start, 1000.0);
  EXPECT_NEAR(w.pos[0], 102.0, 1e-12);
  EXPECT_NEAR(w.euler[0], 0.0, 1e-12);
  EXPECT_NEAR(w.euler[1], 0.0, 1e-12);
  EXPECT_NEAR(w.euler[2], 10.0, 1e-12);
  EXPECT_TRUE(w.has_orient);
  EXPECT_NEAR(w.orient[0], std::cos(yaw / 2.0), 1e-15);
  EXPECT_NEAR(w.orient[3], std::sin(yaw / 2.0), 1e-15);
}

TEST(EgmPose, LoopToWireAndBackIsTheIdentityOverManyPoses) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> t(-0.2, 0.2), r(-1.5, 1.5);
  double worst = 0.0;
  for (int n = 0; n < 2000; ++n) {
    const egm::LoopPose loop{t(rng), t(rng), t(rng), r(rng) / 2, r(rng) / 2, r(rng) / 2};
    egm::Pose wire = egm::wire_pose(loop, kStart, 1000.0);
    if (n % 2 == 1) wire.has_orient = false;  // read from the Euler angles alone
    const egm::LoopPose back = egm::loop_pose(wire, kStart, 1000.0);
    for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
      worst = std::max(worst, std::abs(back[i] - loop[i]));
    }
  }
  EXPECT_LT(worst, 1e-11);
}

// The SITS6 rig with a stiff contact at its start pose and G_R bypassed: the robot sits where
// it is commanded, the sensor reads the spring's wrench one cycle later.
Sits6RigConfig pose_rig() {
  Sits6RigConfig c;
  c.step = 0.004;
  c.contact.contact_offset = {0.0, 0.05, 0.0};  // force and torque couple
  return c;
}

struct PosePair {
  std::shared_ptr<Sits6PosePlant> plant = std::make_shared<Sits6PosePlant>(pose_rig());
  std::unique_ptr<EgmRobotEmulator> robot;
  std::unique_ptr<EgmDriver> driver;
  explicit PosePair(double max_deviation = 0.5) {
    const std::uint16_t port = free_udp_port();
    EgmRobotEmulatorConfig e;
    e.max_deviation = max_deviation;
    e.sensor = {"127.0.0.1", port};
    e.plant.step = 0.004;
    e.axis = {EgmMode::kPose, 0, 1000.0};
    e.start_pose = kStart;
    e.pose_plant = plant;
    e.wrench = true;
    e.reply_timeout = 1.0;
    robot = std::make_unique<EgmRobotEmulator>(e);
    EgmDriverConfig d;
    d.local = {"127.0.0.1", port};
    d.robot = {"127.0.0.1", robot->port()};
    d.axis = e.axis;
    d.timeout = 1.0;
    d.wrench = true;
    for (std::size_t i = 0; i < egm::kPoseAxes; ++i) d.pose_limits[i] = {-0.05, 0.05, 10.0};
    driver = std::make_unique<EgmDriver>(d);
  }
};

using Pose6Commands = std::array<ActuatorCommand, kPoseAxes>;

const Pose6Commands kTarget{
    {{0.002, 0.0}, {-0.001, 0.0}, {0.003, 0.0}, {0.01, 0.0}, {-0.02, 0.0}, {0.03, 0.0}}};

/// Commands `pose` every 4 ms, `cycles` times, as the loop would.
template <typename Driver>
void hold(Driver& driver, const Pose6Commands& pose, int cycles) {
  for (int j = 0; j < cycles; ++j) {
    ASSERT_EQ(driver.command_pose(pose), DriverStatus::kOk);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
}

/// The rig's spring at `pose`, at rest.
core::Vector6 spring_wrench(const Pose6Commands& pose) {
  const core::Contact6Model contact(pose_rig().contact);
  core::Vector6 q;
  for (int i = 0; i < 6; ++i) q[i] = pose[static_cast<std::size_t>(i)].position;
  return contact.wrench(q, core::Vector6::Zero());
}

TEST(EgmRobotEmulator, TheWholePoseFollowsTheCommandAndTheWrenchComesBack) {
  PosePair pair;
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  const Pose6Commands& target = kTarget;
  hold(*pair.driver, target, 60);
  const PoseMeasurement plant = pair.robot->pose_plant();
  const EgmSample s = pair.driver->latest();
  for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
    EXPECT_NEAR(plant.true_pose[i], target[i].position, 1e-12) << "axis " << i;
    EXPECT_NEAR(s.pose[i], plant.pose[i], 1e-11) << "axis " << i;
    EXPECT_EQ(s.wrench[i], plant.wrench[i]) << "axis " << i;  // doubles on the wire
  }
  EXPECT_EQ(s.position, s.pose[0]);
  // The spring's wrench at the commanded pose, offset 5 cm along y: x and z torques couple.
  const core::Vector6 w = spring_wrench(target);
  for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
    EXPECT_NEAR(s.wrench[i], w[static_cast<Eigen::Index>(i)], 1e-9) << "axis " << i;
  }
  EXPECT_GT(std::abs(s.wrench[3]), 1.0);
  EXPECT_EQ(pair.robot->stats().refused, 0U);
  EXPECT_EQ(pair.driver->metrics().rejected_malformed, 0U);
}

TEST(EgmRobotEmulator, OneAxisOutOfItsLimitsRejectsTheWholePose) {
  PosePair pair;
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  Pose6Commands good{};
  good[2] = {0.004, 0.0};
  hold(*pair.driver, good, 25);
  Pose6Commands bad = good;
  bad[4] = {0.06, 0.0};  // ry beyond its 0.05 rad
  Pose6Commands nan = good;
  nan[0] = {std::nan(""), 0.0};
  for (int j = 0; j < 25; ++j) {
    EXPECT_EQ(pair.driver->command_pose(j % 2 == 0 ? bad : nan), DriverStatus::kRejected);
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  EXPECT_EQ(pair.driver->metrics().rejected_commands, 25U);
  // One axis alone is not a pose.
  EXPECT_EQ(pair.driver->command({0.0, 0.0}), DriverStatus::kRejected);
  const PoseMeasurement plant = pair.robot->pose_plant();
  for (std::size_t i = 0; i < egm::kPoseAxes; ++i) {
    EXPECT_NEAR(plant.true_pose[i], good[i].position, 1e-12) << "axis " << i;
  }
}

TEST(EgmRobotEmulator, ACorrectionBeyondTheControllersDeviationIsRefused) {
  // The driver's limits let 0.04 rad through; the controller's supervision (0.03) refuses it
  // and holds the start pose.
  PosePair pair(0.03);
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  Pose6Commands far{};
  far[5] = {0.04, 0.0};
  hold(*pair.driver, far, 20);
  EXPECT_TRUE(eventually([&] { return pair.robot->stats().refused >= 10; }, 1.0));
  EXPECT_EQ(pair.robot->pose_plant().true_pose[5], 0.0);
}

TEST(EgmDriver, PoseMethodsAllocateNothing) {
  PosePair pair;
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  Pose6Commands c{};
  double sum = 0.0;
  testing::AllocGuard guard;
  for (int i = 0; i < 1000; ++i) {
    c[3].position = 1e-5 * i;
    EXPECT_EQ(pair.driver->command_pose(c), DriverStatus::kOk);
    const EgmSample s = pair.driver->latest();
    sum += s.pose[3] + s.wrench[3] + 1.0;
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_GT(sum, 0.0);
}

TEST(EgmDriver, PoseModeRefusesAOneAxisForceAndTheEmulatorNeedsAPosePlant) {
  EgmDriverConfig d;
  d.local = {"127.0.0.1", 0};
  d.axis = {EgmMode::kPose, 0, 1000.0};
  d.force_index = 2;
  EXPECT_THROW((void)EgmDriver(d), std::invalid_argument);
  d.axis = {EgmMode::kPose, 1, 1000.0};
  d.force_index = -1;
  EXPECT_THROW((void)EgmDriver(d), std::invalid_argument);
  d.axis = {};
  d.wrench = true;
  EXPECT_THROW((void)EgmDriver(d), std::invalid_argument);
  EgmRobotEmulatorConfig e;
  e.axis = {EgmMode::kPose, 0, 1000.0};
  EXPECT_THROW((void)EgmRobotEmulator(e), std::invalid_argument);
}

// ---- RSI ------------------------------------------------------------------------------------

const rsi::Values kRsiStart{445.0, 10.0, 890.0, 170.0, -5.0, 175.0};

TEST(RsiPose, AYawOfTheLoopIsTheCorrectionsA) {
  // RKorr is the offset from the start: 10° about z is A = 10, 2 mm along x is X = 2.
  const double yaw = 10.0 * std::numbers::pi / 180.0;
  const rsi::Values c = rsi::wire_pose({0.002, 0.0, 0.0, 0.0, 0.0, yaw}, {}, 1000.0);
  const rsi::Values want{2.0, 0.0, 0.0, 10.0, 0.0, 0.0};
  for (std::size_t i = 0; i < rsi::kValues; ++i) EXPECT_NEAR(c[i], want[i], 1e-12) << i;
}

TEST(RsiPose, LoopToWireAndBackIsTheIdentityOverManyPoses) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> t(-0.2, 0.2), r(-0.75, 0.75);
  double worst = 0.0;
  for (int n = 0; n < 2000; ++n) {
    const LoopPose loop{t(rng), t(rng), t(rng), r(rng), r(rng), r(rng)};
    // Through RIst (from the start pose) and through RKorr (from zero).
    for (const rsi::Values& start : {kRsiStart, rsi::Values{}}) {
      const LoopPose back = rsi::loop_pose(rsi::wire_pose(loop, start, 1000.0), start, 1000.0);
      for (std::size_t i = 0; i < kPoseAxes; ++i) {
        worst = std::max(worst, std::abs(back[i] - loop[i]));
      }
    }
  }
  EXPECT_LT(worst, 1e-11);
}

TEST(RsiCodec, AForceTorqueSensorsWrenchUnderOneUserTag) {
  rsi::RobotFrame f;
  f.ipoc = 4;
  f.has_wrench = true;
  f.wrench = {1.5, -2.0, 30.0, 0.25, 0.0, -0.125};
  std::array<std::uint8_t, rsi::kMaxDatagram> out{};
  const std::size_t n = rsi::write_robot(f, out, {"FT", "", true});
  const std::string text(reinterpret_cast<const char*>(out.data()), n);
  EXPECT_EQ(text,
            "<Rob Type=\"KUKA\"><FT Fx=\"1.5000\" Fy=\"-2.0000\" Fz=\"30.0000\" "
            "Tx=\"0.2500\" Ty=\"0.0000\" Tz=\"-0.1250\"/><IPOC>4</IPOC></Rob>");
  rsi::RobotFrame back;
  ASSERT_EQ(rsi::parse_robot({out.data(), n}, back, {"FT", "", true}), rsi::ParseResult::kOk);
  EXPECT_TRUE(back.has_wrench);
  EXPECT_EQ(back.wrench, f.wrench);
  // One attribute missing: refused.
  const std::string five =
      "<Rob Type=\"KUKA\"><FT Fx=\"1\" Fy=\"2\" Fz=\"3\" Tx=\"4\" Ty=\"5\"/><IPOC>4</IPOC></Rob>";
  EXPECT_NE(rsi::parse_robot({reinterpret_cast<const std::uint8_t*>(five.data()), five.size()},
                             back, {"FT", "", true}),
            rsi::ParseResult::kOk);
}

struct RsiPosePair {
  std::shared_ptr<Sits6PosePlant> plant = std::make_shared<Sits6PosePlant>(pose_rig());
  std::unique_ptr<RsiControllerEmulator> robot;
  std::unique_ptr<RsiDriver> driver;
  explicit RsiPosePair(double correction_limit = 500.0) {
    const std::uint16_t port = free_udp_port();
    RsiControllerEmulatorConfig e;
    e.sensor = {"127.0.0.1", port};
    e.plant.step = kRsiCycleFast;
    e.axis = {RsiMode::kPose, 0, 1000.0};
    e.start_pose = kRsiStart;
    e.pose_plant = plant;
    e.force_tag = "FT";
    e.wrench = true;
    e.correction_limit = correction_limit;
    robot = std::make_unique<RsiControllerEmulator>(e);
    RsiDriverConfig d;
    d.local = {"127.0.0.1", port};
    d.robot = {"127.0.0.1", robot->port()};
    d.axis = e.axis;
    d.timeout = 1.0;
    d.force_tag = "FT";
    d.wrench = true;
    for (std::size_t i = 0; i < kPoseAxes; ++i) d.pose_limits[i] = {-0.05, 0.05, 10.0};
    driver = std::make_unique<RsiDriver>(d);
  }
};

TEST(RsiControllerEmulator, TheWholePoseFollowsTheCommandAndTheWrenchComesBack) {
  RsiPosePair pair;
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  const Pose6Commands& target = kTarget;
  hold(*pair.driver, target, 60);
  const PoseMeasurement plant = pair.robot->pose_plant();
  const RsiSample s = pair.driver->latest();
  const core::Vector6 w = spring_wrench(target);
  for (std::size_t i = 0; i < kPoseAxes; ++i) {
    // RKorr goes out with 6 decimals (mm, degrees), RIst and the wrench come back with 4.
    EXPECT_NEAR(plant.true_pose[i], target[i].position, 1e-8) << "axis " << i;
    EXPECT_NEAR(s.pose[i], plant.pose[i], 2e-6) << "axis " << i;
    EXPECT_NEAR(s.wrench[i], w[static_cast<Eigen::Index>(i)], 1e-3) << "axis " << i;
  }
  EXPECT_GT(std::abs(s.wrench[3]), 1.0);
  EXPECT_EQ(pair.robot->stats().clipped, 0U);
  EXPECT_EQ(pair.driver->metrics().rejected_malformed, 0U);
  // One axis out of its limits rejects the whole pose; one axis alone is not a pose.
  Pose6Commands bad = target;
  bad[5] = {0.07, 0.0};
  EXPECT_EQ(pair.driver->command_pose(bad), DriverStatus::kRejected);
  EXPECT_EQ(pair.driver->command({0.0, 0.0}), DriverStatus::kRejected);
  EXPECT_EQ(pair.driver->metrics().rejected_commands, 2U);
}

TEST(RsiControllerEmulator, EachValueOfAPoseCorrectionIsClippedToTheLimit) {
  // 1 mm / 1° of correction at most: 3 mm along z is held at 1 mm.
  RsiPosePair pair(1.0);
  ASSERT_TRUE(pair.driver->wait_for_robot(1.0));
  Pose6Commands far{};
  far[2] = {0.003, 0.0};
  hold(*pair.driver, far, 40);
  EXPECT_GT(pair.robot->stats().clipped, 10U);
  EXPECT_NEAR(pair.robot->pose_plant().true_pose[2], 0.001, 1e-9);
}

TEST(RsiDriver, PoseModeIsConfiguredWholeOrRefused) {
  RsiDriverConfig d;
  d.local = {"127.0.0.1", 0};
  d.axis = {RsiMode::kPose, 0, 1000.0};
  d.force_tag = "FT";  // one force for a whole pose
  EXPECT_THROW((void)RsiDriver(d), std::invalid_argument);
  d.force_tag.clear();
  d.wrench = true;  // a wrench with no tag
  EXPECT_THROW((void)RsiDriver(d), std::invalid_argument);
  d = {};
  d.local = {"127.0.0.1", 0};
  d.force_tag = "FT";
  d.wrench = true;  // a wrench for one axis
  EXPECT_THROW((void)RsiDriver(d), std::invalid_argument);
  RsiControllerEmulatorConfig e;
  e.axis = {RsiMode::kPose, 0, 1000.0};
  EXPECT_THROW((void)RsiControllerEmulator(e), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::hal
