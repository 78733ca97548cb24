#pragma once
// A libzmq socket monitor (zmq_socket_monitor(3)) read on a thread of its own: calls a handler
// with each event of the chosen kinds, its value and the endpoint it concerns. Used for a peer
// that goes away (runtime::PeerWatch) and for failed ZMTP handshakes (a CURVE key that does not
// match: Channel's on_handshake_failed, docs/security.md). libzmq allows one monitor per socket.
//
// Threads: construct and destroy on the thread that owns `socket` (zmq_socket_monitor must be
// called there), before the socket is closed. The handler runs on the monitor thread; it must
// not block for long (the destructor joins that thread). An event reaches it as soon as libzmq
// emits it (the thread waits in zmq_poll on the monitor's socket).

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <zmq.hpp>

namespace hyloop::transport {

/// The handshake failures (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | _PROTOCOL | _AUTH).
[[nodiscard]] int handshake_failed_events() noexcept;

/// What a handshake failure event means, for a message: e.g. "the peer closed the connection
/// during the handshake (no detail: ...)".
[[nodiscard]] std::string describe_handshake_failure(int event, std::uint32_t value);

class SocketMonitor {
 public:
  using Handler = std::function<void(int event, std::uint32_t value, const std::string& endpoint)>;
  /// Starts monitoring `socket` for `events` (ZMQ_EVENT_* bits). Throws zmq::error_t when the
  /// monitor cannot be set up.
  SocketMonitor(zmq::context_t& context, zmq::socket_t& socket, int events, Handler handler);
  ~SocketMonitor();
  SocketMonitor(const SocketMonitor&) = delete;
  SocketMonitor& operator=(const SocketMonitor&) = delete;

 private:
  void run() noexcept;

  zmq::socket_t& socket_;
  zmq::socket_t events_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hyloop::transport
