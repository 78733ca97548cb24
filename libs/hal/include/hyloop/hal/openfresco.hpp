#pragma once
// The OpenFresco/OpenSees "RemoteTest" framing, as spoken by OpenFresco's `expControl GenericTCP`
// and OpenSees' `element genericClient` to a lab server (docs/opensees.md). Restated from the
// public sources (OpenFresco SRC/FrescoGlobals.h, ECGenericTCP.cpp, ExpServerCommands.cpp,
// TCP_Socket.cpp; OpenSees SRC/element/generic/GenericClient.cpp); no code taken from them.
//
// No header, no length, no checksum: both ends know every message's size in advance.
// Byte order: the peers send host order and leave the endianness probe off, i.e. little-endian
// from every x86 client; this side decodes little-endian (a static_assert holds it to such hosts).
//
// Set-up ID, sent once by the client right after connecting: 11 int32 (44 bytes)
//   slot  0..4   ctrl sizes  (what each trial carries):   disp, vel, accel, force, time
//   slot  5..9   daq sizes   (what each getDaq returns):  disp, vel, accel, force, time
//   slot 10      dataSize    (doubles in every later message; GenericTCP: 256, genericClient:
//                             max(its -dataSize (256), 1 + 3n + 1, n²))
// A size is the number of doubles of that block (n DOFs; time 1); 0 = absent.
//
// Every later message, both ways: dataSize float64 (8·dataSize bytes).
//   client → site   slot 0 = action code (a double); slots 1.. the ctrl blocks packed in the
//                   order above (absent blocks take no room); the rest zero or stale.
//   site → client   getDaq/getDisp/…/getTime: the daq blocks packed from slot 0 (no status
//                   slot); get*Stiff/getDamp/getMass: an n×n matrix in slots 0..n²−1,
//                   column-major (slot j·n + i = entry (i, j), OpenSees' Matrix storage).
//   Codes 3 (trial), 5 (commit) and 99 (terminate) get no reply; there is no error reply.
//
// The UDP variant (OpenFresco UDP_Socket; `expControl GenericTCP … -udp`, `startSimAppSiteServer
// … -udp`): the same bytes, each message sent with sendto() as datagrams of at most
// kMaxUdpDatagram bytes (a 2048-byte message is one datagram; 9600 bytes go as 9126 + 474). No
// handshake by GenericTCP or genericClient; ShadowSite's optional one is a 1-byte 'a' from the
// client answered by a 1-byte 'b'. The server learns its peer from the set-up's datagram. Nothing
// numbers the datagrams: a lost one is not seen, a lost reply leaves the client waiting.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::hal::openfresco {

static_assert(std::endian::native == std::endian::little,
              "the RemoteTest peers send x86 host order (little-endian)");

/// Action codes in slot 0 (FrescoGlobals.h; the same numbers in OpenSees GenericClient.h).
enum class Action : std::int32_t {
  kOpen = 1,              ///< Shadow/Actor dialect only
  kSetup = 2,             ///< Shadow/Actor dialect, or GenericTCP's -initFile lines
  kSetTrialResponse = 3,  ///< the trial: ctrl blocks; no reply
  kExecute = 4,           ///< not sent by GenericTCP or genericClient
  kCommitState = 5,       ///< the step is converged; no reply
  kGetDaqResponse = 6,    ///< reply: all daq blocks
  kGetDisp = 7,           ///< reply: the daq layout (disp block at its offset)
  kGetVel = 8,            ///< reply: the daq layout
  kGetAccel = 9,          ///< reply: the daq layout
  kGetForce = 10,         ///< reply: the daq layout
  kGetTime = 11,          ///< reply: the daq layout
  kGetInitialStiff = 12,  ///< reply: n×n, column-major
  kGetTangentStiff = 13,  ///< reply: n×n, column-major
  kGetDamp = 14,          ///< reply: n×n, column-major
  kGetMass = 15,          ///< reply: n×n, column-major
  kTerminate = 99,        ///< "DIE": the client is done; no reply
};

/// The code in slot 0 as an action, or none when it is not exactly one of the codes above
/// (non-finite, fractional as the Simulink dialect's 4.1, or unknown).
[[nodiscard]] std::optional<Action> action_from_code(double code) noexcept;
[[nodiscard]] std::string_view to_string(Action action) noexcept;

/// Response quantities in their wire order (OF_Resp_Disp … OF_Resp_Time).
enum class Quantity : std::uint8_t { kDisp = 0, kVel = 1, kAccel = 2, kForce = 3, kTime = 4 };
inline constexpr std::size_t kQuantityCount = 5;
[[nodiscard]] std::string_view to_string(Quantity quantity) noexcept;

inline constexpr std::size_t kSetupInts = 11;
inline constexpr std::size_t kSetupBytes = kSetupInts * sizeof(std::int32_t);  // 44
inline constexpr std::int32_t kDefaultDataSize = 256;  // OF_Network_dataSize
/// UDP: the largest datagram a message is cut into (OpenFresco's MAX_UDP_DATAGRAM).
inline constexpr std::size_t kMaxUdpDatagram = 9126;
/// UDP: the size of the next datagram of a message with `remaining` bytes still to come.
[[nodiscard]] constexpr std::size_t udp_datagram_bytes(std::size_t remaining) noexcept {
  return remaining < kMaxUdpDatagram ? remaining : kMaxUdpDatagram;
}
/// UDP: ShadowSite's optional handshake bytes (client → site, site → client).
inline constexpr std::byte kUdpHandshakeAsk{'a'};
inline constexpr std::byte kUdpHandshakeAnswer{'b'};

/// The 11-int set-up ID.
struct SetupId {
  std::array<std::int32_t, kQuantityCount> ctrl{};  ///< doubles per trial block
  std::array<std::int32_t, kQuantityCount> daq{};   ///< doubles per daq block
  std::int32_t data_size = 0;                       ///< doubles per message
  bool operator==(const SetupId&) const = default;
};

/// The wire name of slot `slot` (0..10), e.g. "ctrl disp size", "dataSize".
[[nodiscard]] std::string slot_name(std::size_t slot);

void encode_setup(const SetupId& id, std::span<std::byte, kSetupBytes> out) noexcept;
[[nodiscard]] SetupId decode_setup(std::span<const std::byte, kSetupBytes> in) noexcept;

/// Where each block sits in a message (offset and size in doubles): ctrl blocks from slot 1,
/// daq blocks from slot 0, both packed in Quantity order.
struct BlockLayout {
  std::array<std::size_t, kQuantityCount> offset{};
  std::array<std::size_t, kQuantityCount> size{};
  [[nodiscard]] std::size_t end() const noexcept { return offset[4] + size[4]; }
};
/// Sizes must be ≥ 0 (check with check_setup_shape first).
[[nodiscard]] BlockLayout ctrl_layout(const SetupId& id) noexcept;
[[nodiscard]] BlockLayout daq_layout(const SetupId& id) noexcept;

/// Why the set-up cannot frame messages at all ("" when it can): a negative size, a dataSize
/// too small for its blocks (1 + Σctrl, Σdaq) or above `max_data_size`. Names slot and value.
[[nodiscard]] std::string check_setup_shape(const SetupId& id, std::int32_t max_data_size);

/// Host-order float64 ⇄ bytes. `out`/`in` hold exactly 8·values.size() bytes. RT-safe.
void encode_doubles(std::span<const double> values, std::span<std::byte> out) noexcept;
void decode_doubles(std::span<const std::byte> in, std::span<double> values) noexcept;

/// Writes the n×n matrix given row by row (`row_major[i·n + j]` = entry (i, j)) into
/// `out[0..n²)` column-major. RT-safe.
void write_column_major(std::span<const double> row_major, std::size_t n,
                        std::span<double> out) noexcept;

/// Reassembles fixed-size messages from a byte stream cut anywhere: bytes go in by chunks of any
/// size, a message comes out when exactly `message_bytes` have arrived. The buffer is allocated
/// once (the hard limit `max_message_bytes`); consume(), message() and next() are RT-safe.
class StreamReader {
 public:
  /// @throws std::invalid_argument when max_message_bytes is 0.
  explicit StreamReader(std::size_t max_message_bytes);

  /// The size of the messages to come; false (unchanged) when 0 or above the hard limit.
  /// Discards a partial message.
  bool set_message_bytes(std::size_t message_bytes) noexcept;

  /// Takes bytes from `input` up to the end of the current message; returns how many it took.
  /// Takes nothing while a complete message waits for next().
  std::size_t consume(std::span<const std::byte> input) noexcept;

  [[nodiscard]] bool complete() const noexcept { return filled_ == message_bytes_; }
  /// The complete message (empty unless complete()).
  [[nodiscard]] std::span<const std::byte> message() const noexcept;
  /// Starts the next message.
  void next() noexcept { filled_ = 0; }
  /// Bytes of the current message received so far.
  [[nodiscard]] std::size_t filled() const noexcept { return filled_; }
  [[nodiscard]] std::size_t message_bytes() const noexcept { return message_bytes_; }
  [[nodiscard]] std::size_t max_message_bytes() const noexcept { return buffer_.size(); }

 private:
  std::vector<std::byte> buffer_;
  std::size_t message_bytes_;
  std::size_t filled_ = 0;
};

}  // namespace hyloop::hal::openfresco
