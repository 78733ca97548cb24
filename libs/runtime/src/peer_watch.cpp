#include "hyloop/runtime/peer_watch.hpp"

#include <zmq.h>

namespace hyloop::runtime {

PeerWatch::PeerWatch(zmq::context_t& context, zmq::socket_t& socket,
                     std::function<void(const std::string&)> on_lost,
                     std::function<void(const std::string&)> on_handshake_failed)
    : on_lost_(std::move(on_lost)), on_handshake_failed_(std::move(on_handshake_failed)) {
  monitor_ = std::make_unique<transport::SocketMonitor>(
      context, socket,
      ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED | transport::handshake_failed_events(),
      [this](int event, std::uint32_t value, const std::string& peer) {
        on_event(event, value, peer);
      });
}

void PeerWatch::on_event(int event, std::uint32_t value, const std::string& peer) {
  if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
    connected_.store(true);
  } else if (event == ZMQ_EVENT_DISCONNECTED && connected_.exchange(false) && !lost_.load()) {
    // The report before the flag: whoever sees lost() sees what on_lost_ did (the monitor's one
    // thread is the only caller, so the check and the store need no exchange).
    on_lost_("connection to " + peer + " broke (the peer died, stopped or was cut off)");
    lost_.store(true);
  } else if ((event & transport::handshake_failed_events()) != 0 && on_handshake_failed_) {
    on_handshake_failed_("handshake with " + peer +
                         " failed: " + transport::describe_handshake_failure(event, value));
  }
}

}  // namespace hyloop::runtime
