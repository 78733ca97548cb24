// Fuzz target: the wire drivers' decoders (libs/hal udp_packet.hpp, egm_codec.hpp, rsi_codec.hpp),
// which see whatever a peer or an attacker on the network sends.
//
// Input: [0] selects the decoder (mod 5): a UDP target measurement packet (u16 sequence, f32, i32
// big-endian, u32, u8, f64), an EgmRobot, an EgmSensor, an RSI <Rob>, an RSI <Sen Type="ImFree">
// with RKorr; the rest is one datagram.
//
// Invariants (beyond "no crash, no sanitizer report"): a UDP packet decodes only when it is
// exactly the layout's size, then every value is finite and re-encoding it decodes to the same
// values (−0 may come back as +0: value = raw·scale + offset); an accepted EGM message has
// finite values, and re-encoding and parsing it again gives the same message; an accepted RSI
// frame has finite values and, written again (fixed decimals) and parsed, the same IPOC and
// elements with values within half a unit of the last decimal (or the writer refuses |v| ≥ 1e9).

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_support.hpp"
#include "hyloop/hal/egm_codec.hpp"
#include "hyloop/hal/rsi_codec.hpp"
#include "hyloop/hal/udp_packet.hpp"

namespace {

namespace hal = hyloop::hal;
namespace egm = hyloop::hal::egm;
namespace rsi = hyloop::hal::rsi;

const hal::PacketCodec& packet_codec() {
  static const hal::PacketCodec codec("fuzz layout", [] {
    hal::PacketLayout l;
    l.fields = {{"seq", hal::WireType::kU16},
                {"position", hal::WireType::kF32},
                {"force", hal::WireType::kI32, hal::ByteOrder::kBig},
                {"echo", hal::WireType::kU32},
                {"status", hal::WireType::kU8},
                {"velocity", hal::WireType::kF64, hal::ByteOrder::kBig}};
    l.sequence = "seq";
    return l;
  }());
  return codec;
}

void check_packet(std::span<const std::uint8_t> datagram) {
  const hal::PacketCodec& codec = packet_codec();
  std::array<double, 6> values{};
  std::uint64_t sequence = 0;
  if (codec.decode(datagram, values, sequence) != hal::DecodeResult::kOk) {
    return;
  }
  FUZZ_CHECK(datagram.size() == codec.size(), "accepted a packet of the wrong size");
  for (double v : values) FUZZ_CHECK(std::isfinite(v), "accepted a value that is not finite");
  std::array<std::uint8_t, 64> again{};
  FUZZ_CHECK(codec.encode(values, sequence, again) == codec.size(), "re-encoding failed");
  std::array<double, 6> back{};
  std::uint64_t back_sequence = 0;
  FUZZ_CHECK(
      codec.decode({again.data(), codec.size()}, back, back_sequence) == hal::DecodeResult::kOk &&
          back == values && back_sequence == sequence,
      "a value changed through re-encoding");
}

bool finite(std::span<const double> v) {
  for (double x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

void check_robot(std::span<const std::uint8_t> datagram) {
  static egm::EgmCodec codec;
  egm::RobotMessage m;
  if (codec.parse_robot(datagram, m) != egm::ParseResult::kOk) {
    return;
  }
  FUZZ_CHECK(m.has_pose || m.has_joints, "accepted an EgmRobot without feedback");
  FUZZ_CHECK(!m.has_pose || (finite(m.pose.pos) && finite(m.pose.euler)), "non-finite pose");
  FUZZ_CHECK(!m.has_joints || finite(m.joints), "non-finite joints");
  FUZZ_CHECK(!m.has_force || finite(m.force), "non-finite force");
  std::vector<std::uint8_t> again(egm::kMaxDatagram * 4);
  again.resize(codec.encode_robot(m, again));
  egm::RobotMessage back;
  FUZZ_CHECK(codec.parse_robot(again, back) == egm::ParseResult::kOk, "re-encoded EgmRobot");
  FUZZ_CHECK(back.seqno == m.seqno && back.pose.pos == m.pose.pos && back.joints == m.joints &&
                 back.has_force == m.has_force && back.force == m.force,
             "EgmRobot changed through re-encoding");
}

void check_correction(std::span<const std::uint8_t> datagram) {
  static egm::EgmCodec codec;
  egm::Correction c;
  if (codec.parse_correction(datagram, c) != egm::ParseResult::kOk) {
    return;
  }
  FUZZ_CHECK(c.joint_mode ? finite(c.joints) : finite(c.pose.pos), "non-finite correction");
  std::vector<std::uint8_t> again(egm::kMaxDatagram * 4);
  again.resize(codec.encode_correction(c, again));
  egm::Correction back;
  FUZZ_CHECK(codec.parse_correction(again, back) == egm::ParseResult::kOk, "re-encoded EgmSensor");
  FUZZ_CHECK(
      back.joint_mode == c.joint_mode && back.joints == c.joints && back.pose.pos == c.pose.pos,
      "EgmSensor changed through re-encoding");
}

bool near(const rsi::Values& a, const rsi::Values& b, double tolerance) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= tolerance)) return false;
  }
  return true;
}

void check_rsi_robot(std::span<const std::uint8_t> datagram) {
  rsi::RobotFrame f;
  if (rsi::parse_robot(datagram, f) != rsi::ParseResult::kOk) {
    return;
  }
  FUZZ_CHECK(finite(f.rist) && finite(f.rsol) && finite(f.aipos) && finite(f.aspos),
             "accepted a <Rob> value that is not finite");
  std::vector<std::uint8_t> again(rsi::kMaxDatagram);
  again.resize(rsi::write_robot(f, again));
  if (again.empty()) {
    return;  // a value the writer refuses (|v| >= 1e9)
  }
  rsi::RobotFrame back;
  FUZZ_CHECK(rsi::parse_robot(again, back) == rsi::ParseResult::kOk, "re-written <Rob>");
  FUZZ_CHECK(back.ipoc == f.ipoc && back.has_rist == f.has_rist && back.has_aipos == f.has_aipos &&
                 back.delay == f.delay,
             "<Rob> changed through re-writing");
  FUZZ_CHECK(near(back.rist, f.rist, 5e-5) && near(back.aipos, f.aipos, 5e-5) &&
                 near(back.rsol, f.rsol, 5e-5) && near(back.aspos, f.aspos, 5e-5),
             "a <Rob> value moved by more than the 4 decimals written");
}

void check_rsi_sensor(std::span<const std::uint8_t> datagram) {
  const rsi::SensorFormat format;
  rsi::SensorFrame s;
  if (rsi::parse_sensor(datagram, format, s) != rsi::ParseResult::kOk) {
    return;
  }
  FUZZ_CHECK(finite(s.correction), "accepted a correction that is not finite");
  std::vector<std::uint8_t> again(rsi::kMaxDatagram);
  again.resize(rsi::write_sensor(s, format, again));
  if (again.empty()) {
    return;
  }
  rsi::SensorFrame back;
  FUZZ_CHECK(rsi::parse_sensor(again, format, back) == rsi::ParseResult::kOk, "re-written <Sen>");
  FUZZ_CHECK(back.ipoc == s.ipoc && near(back.correction, s.correction, 5e-7),
             "<Sen> changed through re-writing");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  const std::span<const std::uint8_t> datagram(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      check_packet(datagram);
      break;
    case 1:
      check_robot(datagram);
      break;
    case 2:
      check_correction(datagram);
      break;
    case 3:
      check_rsi_robot(datagram);
      break;
    default:
      check_rsi_sensor(datagram);
      break;
  }
  return 0;
}
