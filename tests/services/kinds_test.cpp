// The loop services ask the kind registry (issue 12): an unknown kind is refused by name at
// configure, with the known kinds, by each of them (never run as another kind); every kind's
// gauges are declared with the names, help and labels of docs/metrics.md whatever runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>
#include <zmq.hpp>

#include "actuator/actuator_component.hpp"
#include "dynamics/dynamics_component.hpp"
#include "identification/identification_component.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "sensor/sensor_component.hpp"

namespace {

using namespace hyloop;
using ::testing::HasSubstr;

v1::ConfigureRequest unknown_kind_request() {
  v1::ConfigureRequest c;
  c.set_run_id("run-1");
  c.set_mode(v1::CLOCK_MODE_LOCKSTEP);
  c.set_sender_id(1);
  c.set_scenario_yaml("kind: crane\nname: tower\n");
  c.mutable_endpoints()->set_telemetry("inproc://telemetry");
  return c;
}

/// Configures `component` with a scenario of an unknown kind: refused, naming it.
void expect_refused(runtime::LoopComponent& component) {
  zmq::context_t context;
  component.set_context(&context);
  component.set_loop_plane({});
  const v1::LifecycleReply r = component.configure(unknown_kind_request());
  EXPECT_NE(r.state(), v1::LIFECYCLE_STATE_INACTIVE) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("unknown scenario kind \"crane\"")) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("the known kinds are fcu, rht, sits")) << r.message();
  component.shutdown();
}

TEST(ServiceKinds, RigEmulatorRefusesAnUnknownKindByName) {
  services::RigEmulatorComponent c;
  expect_refused(c);
}

TEST(ServiceKinds, SensorRefusesAnUnknownKindByName) {
  services::SensorComponent c;
  expect_refused(c);
}

TEST(ServiceKinds, ActuatorRefusesAnUnknownKindByName) {
  services::ActuatorComponent c;
  expect_refused(c);
}

TEST(ServiceKinds, DynamicsRefusesAnUnknownKindByName) {
  services::DynamicsComponent c;
  expect_refused(c);
}

TEST(ServiceKinds, IdentificationRefusesAnUnknownKindByName) {
  services::IdentificationComponent c;
  expect_refused(c);
}

/// Every line of `expected` is in the component's exposition.
void expect_exported(runtime::Component& component, const std::vector<std::string>& expected) {
  const std::string text = component.metrics().text();
  for (const std::string& line : expected) EXPECT_THAT(text, HasSubstr(line + "\n")) << text;
}

TEST(ServiceKinds, EveryKindsGaugesAreDeclaredAsDocumented) {
  services::DynamicsComponent dynamics;
  const std::string flow_help =
      "# HELP hyloop_fuel_flow_grams_per_second FCU: fuel flow in g/s (Prometheus's base unit "
      "of mass is the gram): the ECU's command x_c, the compensated command x_p sent to the "
      "motor, the flow meter's reading x_m.";
  expect_exported(
      dynamics,
      {"# HELP hyloop_target_displacement_meters Displacement x of the numerical target.",
       "# HELP hyloop_measured_force_newtons Contact force as the dynamics received it (after "
       "the sensor's delay).",
       "# HELP hyloop_compensation_force_newtons Compensation force F_h = K_h * (estimated "
       "velocity).",
       "# HELP hyloop_compensator_gain_newton_seconds_per_meter The compensator's current gain "
       "K_h.",
       "# HELP hyloop_observed_energy_joule_seconds SCVG's energy observer, sum of |eps_h| * T.",
       "# HELP hyloop_engine_speed_ratio FCU: the engine's speed n, normalised (1 = design "
       "speed).",
       "# HELP hyloop_ideal_engine_speed_ratio FCU: the ideal twin's engine speed, normalised.",
       flow_help, "hyloop_fuel_flow_grams_per_second{signal=\"command\"} 0",
       "hyloop_fuel_flow_grams_per_second{signal=\"compensated\"} 0",
       "hyloop_fuel_flow_grams_per_second{signal=\"measured\"} 0"});
  services::ActuatorComponent actuator;
  expect_exported(
      actuator,
      {"# HELP hyloop_actuator_command_meters Position command after the safety layer (limits, "
       "rate limit).",
       "# HELP hyloop_actuator_position_limit_meters The configured position limits.",
       "hyloop_actuator_position_limit_meters{bound=\"min\"} 0",
       "hyloop_actuator_position_limit_meters{bound=\"max\"} 0",
       "# HELP hyloop_actuator_command_grams_per_second FCU: the fuel-flow command after the "
       "safety layer (what the AC motor gets).",
       "# HELP hyloop_actuator_command_limit_grams_per_second FCU: the configured fuel-flow "
       "command window.",
       "hyloop_actuator_command_limit_grams_per_second{bound=\"min\"} 0",
       "hyloop_actuator_command_limit_grams_per_second{bound=\"max\"} 0"});
  services::RigEmulatorComponent rig;
  expect_exported(
      rig, {"# HELP hyloop_actuator_position_meters Measured actuator (robot) position.",
            "# HELP hyloop_actuator_command_meters Position command after the safety layer, as "
            "the rig applies it.",
            "# HELP hyloop_actuator_command_grams_per_second FCU: the fuel-flow command the rig "
            "applied (holds) in its last cycle."});
}

}  // namespace
