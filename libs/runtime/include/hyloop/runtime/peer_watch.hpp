#pragma once
// Supervision of a ZeroMQ peer without a message of our own: watches the connections of one
// socket (zmq_socket_monitor) on a thread of its own and calls `on_lost` once an established
// connection breaks. A peer process that dies has its sockets closed by the kernel (detected at
// once); one that is stopped (SIGSTOP) or cut off stops answering the ZMTP heartbeats and is
// disconnected after the socket's heartbeat timeout (transport::ChannelConfig::heartbeat_*).
// A loop service watches its telemetry socket this way: the coordinator's end
// (docs/reliability.md).
//
// It also reports a failed handshake on that socket (a CURVE key that does not match) through
// `on_handshake_failed`, if given (one monitor per socket: libzmq allows no second).
//
// Threads: construct and destroy on the thread that owns `socket` (zmq_socket_monitor must be
// called there), before the socket is closed. The callbacks run on the watch thread
// (transport::SocketMonitor); they must not block for long (the destructor joins that thread).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "hyloop/transport/socket_monitor.hpp"

namespace hyloop::runtime {

class PeerWatch {
 public:
  /// Starts watching `socket`. `on_lost(what)` is called at most once, `what` naming the event
  /// and the peer's address. Throws zmq::error_t when the monitor cannot be set up.
  /// `on_handshake_failed(what)`: each failed handshake, `what` naming the endpoint and why.
  PeerWatch(zmq::context_t& context, zmq::socket_t& socket,
            std::function<void(const std::string&)> on_lost,
            std::function<void(const std::string&)> on_handshake_failed = {});
  ~PeerWatch() = default;
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  /// True once a connection was established (handshake done) and while none broke.
  [[nodiscard]] bool connected() const noexcept { return connected_.load(); }
  /// True once `on_lost` has returned (what it did happens-before a true lost()).
  [[nodiscard]] bool lost() const noexcept { return lost_.load(); }

 private:
  void on_event(int event, std::uint32_t value, const std::string& peer);

  std::function<void(const std::string&)> on_lost_;
  std::function<void(const std::string&)> on_handshake_failed_;
  std::atomic<bool> connected_{false};
  std::atomic<bool> lost_{false};
  std::unique_ptr<transport::SocketMonitor> monitor_;  // last: stopped first
};

}  // namespace hyloop::runtime
