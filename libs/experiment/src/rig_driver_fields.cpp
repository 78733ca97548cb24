#include "hyloop/experiment/rig_driver_fields.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "hyloop/experiment/scenario_error.hpp"

namespace hyloop::experiment {

namespace {

hal::UdpEndpoint endpoint(const std::string& address, int port) {
  return {address, static_cast<std::uint16_t>(port)};
}

/// `what` failed in hal with `e`: the same message, named as the scenario spells the block.
[[noreturn]] void refuse(const std::string& what, const std::exception& e) {
  throw ScenarioError("rig.driver." + what + ": " + e.what());
}

}  // namespace

namespace fields {

hal::PacketField read_packet_field(MapReader& item) {
  hal::PacketField f;
  std::string type = "f64";
  std::string order = "little";
  item.string("name", f.name);
  item.string("type", type);
  item.string("order", order);
  item.number("scale", f.scale);
  item.number("offset", f.offset);
  item.number("value", f.value);
  item.finish();
  const auto wire = hal::parse_wire_type(type);
  if (!wire)
    item.fail(item.field("type"),
              "\"" + excerpt(type) + "\": must be u8..u64, i8..i64, f32 or f64");
  if (order != "little" && order != "big") {
    item.fail(item.field("order"), "\"" + excerpt(order) + "\": must be little or big");
  }
  f.type = *wire;
  f.order = order == "big" ? hal::ByteOrder::kBig : hal::ByteOrder::kLittle;
  return f;
}

void write_packet_field(YAML::Emitter& e, const hal::PacketField& f) {
  e << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << f.name;
  e << YAML::Key << "type" << YAML::Value << std::string(hal::to_string(f.type));
  e << YAML::Key << "order" << YAML::Value << (f.order == hal::ByteOrder::kBig ? "big" : "little");
  e << YAML::Key << "scale" << YAML::Value << f.scale;
  e << YAML::Key << "offset" << YAML::Value << f.offset;
  e << YAML::Key << "value" << YAML::Value << f.value;
  e << YAML::EndMap;
}

nlohmann::json packet_field_json(const hal::PacketField& f) {
  return {{"name", f.name},
          {"type", std::string(hal::to_string(f.type))},
          {"order", f.order == hal::ByteOrder::kBig ? "big" : "little"},
          {"scale", f.scale},
          {"offset", f.offset},
          {"value", f.value}};
}

std::vector<FieldSpec> packet_field_items() {
  FieldSpec type = spec("type", "", FieldType::kEnum, {}, "the wire type");
  type.values = {"u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64"};
  FieldSpec order = spec("order", "", FieldType::kEnum, {}, "the byte order");
  order.values = {"little", "big"};
  return {spec("name", "", FieldType::kString, {}, "[a-z0-9_], unique in the packet"),
          type,
          order,
          spec("scale", "", FieldType::kNumber, {}, "value = raw*scale + offset; non-zero"),
          spec("offset", "", FieldType::kNumber, {}, "value = raw*scale + offset"),
          spec("value", "", FieldType::kNumber, {}, "sent when no signal is mapped onto it")};
}

}  // namespace fields

hal::UdpTargetConfig udp_target_config(const RigDriverSettings& d,
                                       const hal::ActuatorLimits& limits, double period) {
  hal::UdpTargetConfig c;
  c.local = endpoint(d.local_address, d.local_port);
  c.peer = endpoint(d.peer_address, d.peer_port);
  c.command = {d.command, d.command_sequence};
  c.measurement = {d.measurement, d.measurement_sequence};
  c.signals = d.signals;
  c.period = period;
  c.timeout = d.timeout_s;
  c.limits = limits;
  return c;
}

int egm_force_index(const std::string& name) {
  static constexpr std::array<std::string_view, 6> kNames{"fx", "fy", "fz", "tx", "ty", "tz"};
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<int>(i);
  }
  return -1;
}

hal::EgmDriverConfig egm_driver_config(const RigDriverSettings& d,
                                       const hal::ActuatorLimits& limits) {
  hal::EgmDriverConfig c;
  c.local = endpoint(d.local_address, d.local_port);
  c.robot = endpoint(d.peer_address, d.peer_port);
  const bool joint = d.egm_axis.rfind("joint", 0) == 0;
  const bool pose = d.egm_axis == "pose";
  c.axis.mode = pose    ? hal::EgmMode::kPose
                : joint ? hal::EgmMode::kJoint
                        : hal::EgmMode::kCartesian;
  c.axis.index = pose ? 0 : joint ? d.egm_axis.back() - '1' : d.egm_axis[0] - 'x';
  c.axis.scale = d.egm_scale;
  c.reply_deadline = d.egm_reply_deadline_s;
  c.timeout = d.timeout_s;
  c.limits = limits;
  c.force_index = egm_force_index(d.egm_force);
  c.wrench = d.egm_force == "wrench";
  c.pose_limits.fill(limits);
  return c;
}

hal::RsiDriverConfig rsi_driver_config(const RigDriverSettings& d,
                                       const hal::ActuatorLimits& limits) {
  hal::RsiDriverConfig c;
  c.local = endpoint(d.local_address, d.local_port);
  c.robot = endpoint(d.peer_address, d.peer_port);
  const bool axis = d.rsi_axis.size() == 2 && d.rsi_axis[0] == 'a';
  const bool pose = d.rsi_axis == "pose";
  c.axis.mode = pose ? hal::RsiMode::kPose : axis ? hal::RsiMode::kAxis : hal::RsiMode::kCartesian;
  c.axis.index = pose ? 0 : axis ? d.rsi_axis.back() - '1' : d.rsi_axis[0] - 'x';
  c.axis.scale = d.rsi_scale;
  c.sen_type = d.rsi_sen_type;
  c.correction_tag = d.rsi_correction_tag;
  c.period = d.rsi_cycle_ms == 12 ? hal::kRsiCycleSlow : hal::kRsiCycleFast;
  c.reply_deadline = d.rsi_reply_deadline_s;
  c.timeout = d.timeout_s;
  c.late_limit = static_cast<std::uint64_t>(std::max(d.rsi_late_limit, 0));
  c.force_tag = d.rsi_force_tag;
  c.force_attribute = d.rsi_force_attribute;
  c.force_scale = d.rsi_force_scale;
  c.wrench = pose && !d.rsi_force_tag.empty();  // the tag's six attributes
  c.limits = limits;
  c.pose_limits.fill(limits);
  return c;
}

namespace {

void validate_rsi(const RigDriverSettings& d) {
  const std::string& a = d.rsi_axis;
  const bool cartesian = a == "x" || a == "y" || a == "z" || a == "pose";
  if (!cartesian && !(a.size() == 2 && a[0] == 'a' && a[1] >= '1' && a[1] <= '6')) {
    throw ScenarioError("rig.driver.rsi.axis: \"" + excerpt(a) +
                        "\" must be x, y, z, a1..a6 or pose");
  }
  require(d.rsi_cycle_ms == 4 || d.rsi_cycle_ms == 12, "rig.driver.rsi.cycle_ms", d.rsi_cycle_ms,
          "must be 4 or 12 (the RSI cycles)");
  require(std::isfinite(d.rsi_scale) && d.rsi_scale != 0.0, "rig.driver.rsi.scale", d.rsi_scale,
          "must be finite and non-zero");
  require(d.rsi_reply_deadline_s > 0.0 && d.rsi_reply_deadline_s < 1e-3 * d.rsi_cycle_ms,
          "rig.driver.rsi.reply_deadline_s", d.rsi_reply_deadline_s,
          "must be > 0 s and below rig.driver.rsi.cycle_ms");
  require(d.timeout_s >= 1e-3 * d.rsi_cycle_ms, "rig.driver.timeout_s", d.timeout_s,
          "must be at least rig.driver.rsi.cycle_ms");
  try {
    hal::validate(rsi_driver_config(d, {}));
  } catch (const std::invalid_argument& e) {
    refuse("rsi", e);
  }
}

}  // namespace

namespace {

// The table's ranges, whatever the type (a value the run does not read is still refused).
void validate_ranges(const RigDriverSettings& d) {
  const auto port = [](const char* field, int p) {
    require(p >= 0 && p <= 65535, field, p, "must be in [0, 65535]");
  };
  port("rig.driver.local_port", d.local_port);
  port("rig.driver.peer_port", d.peer_port);
  require(d.timeout_s > 0.0, "rig.driver.timeout_s", d.timeout_s, "must be > 0 s");
  require(d.egm_reply_deadline_s > 0.0, "rig.driver.egm.reply_deadline_s", d.egm_reply_deadline_s,
          "must be > 0 s");
  require(d.rsi_cycle_ms >= 4 && d.rsi_cycle_ms <= 12, "rig.driver.rsi.cycle_ms", d.rsi_cycle_ms,
          "must be 4 or 12 (the RSI cycles)");
  require(d.rsi_reply_deadline_s > 0.0, "rig.driver.rsi.reply_deadline_s", d.rsi_reply_deadline_s,
          "must be > 0 s");
  require(d.rsi_late_limit >= 0 && d.rsi_late_limit <= 1000000, "rig.driver.rsi.late_limit",
          d.rsi_late_limit, "must be in [0, 1000000]");
}

}  // namespace

namespace {

// A one-axis rig drives one robot coordinate; a six-axis rig (a kind whose loop commands a pose)
// drives the robot's whole pose, which only EGM carries here.
void validate_axes(const RigDriverSettings& d, std::size_t axes) {
  const bool pose = d.type == "egm" && d.egm_axis == "pose";
  const bool wrench = d.type == "egm" && d.egm_force == "wrench";
  const bool rsi_pose = d.type == "rsi" && d.rsi_axis == "pose";
  if (axes == 1) {
    if (pose || rsi_pose) {
      throw ScenarioError("rig.driver." + std::string(pose ? "egm" : "rsi") +
                          ".axis: \"pose\" drives six axes; this kind's rig has one");
    }
    if (wrench) {
      throw ScenarioError(
          "rig.driver.egm.force: \"wrench\" is six values; this kind's loop reads one force "
          "(fx, fy, fz, tx, ty or tz)");
    }
    return;
  }
  if (d.type == "rsi") {
    if (!rsi_pose) {
      throw ScenarioError("rig.driver.rsi.axis: \"" + excerpt(d.rsi_axis) +
                          "\" must be pose: this kind's rig commands the robot's whole pose");
    }
    if (d.rsi_force_tag.empty()) {
      throw ScenarioError(
          "rig.driver.rsi.force_tag: must name the <Rob> element whose Fx Fy Fz Tx Ty Tz are "
          "the six-axis wrench this kind's loop reads");
    }
    return;
  }
  if (d.type != "egm") {
    throw ScenarioError("rig.driver.type: \"" + excerpt(d.type) + "\": this kind's rig has " +
                        std::to_string(axes) +
                        " axes (a robot's whole pose), which egm and rsi carry (or emulator)");
  }
  if (!pose) {
    throw ScenarioError("rig.driver.egm.axis: \"" + excerpt(d.egm_axis) +
                        "\" must be pose: this kind's rig commands the robot's whole pose");
  }
  if (!wrench) {
    throw ScenarioError("rig.driver.egm.force: \"" + excerpt(d.egm_force) +
                        "\" must be wrench: this kind's loop reads the six-axis wrench");
  }
}

}  // namespace

void validate_rig_driver(const RigDriverSettings& d, double period, std::size_t axes) {
  validate_ranges(d);
  if (d.type == "emulator") {
    return;
  }
  validate_axes(d, axes);
  if (d.type != "udp" && d.type != "egm" && d.type != "rsi" && d.type != "openfresco") {
    throw ScenarioError("rig.driver.type: \"" + excerpt(d.type) +
                        "\" must be emulator, udp, egm, rsi or openfresco");
  }
  try {
    (void)hal::to_sockaddr("local", endpoint(d.local_address, d.local_port));
    (void)hal::to_sockaddr("peer", endpoint(d.peer_address, d.peer_port));
  } catch (const std::invalid_argument& e) {
    refuse("local_address/peer_address", e);
  }
  require(std::isfinite(d.timeout_s) && d.timeout_s >= period, "rig.driver.timeout_s", d.timeout_s,
          "must be at least timing.step_s");
  if (d.type == "udp") {
    require(d.peer_port > 0, "rig.driver.peer_port", d.peer_port, "must be 1..65535 for udp");
    try {
      (void)hal::PacketCodec("udp.command", {d.command, d.command_sequence});
      (void)hal::PacketCodec("udp.measurement", {d.measurement, d.measurement_sequence});
    } catch (const std::invalid_argument& e) {
      refuse("udp", e);
    }
    return;
  }
  if (d.type == "rsi") {
    validate_rsi(d);
    return;
  }
  if (d.type == "openfresco") {
    require(d.peer_port > 0, "rig.driver.peer_port", d.peer_port,
            "must be 1..65535 for openfresco (the site's port)");
    if (d.openfresco_transport != "tcp" && d.openfresco_transport != "udp") {
      throw ScenarioError("rig.driver.openfresco.transport: \"" + excerpt(d.openfresco_transport) +
                          "\" must be tcp or udp");
    }
    return;
  }
  require(std::isfinite(d.egm_scale) && d.egm_scale != 0.0, "rig.driver.egm.scale", d.egm_scale,
          "must be finite and non-zero");
  require(d.egm_reply_deadline_s > 0.0 && d.egm_reply_deadline_s < hal::EgmDriverConfig{}.period &&
              d.egm_reply_deadline_s < d.timeout_s,
          "rig.driver.egm.reply_deadline_s", d.egm_reply_deadline_s,
          "must be > 0 s, below the robot's 4 ms cycle and below rig.driver.timeout_s");
}

}  // namespace hyloop::experiment
