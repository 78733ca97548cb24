#include "backends.hpp"

#include <stdexcept>

#include "hyloop_io.hpp"
#include "uds_io.hpp"
#include "zmq_io.hpp"

namespace hyloop::bench {

std::string_view name_of(Transport t) {
  switch (t) {
    case Transport::kUds:
      return "uds";
    case Transport::kZmq:
      return "zmq";
    case Transport::kHyloop:
      return "hyloop";
  }
  return "?";
}

Transport parse_transport(std::string_view s) {
  if (s == "uds") return Transport::kUds;
  if (s == "zmq") return Transport::kZmq;
  if (s == "hyloop") return Transport::kHyloop;
  throw std::invalid_argument("unknown transport: " + std::string(s));
}

std::unique_ptr<NodeIo> make_node(const RingSetup& ring, zmq::context_t* context, int node) {
  const auto in = static_cast<std::size_t>(input_link(node));
  const auto out = static_cast<std::size_t>(node);
  switch (ring.transport) {
    case Transport::kUds:
      return std::make_unique<UdsIo>(ring.recv_fd[in], ring.send_fd[out], ring.message_bytes);
    case Transport::kZmq:
      return std::make_unique<ZmqIo>(*context, ring.endpoints[in], ring.endpoints[out],
                                     ring.message_bytes);
    case Transport::kHyloop:
      return std::make_unique<HyloopIo>(*context, ring.endpoints[in], ring.endpoints[out],
                                        static_cast<std::uint32_t>(node));
  }
  throw std::logic_error("make_node: unknown transport");
}

}  // namespace hyloop::bench
