#pragma once
// One node of the ring benchmark: its input (from the previous node) and output (to the next),
// behind one interface so each transport (backend) lives in its own file. Messages carry a
// stamp: the cycle and the origin time (CLOCK_MONOTONIC, ns) set by node 0.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "hyloop/transport/clock.hpp"

namespace hyloop::bench {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr int kNodes = 4;  ///< rig → sensor → dynamics → actuator → rig
constexpr std::uint64_t kStopCycle = std::uint64_t{1} << 62;
constexpr std::size_t kBufferBytes = 512;
constexpr std::size_t kStampBytes = 16;  ///< raw rings: cycle (u64) then origin time (i64)
constexpr milliseconds kRoundTripTimeout{1000};
constexpr int kHwm = 16;
constexpr std::string_view kRunId = "ring-bench";
constexpr auto kMaxAge = std::chrono::seconds(1);  ///< staleness check on, above any VM stall

inline std::int64_t now_ns() noexcept { return transport::monotonic_now_ns(); }

struct Stamp {
  std::uint64_t cycle = 0;
  std::int64_t origin_ns = 0;
};

inline void put_stamp(std::span<std::byte> buffer, Stamp s) noexcept {
  std::memcpy(buffer.data(), &s.cycle, sizeof s.cycle);
  std::memcpy(buffer.data() + sizeof s.cycle, &s.origin_ns, sizeof s.origin_ns);
}

inline Stamp get_stamp(std::span<const std::byte> buffer) noexcept {
  Stamp s;
  std::memcpy(&s.cycle, buffer.data(), sizeof s.cycle);
  std::memcpy(&s.origin_ns, buffer.data() + sizeof s.cycle, sizeof s.origin_ns);
  return s;
}

class NodeIo {
 public:
  NodeIo() = default;
  NodeIo(const NodeIo&) = delete;
  NodeIo& operator=(const NodeIo&) = delete;
  NodeIo(NodeIo&&) = delete;
  NodeIo& operator=(NodeIo&&) = delete;
  virtual ~NodeIo() = default;

  /// Connects the output (after every node has bound its input).
  virtual void connect_output() {}
  /// Node 0: sends a new message of `cycle` stamped with `origin_ns`.
  virtual void send_origin(std::uint64_t cycle, std::int64_t origin_ns) = 0;
  /// Waits up to `timeout` for one (accepted) message.
  virtual std::optional<Stamp> receive(milliseconds timeout) = 0;
  /// Forwards the message last received.
  virtual void forward() = 0;
  /// True once the input reported end of stream.
  [[nodiscard]] virtual bool closed() const { return false; }
  /// Messages rejected by validation (hyloop only).
  [[nodiscard]] virtual std::uint64_t rejected() const { return 0; }
};

}  // namespace hyloop::bench
