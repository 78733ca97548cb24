// The actuator stage over several axes: one axis is the single safety layer bit for bit; a
// command refused on one axis moves no axis; the e-stop and the watchdog act on all axes.
#include "hyloop/hal/actuator_stage.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::hal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

SafetyConfig axis_config(double window, double speed) {
  SafetyConfig c;
  c.limits.position_min = -window;
  c.limits.position_max = window;
  c.limits.velocity_max = speed;
  c.limits.acceleration_max = 50.0;
  c.step = 0.004;
  c.watchdog_cycles = 5;
  c.stop_deceleration = 20.0;
  return c;
}

TEST(ActuatorStage, OneAxisIsTheSafetyLayerBitForBit) {
  const SafetyConfig config = axis_config(0.1, 0.5);
  ActuatorStage stage(2, config);
  ActuatorSafety reference(config);
  stage.reset(ActuatorCommand{0.01, 0.0});
  reference.reset(0.01);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> position(-0.15, 0.15);
  for (std::int64_t k = 1; k < 4000; ++k) {
    const ActuatorCommand c{position(rng), position(rng) * 4.0};
    const bool missing = k % 97 == 0;
    const SafetyOutput& got = stage.update(k, missing ? nullptr : &c);
    if (!stage.latches(k)) continue;
    const SafetyOutput want = reference.filter(missing ? nullptr : &c);
    ASSERT_EQ(got.command.position, want.command.position) << k;
    ASSERT_EQ(got.command.velocity, want.command.velocity) << k;
    ASSERT_EQ(got.event, want.event) << k;
    ASSERT_EQ(stage.applied()[0].position, want.command.position) << k;
  }
}

TEST(ActuatorStage, ACommandRefusedOnOneAxisMovesNoAxis) {
  std::vector<SafetyConfig> axes = {axis_config(0.1, 0.5), axis_config(0.5, 1.0),
                                    axis_config(0.2, 0.5)};
  for (SafetyConfig& a : axes) a.limits.acceleration_max = kInf;  // steps pass unclipped
  ActuatorStage stage(1, axes);
  const std::array<ActuatorCommand, 3> start = {{{0.0, 0.0}, {0.1, 0.0}, {-0.05, 0.0}}};
  stage.reset(start);
  std::array<ActuatorCommand, 3> c = {{{0.001, 0.0}, {0.101, 0.0}, {-0.049, 0.0}}};
  stage.update(1, c.data());
  EXPECT_EQ(stage.applied()[1].position, 0.101);
  EXPECT_EQ(stage.output().event, SafetyEvent::kNone);
  // Axis 2 beyond its window: no axis takes the command, axis 2 counts the rejection.
  c = {{{0.002, 0.0}, {0.102, 0.0}, {0.3, 0.0}}};
  const SafetyOutput& refused = stage.update(2, c.data());
  EXPECT_EQ(refused.event, SafetyEvent::kRejectedPosition);
  EXPECT_EQ(stage.applied()[0].position, 0.001);
  EXPECT_EQ(stage.applied()[1].position, 0.101);
  EXPECT_EQ(stage.applied()[2].position, -0.049);
  EXPECT_EQ(stage.total(&ActuatorSafety::rejected_position), 1U);
  EXPECT_EQ(stage.safety(2).rejected_position(), 1U);
  // A NaN on axis 1: the same.
  c = {{{0.002, 0.0}, {std::numeric_limits<double>::quiet_NaN(), 0.0}, {-0.048, 0.0}}};
  EXPECT_EQ(stage.update(3, c.data()).event, SafetyEvent::kRejectedNotFinite);
  EXPECT_EQ(stage.applied()[0].position, 0.001);
  EXPECT_EQ(stage.applied()[2].position, -0.049);
  // Watchdog: all axes count the same cycles without a valid command and trip together.
  for (std::int64_t k = 4; k < 8; ++k) stage.update(k, nullptr);
  EXPECT_TRUE(stage.watchdog_tripped());
  for (std::size_t a = 0; a < 3; ++a) EXPECT_TRUE(stage.safety(a).watchdog_tripped()) << a;
}

TEST(ActuatorStage, TheEmergencyStopBringsEveryAxisToRest) {
  const std::vector<SafetyConfig> axes(6, axis_config(1.0, 0.5));
  ActuatorStage stage(1, axes);
  stage.reset(std::array<ActuatorCommand, 6>{});
  std::array<ActuatorCommand, 6> c{};
  std::int64_t k = 1;
  for (; k < 200; ++k) {  // every axis moving, at different speeds
    for (std::size_t a = 0; a < 6; ++a) {
      c[a].position = static_cast<double>(k) * 0.004 * 0.05 * static_cast<double>(a + 1);
      c[a].velocity = 0.05 * static_cast<double>(a + 1);
    }
    stage.update(k, c.data());
  }
  ASSERT_FALSE(stage.at_rest());
  stage.emergency_stop();
  const std::int64_t requested = k;
  {
    const testing::AllocGuard guard;
    while (!stage.at_rest() && k < requested + 1000) stage.update(k++, c.data());
    EXPECT_EQ(guard.allocations(), 0U);
  }
  EXPECT_TRUE(stage.estopped());
  for (std::size_t a = 0; a < 6; ++a) EXPECT_TRUE(stage.safety(a).at_rest()) << a;
  // The fastest axis (0.3 m/s) at 20 m/s² stops within 15 ms plus a period.
  EXPECT_LE(static_cast<double>(k - requested) * 0.004, 0.3 / 20.0 + 2 * 0.004);
}

TEST(ActuatorStage, TooManyAxesOrABadAxisAreRefusedByAxis) {
  const std::vector<SafetyConfig> nine(kMaxAxes + 1, axis_config(0.1, 0.5));
  EXPECT_THROW(ActuatorStage(1, nine), std::invalid_argument);
  std::vector<SafetyConfig> bad = {axis_config(0.1, 0.5), axis_config(0.1, 0.5)};
  bad[1].limits.position_min = 1.0;  // above its max
  try {
    ActuatorStage stage(1, bad);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("axis 1: "));
  }
}

}  // namespace
}  // namespace hyloop::hal
