// The loop services ask the kind registry (issue 12): an unknown kind is refused by name at
// configure, with the known kinds, by each of them (never run as another kind); every kind's
// gauges are declared with the names, help and labels of docs/metrics.md whatever runs; every
// service refuses a configuration whose signal layouts differ from its own reading (loop
// contract v2), naming the channel and the signal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "actuator/actuator_component.hpp"
#include "dynamics/dynamics_component.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits/sits_jobs.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/transport/layout.hpp"
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
  EXPECT_THAT(r.message(), HasSubstr("kind = \"crane\": must be one of fcu, rht, sits"))
      << r.message();
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

// ---- loop contract v2: every service checks the layouts of its channels at configure ----------

v1::ConfigureRequest identify_request(const std::string& measurement_force_unit,
                                      const std::string& command_unit, bool layouts = true) {
  v1::ConfigureRequest c = unknown_kind_request();
  // identify.yaml as the coordinator runs it (a new command every step, N cycles): every
  // service, the identification one too, takes it.
  const std::string text = experiment::read_scenario_text(std::string(HYLOOP_SOURCE_DIR) +
                                                          "/scenarios/sits/identify.yaml");
  c.set_scenario_yaml(
      experiment::to_yaml(experiment::identification_run_scenario(text, "identify")));
  experiment::LoopPlan plan = experiment::loop_plan(c.scenario_yaml());
  plan.measurement.signals.at(2).unit = measurement_force_unit;
  plan.command.signals.at(0).unit = command_unit;
  if (layouts) transport::add_loop_layouts(plan.measurement, plan.command, *c.mutable_layouts());
  return c;
}

/// Configures `component` with `request`: refused with a message containing `why`.
void expect_refused_with(runtime::LoopComponent& component, const v1::ConfigureRequest& request,
                         const std::string& why) {
  zmq::context_t context;
  component.set_context(&context);
  component.set_loop_plane({});
  const v1::LifecycleReply r = component.configure(request);
  EXPECT_NE(r.state(), v1::LIFECYCLE_STATE_INACTIVE) << r.message();
  EXPECT_THAT(r.message(), HasSubstr(why)) << r.message();
  component.shutdown();
}

const std::string kKilonewtons =
    "layouts: channel 'measurement': signal 2 is 'f_meas' [N] (force) here, 'f_meas' [kN] "
    "(force) in the request";
const std::string kMillimetres =
    "layouts: channel 'command': signal 0 is 'x_cmd' [m] (length) here, 'x_cmd' [mm] (length) "
    "in the request";

/// Every service that sends or receives `channel` ("": every service) refuses `request` with
/// a message containing `why`.
void expect_receivers_refuse(const v1::ConfigureRequest& request, const std::string& why,
                             const std::string& channel) {
  services::ActuatorComponent actuator;
  services::RigEmulatorComponent rig;
  services::SensorComponent sensor;
  services::DynamicsComponent dynamics;
  services::IdentificationComponent identification;
  const std::vector<std::pair<runtime::LoopComponent*, std::vector<std::string>>> services = {
      {&actuator, {"command"}},
      {&rig, {"measurement", "command"}},
      {&sensor, {"measurement"}},
      {&dynamics, {"measurement", "command"}},
      {&identification, {"measurement", "command"}}};
  for (const auto& [component, channels] : services) {
    if (channel.empty() || std::find(channels.begin(), channels.end(), channel) != channels.end()) {
      expect_refused_with(*component, request, why);
    }
  }
}

TEST(ServiceLayouts, AMeasurementInAnotherUnitIsRefusedByEveryReceiver) {
  expect_receivers_refuse(identify_request("kN", "m"), kKilonewtons, "measurement");
}

TEST(ServiceLayouts, ACommandInAnotherUnitIsRefusedByEveryReceiver) {
  expect_receivers_refuse(identify_request("N", "mm"), kMillimetres, "command");
}

TEST(ServiceLayouts, ARequestWithoutLayoutsIsRefused) {
  expect_receivers_refuse(identify_request("N", "m", false), "layouts: no layout of channel '", "");
}

TEST(ServiceLayouts, TheCoordinatorsOwnLayoutsAreAccepted) {
  const v1::ConfigureRequest r = identify_request("N", "m");
  zmq::context_t context;
  services::SensorComponent sensor;
  sensor.set_context(&context);
  sensor.set_loop_plane({});
  v1::ConfigureRequest full = r;
  full.mutable_endpoints()->set_rig_to_sensor("inproc://layout-rig");
  full.mutable_endpoints()->set_sensor_to_dynamics("inproc://layout-dyn");
  const v1::LifecycleReply reply = sensor.configure(full);
  EXPECT_EQ(reply.state(), v1::LIFECYCLE_STATE_INACTIVE) << reply.message();
  sensor.shutdown();
}

/// `scenario_yaml` with its plan's layouts and every loop endpoint (inproc, named by `tag`).
v1::ConfigureRequest complete_request(const std::string& scenario_yaml, const std::string& tag) {
  v1::ConfigureRequest c = unknown_kind_request();
  c.set_scenario_yaml(scenario_yaml);
  const experiment::LoopPlan plan = experiment::loop_plan(scenario_yaml);
  transport::add_loop_layouts(plan.measurement, plan.command, *c.mutable_layouts());
  v1::LoopEndpoints* e = c.mutable_endpoints();
  e->set_actuator_to_rig("inproc://parse-a2r-" + tag);
  e->set_rig_to_sensor("inproc://parse-r2s-" + tag);
  e->set_sensor_to_dynamics("inproc://parse-s2d-" + tag);
  e->set_dynamics_to_actuator("inproc://parse-d2a-" + tag);
  e->set_telemetry("inproc://parse-telemetry-" + tag);
  return c;
}

/// Configures `component` with `request` (accepted) and returns how many YAML parses it took.
std::uint64_t parses_of_configure(runtime::LoopComponent& component,
                                  const v1::ConfigureRequest& request) {
  zmq::context_t context;
  component.set_context(&context);
  component.set_loop_plane({});
  const std::uint64_t before = experiment::yaml_parses();
  const v1::LifecycleReply r = component.configure(request);
  const std::uint64_t parses = experiment::yaml_parses() - before;
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_INACTIVE) << r.message();
  component.shutdown();
  return parses;
}

// One parse (issue 23): each loop service reads the scenario's YAML once at Configure, for every
// shipped kind (the identification service for the sweep it plays).
TEST(ServiceKinds, EveryServiceParsesTheScenarioOnceAtConfigure) {
  std::vector<std::string> scenarios = {identify_request("N", "m").scenario_yaml()};
  for (const char* file : {"rht/ats.yaml", "fcu/polynomial.yaml", "vrths/case1_amb.yaml"}) {
    const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/" + file;
    scenarios.push_back(experiment::load_scenario_text(experiment::read_scenario_text(path), path,
                                                       {}, experiment::DataSource::local_file(path))
                            ->describe()
                            .resolved_yaml);
  }
  int tag = 0;
  for (const std::string& yaml : scenarios) {
    services::ActuatorComponent actuator;
    services::RigEmulatorComponent rig;
    services::SensorComponent sensor;
    services::DynamicsComponent dynamics;
    std::vector<runtime::LoopComponent*> components = {&actuator, &rig, &sensor, &dynamics};
    services::IdentificationComponent identification;
    if (tag == 0) components.push_back(&identification);
    for (runtime::LoopComponent* c : components) {
      const v1::ConfigureRequest request = complete_request(yaml, std::to_string(tag++));
      EXPECT_EQ(parses_of_configure(*c, request), 1U) << c->name() << "\n" << yaml;
    }
  }
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
