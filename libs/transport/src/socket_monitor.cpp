#include "hyloop/transport/socket_monitor.hpp"

#include <zmq.h>

#include <cstring>

namespace hyloop::transport {
namespace {

constexpr int kPollMs = 20;  // how often the thread looks at its stop flag

std::string monitor_address() {
  static std::atomic<unsigned> counter{0};
  return "inproc://hyloop-socket-monitor-" + std::to_string(++counter);
}

}  // namespace

int handshake_failed_events() noexcept {
  return ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
         ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

std::string describe_handshake_failure(int event, std::uint32_t value) {
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
    return "the peer's key was refused (ZAP status " + std::to_string(value) +
           ": it is not a key this channel accepts)";
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    const bool crypto = value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC;
    char code[16];
    std::snprintf(code, sizeof code, "0x%08x", value);
    return std::string("protocol error ") + code +
           (crypto ? " (cryptographic: the peer's CURVE box did not open with this end's keys: "
                     "it holds another server key)"
                   : "");
  }
  return "the peer closed the connection during the handshake (no detail; errno " +
         std::to_string(value) +
         "): with CURVE, the server key this end holds is not the binder's, or the binder "
         "refused this end's key";
}

SocketMonitor::SocketMonitor(zmq::context_t& context, zmq::socket_t& socket, int events,
                             Handler handler)
    : socket_(socket), events_(context, zmq::socket_type::pair), handler_(std::move(handler)) {
  const std::string address = monitor_address();
  if (zmq_socket_monitor(socket_.handle(), address.c_str(), events) != 0) {
    throw zmq::error_t();
  }
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(address);
  thread_ = std::thread([this] { run(); });
}

SocketMonitor::~SocketMonitor() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  // Stop the monitor before its PAIR peer goes (the watched socket may live on).
  (void)zmq_socket_monitor(socket_.handle(), nullptr, 0);
}

void SocketMonitor::run() noexcept {
  while (!stop_.load()) {
    zmq_pollitem_t item{events_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kPollMs) <= 0 || (item.revents & ZMQ_POLLIN) == 0) continue;
    // Two frames: event (uint16) + value (uint32), then the endpoint.
    zmq_msg_t head;
    zmq_msg_t address;
    zmq_msg_init(&head);
    zmq_msg_init(&address);
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::string endpoint;
    if (zmq_msg_recv(&head, events_.handle(), 0) >= 6) {
      std::memcpy(&event, zmq_msg_data(&head), sizeof event);
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&head)) + sizeof event,
                  sizeof value);
    }
    if (zmq_msg_more(&head) != 0 && zmq_msg_recv(&address, events_.handle(), 0) >= 0) {
      endpoint.assign(static_cast<const char*>(zmq_msg_data(&address)), zmq_msg_size(&address));
    }
    zmq_msg_close(&head);
    zmq_msg_close(&address);
    try {
      handler_(event, value, endpoint);
    } catch (...) {
    }
  }
}

}  // namespace hyloop::transport
