#pragma once
// Loop-message codec (DESIGN.md §2): stamps and serialises hyloop.v2 loop messages into a
// buffer sized once at construction, and validates received bytes, rejecting and counting,
// each kind separately: malformed, oversized, wrong run id, stale, duplicate, out of order,
// (lockstep only) ahead of the expected cycle, and a Frame whose length is not its channel's
// layout's (ValidatorConfig::frame_length).
//
// Typical use (one Encoder per sending thread, one Decoder per input channel and type):
//
//   Encoder enc({.run_id = run, .sender = 2});
//   Decoder<v2::Frame> dec({.run_id = run, .mode = Mode::kRealTime,
//                                     .max_age = std::chrono::milliseconds(10)});
//   channel.try_send(enc.encode(cmd, k, k * T));                     // sender
//   if (auto r = channel.receive(buf, 1ms))                           // receiver
//     if (const auto* m = dec.decode_received(r->bytes, r->wire_bytes)) use(*m);
//
// RT-safety: Encoder::encode() and Decoder::decode() do not allocate once every message object
// has been through one full-sized warm-up (protobuf then reuses its strings, sub-messages and
// repeated fields). Exception: a forged message whose strings are not valid UTF-8 makes
// protobuf log an error (allocates) before it is rejected as malformed. Counters are std::atomic,
// readable from any thread without a lock; each Encoder/Decoder itself is used by a single thread.
//
// Units: sizes in bytes, times in ns on the sender's/receiver's CLOCK_MONOTONIC.

#include <hyloop/v2/loop.pb.h>

#include <array>
#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/transport/clock.hpp"

namespace hyloop::transport {

/// Default largest accepted loop message (bytes). Loop messages are ~50–200 bytes.
inline constexpr std::size_t kDefaultMaxMessageBytes = 4096;

/// A hyloop.v2 loop message: a protobuf message with a `Header header = 1` field.
template <class M>
concept LoopMessage = std::derived_from<M, google::protobuf::MessageLite> &&
    requires(M& m, const M& cm, v2::Header* h) {
  { m.mutable_header() } -> std::same_as<v2::Header*>;
  { cm.header() } -> std::same_as<const v2::Header&>;
  { cm.has_header() } -> std::same_as<bool>;
  { m.unsafe_arena_release_header() } -> std::same_as<v2::Header*>;
  m.unsafe_arena_set_allocated_header(h);
};

/// Outcome of validating one received message.
enum class Verdict : std::uint8_t {
  kAccepted = 0,
  kMalformed,    ///< does not parse, trailing garbage, or no header / empty run id
  kOversized,    ///< wire size above the configured maximum (checked before parsing)
  kWrongRun,     ///< header.run_id differs from this run's id
  kStale,        ///< real time only: receiver now − send_time_ns > max age
  kDuplicate,    ///< same cycle as the last accepted message
  kOutOfOrder,   ///< cycle lower than the last accepted message
  kAhead,        ///< lockstep only: cycle above the expected one (a message was lost upstream)
  kWrongLength,  ///< a Frame with another number of values than its channel's layout
};
inline constexpr std::size_t kVerdictCount = 9;
[[nodiscard]] std::string_view to_string(Verdict v) noexcept;

/// Lockstep: only the expected cycle is accepted, nothing is ever stale. Real time: the newest
/// wins (any cycle above the last accepted one), old messages are stale.
enum class Mode : std::uint8_t { kLockstep, kRealTime };

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "counters must be lock-free");

/// Per-verdict counters, single writer, lock-free readers.
class VerdictCounters {
 public:
  void add(Verdict v) noexcept {
    auto& c = counts_[static_cast<std::size_t>(v)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t count(Verdict v) const noexcept {
    return counts_[static_cast<std::size_t>(v)].load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t accepted() const noexcept { return count(Verdict::kAccepted); }
  /// Sum of every rejection kind.
  [[nodiscard]] std::uint64_t rejected() const noexcept;
  void reset() noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, kVerdictCount> counts_{};
};

struct EncoderConfig {
  std::string run_id;
  std::uint32_t sender = 0;
  std::size_t max_bytes = kDefaultMaxMessageBytes;  ///< buffer size; larger messages are refused
};

/// Stamps the header and serialises into an internal buffer of max_bytes (allocated once).
class Encoder {
 public:
  explicit Encoder(EncoderConfig config);

  /// Stamps `msg`'s header (run id, cycle, virtual time, send time, sender) and serialises it.
  /// Returns the encoded bytes (valid until the next encode()), or an empty span if the
  /// message exceeds max_bytes (counted in oversized()). RT-safe after warm-up.
  template <LoopMessage M>
  std::span<const std::byte> encode(M& msg, std::uint64_t cycle, double virtual_time_s,
                                    std::int64_t send_time_ns = monotonic_now_ns()) {
    stamp(*msg.mutable_header(), cycle, virtual_time_s, send_time_ns);
    return serialize(msg);
  }

  /// Serialises `msg` as it is (header untouched): for relays and for forging test input.
  std::span<const std::byte> serialize(const google::protobuf::MessageLite& msg);

  [[nodiscard]] const std::string& run_id() const noexcept { return config_.run_id; }
  [[nodiscard]] std::uint64_t encoded() const noexcept {
    return encoded_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t oversized() const noexcept {
    return oversized_.load(std::memory_order_relaxed);
  }

 private:
  void stamp(v2::Header& header, std::uint64_t cycle, double virtual_time_s,
             std::int64_t send_time_ns);

  EncoderConfig config_;
  std::vector<std::byte> buffer_;
  std::atomic<std::uint64_t> encoded_{0};
  std::atomic<std::uint64_t> oversized_{0};
};

struct ValidatorConfig {
  std::string run_id;  ///< must not be empty (an empty run id marks a missing header)
  Mode mode = Mode::kLockstep;
  std::size_t max_bytes = kDefaultMaxMessageBytes;
  /// Real time: a message whose send time is older than this (receiver's now − send_time_ns)
  /// is stale. 0 disables the check. Ignored in lockstep (nothing is ever stale there).
  std::chrono::nanoseconds max_age{0};
  /// Lockstep: the first cycle expected.
  std::uint64_t first_cycle = 0;
  /// A Frame's number of values (its channel's layout size); 0: any (other message types).
  std::size_t frame_length = 0;
};

/// Header-level checks and the per-kind counters. RT-safe, no allocation.
class Validator {
 public:
  explicit Validator(ValidatorConfig config);

  /// Size check, before parsing. Counts kOversized on rejection.
  Verdict check_size(std::size_t wire_bytes) noexcept;
  /// Run, age and cycle checks on a parsed header; on acceptance advances the cycle state.
  /// Counts the verdict.
  Verdict check(const v2::Header& header, std::int64_t now_ns) noexcept;
  /// Counts a verdict decided elsewhere (e.g. kMalformed by the parser).
  void count(Verdict v) noexcept { counters_.add(v); }

  /// Lockstep: the cycle accepted next. Real time: last accepted + 1 (first_cycle before any).
  [[nodiscard]] std::uint64_t expected_cycle() const noexcept { return expected_; }
  [[nodiscard]] bool has_accepted() const noexcept { return has_last_; }
  [[nodiscard]] std::uint64_t last_cycle() const noexcept { return last_; }
  [[nodiscard]] const VerdictCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const ValidatorConfig& config() const noexcept { return config_; }
  /// Forgets the cycle history (new run segment); counters are kept.
  void reset(std::uint64_t first_cycle) noexcept;

 private:
  ValidatorConfig config_;
  VerdictCounters counters_;
  std::uint64_t expected_;
  std::uint64_t last_ = 0;
  bool has_last_ = false;
};

namespace detail {
/// Merges `bytes` into `msg` (already cleared). False on a parse failure or trailing bytes.
bool merge_from(google::protobuf::MessageLite& msg, std::span<const std::byte> bytes);

/// Parses `bytes` into `msg`, reusing its header and every buffer (no allocation after warm-up:
/// a plain ParseFromArray would delete and re-create the header sub-message each time).
template <LoopMessage M>
bool parse_reusing(M& msg, std::span<const std::byte> bytes) {
  v2::Header* header = msg.unsafe_arena_release_header();
  msg.Clear();
  if (header != nullptr) {
    header->Clear();  // keeps run_id's capacity
    msg.unsafe_arena_set_allocated_header(header);
  }
  return merge_from(msg, bytes);
}
}  // namespace detail

/// Parses and validates one message type. Holds two message objects: the scratch one bytes are
/// parsed into, and the newest accepted one (swapped in on acceptance, so a rejected message
/// never overwrites it). Not thread-safe; counters readable from any thread.
template <LoopMessage M>
class Decoder {
 public:
  explicit Decoder(ValidatorConfig config) : validator_(std::move(config)) {}

  /// Decodes a received message: `bytes` (the first part of a message whose full size on the wire
  /// was `wire_bytes`, larger when the receive buffer truncated it). Returns the accepted message
  /// (valid until the next accepted decode) or nullptr. RT-safe after warm-up.
  const M* decode_received(std::span<const std::byte> bytes, std::size_t wire_bytes,
                           std::int64_t now_ns = monotonic_now_ns()) {
    last_verdict_ = validator_.check_size(wire_bytes);
    if (last_verdict_ != Verdict::kAccepted) {
      return nullptr;
    }
    if (wire_bytes != bytes.size() || !detail::parse_reusing(scratch_, bytes)) {
      last_verdict_ = Verdict::kMalformed;
      validator_.count(last_verdict_);
      return nullptr;
    }
    if constexpr (std::same_as<M, v2::Frame>) {
      const std::size_t length = validator_.config().frame_length;
      if (length != 0 && static_cast<std::size_t>(scratch_.values_size()) != length) {
        last_verdict_ = Verdict::kWrongLength;
        validator_.count(last_verdict_);
        return nullptr;
      }
    }
    last_verdict_ = validator_.check(scratch_.header(), now_ns);
    if (last_verdict_ != Verdict::kAccepted) {
      return nullptr;
    }
    scratch_.Swap(&latest_);
    has_latest_ = true;
    return &latest_;
  }
  /// Decodes a complete message. `now_ns` is the receiver's CLOCK_MONOTONIC (for staleness).
  const M* decode(std::span<const std::byte> bytes, std::int64_t now_ns = monotonic_now_ns()) {
    return decode_received(bytes, bytes.size(), now_ns);
  }

  /// The newest accepted message, nullptr before the first.
  [[nodiscard]] const M* latest() const noexcept { return has_latest_ ? &latest_ : nullptr; }
  [[nodiscard]] Verdict last_verdict() const noexcept { return last_verdict_; }
  [[nodiscard]] const VerdictCounters& counters() const noexcept { return validator_.counters(); }
  [[nodiscard]] Validator& validator() noexcept { return validator_; }
  [[nodiscard]] const Validator& validator() const noexcept { return validator_; }

 private:
  Validator validator_;
  M scratch_;
  M latest_;
  bool has_latest_ = false;
  Verdict last_verdict_ = Verdict::kAccepted;
};

}  // namespace hyloop::transport
