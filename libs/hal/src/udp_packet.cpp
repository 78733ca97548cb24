#include "hyloop/hal/udp_packet.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace hyloop::hal {

namespace {

struct TypeInfo {
  std::string_view name;
  std::size_t size;
  bool is_signed;
  bool is_float;
};

constexpr std::array<TypeInfo, 10> kTypes{{{"u8", 1, false, false},
                                           {"u16", 2, false, false},
                                           {"u32", 4, false, false},
                                           {"u64", 8, false, false},
                                           {"i8", 1, true, false},
                                           {"i16", 2, true, false},
                                           {"i32", 4, true, false},
                                           {"i64", 8, true, false},
                                           {"f32", 4, true, true},
                                           {"f64", 8, true, true}}};

const TypeInfo& info(WireType type) noexcept { return kTypes[static_cast<std::size_t>(type)]; }

[[noreturn]] void refuse(std::string_view what, std::string_view field, std::string_view detail) {
  std::ostringstream msg;
  msg << what << " field '" << field << "': " << detail;
  throw std::invalid_argument(msg.str());
}

bool valid_name(std::string_view name) noexcept {
  if (name.empty()) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// The integer range a type holds, as doubles (u64/i64 bounds rounded inward to a double).
void raw_range(WireType type, double& lo, double& hi) noexcept {
  const TypeInfo& t = info(type);
  const int bits = static_cast<int>(t.size * 8);
  if (t.is_signed) {
    lo = -std::ldexp(1.0, bits - 1);
    hi = std::ldexp(1.0, bits - 1) - (bits == 64 ? 1024.0 : 1.0);
  } else {
    lo = 0.0;
    hi = std::ldexp(1.0, bits) - (bits == 64 ? 2048.0 : 1.0);
  }
}

void put_bytes(std::uint64_t bits, std::size_t size, ByteOrder order, std::uint8_t* out) noexcept {
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t shift = 8 * (order == ByteOrder::kLittle ? i : size - 1 - i);
    out[i] = static_cast<std::uint8_t>(bits >> shift);
  }
}

std::uint64_t get_bytes(std::size_t size, ByteOrder order, const std::uint8_t* in) noexcept {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t shift = 8 * (order == ByteOrder::kLittle ? i : size - 1 - i);
    bits |= static_cast<std::uint64_t>(in[i]) << shift;
  }
  return bits;
}

// Raw bits of an integer field → its value as a signed/unsigned number in a double.
double integer_value(std::uint64_t bits, const TypeInfo& t) noexcept {
  if (!t.is_signed) {
    return static_cast<double>(bits);
  }
  const std::size_t width = t.size * 8;
  if (width < 64 && (bits >> (width - 1)) != 0U) {
    bits |= ~((std::uint64_t{1} << width) - 1);  // sign-extend
  }
  return static_cast<double>(static_cast<std::int64_t>(bits));
}

}  // namespace

std::optional<WireType> parse_wire_type(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].name == text) {
      return static_cast<WireType>(i);
    }
  }
  return std::nullopt;
}

std::string_view to_string(WireType type) noexcept { return info(type).name; }
std::size_t wire_size(WireType type) noexcept { return info(type).size; }

PacketCodec::PacketCodec(std::string_view what, const PacketLayout& layout) {
  if (layout.fields.empty() || layout.fields.size() > kMaxPacketFields) {
    std::ostringstream msg;
    msg << what << ": " << layout.fields.size() << " fields: must be 1.." << kMaxPacketFields;
    throw std::invalid_argument(msg.str());
  }
  for (const PacketField& f : layout.fields) {
    if (!valid_name(f.name)) {
      refuse(what, f.name, "the name must be non-empty, of [a-z0-9_]");
    }
    if (find(f.name)) {
      refuse(what, f.name, "declared twice");
    }
    if (!std::isfinite(f.scale) || f.scale == 0.0) {
      refuse(what, f.name, "scale = " + std::to_string(f.scale) + ": must be finite and non-zero");
    }
    if (!std::isfinite(f.offset)) {
      refuse(what, f.name, "offset = " + std::to_string(f.offset) + ": must be finite");
    }
    fields_[count_] = f;
    offsets_[count_] = size_;
    size_ += wire_size(f.type);
    ++count_;
    if (!encodable(count_ - 1, f.value)) {
      refuse(what, f.name,
             "value = " + std::to_string(f.value) + ": does not fit its type " +
                 std::string(to_string(f.type)));
    }
  }
  if (size_ > kMaxPacketBytes) {
    std::ostringstream msg;
    msg << what << ": " << size_ << " bytes: must be at most " << kMaxPacketBytes;
    throw std::invalid_argument(msg.str());
  }
  if (!layout.sequence.empty()) {
    sequence_ = find(layout.sequence);
    if (!sequence_) {
      refuse(what, layout.sequence, "the sequence field is not declared");
    }
    const PacketField& f = fields_[*sequence_];
    if (info(f.type).is_float || info(f.type).is_signed || info(f.type).size < 2) {
      refuse(
          what, f.name,
          "the sequence field is " + std::string(to_string(f.type)) + ": must be u16, u32 or u64");
    }
    sequence_bits_ = static_cast<unsigned>(8 * info(f.type).size);
  }
}

std::optional<std::size_t> PacketCodec::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (fields_[i].name == name) {
      return i;
    }
  }
  return std::nullopt;
}

std::vector<double> PacketCodec::defaults() const {
  std::vector<double> values(count_);
  for (std::size_t i = 0; i < count_; ++i) {
    values[i] = fields_[i].value;
  }
  return values;
}

bool PacketCodec::encodable(std::size_t field, double value) const noexcept {
  if (field >= count_ || !std::isfinite(value)) {
    return false;
  }
  const PacketField& f = fields_[field];
  const double raw = (value - f.offset) / f.scale;
  if (info(f.type).is_float) {
    return f.type == WireType::kF64 ||
           std::abs(raw) <= static_cast<double>(std::numeric_limits<float>::max());
  }
  double lo = 0.0;
  double hi = 0.0;
  raw_range(f.type, lo, hi);
  const double rounded = std::nearbyint(raw);
  return rounded >= lo && rounded <= hi;
}

std::size_t PacketCodec::encode(std::span<const double> values, std::uint64_t sequence,
                                std::span<std::uint8_t> out) const noexcept {
  if (values.size() < count_ || out.size() < size_) {
    return 0;
  }
  for (std::size_t i = 0; i < count_; ++i) {
    const PacketField& f = fields_[i];
    std::uint8_t* at = out.data() + offsets_[i];
    const std::size_t n = wire_size(f.type);
    if (sequence_ && i == *sequence_) {
      put_bytes(sequence, n, f.order, at);
      continue;
    }
    if (!encodable(i, values[i])) {
      return 0;
    }
    const double raw = (values[i] - f.offset) / f.scale;
    std::uint64_t bits = 0;
    if (f.type == WireType::kF64) {
      bits = std::bit_cast<std::uint64_t>(raw);
    } else if (f.type == WireType::kF32) {
      bits = std::bit_cast<std::uint32_t>(static_cast<float>(raw));
    } else if (info(f.type).is_signed) {
      bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(std::nearbyint(raw)));
    } else {
      bits = static_cast<std::uint64_t>(std::nearbyint(raw));
    }
    put_bytes(bits, n, f.order, at);
  }
  return size_;
}

DecodeResult PacketCodec::decode(std::span<const std::uint8_t> in, std::span<double> values,
                                 std::uint64_t& sequence) const noexcept {
  if (in.size() != size_ || values.size() < count_) {
    return DecodeResult::kWrongSize;
  }
  for (std::size_t i = 0; i < count_; ++i) {
    const PacketField& f = fields_[i];
    const TypeInfo& t = info(f.type);
    const std::uint64_t bits = get_bytes(t.size, f.order, in.data() + offsets_[i]);
    if (sequence_ && i == *sequence_) {
      sequence = bits;
      values[i] = static_cast<double>(bits);
      continue;
    }
    double raw = 0.0;
    if (f.type == WireType::kF64) {
      raw = std::bit_cast<double>(bits);
    } else if (f.type == WireType::kF32) {
      raw = static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    } else {
      raw = integer_value(bits, t);
    }
    if (!std::isfinite(raw)) {
      return DecodeResult::kNotFinite;
    }
    values[i] = raw * f.scale + f.offset;
  }
  return DecodeResult::kOk;
}

std::int64_t sequence_delta(std::uint64_t last, std::uint64_t next, unsigned bits) noexcept {
  if (bits == 0 || bits > 64) {
    return 1;
  }
  const std::uint64_t diff = next - last;
  if (bits == 64) {
    return static_cast<std::int64_t>(diff);
  }
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const std::uint64_t d = diff & mask;
  const std::uint64_t half = std::uint64_t{1} << (bits - 1);
  return d >= half ? static_cast<std::int64_t>(d) - static_cast<std::int64_t>(mask + 1)
                   : static_cast<std::int64_t>(d);
}

}  // namespace hyloop::hal
