#include "hyloop/runtime/peer_watch.hpp"

#include <zmq.h>

#include <cstdint>
#include <cstring>

namespace hyloop::runtime {
namespace {

constexpr int kPollMs = 20;  // how often the thread looks at its stop flag

std::string monitor_address() {
  static std::atomic<unsigned> counter{0};
  return "inproc://hyloop-peer-watch-" + std::to_string(++counter);
}

}  // namespace

PeerWatch::PeerWatch(zmq::context_t& context, zmq::socket_t& socket,
                     std::function<void(const std::string&)> on_lost)
    : socket_(socket), events_(context, zmq::socket_type::pair), on_lost_(std::move(on_lost)) {
  const std::string address = monitor_address();
  if (zmq_socket_monitor(socket_.handle(), address.c_str(),
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0) {
    throw zmq::error_t();
  }
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(address);
  thread_ = std::thread([this] { run(); });
}

PeerWatch::~PeerWatch() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  // Stop the monitor before its PAIR peer goes (the watched socket may live on).
  (void)zmq_socket_monitor(socket_.handle(), nullptr, 0);
}

void PeerWatch::run() noexcept {
  while (!stop_.load()) {
    zmq_pollitem_t item{events_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kPollMs) <= 0 || (item.revents & ZMQ_POLLIN) == 0) continue;
    // Two frames: event (uint16) + value (uint32), then the peer's address.
    zmq_msg_t head;
    zmq_msg_t address;
    zmq_msg_init(&head);
    zmq_msg_init(&address);
    std::uint16_t event = 0;
    std::string peer;
    if (zmq_msg_recv(&head, events_.handle(), 0) >= 6) {
      std::memcpy(&event, zmq_msg_data(&head), sizeof event);
    }
    if (zmq_msg_more(&head) != 0 && zmq_msg_recv(&address, events_.handle(), 0) >= 0) {
      peer.assign(static_cast<const char*>(zmq_msg_data(&address)), zmq_msg_size(&address));
    }
    zmq_msg_close(&head);
    zmq_msg_close(&address);
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      connected_.store(true);
    } else if (event == ZMQ_EVENT_DISCONNECTED && connected_.exchange(false) &&
               !lost_.exchange(true)) {
      try {
        on_lost_("connection to " + peer + " broke (the peer died, stopped or was cut off)");
      } catch (...) {
      }
    }
  }
}

}  // namespace hyloop::runtime
