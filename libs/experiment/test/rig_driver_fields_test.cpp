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

TEST(RigDriverFields, ParsesAKukaRsiAxis) {
  const Scenario s = parse(R"(
rig:
  driver:
    type: rsi
    local_port: 49152
    peer_address: 192.168.1.1
    timeout_s: 0.1
    rsi: {axis: a3, scale: 57.29577951308232, cycle_ms: 12, reply_deadline_s: 0.005,
          sen_type: Lab, correction_tag: AKorr, late_limit: 50, force_tag: FT, force_scale: 10}
)");
  const hal::RsiDriverConfig c = rsi_driver_config(s.driver, {-0.5, 0.5, 1.0});
  EXPECT_EQ(c.axis.mode, hal::RsiMode::kAxis);
  EXPECT_EQ(c.axis.index, 2);
  EXPECT_EQ(c.axis.scale, 57.29577951308232);
  EXPECT_EQ(c.period, hal::kRsiCycleSlow);
  EXPECT_EQ(c.reply_deadline, 0.005);
  EXPECT_EQ(c.sen_type, "Lab");
  EXPECT_EQ(c.correction_tag, "AKorr");
  EXPECT_EQ(c.late_limit, 50U);
  EXPECT_EQ(c.force_tag, "FT");
  EXPECT_EQ(c.force_attribute, "Fz");
  EXPECT_EQ(c.force_scale, 10.0);
  EXPECT_EQ(c.local.port, 49152);
  EXPECT_EQ(c.robot.address, "192.168.1.1");
  EXPECT_EQ(c.robot.port, 0);
  EXPECT_EQ(c.limits.position_max, 0.5);
  const hal::RsiDriverConfig x = rsi_driver_config(parse("rig: {driver: {type: rsi}}").driver, {});
  EXPECT_EQ(x.axis.mode, hal::RsiMode::kCartesian);
  EXPECT_EQ(x.axis.index, 2) << "z by default";
  EXPECT_EQ(x.period, hal::kRsiCycleFast);
  EXPECT_EQ(x.sen_type, "ImFree");
  EXPECT_EQ(
      rsi_driver_config(parse("rig: {driver: {type: rsi, rsi: {axis: x}}}").driver, {}).axis.index,
      0);
  Scenario again;
  table().parse(YAML::Load(table().emit(s)), "resolved.yaml", again);
  EXPECT_EQ(table().emit(again), table().emit(s));
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
  expect_refused("rig: {driver: {type: fanuc}}", "rig.driver.type");
  expect_refused("rig: {driver: {type: rsi, rsi: {cycle_ms: 8}}}", "rig.driver.rsi.cycle_ms");
  expect_refused("rig: {driver: {type: rsi, rsi: {axis: a7}}}", "rig.driver.rsi.axis");
  expect_refused("rig: {driver: {type: rsi, rsi: {scale: 0}}}", "rig.driver.rsi.scale");
  expect_refused("rig: {driver: {type: rsi, rsi: {reply_deadline_s: 0.004}}}",
                 "rig.driver.rsi.reply_deadline_s");
  expect_refused("rig: {driver: {type: rsi, rsi: {sen_type: 'a\"b'}}}",
                 "rig.driver.rsi: sen_type = 'a\"b'");
  expect_refused("rig: {driver: {type: rsi, rsi: {correction_tag: 'R Korr'}}}",
                 "rig.driver.rsi: sen_type");
  expect_refused("rig: {driver: {type: rsi, rsi: {force_tag: FT, force_scale: 0}}}",
                 "rig.driver.rsi: force_scale");
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
