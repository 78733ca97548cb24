#pragma once
// Backend "zmq": bare cppzmq PAIR sockets, raw bytes of the hyloop message's size, blocking
// send and recv (ZMQ_RCVTIMEO for the timeout).

#include <array>
#include <cstddef>
#include <string>
#include <zmq.hpp>

#include "node_io.hpp"

namespace hyloop::bench {

class ZmqIo final : public NodeIo {
 public:
  ZmqIo(zmq::context_t& context, const std::string& input, std::string output,
        std::size_t message_bytes);

  void connect_output() override;
  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override;
  std::optional<Stamp> receive(milliseconds timeout) override;
  void forward() override;

 private:
  zmq::socket_t in_;
  zmq::socket_t out_;
  std::string output_;
  std::size_t message_bytes_;
  std::size_t rx_bytes_ = 0;
  int timeout_ms_ = -2;
  std::array<std::byte, kBufferBytes> tx_{};
  std::array<std::byte, kBufferBytes> rx_{};
};

}  // namespace hyloop::bench
