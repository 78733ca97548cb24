#pragma once
// The transports the ring benchmark measures and the factory of one node of a ring. Each
// backend is one NodeIo implementation: uds_io, zmq_io, hyloop_io.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "node_io.hpp"

namespace hyloop::bench {

enum class Transport : std::uint8_t { kUds, kZmq, kHyloop };

std::string_view name_of(Transport t);
/// "uds", "zmq" or "hyloop"; throws std::invalid_argument naming anything else.
Transport parse_transport(std::string_view s);

/// The links of one ring, decided before any node starts.
struct RingSetup {
  Transport transport = Transport::kUds;
  std::size_t message_bytes = 0;
  std::array<std::string, kNodes> endpoints;  ///< link i: node i → node i+1 (ZeroMQ)
  std::array<int, kNodes> send_fd{};          ///< link i, held by node i (UDS)
  std::array<int, kNodes> recv_fd{};          ///< link i, held by node i+1 (UDS)
};

/// The link a node receives on.
inline int input_link(int node) { return (node + kNodes - 1) % kNodes; }

/// Node `node` of the ring (binds its input). `context`: null for UDS.
std::unique_ptr<NodeIo> make_node(const RingSetup& ring, zmq::context_t* context, int node);

}  // namespace hyloop::bench
