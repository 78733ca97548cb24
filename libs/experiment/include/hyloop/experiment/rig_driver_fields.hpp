#pragma once
// The rig driver's scenario block (rig.driver.*; issue 24), declared once for every kind whose
// rig is position-commanded (SITS, RHT, vRTHS; sits6 over a robot's whole pose): which driver
// stands where the in-process emulator stands, its endpoints, and the protocol's own settings. A
// kind adds fields::rig_driver(...) to its table, calls validate_rig_driver() from its validate(),
// and its rig part is make_wire_rig_part() (rig_driver.hpp) for a wire type. With type emulator the
// block is not emitted in the resolved scenario.
//
//   type: emulator   the kind's in-process emulator (the default; nothing else is read)
//   type: udp        hal::UdpTargetDriver, a real-time target exchanging fixed binary packets;
//                    udp.command / udp.measurement declare the packets field by field
//   type: egm        hal::EgmDriver, an ABB robot under EGM position guidance; we bind
//                    local_*, the robot sends from peer_address (peer_port 0: any port)
//   type: rsi        hal::RsiDriver, a KUKA robot under RSI (we are the sensor PC); we bind
//                    local_*, the controller sends from peer_address (peer_port 0: any port)
//   type: openfresco hal::openfresco::SiteDriver, an OpenFresco-style experimental site (another
//                    lab's, or hyloop-site): we connect to peer_address:peer_port over
//                    openfresco.transport (tcp | udp); per cycle the trial, getDaq, commit; the
//                    site paces the step, so it runs in lockstep too; timeout_s bounds the
//                    connection and every reply

#include <cstddef>
#include <string>
#include <vector>

#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/rsi_driver.hpp"
#include "hyloop/hal/udp_target_driver.hpp"

namespace hyloop::experiment {

struct RigDriverSettings {
  std::string type = "emulator";  ///< emulator | udp | egm | rsi | openfresco
  std::string local_address = "127.0.0.1";
  int local_port = 0;
  std::string peer_address = "127.0.0.1";
  int peer_port = 0;
  double timeout_s = 0.1;
  std::vector<hal::PacketField> command;      ///< udp: host → target
  std::vector<hal::PacketField> measurement;  ///< udp: target → host
  std::string command_sequence = "seq";
  std::string measurement_sequence = "seq";
  hal::UdpSignalMap signals;
  std::string egm_axis = "z";  ///< x | y | z | joint1 … joint6 | pose (six axes)
  double egm_scale = 1000.0;   ///< mm (or degrees) per loop unit
  double egm_reply_deadline_s = 0.002;
  /// none | fx | fy | fz | tx | ty | tz: measuredForce's value | wrench: all six (pose)
  std::string egm_force = "none";
  std::string rsi_axis = "z";  ///< x | y | z | a1 … a6 | pose (six axes)
  double rsi_scale = 1000.0;   ///< mm (or degrees) per loop unit
  int rsi_cycle_ms = 4;        ///< 4 | 12
  double rsi_reply_deadline_s = 0.002;
  std::string rsi_sen_type = "ImFree";
  std::string rsi_correction_tag;  ///< "" = RKorr (x, y, z) or AK (a1 … a6)
  int rsi_late_limit = 0;          ///< Delay.D above this stops the run; 0 = never
  std::string rsi_force_tag;       ///< "" = no force in the <Rob>
  std::string rsi_force_attribute = "Fz";
  double rsi_force_scale = 1.0;              ///< N per wire unit
  std::string openfresco_transport = "tcp";  ///< tcp | udp (OpenFresco's UDP_Socket)
};

/// The driver configurations the block describes (`period`: the loop's step, s; `limits`: the
/// safety layer's window). Not RT.
[[nodiscard]] hal::UdpTargetConfig udp_target_config(const RigDriverSettings& d,
                                                     const hal::ActuatorLimits& limits,
                                                     double period);
/// rig.driver.egm.force as measuredForce's index (fx … tz = 0 … 5), −1 for none.
[[nodiscard]] int egm_force_index(const std::string& name);
[[nodiscard]] hal::EgmDriverConfig egm_driver_config(const RigDriverSettings& d,
                                                     const hal::ActuatorLimits& limits);
[[nodiscard]] hal::RsiDriverConfig rsi_driver_config(const RigDriverSettings& d,
                                                     const hal::ActuatorLimits& limits);

/// Checks the block as the driver would, for a rig of `axes` axes (1, or 6: a robot's whole pose,
/// egm.axis pose with egm.force wrench, or rsi.axis pose with an rsi.force_tag). @throws
/// ScenarioError naming the rig.driver.* field, its value and what is allowed.
void validate_rig_driver(const RigDriverSettings& d, double period, std::size_t axes = 1);

namespace fields {

/// Reads one packet field list item. @throws ScenarioError naming the item's field.
hal::PacketField read_packet_field(MapReader& item);
/// The item as a flow mapping / as JSON.
void write_packet_field(YAML::Emitter& e, const hal::PacketField& f);
nlohmann::json packet_field_json(const hal::PacketField& f);
/// The keys of one item (name, type, order, scale, offset, value).
std::vector<FieldSpec> packet_field_items();

/// One packet field list (rig.driver.udp.command or .measurement) as an object list.
template <typename S, typename Get>
BoundField<S> packet_fields(std::string name, std::string help, Get get) {
  BoundField<S> b{spec(std::move(name), "", FieldType::kObjectList, {}, std::move(help)),
                  [get](MapReader& r, const std::string& k, S& s) {
                    const YAML::Node list = r.get(k);
                    if (!list) return;
                    if (!list.IsSequence()) r.fail(r.field(k), "must be a list of packet fields");
                    get(s).clear();
                    for (std::size_t i = 0; i < list.size(); ++i) {
                      MapReader item(list[i], r.field(k) + "[" + std::to_string(i) + "]",
                                     r.origin());
                      get(s).push_back(read_packet_field(item));
                    }
                  },
                  [get](YAML::Emitter& e, const std::string& k, const S& s) {
                    e << YAML::Key << k << YAML::Value << YAML::BeginSeq;
                    for (const hal::PacketField& f : get(s)) write_packet_field(e, f);
                    e << YAML::EndSeq;
                  },
                  [get](const S& s) {
                    nlohmann::json list = nlohmann::json::array();
                    for (const hal::PacketField& f : get(s)) list.push_back(packet_field_json(f));
                    return list;
                  }};
  b.spec.items = packet_field_items();
  return b;
}

/// rig.driver.udp.signals.*: which packet field carries each loop signal.
template <typename S, typename Get>
std::vector<BoundField<S>> udp_signal_fields(Get get) {
  const auto signal = [get](const char* name, std::string help, auto member) {
    return text<S>(
        std::string("rig.driver.udp.signals.") + name, FieldType::kString, {}, std::move(help),
        [ get, member ](auto& s) -> auto& { return get(s).signals.*member; });
  };
  using M = hal::UdpSignalMap;
  return {
      signal("command_position", "the command field carrying the set point", &M::command_position),
      signal("command_velocity", "the command field of the velocity feed-forward (\"\": none)",
             &M::command_velocity),
      signal("measured_position", "the measurement field of the position", &M::measured_position),
      signal("measured_velocity", "the measurement field of the velocity (\"\": none)",
             &M::measured_velocity),
      signal("measured_force", "the measurement field of the force (\"\": none)",
             &M::measured_force),
      signal("command_echo", "the measurement field echoing the command sequence (\"\": none)",
             &M::command_echo),
      signal("status", "the measurement field whose non-zero value is a fault (\"\": none)",
             &M::status),
  };
}

/// rig.driver.rsi.*: the KUKA RSI settings (rsi_driver.hpp).
template <typename S, typename Get>
std::vector<BoundField<S>> rsi_fields(Get get) {
  const auto at = [get](auto member) {
    return [ get, member ](auto& s) -> auto& { return get(s).*member; };
  };
  using D = RigDriverSettings;
  return {
      text<S>("rig.driver.rsi.axis", FieldType::kEnum,
              {"x", "y", "z", "a1", "a2", "a3", "a4", "a5", "a6", "pose"},
              "(type: rsi) the robot coordinate the loop drives: TCP x/y/z (RKorr) or axis a1..a6 "
              "(AK); pose: the TCP's whole pose (RKorr X..C, for a six-axis kind)",
              at(&D::rsi_axis)),
      number<S>("rig.driver.rsi.scale", "", {},
                "(type: rsi) wire units (mm or degrees) per loop unit, non-zero",
                at(&D::rsi_scale)),
      integer<S>("rig.driver.rsi.cycle_ms", "ms", closed(4, 12),
                 "(type: rsi) the controller's RSI cycle: 4 or 12", at(&D::rsi_cycle_ms)),
      number<S>("rig.driver.rsi.reply_deadline_s", "s", above(0),
                "(type: rsi) answer each <Rob> by then, below the cycle",
                at(&D::rsi_reply_deadline_s)),
      text<S>("rig.driver.rsi.sen_type", FieldType::kString, {},
              "(type: rsi) the controller's SENTYPE, sent as <Sen Type=...>", at(&D::rsi_sen_type)),
      text<S>("rig.driver.rsi.correction_tag", FieldType::kString, {},
              "(type: rsi) the correction element of the controller's RECEIVE section (\"\": "
              "RKorr for x/y/z, AK for a1..a6)",
              at(&D::rsi_correction_tag)),
      integer<S>("rig.driver.rsi.late_limit", "", closed(0, 1000000),
                 "(type: rsi) the controller's late-packet count (Delay.D) above which the run "
                 "stops; 0: never (the controller's own Timeout still stops RSI)",
                 at(&D::rsi_late_limit)),
      text<S>("rig.driver.rsi.force_tag", FieldType::kString, {},
              "(type: rsi) the <Rob> element carrying a force routed through the controller "
              "(its SEND section's TAG=\"FT.Fz\" is <FT Fz=..>); \"\": none; with axis pose, "
              "its six attributes Fx Fy Fz Tx Ty Tz are the wrench",
              at(&D::rsi_force_tag)),
      text<S>("rig.driver.rsi.force_attribute", FieldType::kString, {},
              "(type: rsi) the attribute of force_tag holding the force",
              at(&D::rsi_force_attribute)),
      number<S>("rig.driver.rsi.force_scale", "", {},
                "(type: rsi) N per wire unit of the force, non-zero", at(&D::rsi_force_scale)),
  };
}

/// rig.driver.*: `get` returns the scenario's RigDriverSettings.
template <typename S, typename Get>
std::vector<BoundField<S>> rig_driver(Get get) {
  const auto at = [get](auto member) {
    return [ get, member ](auto& s) -> auto& { return get(s).*member; };
  };
  const auto bound = [](BoundField<S> f) {
    return used_when(std::move(f), "type", {"udp", "egm", "rsi"});
  };
  const auto wire = [](BoundField<S> f) {
    return used_when(std::move(f), "type", {"udp", "egm", "rsi", "openfresco"});
  };
  using D = RigDriverSettings;
  std::vector<BoundField<S>> f{
      text<S>("rig.driver.type", FieldType::kEnum, {"emulator", "udp", "egm", "rsi", "openfresco"},
              "what stands for the rig: the in-process emulator, a UDP real-time target, an "
              "ABB robot under EGM, a KUKA robot under RSI or an OpenFresco-style site",
              at(&D::type)),
      bound(text<S>("rig.driver.local_address", FieldType::kString, {},
                    "the numeric IPv4 address the driver binds (only this one)",
                    at(&D::local_address))),
      bound(integer<S>("rig.driver.local_port", "", closed(0, 65535),
                       "the port the driver binds (0: any free one)", at(&D::local_port))),
      wire(text<S>("rig.driver.peer_address", FieldType::kString, {},
                   "the device's numeric IPv4 address: datagrams from anywhere else are dropped "
                   "(openfresco: the site's address)",
                   at(&D::peer_address))),
      wire(integer<S>("rig.driver.peer_port", "", closed(0, 65535),
                      "the device's port (egm, rsi: 0 = any port of peer_address; openfresco: "
                      "the site's, 1..65535)",
                      at(&D::peer_port))),
      wire(number<S>("rig.driver.timeout_s", "s", above(0),
                     "the device silent this long (once commanded) stops the run (openfresco: "
                     "the longest wait for the connection and for each reply)",
                     at(&D::timeout_s))),
      used_when(text<S>("rig.driver.openfresco.transport", FieldType::kEnum, {"tcp", "udp"},
                        "(type: openfresco) the site's transport: tcp (GenericTCP) or udp "
                        "(OpenFresco's UDP_Socket)",
                        at(&D::openfresco_transport)),
                "type", {"openfresco"}),
      packet_fields<S>("rig.driver.udp.command", "(type: udp) the command packet", at(&D::command)),
      text<S>("rig.driver.udp.command_sequence", FieldType::kString, {},
              "(type: udp) the command's sequence field (u16/u32/u64)", at(&D::command_sequence)),
      packet_fields<S>("rig.driver.udp.measurement", "(type: udp) the measurement packet",
                       at(&D::measurement)),
      text<S>("rig.driver.udp.measurement_sequence", FieldType::kString, {},
              "(type: udp) the measurement's sequence field (u16/u32/u64)",
              at(&D::measurement_sequence)),
      text<S>("rig.driver.egm.axis", FieldType::kEnum,
              {"x", "y", "z", "joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "pose"},
              "(type: egm) the robot coordinate the loop drives (pose: the TCP's whole pose, "
              "for a six-axis kind)",
              at(&D::egm_axis)),
      number<S>("rig.driver.egm.scale", "", {},
                "(type: egm) wire units (mm or degrees) per loop unit, non-zero",
                at(&D::egm_scale)),
      number<S>("rig.driver.egm.reply_deadline_s", "s", above(0),
                "(type: egm) answer each robot message by then, below the robot's cycle",
                at(&D::egm_reply_deadline_s)),
      text<S>("rig.driver.egm.force", FieldType::kEnum,
              {"none", "fx", "fy", "fz", "tx", "ty", "tz", "wrench"},
              "(type: egm) which of the EgmRobot's measuredForce values is the loop's force "
              "(N or N·m; none: the robot reports no force; wrench: all six, for a six-axis "
              "kind)",
              at(&D::egm_force)),
  };
  for (BoundField<S>& s : udp_signal_fields<S>(get)) f.push_back(std::move(s));
  for (BoundField<S>& s : rsi_fields<S>(get)) f.push_back(std::move(s));
  // On the in-process emulator a scenario resolves as it did before the block existed: no
  // rig.driver mapping in its YAML (runs stay bit for bit, resolved scenario included).
  for (BoundField<S>& x : f) {
    x = emitted_if(std::move(x), [get](const S& s) { return get(s).type != "emulator"; });
  }
  return f;
}

}  // namespace fields
}  // namespace hyloop::experiment
