#pragma once
// What a wire emulator does to its datagrams (seeded, so a run repeats): each outgoing datagram
// is lost with probability `loss`, else sent after latency + U(0, jitter), held back by `hold`
// s more with probability `reorder` (so the next one overtakes it), and sent twice with
// probability `duplicate`; each incoming datagram is lost with probability `loss`.
// WireImpairer keeps the datagrams in flight in a fixed queue; it belongs to one I/O thread and
// allocates nothing after construction.

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>

#include "hyloop/hal/udp_packet.hpp"
#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

struct WireImpairments {
  double latency = 0.0;    ///< s, added to every outgoing datagram; ≥ 0
  double jitter = 0.0;     ///< s, uniform extra delay in [0, jitter]; ≥ 0
  double loss = 0.0;       ///< probability, each direction; [0, 1)
  double reorder = 0.0;    ///< probability an outgoing datagram is held back; [0, 1]
  double duplicate = 0.0;  ///< probability an outgoing datagram is sent twice; [0, 1]
  std::uint64_t seed = 1;
};

/// @throws std::invalid_argument naming the field ("impairments.loss = 1: must be in [0, 1)").
void validate(const WireImpairments& impairments);

class WireImpairer {
 public:
  /// `hold`: how long a reordered datagram is held back, s (1.5 periods).
  WireImpairer(const WireImpairments& impairments, double hold);

  /// Whether an incoming datagram is lost. RT-safe.
  bool lose_incoming() noexcept;
  /// Queues `datagram` for `to` (or loses it). Returns false when lost. RT-safe.
  bool submit(std::span<const std::uint8_t> datagram, double now) noexcept;
  /// Sends what is due by `now` through `socket` to `to`; returns how many were sent. RT-safe.
  std::size_t flush(const UdpSocket& socket, const sockaddr_in& to, double now) noexcept;
  /// The earliest due time in flight, or `otherwise`.
  [[nodiscard]] double next_due(double otherwise) const noexcept;
  /// Datagrams dropped because 256 were already in flight.
  [[nodiscard]] std::uint64_t overflowed() const noexcept { return overflowed_; }

 private:
  struct InFlight {
    double due = 0.0;
    std::size_t size = 0;
    std::array<std::uint8_t, kMaxPacketBytes> bytes{};
  };
  void enqueue(std::span<const std::uint8_t> datagram, double due) noexcept;

  WireImpairments w_;
  double hold_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  std::array<InFlight, 256> queue_{};
  std::size_t queued_ = 0;
  std::uint64_t overflowed_ = 0;
};

}  // namespace hyloop::hal
