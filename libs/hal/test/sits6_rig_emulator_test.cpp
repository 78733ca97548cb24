#include "hyloop/hal/sits6_rig_emulator.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "hyloop/hal/sits_rig_emulator.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::hal {
namespace {

using core::Vector6;

constexpr double kPi = std::numbers::pi;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr int kSteps = 5000;

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

Vector6 vec6(double a, double b, double c, double d, double e, double f) {
  Vector6 v;
  v << a, b, c, d, e, f;
  return v;
}

/// The SITS scenarios' robot, preset "default": ω_n = 2π·40 rad/s, ζ = 0.6, ω_z = 300 rad/s,
/// G_R = (ω_n²/ω_z·s + ω_n²) / (s² + 2ζω_n·s + ω_n²) (kinds/sits, RobotSpec).
core::TransferFunction sits_robot() {
  const double wn = 2.0 * kPi * 40.0;
  const double wn2 = wn * wn;
  return {{wn2 / 300.0, wn2}, {1.0, 2.0 * 0.6 * wn, wn2}};
}

ActuatorLimits x_limits() { return {-0.1, 0.1, 0.5, kIndustrialRobotAccelerationMax}; }

SitsRigConfig one_config() {
  SitsRigConfig c;
  c.step = 0.002;
  c.robot = sits_robot();
  c.contact = {20000.0, 50.0};
  c.sensor_delay_steps = 1.37;  // τs = 2.74 ms
  c.force_noise_std = 0.8;
  c.position_noise_std = 2e-5;
  c.seed = 42;
  c.limits = x_limits();
  return c;
}

/// one_config() on x; the other axes move with G_R too but have no noise; r = 0.
Sits6RigConfig six_config() {
  Sits6RigConfig c;
  c.step = 0.002;
  for (auto& robot : c.robot) robot = sits_robot();
  c.contact.translational_stiffness = {20000.0, 15000.0, 30000.0};
  c.contact.translational_damping = {50.0, 40.0, 60.0};
  c.sensor_delay_steps = 1.37;
  c.wrench_noise_std[0] = 0.8;
  c.pose_noise_std[0] = 2e-5;
  c.seed = 42;
  c.limits[0] = x_limits();
  return c;
}

/// A varied x command, refreshed every other step, with out-of-range and NaN ones mixed in.
ActuatorCommand x_command(int k) {
  const double t = 0.002 * k;
  const double w1 = 2.0 * kPi * 0.7;
  const double w2 = 2.0 * kPi * 3.1;
  ActuatorCommand c{0.03 * std::sin(w1 * t) + 0.01 * std::sin(w2 * t + 0.4) + (k > 2500 ? 0.02 : 0),
                    0.03 * w1 * std::cos(w1 * t) + 0.01 * w2 * std::cos(w2 * t + 0.4)};
  if (k % 700 == 350) c.position = 0.2;  // beyond position_max
  if (k % 911 == 17) c.velocity = kNan;  // not finite
  if (k % 1300 == 6) c.velocity = -0.6;  // beyond velocity_max
  return c;
}

/// Frozen force, lost position, then both, at the same steps on both rigs.
template <class Faults>
Faults faults_at(int k) {
  const bool freeze = (k >= 2000 && k < 2100) || (k >= 4000 && k < 4050);
  const bool lose = (k >= 3000 && k < 3150) || (k >= 4000 && k < 4050);
  return {freeze, lose};
}

/// Runs both rigs in lockstep for kSteps steps; asserts every x quantity bit for bit and calls
/// other(six, k) after each step. `others` is added to the 6-D command's axes 1..5.
template <class Other>
void run_in_lockstep(const Sits6RigConfig& six_cfg, const Vector6& others, Other&& other) {
  SitsRigEmulator one(one_config());
  Sits6RigEmulator six(six_cfg);
  one.reset(0.004);
  six.reset(vec6(0.004, 0, 0, 0, 0, 0));
  for (int k = 0; k < kSteps; ++k) {
    if (k % 2 == 0) {
      const ActuatorCommand c = x_command(k);
      Pose6Command c6{std::sin(0.01 * k) * others, std::cos(0.01 * k) * others};
      c6.pose[0] = c.position;
      c6.rate[0] = c.velocity;
      ASSERT_EQ(one.apply(c), six.apply(c6)) << k;
    }
    one.set_faults(faults_at<SitsRigFaults>(k));
    six.set_faults(faults_at<Sits6RigFaults>(k));
    one.advance();
    six.advance();
    ASSERT_EQ(bits(six.true_robot_pose()[0]), bits(one.true_robot_state().position)) << k;
    ASSERT_EQ(bits(six.true_robot_twist()[0]), bits(one.true_robot_state().velocity)) << k;
    ASSERT_EQ(bits(six.robot_pose()[0]), bits(one.robot_state().position)) << k;
    ASSERT_EQ(bits(six.robot_twist()[0]), bits(one.robot_state().velocity)) << k;
    ASSERT_EQ(bits(six.contact_wrench()[0]), bits(one.contact_force())) << k;
    ASSERT_EQ(bits(six.measured_wrench()[0]), bits(one.measured_force())) << k;
    ASSERT_EQ(bits(six.held_command().pose[0]), bits(one.held_command().position)) << k;
    ASSERT_EQ(six.cycle(), one.cycle());
    other(six, k);
  }
  EXPECT_EQ(six.rejected_commands(), one.rejected_commands());
  EXPECT_EQ(six.rejected_commands(), 14u);  // at even k: 7 position, 3 NaN, 4 velocity
}

TEST(Sits6RigEmulator, XAxisEqualsTheOneDimensionalRigBitForBitAndTheRestStaysZero) {
  int checked = 0;
  run_in_lockstep(six_config(), Vector6::Zero(), [&](const Sits6RigEmulator& six, int k) {
    for (int i = 1; i < 6; ++i) {
      ASSERT_EQ(six.true_robot_pose()[i], 0.0) << k << " axis " << i;
      ASSERT_EQ(six.true_robot_twist()[i], 0.0) << k << " axis " << i;
      ASSERT_EQ(six.robot_pose()[i], 0.0) << k << " axis " << i;
      ASSERT_EQ(six.contact_wrench()[i], 0.0) << k << " axis " << i;
      ASSERT_EQ(six.measured_wrench()[i], 0.0) << k << " axis " << i;
    }
    ++checked;
  });
  EXPECT_EQ(checked, kSteps);
}

TEST(Sits6RigEmulator, NoiseBiasAndMotionOnTheOtherAxesLeaveXBitForBit) {
  Sits6RigConfig c = six_config();
  c.wrench_noise_std = vec6(0.8, 0.5, 0.7, 0.02, 0.03, 0.04);
  c.pose_noise_std = vec6(2e-5, 1e-5, 3e-5, 1e-4, 2e-4, 3e-4);
  c.wrench_bias = vec6(0.0, 1.5, -2.0, 0.1, -0.2, 0.3);
  int noisy = 0;
  run_in_lockstep(c, vec6(0, 0.01, -0.02, 0.05, 0.03, -0.04),
                  [&](const Sits6RigEmulator& six, int) {
                    for (int i = 1; i < 6; ++i) {
                      noisy += six.robot_pose()[i] != six.true_robot_pose()[i];
                    }
                  });
  EXPECT_GT(noisy, 5 * (kSteps - 200) - 5);  // every axis noisy except while the pose is lost
}

Sits6RigConfig bypass_config(double delay_steps) {
  Sits6RigConfig c;
  c.contact.contact_offset = {0.05, -0.02, 0.1};
  c.sensor_delay_steps = delay_steps;
  return c;
}

TEST(Sits6RigEmulator, BiasAppearsInTheMeasuredWrenchAndNotInTheTrueOne) {
  Sits6RigConfig c = bypass_config(2.0);
  c.wrench_bias = vec6(1.0, -2.0, 3.0, 0.1, -0.2, 0.3);
  Sits6RigEmulator rig(c);
  const core::Contact6Model model(c.contact);
  const Vector6 q = vec6(0.001, -0.002, 0.0005, 0.01, -0.02, 0.03);
  rig.reset(Vector6::Zero());
  EXPECT_EQ(rig.measured_wrench(), model.wrench(Vector6::Zero(), Vector6::Zero()) + c.wrench_bias);
  ASSERT_EQ(rig.apply({q, Vector6::Zero()}), DriverStatus::kOk);
  for (int k = 0; k < 10; ++k) rig.advance();
  EXPECT_EQ(rig.contact_wrench(), model.wrench(q, Vector6::Zero()));
  EXPECT_EQ(rig.measured_wrench(), model.wrench(q, Vector6::Zero()) + c.wrench_bias);
  EXPECT_GT((rig.measured_wrench() - rig.contact_wrench()).cwiseAbs().minCoeff(), 0.09);
}

TEST(Sits6RigEmulator, TheSensorDelayInStepsIsVisible) {
  for (const double d : {3.0, 2.5}) {
    Sits6RigEmulator rig(bypass_config(d));
    rig.reset(vec6(0, 0, 0.001, 0, 0, 0.01));
    const Vector6 q = vec6(0, 0, 0.002, 0, 0, 0.02);  // z and rz step at k = 10
    const Vector6 before = rig.contact_wrench();
    Vector6 after;
    for (int k = 0; k < 20; ++k) {
      if (k == 10) rig.apply({q, Vector6::Zero()});
      rig.advance();
      if (k == 10) after = rig.contact_wrench();
      for (const int i : {2, 5}) {
        const double m = rig.measured_wrench()[i];
        if (k < 12) {
          ASSERT_EQ(m, before[i]) << "d " << d << " k " << k;
        } else if (k == 12) {  // d = 2.5: half way (y = ½·x[k−2] + ½·x[k−3])
          ASSERT_EQ(m, d == 3.0 ? before[i] : 0.5 * after[i] + 0.5 * before[i]) << d;
        } else {
          ASSERT_EQ(m, after[i]) << "d " << d << " k " << k;
        }
      }
    }
    EXPECT_NE(after[2], before[2]);
    EXPECT_NE(after[5], before[5]);
  }
}

TEST(Sits6RigEmulator, ACommandBeyondAnyAxisLimitIsRejectedAsAWhole) {
  Sits6RigConfig c = bypass_config(1.0);
  c.limits[3] = {-0.1, 0.1, 0.5, 10.0};  // rx: ±0.1 rad, 0.5 rad/s
  Sits6RigEmulator rig(c);
  EXPECT_EQ(rig.rejected_axis(), -1);
  const Pose6Command good{vec6(0.01, 0, 0, 0.05, 0, 0), vec6(0.1, 0, 0, 0.2, 0, 0)};
  ASSERT_EQ(rig.apply(good), DriverStatus::kOk);
  struct Bad {
    int axis;
    bool rate;
    double value;
    LimitVerdict reason;
  };
  const Bad bad[] = {{3, false, 0.15, LimitVerdict::kPositionLimit},
                     {3, true, -0.6, LimitVerdict::kVelocityLimit},
                     {4, false, kNan, LimitVerdict::kNotFinite},
                     {2, true, std::numeric_limits<double>::infinity(), LimitVerdict::kNotFinite},
                     {0, true, kNan, LimitVerdict::kNotFinite}};
  std::uint64_t count = 0;
  for (const Bad& b : bad) {
    Pose6Command cmd{vec6(0.02, 0.01, 0.01, 0.0, 0.01, 0.01), Vector6::Zero()};
    (b.rate ? cmd.rate : cmd.pose)[b.axis] = b.value;
    EXPECT_EQ(rig.apply(cmd), DriverStatus::kRejected) << b.axis;
    EXPECT_EQ(rig.rejected_commands(), ++count);
    EXPECT_EQ(rig.rejected_axis(), b.axis);
    EXPECT_EQ(rig.rejection_reason(), b.reason) << b.axis;
    EXPECT_EQ(rig.held_command().pose, good.pose);
    EXPECT_EQ(rig.held_command().rate, good.rate);
  }
  rig.advance();
  EXPECT_EQ(rig.true_robot_pose(), good.pose);  // bypass: the held command
  EXPECT_EQ(rig.true_robot_twist(), good.rate);
  const Pose6Command edge{vec6(0, 0, 0, 0.1, 0, 0), vec6(0, 0, 0, -0.5, 0, 0)};  // on the limit
  EXPECT_EQ(rig.apply(edge), DriverStatus::kOk);
  EXPECT_EQ(rig.rejected_commands(), count);
}

TEST(Sits6RigEmulator, ResetIsBumpless) {
  Sits6RigConfig c = bypass_config(1.5);
  for (auto& robot : c.robot) robot = sits_robot();
  Sits6RigEmulator rig(c);
  const core::Contact6Model model(c.contact);
  const Vector6 q0 = vec6(0.003, -0.001, 0.002, 0.02, -0.01, 0.015);
  const Vector6 w0 = model.wrench(q0, Vector6::Zero());
  rig.advance();
  rig.reset(q0);
  EXPECT_EQ(rig.cycle(), -1);
  EXPECT_EQ(rig.contact_wrench(), w0);
  EXPECT_EQ(rig.measured_wrench(), w0);
  EXPECT_EQ(rig.held_command().pose, q0);
  rig.advance();
  EXPECT_EQ(rig.cycle(), 0);
  EXPECT_EQ(rig.measured_wrench(), w0);  // the history at reset, ½·w0 + ½·w0
  EXPECT_LE((rig.true_robot_pose() - q0).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_LE((rig.contact_wrench() - w0).cwiseAbs().maxCoeff(), 1e-10);
}

TEST(Sits6RigEmulator, FaultsFreezeTheWrenchAndLoseThePose) {
  Sits6RigEmulator rig(bypass_config(0.0));
  rig.reset(Vector6::Zero());
  const Vector6 q = vec6(0.001, 0.002, 0.003, 0.01, 0.02, 0.03);
  rig.set_faults({true, true});
  rig.apply({q, q});
  rig.advance();
  EXPECT_EQ(rig.true_robot_pose(), q);
  EXPECT_EQ(rig.robot_pose(), Vector6::Zero());
  EXPECT_EQ(rig.robot_twist(), Vector6::Zero());
  EXPECT_EQ(rig.measured_wrench(), rig.contact().wrench(Vector6::Zero(), Vector6::Zero()));
  rig.set_faults({});
  rig.advance();
  EXPECT_EQ(rig.robot_pose(), q);
  EXPECT_EQ(rig.robot_twist(), q);
  EXPECT_EQ(rig.measured_wrench(), rig.contact_wrench());
}

TEST(Sits6RigEmulator, AdvanceAndApplyAllocateNothingAndResetRestartsTheNoise) {
  Sits6RigConfig c = six_config();
  c.contact.contact_offset = {0.05, -0.02, 0.1};
  c.wrench_noise_std = Vector6::Constant(0.5);
  c.pose_noise_std = Vector6::Constant(1e-4);
  Sits6RigEmulator rig(c);
  rig.reset(Vector6::Zero());
  Vector6 first = Vector6::Zero();
  {
    testing::AllocGuard guard;
    for (int k = 0; k < 2000; ++k) {
      const ActuatorCommand x = x_command(k);  // includes rejected commands
      rig.apply({Vector6::Constant(x.position), Vector6::Constant(x.velocity)});
      rig.advance();
      if (k == 0) first = rig.measured_wrench();
    }
    EXPECT_EQ(guard.allocations(), 0u);
  }
  EXPECT_GT(rig.rejected_commands(), 0u);
  rig.reset(Vector6::Zero());
  rig.apply({Vector6::Constant(x_command(0).position), Vector6::Constant(x_command(0).velocity)});
  rig.advance();
  EXPECT_EQ(rig.measured_wrench(), first);
}

std::string message(const Sits6RigConfig& c) {
  try {
    const Sits6RigEmulator rig(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Sits6RigEmulator, RefusesBadConfigurationNamingTheField) {
  using ::testing::HasSubstr;
  Sits6RigConfig c;
  c.step = 0.0;
  EXPECT_THAT(message(c), HasSubstr("step = 0"));
  c = {};
  c.wrench_noise_std[3] = -1.0;
  EXPECT_THAT(message(c), HasSubstr("wrench_noise_std[3] = -1"));
  c = {};
  c.pose_noise_std[5] = kNan;
  EXPECT_THAT(message(c), HasSubstr("pose_noise_std[5] = nan"));
  c = {};
  c.wrench_bias[2] = std::numeric_limits<double>::infinity();
  EXPECT_THAT(message(c), HasSubstr("wrench_bias[2] = inf"));
  c = {};
  c.sensor_delay_steps = -1.0;
  EXPECT_THAT(message(c), HasSubstr("sensor_delay_steps = -1"));
  c = {};
  c.limits[4].position_min = 1.0;
  c.limits[4].position_max = -1.0;
  EXPECT_THAT(message(c), HasSubstr("limits[4].position_min = 1"));
  c = {};
  c.limits[1].velocity_max = 0.0;
  EXPECT_THAT(message(c), HasSubstr("limits[1].velocity_max = 0"));
  c = {};
  c.robot[2] = core::TransferFunction{{1.0}, {0.0, 1.0}};
  EXPECT_THAT(message(c), HasSubstr("robot[2]: "));
  c = {};
  c.contact.translational_stiffness[1] = 0.0;
  EXPECT_THAT(message(c), HasSubstr("translational_stiffness[1] = 0"));
  EXPECT_EQ(message(Sits6RigConfig{}), "(accepted)");
}

}  // namespace
// A capture (engage_cycle): no wrench before it, then the spring at rest at the robot's pose of
// that cycle, acting on the pose relative to it.
TEST(Sits6RigEmulator, ACaptureEngagesTheContactAtRestAtThatCyclesPose) {
  Sits6RigConfig c = six_config();
  c.wrench_noise_std.setZero();
  c.pose_noise_std.setZero();
  c.engage_cycle = 50;
  Sits6RigEmulator rig(c);
  rig.reset(vec6(0.004, 0, 0, 0, 0, 0.1));
  EXPECT_FALSE(rig.engaged());
  EXPECT_EQ(rig.contact_wrench(), Vector6::Zero());
  for (int k = 0; k < 200; ++k) {
    (void)rig.apply(
        {vec6(0.004 + 1e-4 * k, 0, 0, 0, 0, 0.1 + 1e-3 * k), vec6(0.05, 0, 0, 0, 0, 0.5)});
    rig.advance();
    if (k < 50) {
      ASSERT_FALSE(rig.engaged()) << k;
      ASSERT_EQ(rig.contact_wrench(), Vector6::Zero()) << k;
      continue;
    }
    ASSERT_TRUE(rig.engaged()) << k;
    if (k == 50) {
      EXPECT_EQ(rig.rest_pose(), rig.true_robot_pose());
    }
    const Vector6 want = rig.contact().wrench(
        core::relative_pose(rig.true_robot_pose(), rig.rest_pose()), rig.true_robot_twist());
    ASSERT_EQ(rig.contact_wrench(), want) << k;
  }
  EXPECT_GT(std::abs(rig.contact_wrench()[0]), 1.0);  // the spring is loaded by then
  c.engage_cycle = -1;
  EXPECT_THROW(Sits6RigEmulator bad(c), std::invalid_argument);
}

}  // namespace hyloop::hal
