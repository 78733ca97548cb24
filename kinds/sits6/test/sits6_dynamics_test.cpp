// The six-axis kind's dynamics, fields and parts (issue 28): torque-free tumbling through
// Sits6Dynamics conserves the world angular momentum and the energy to RigidBody's tolerances; a
// bad field is refused naming it, its value and its range; the scenarios round-trip; the parts
// and the runner allocate nothing per cycle.
#include "hyloop/kinds/sits6/sits6_dynamics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/actuator_stage.hpp"
#include "hyloop/kinds/sits6/sits6_runner.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

const std::string kDir = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits6/";

Sits6Scenario load6(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return parse_sits6_scenario(read_scenario_text(kDir + name), name, overrides);
}

std::string error_of(const std::string& name, const std::vector<std::string>& overrides) {
  try {
    (void)load6(name, overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

double relative(const Eigen::Vector3d& a, const Eigen::Vector3d& b) {
  return (a - b).norm() / b.norm();
}

// RigidBody's torque-free tolerances (libs/core/test/rigid_body_test.cpp, 600 s at T = 2 ms).
constexpr double kMomentumTolerance = 1e-12;
constexpr double kEnergyTolerance = 8e-8;

// The tumbling body with the rig bypassed: the measured pose is the command, the measured wrench
// 0, no compensation: F' = 0 on every axis, so the body tumbles torque-free for 600 s. Its
// contact is off the CoM and its inertia a full tensor.
TEST(Sits6Dynamics, TorqueFreeTumblingConservesMomentumAndEnergy) {
  const Sits6Scenario s =
      load6("tumbling.yaml", {"timing.duration_s=600", "guard.enabled=false",
                              "rig.contact.stiffness_n_per_m=[1e-12, 1e-12, 1e-12]",
                              "rig.contact.damping_ns_per_m=[0, 0, 0]",
                              "rig.limits.position_min_m=[-1e3, -1e3, -1e3]",
                              "rig.limits.position_max_m=[1e3, 1e3, 1e3]",
                              "rig.limits.angle_min_rad=[-3.15, -3.15, -3.15]",
                              "rig.limits.angle_max_rad=[3.15, 3.15, 3.15]"});
  Sits6Dynamics d(s);
  const Eigen::Vector3d l0 = d.target().world_angular_momentum();
  const Eigen::Vector3d w0 = d.target().state().angular_velocity;
  const double e0 = d.target().kinetic_energy();
  std::array<hal::ActuatorCommand, kSits6Axes> next = sits6_initial_commands(s);
  std::array<double, 2 * kSits6Axes> m{};
  std::vector<double> values(kSits6DynamicsColumns);
  double worst_l = 0.0, worst_e = 0.0, worst_column = 0.0, omega_change = 0.0;
  double first_energy = 0.0;
  for (std::int64_t k = 0; k < s.steps(); ++k) {
    for (std::size_t i = 0; i < kSits6Axes; ++i) m[i] = next[i].position;
    ASSERT_EQ(d.step(k, m, values, next), StopReason::kNone) << k;
    if (k == 0) first_energy = values[kSits6Energy];
    ASSERT_EQ(values[sits6_column(5, Sits6AxisColumn::kWrenchInput)], 0.0);
    worst_l = std::max(worst_l, relative(d.target().world_angular_momentum(), l0));
    worst_e = std::max(worst_e, std::abs(d.target().kinetic_energy() - e0) / e0);
    worst_column = std::max(worst_column, std::abs(values[kSits6Energy] / first_energy - 1.0));
    omega_change = std::max(omega_change, (d.target().state().angular_velocity - w0).norm());
  }
  std::printf("600 s: |dL_w|/|L_w| %.2e, |dE|/E %.2e (energy column %.2e), max |w - w0| %.3f\n",
              worst_l, worst_e, worst_column, omega_change);
  EXPECT_LT(worst_l, kMomentumTolerance);
  EXPECT_LT(worst_e, kEnergyTolerance);
  EXPECT_LT(worst_column, kEnergyTolerance);
  EXPECT_GT(omega_change, 0.01);  // it tumbles: ω moves in the body (asymmetric inertia)
  // The rotational pose the rig is sent is the rotation vector: |θ| <= π.
  for (std::size_t i = 3; i < kSits6Axes; ++i)
    EXPECT_LE(std::abs(next[i].position), std::numbers::pi);
}

// The scenario's initial twist is the contact frame's: with the contact 0.2 m off the CoM the
// CoM moves by −ω × (R r_c) so that the frame starts at rest.
TEST(Sits6Dynamics, TheInitialCommandIsTheContactFramesPoseAndTwist) {
  const Sits6Scenario s = load6("tumbling.yaml");
  const Sits6Dynamics d(s);
  const Sits6Dynamics::Frame f = d.frame(d.target());
  const auto initial = sits6_initial_commands(s);
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    const auto a = static_cast<Eigen::Index>(i);
    EXPECT_NEAR(f.pose[a], initial[i].position, 1e-15) << i;
    EXPECT_NEAR(f.twist[a], initial[i].velocity, 1e-15) << i;
  }
  EXPECT_EQ(initial[5].velocity, 0.1);
  EXPECT_NEAR(d.target().state().velocity.x(), 0.1 * 0.2, 1e-15);  // −(ω × arm)_x = ω_z·0.2
}

TEST(Sits6Fields, ABadFieldIsRefusedNamingItItsValueAndTheRule) {
  const std::string triangle = error_of(
      "off_centre.yaml",
      {"model.inertia.ixx_kg_m2=10", "model.inertia.iyy_kg_m2=10", "model.inertia.izz_kg_m2=30"});
  EXPECT_NE(triangle.find("off_centre.yaml: model.inertia (ixx_kg_m2 = 10, iyy_kg_m2 = 10, "
                          "izz_kg_m2 = 30"),
            std::string::npos)
      << triangle;
  EXPECT_NE(triangle.find("triangle inequality"), std::string::npos) << triangle;
  const std::string kr =
      error_of("off_centre.yaml", {"rig.contact.rotational_stiffness_nm_per_rad=[200, -1, 200]"});
  EXPECT_NE(kr.find("rig.contact.rotational_stiffness_nm_per_rad"), std::string::npos) << kr;
  EXPECT_NE(kr.find("-1"), std::string::npos) << kr;
  EXPECT_NE(kr.find("must be in [0, 1e+10] N*m/rad"), std::string::npos) << kr;
  const std::string two = error_of("off_centre.yaml", {"rig.contact.stiffness_n_per_m=[1, 2]"});
  EXPECT_NE(two.find("rig.contact.stiffness_n_per_m: 2 values: must hold 3"), std::string::npos)
      << two;
  const std::string start = error_of("off_centre.yaml", {"model.initial_position_m=[0, 0.6, 0]"});
  EXPECT_NE(start.find("model.initial_position_m[1] = 0.6: must lie within rig.limits"),
            std::string::npos)
      << start;
  const std::string window = error_of("off_centre.yaml", {"rig.limits.angle_max_rad=[1, 0, 1]",
                                                          "rig.limits.angle_min_rad=[-1, 0, -1]"});
  EXPECT_NE(window.find("rig.limits.angle_min_rad[1] = 0: must be < angle_max_rad[1]"),
            std::string::npos)
      << window;
  const std::string type = error_of("off_centre.yaml", {"rotational_compensator.type=pid"});
  EXPECT_NE(type.find("rotational_compensator.type"), std::string::npos) << type;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// As ScenarioFields.EveryRangeInTheTableIsEnforcedNamingTheField for the shipped kinds: a value
// just outside each range (in every item of a list) or an enum value not in the table is refused
// naming the field.
TEST(Sits6Fields, EveryRangeInTheTableIsEnforcedNamingTheField) {
  int checked = 0;
  for (const FieldSpec& f : sits6_field_table().fields) {
    std::vector<std::string> out;
    const bool integer = f.type == FieldType::kInteger;
    const auto step = [&](double v) { return integer ? 1.0 : std::max(1e-3, std::abs(v) * 1e-3); };
    if (f.range.min) {
      out.push_back(number_text(
          f.range.min_exclusive && !integer ? *f.range.min : *f.range.min - step(*f.range.min)));
    }
    if (f.range.max) {
      out.push_back(number_text(
          f.range.max_exclusive && !integer ? *f.range.max : *f.range.max + step(*f.range.max)));
    }
    if (f.type == FieldType::kEnum && f.name != "kind") out.emplace_back("not_one_of_them");
    for (const std::string& v : out) {
      const std::string set =
          f.type == FieldType::kNumberList ? "[" + v + ", " + v + ", " + v + "]" : v;
      const std::string e = error_of("off_centre.yaml", {f.name + "=" + set});
      EXPECT_NE(e.find(f.name), std::string::npos)
          << f.name << " = " << set << ": " << (e.empty() ? "accepted" : e);
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

// The parts of a cycle (rig part → dynamics part → the six-axis actuator stage) and the
// in-process runner allocate nothing once built, with noise on all six sensor axes.
// off_centre with noise; the capture (at 1 s, inside the 2000 cycles) with the body's observer.
class Sits6Parts : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Scenarios, Sits6Parts, ::testing::Values("off_centre", "capture"));

TEST_P(Sits6Parts, ACycleAllocatesNothing) {
  const bool capture = std::string(GetParam()) == "capture";
  const std::vector<std::string> overrides =
      capture ? std::vector<std::string>{"rig.contact.engage_at_s=1", "energy_observer=body",
                                         "rig.sensor.force_noise_std_n=[0.5, 0.4, 0.3]"}
              : std::vector<std::string>{"rig.sensor.force_noise_std_n=[0.5, 0.4, 0.3]",
                                         "rig.sensor.torque_noise_std_nm=[0.05, 0.04, 0.03]",
                                         "rig.sensor.angle_noise_std_rad=[1e-5, 1e-5, 1e-5]"};
  const Sits6Scenario s = load6(std::string(GetParam()) + ".yaml", overrides);
  const LoopPlan plan = sits6_loop_plan(s);
  const auto rig = make_sits6_rig_part(s);
  const auto dynamics = make_sits6_dynamics_part(s);
  const std::vector<hal::SafetyConfig> safety = plan_safety(plan);
  hal::ActuatorStage stage(plan.hold_steps, safety);
  const std::array<hal::ActuatorCommand, hal::kMaxAxes> initial = plan_initial(plan);
  stage.reset(std::span(initial.data(), kSits6Axes));
  std::array<double, 2 * kSits6Axes> m{};
  std::array<double, kSits6TruthColumns> truth{};
  std::vector<double> values(dynamics->names().size());
  std::array<hal::ActuatorCommand, kSits6Axes> next{};
  std::size_t allocations = 0;
  for (std::int64_t k = 0; k < 2000; ++k) {
    testing::AllocGuard guard;
    rig->step_axes(stage.applied(), m, truth);
    ASSERT_FALSE(dynamics->step_axes(k, m, values, next).stopped()) << k;
    (void)stage.update(k + 1, next.data());
    if (k >= 3) allocations += guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  EXPECT_NE(values[sits6_column(5, Sits6AxisColumn::kWrenchMeas)], 0.0);  // the torque moves
  if (capture) {
    EXPECT_NE(values[sits6_column(3, Sits6AxisColumn::kWrenchIdeal)], 0.0);  // gripped
  }

  Sits6Runner runner(s);
  testing::AllocGuard guard;
  std::int64_t steps = 0;
  while (runner.step()) ++steps;
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_EQ(steps + 1, runner.total_steps());
  EXPECT_FALSE(runner.stopped());
}

}  // namespace
}  // namespace hyloop::experiment
