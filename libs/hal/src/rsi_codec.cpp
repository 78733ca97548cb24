#include "hyloop/hal/rsi_codec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "rsi_xml.hpp"

namespace hyloop::hal::rsi {

namespace {

using detail::Attribute;
using detail::XmlReader;
using Token = XmlReader::Token;
using Names = std::array<std::string_view, kValues>;

constexpr double kMaxAbs = 1e9;

std::string_view trim(std::string_view s) noexcept {
  const std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) {
    return {};
  }
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool to_double(std::string_view s, double& out) noexcept {
  if (s.starts_with('+')) {
    s.remove_prefix(1);
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

bool to_uint(std::string_view s, std::uint64_t& out) noexcept {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

const Attribute* find(std::span<const Attribute> attributes, std::string_view name) noexcept {
  for (const Attribute& a : attributes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

/// All six of `names`, finite; others are ignored.
bool read_values(std::span<const Attribute> attributes, const Names& names, Values& out) noexcept {
  for (std::size_t i = 0; i < kValues; ++i) {
    const Attribute* a = find(attributes, names[i]);
    if (a == nullptr || !to_double(a->value, out[i])) return false;
  }
  return true;
}

/// Reads one element's values into `out` once (a second one is malformed).
bool take(std::span<const Attribute> attributes, const Names& names, bool& has,
          Values& out) noexcept {
  if (has) return false;
  has = true;
  return read_values(attributes, names, out);
}

/// Walks a document whose root is `root`: `visitor` sees the root's attributes, each child's
/// start and its text. Deeper elements are skipped.
template <typename Visitor>
ParseResult walk(std::span<const std::uint8_t> datagram, std::string_view root,
                 Visitor& visitor) noexcept {
  for (std::uint8_t c : datagram) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return ParseResult::kMalformed;
  }
  XmlReader r({reinterpret_cast<const char*>(datagram.data()), datagram.size()});
  Token t = r.next();
  if (t != Token::kStart) return ParseResult::kMalformed;
  if (r.name() != root || !visitor.root(r.attributes())) return ParseResult::kWrongType;
  std::string_view child;
  for (t = r.next(); t != Token::kDone; t = r.next()) {
    if (t == Token::kError) return ParseResult::kMalformed;
    if (r.depth() != 2) continue;
    if (t == Token::kStart) {
      child = r.name();
      if (!visitor.element(child, r.attributes())) return ParseResult::kMalformed;
    } else if (t == Token::kText) {
      if (!visitor.text(child, r.text())) return ParseResult::kMalformed;
    } else {
      child = {};
    }
  }
  return visitor.complete() ? ParseResult::kOk : ParseResult::kIncomplete;
}

/// IPOC's text: one run of decimal digits (white space around it allowed).
struct Ipoc {
  bool has = false;
  std::uint64_t value = 0;
  bool text(std::string_view child, std::string_view text) noexcept {
    if (child != "IPOC") return true;
    if (has) return false;
    has = true;
    return to_uint(trim(text), value);
  }
};

struct RobotVisitor {
  RobotVisitor(RobotFrame& frame, const Extra& extra_value) noexcept
      : f(frame), extra(extra_value) {}
  RobotFrame& f;
  const Extra& extra;
  Ipoc ipoc;
  bool has_ipoc_element = false;
  bool root(std::span<const Attribute>) noexcept { return true; }
  bool element(std::string_view name, std::span<const Attribute> a) noexcept {
    if (name == "RIst") return take(a, kPoseNames, f.has_rist, f.rist);
    if (name == "RSol") return take(a, kPoseNames, f.has_rsol, f.rsol);
    if (name == "AIPos") return take(a, kAxisNames, f.has_aipos, f.aipos);
    if (name == "ASPos") return take(a, kAxisNames, f.has_aspos, f.aspos);
    if (name == "Delay") {
      const Attribute* d = find(a, "D");
      if (f.has_delay || d == nullptr) return false;
      f.has_delay = true;
      return to_uint(d->value, f.delay);
    }
    if (!extra.tag.empty() && name == extra.tag && extra.wrench) {
      return take(a, kWrenchNames, f.has_wrench, f.wrench);
    }
    if (!extra.tag.empty() && name == extra.tag) {
      const Attribute* v = find(a, extra.attribute);
      if (f.has_extra || v == nullptr) return false;
      f.has_extra = true;
      return to_double(v->value, f.extra);
    }
    if (name == "IPOC") {
      if (has_ipoc_element) return false;
      has_ipoc_element = true;
    }
    return true;
  }
  bool text(std::string_view child, std::string_view t) noexcept { return ipoc.text(child, t); }
  bool complete() noexcept {
    f.ipoc = ipoc.value;
    return ipoc.has;
  }
};

struct SensorVisitor {
  SensorVisitor(const SensorFormat& sensor_format, SensorFrame& frame) noexcept
      : format(sensor_format), f(frame) {}
  const SensorFormat& format;
  SensorFrame& f;
  Ipoc ipoc;
  bool has_correction = false;
  bool has_ipoc_element = false;
  bool root(std::span<const Attribute> a) noexcept {
    const Attribute* type = find(a, "Type");
    return type != nullptr && type->value == format.type;
  }
  bool element(std::string_view name, std::span<const Attribute> a) noexcept {
    if (name == format.tag) {
      return take(a, format.axis ? kAxisNames : kPoseNames, has_correction, f.correction);
    }
    if (name == "IPOC") {
      if (has_ipoc_element) return false;
      has_ipoc_element = true;
    }
    return true;
  }
  bool text(std::string_view child, std::string_view t) noexcept { return ipoc.text(child, t); }
  bool complete() noexcept {
    f.ipoc = ipoc.value;
    return ipoc.has && has_correction;
  }
};

/// Appends to a fixed buffer; ok() turns false for good once anything did not fit.
class Out {
 public:
  explicit Out(std::span<std::uint8_t> out) noexcept : out_(out) {}
  void put(std::string_view s) noexcept {
    if (!ok_ || s.size() > out_.size() - n_) {
      ok_ = false;
      return;
    }
    for (char c : s) out_[n_++] = static_cast<std::uint8_t>(c);
  }
  void put(double v, int decimals) noexcept {
    std::array<char, 48> text{};
    if (!std::isfinite(v) || std::abs(v) >= kMaxAbs) {
      ok_ = false;
      return;
    }
    const auto r = std::to_chars(text.data(), text.data() + text.size(), v,
                                 std::chars_format::fixed, decimals);
    put({text.data(), static_cast<std::size_t>(r.ptr - text.data())});
  }
  void put(std::uint64_t v) noexcept {
    std::array<char, 24> text{};
    const auto r = std::to_chars(text.data(), text.data() + text.size(), v);
    put({text.data(), static_cast<std::size_t>(r.ptr - text.data())});
  }
  void element(std::string_view tag, const Names& names, const Values& v, int decimals) noexcept {
    put("<");
    put(tag);
    for (std::size_t i = 0; i < kValues; ++i) {
      put(" ");
      put(names[i]);
      put("=\"");
      put(v[i], decimals);
      put("\"");
    }
    put("/>");
  }
  void ipoc(std::uint64_t value) noexcept {
    put("<IPOC>");
    put(value);
    put("</IPOC>");
  }
  [[nodiscard]] std::size_t size() const noexcept { return ok_ ? n_ : 0; }

 private:
  std::span<std::uint8_t> out_;
  std::size_t n_ = 0;
  bool ok_ = true;
};

bool plain_text(std::string_view s) noexcept {
  return s.find_first_of("<>&\"'") == std::string_view::npos;
}

bool valid_name(std::string_view s) noexcept {
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  if (s.empty() || s.size() > kMaxName || !(letter(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) return false;
  }
  return true;
}

}  // namespace

bool is_name(std::string_view name) noexcept { return valid_name(name); }

ParseResult parse_robot(std::span<const std::uint8_t> datagram, RobotFrame& out,
                        const Extra& extra) noexcept {
  if (datagram.size() > kMaxDatagram) return ParseResult::kMalformed;
  RobotFrame f;
  RobotVisitor v{f, extra};
  const ParseResult r = walk(datagram, "Rob", v);
  if (r == ParseResult::kOk) out = f;
  return r;
}

ParseResult parse_sensor(std::span<const std::uint8_t> datagram, const SensorFormat& format,
                         SensorFrame& out) noexcept {
  if (datagram.size() > kMaxDatagram) return ParseResult::kMalformed;
  SensorFrame f;
  SensorVisitor v{format, f};
  const ParseResult r = walk(datagram, "Sen", v);
  if (r == ParseResult::kOk) out = f;
  return r;
}

std::size_t write_robot(const RobotFrame& f, std::span<std::uint8_t> out,
                        const Extra& extra) noexcept {
  const bool with_extra = f.has_extra && !extra.tag.empty() && !extra.wrench;
  const bool with_wrench = f.has_wrench && !extra.tag.empty() && extra.wrench;
  if (with_extra && (!is_name(extra.tag) || !is_name(extra.attribute))) return 0;
  if (with_wrench && !is_name(extra.tag)) return 0;
  Out o(out.first(std::min(out.size(), kMaxDatagram)));
  o.put("<Rob Type=\"KUKA\">");
  if (f.has_rist) o.element("RIst", kPoseNames, f.rist, 4);
  if (f.has_rsol) o.element("RSol", kPoseNames, f.rsol, 4);
  if (f.has_aipos) o.element("AIPos", kAxisNames, f.aipos, 4);
  if (f.has_aspos) o.element("ASPos", kAxisNames, f.aspos, 4);
  if (f.has_delay) {
    o.put("<Delay D=\"");
    o.put(f.delay);
    o.put("\"/>");
  }
  if (with_wrench) o.element(extra.tag, kWrenchNames, f.wrench, 4);
  if (with_extra) {
    o.put("<");
    o.put(extra.tag);
    o.put(" ");
    o.put(extra.attribute);
    o.put("=\"");
    o.put(f.extra, 4);
    o.put("\"/>");
  }
  o.ipoc(f.ipoc);
  o.put("</Rob>");
  return o.size();
}

std::size_t write_sensor(const SensorFrame& f, const SensorFormat& format,
                         std::span<std::uint8_t> out) noexcept {
  if (!plain_text(format.type) || !valid_name(format.tag)) return 0;
  Out o(out.first(std::min(out.size(), kMaxDatagram)));
  o.put("<Sen Type=\"");
  o.put(format.type);
  o.put("\">");
  o.element(format.tag, format.axis ? kAxisNames : kPoseNames, f.correction, 6);
  o.ipoc(f.ipoc);
  o.put("</Sen>");
  return o.size();
}

namespace {

Eigen::Quaterniond abc_rotation(const Values& v) noexcept {
  return zyx_rotation({v[5], v[4], v[3]});
}

}  // namespace

LoopPose loop_pose(const Values& wire, const Values& start, double scale) noexcept {
  LoopPose out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = (wire[i] - start[i]) / scale;
  const std::array<double, 3> theta = loop_rotation(abc_rotation(wire), abc_rotation(start));
  for (std::size_t i = 0; i < 3; ++i) out[3 + i] = theta[i];
  return out;
}

Values wire_pose(const LoopPose& loop, const Values& start, double scale) noexcept {
  Values out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = start[i] + scale * loop[i];
  const ZyxAngles a = zyx_angles(wire_rotation({loop[3], loop[4], loop[5]}, abc_rotation(start)));
  out[3] = a[2];  // A: about z
  out[4] = a[1];  // B: about y
  out[5] = a[0];  // C: about x
  return out;
}

}  // namespace hyloop::hal::rsi
