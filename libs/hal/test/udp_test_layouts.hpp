#pragma once
// The layouts the UDP target tests share: a servo-hydraulic target's command and measurement
// packets as a Simulink pack/unpack pair would declare them.

#include <functional>

#include "hyloop/hal/link_watch.hpp"
#include "hyloop/hal/udp_packet.hpp"
#include "hyloop/hal/udp_target_driver.hpp"

namespace hyloop::hal::test {

/// Command: sequence u32 big-endian, position f64 (mm on the wire), velocity i32 (µm/s).
inline PacketLayout command_layout() {
  PacketLayout l;
  l.fields = {{"seq", WireType::kU32, ByteOrder::kBig},
              {"position", WireType::kF64, ByteOrder::kBig, 0.001},
              {"velocity", WireType::kI32, ByteOrder::kLittle, 1e-6}};
  l.sequence = "seq";
  return l;
}

/// Measurement: sequence u16, position f32 (mm), force i32 big-endian (0.1 N), echo u32,
/// status u8.
inline PacketLayout measurement_layout() {
  PacketLayout l;
  l.fields = {{"seq", WireType::kU16},
              {"position", WireType::kF32, ByteOrder::kLittle, 0.001},
              {"force", WireType::kI32, ByteOrder::kBig, 0.1},
              {"echo", WireType::kU32},
              {"status", WireType::kU8}};
  l.sequence = "seq";
  return l;
}

/// Full-precision command (m on the wire, no conversion): sequence u32, position and velocity f64.
inline PacketLayout exact_command_layout() {
  PacketLayout l;
  l.fields = {{"seq", WireType::kU32}, {"position", WireType::kF64}, {"velocity", WireType::kF64}};
  l.sequence = "seq";
  return l;
}

/// Full-precision measurement for closed-loop comparisons: f64 position and velocity.
inline PacketLayout exact_measurement_layout() {
  PacketLayout l;
  l.fields = {{"seq", WireType::kU32},   {"position", WireType::kF64}, {"velocity", WireType::kF64},
              {"force", WireType::kF64}, {"echo", WireType::kU32},     {"status", WireType::kU8}};
  l.sequence = "seq";
  return l;
}

inline UdpSignalMap signal_map() {
  UdpSignalMap s;
  s.command_position = "position";
  s.command_velocity = "velocity";
  s.measured_position = "position";
  s.measured_force = "force";
  s.command_echo = "echo";
  s.status = "status";
  return s;
}

/// Polls `done` for up to `timeout` s.
inline bool eventually(const std::function<bool()>& done, double timeout = 2.0) {
  return poll_until(done, timeout);
}

}  // namespace hyloop::hal::test
