#pragma once
// A fixed binary packet declared as data, as a real-time target's UDP pack/unpack blocks lay it
// out (Simulink Byte Pack, LabVIEW flatten, a PLC's struct): fields packed in declared order,
// no padding, no header. Each field has a wire type (u8..u64, i8..i64, f32, f64), a byte order
// and a linear map to the engineering value:
//
//   value = raw·scale + offset          raw = round((value − offset)/scale) for integer types
//
// One integer field may be the packet's sequence/stamp (its raw value, no scale), which the
// receiver uses to find lost, duplicated and reordered packets (sequence_delta).
//
// PacketCodec compiles a layout once (not RT; throws naming the field) and then encodes and
// decodes into caller buffers: RT-safe, no allocation, no exception.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::hal {

enum class WireType : std::uint8_t { kU8, kU16, kU32, kU64, kI8, kI16, kI32, kI64, kF32, kF64 };
enum class ByteOrder : std::uint8_t { kLittle, kBig };

/// "u8".."u64", "i8".."i64", "f32", "f64"; nullopt for anything else.
[[nodiscard]] std::optional<WireType> parse_wire_type(std::string_view text) noexcept;
[[nodiscard]] std::string_view to_string(WireType type) noexcept;
[[nodiscard]] std::size_t wire_size(WireType type) noexcept;

struct PacketField {
  std::string name;  ///< [a-z0-9_] and unique in the layout
  WireType type = WireType::kF64;
  ByteOrder order = ByteOrder::kLittle;
  double scale = 1.0;   ///< finite, ≠ 0
  double offset = 0.0;  ///< finite
  double value = 0.0;   ///< sent when no signal is mapped onto the field (encoder side)
};

struct PacketLayout {
  std::vector<PacketField> fields;
  std::string sequence;  ///< the sequence/stamp field's name (an integer field); "" for none
};

/// The largest packet: a UDP payload that fits a 1500-byte Ethernet frame unfragmented.
inline constexpr std::size_t kMaxPacketBytes = 1472;
inline constexpr std::size_t kMaxPacketFields = 192;

enum class DecodeResult : std::uint8_t {
  kOk,
  kWrongSize,  ///< the datagram is not exactly the layout's size
  kNotFinite,  ///< a float field holds NaN or ±inf
};

class PacketCodec {
 public:
  /// @throws std::invalid_argument naming the layout, the field, its value and what is allowed.
  PacketCodec(std::string_view what, const PacketLayout& layout);

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t field_count() const noexcept { return count_; }
  [[nodiscard]] const PacketField& field(std::size_t i) const noexcept { return fields_[i]; }
  /// Index of the field `name`, if any. Not RT.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;
  [[nodiscard]] std::optional<std::size_t> sequence_index() const noexcept { return sequence_; }
  /// Bits of the sequence field (0 without one).
  [[nodiscard]] unsigned sequence_bits() const noexcept { return sequence_bits_; }

  /// The field's default values (PacketField::value), one per field. Not RT.
  [[nodiscard]] std::vector<double> defaults() const;

  /// Whether `value` is finite and, for an integer field, its raw value fits the type. RT-safe.
  [[nodiscard]] bool encodable(std::size_t field, double value) const noexcept;

  /// Writes `values` (one per field; the sequence field's entry is ignored) and `sequence` into
  /// `out`. Returns the bytes written, or 0 when `out` is too small or a value is not encodable.
  /// RT-safe.
  std::size_t encode(std::span<const double> values, std::uint64_t sequence,
                     std::span<std::uint8_t> out) const noexcept;

  /// Reads `in` into `values` (one per field) and the raw sequence. RT-safe.
  DecodeResult decode(std::span<const std::uint8_t> in, std::span<double> values,
                      std::uint64_t& sequence) const noexcept;

 private:
  std::array<PacketField, kMaxPacketFields> fields_{};
  std::array<std::size_t, kMaxPacketFields> offsets_{};
  std::size_t count_ = 0;
  std::size_t size_ = 0;
  std::optional<std::size_t> sequence_;
  unsigned sequence_bits_ = 0;
};

/// next − last in the sequence's own modular arithmetic (`bits` wide), as a signed step:
/// 1 is the next packet, > 1 a gap of (delta − 1) lost, 0 a duplicate, < 0 an older packet.
[[nodiscard]] std::int64_t sequence_delta(std::uint64_t last, std::uint64_t next,
                                          unsigned bits) noexcept;

}  // namespace hyloop::hal
