#include "hyloop/experiment/rig_driver_fields.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "hyloop/experiment/scenario_error.hpp"

namespace hyloop::experiment {
namespace {

struct Scenario {
  RigDriverSettings driver;
};

const BoundTable<Scenario>& table() {
  static const BoundTable<Scenario> t(
      "test", "rig driver",
      fields::rig_driver<Scenario>([](auto& s) -> auto& { return s.driver; }));
  return t;
}

Scenario parse(const std::string& yaml) {
  Scenario s;
  table().parse(YAML::Load(yaml), "test.yaml", s);
  validate_rig_driver(s.driver, 0.001);
  return s;
}

constexpr const char* kUdp = R"(
rig:
  driver:
    type: udp
    local_address: 192.168.0.2
    local_port: 25000
    peer_address: 192.168.0.10
    peer_port: 25001
    timeout_s: 0.05
    udp:
      command:
        - {name: seq, type: u32, order: big}
        - {name: position, type: f64, order: big, scale: 0.001}
      measurement:
        - {name: seq, type: u16}
        - {name: position, type: f32, scale: 0.001}
        - {name: force, type: i32, order: big, scale: 0.1}
      signals: {measured_force: force}
)";

TEST(RigDriverFields, ParsesAUdpTargetIntoTheDriversConfiguration) {
  const Scenario s = parse(kUdp);
  const hal::UdpTargetConfig c = udp_target_config(s.driver, {-0.1, 0.1, 1.0}, 0.001);
  EXPECT_EQ(c.local.address, "192.168.0.2");
  EXPECT_EQ(c.peer.port, 25001);
  ASSERT_EQ(c.command.fields.size(), 2U);
  EXPECT_EQ(c.command.fields[1].order, hal::ByteOrder::kBig);
  EXPECT_EQ(c.command.fields[1].scale, 0.001);
  EXPECT_EQ(c.measurement.fields[2].type, hal::WireType::kI32);
  EXPECT_EQ(c.signals.measured_force, "force");
  EXPECT_EQ(c.timeout, 0.05);
  EXPECT_EQ(c.limits.position_max, 0.1);
  // What the run writes reads back to the same block.
  Scenario again;
  table().parse(YAML::Load(table().emit(s)), "resolved.yaml", again);
  EXPECT_EQ(table().emit(again), table().emit(s));
}

TEST(RigDriverFields, ParsesAnEgmRobotAxis) {
  const Scenario s = parse(R"(
rig: {driver: {type: egm, local_port: 6511, peer_address: 192.168.125.1, egm: {axis: joint3, scale: 57.29577951308232}}}
)");
  const hal::EgmDriverConfig c = egm_driver_config(s.driver, {});
  EXPECT_EQ(c.axis.mode, hal::EgmMode::kJoint);
  EXPECT_EQ(c.axis.index, 2);
  EXPECT_EQ(c.robot.port, 0);
  EXPECT_EQ(
      egm_driver_config(parse("rig: {driver: {type: egm, egm: {axis: y}}}").driver, {}).axis.index,
      1);
}

void expect_refused(const std::string& yaml, const std::string& message) {
  try {
    parse(yaml);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(RigDriverFields, RefusesWhatTheDriverWouldNamingTheField) {
  expect_refused("rig: {driver: {type: rsi}}", "rig.driver.type");
  expect_refused("rig: {driver: {type: udp, peer_address: robot.local, peer_port: 1}}",
                 "rig.driver.local_address/peer_address: peer.address = 'robot.local'");
  expect_refused("rig: {driver: {type: udp, peer_port: 1, udp: {command: [{name: x, type: f16}]}}}",
                 "rig.driver.udp.command[0].type");
  expect_refused("rig: {driver: {type: udp, peer_port: 1, udp: {command: [{name: x}]}}}",
                 "rig.driver.udp: udp.command field 'seq': the sequence field is not declared");
  expect_refused("rig: {driver: {type: egm, egm: {scale: 0}}}", "rig.driver.egm.scale");
  expect_refused("rig: {driver: {type: udp, peer_port: 1, colour: red}}", "colour");
}

}  // namespace
}  // namespace hyloop::experiment
