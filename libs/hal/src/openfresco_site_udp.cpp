// The UDP side of SiteServer (openfresco_site.hpp): OpenFresco's UDP_Socket framing, one peer per
// session, silence cut after udp_timeout.
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "hyloop/hal/openfresco_site.hpp"
#include "openfresco_socket.hpp"

namespace hyloop::hal::openfresco {

namespace {

std::string udp_peer_text(const sockaddr_storage& addr) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), detail::address_length(addr), host,
                    sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?:?";
  }
  return std::string(host) + ":" + serv;
}

std::string udp_peer_host(const sockaddr_storage& addr) {
  const std::string text = udp_peer_text(addr);
  return text.substr(0, text.rfind(':'));
}

}  // namespace

std::int64_t SiteServer::receive_datagram(sockaddr_storage& from) {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  const int ready = ::poll(fds, 2, detail::poll_ms(config_.poll_timeout));
  if (ready < 0) {
    return errno == EINTR ? -1 : -2;
  }
  if (ready == 0 || !(fds[0].revents & POLLIN)) {
    return -1;
  }
  socklen_t len = sizeof from;
  const auto n = ::recvfrom(listen_fd_, recv_buffer_.data(), recv_buffer_.size(),
                            MSG_TRUNC | MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &len);
  if (n < 0) {
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
  }
  return n;
}

bool SiteServer::send_datagrams(const sockaddr_storage& to, std::span<const std::byte> bytes,
                                std::string& error) {
  while (!bytes.empty()) {
    const auto piece = bytes.first(udp_datagram_bytes(bytes.size()));
    const auto n = ::sendto(listen_fd_, piece.data(), piece.size(), MSG_NOSIGNAL,
                            reinterpret_cast<const sockaddr*>(&to), detail::address_length(to));
    if (n == static_cast<ssize_t>(piece.size())) {
      bytes = bytes.subspan(piece.size());
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd out{listen_fd_, POLLOUT, 0};
      if (::poll(&out, 1, detail::poll_ms(config_.send_timeout)) > 0) continue;
      error = "sendto: no room in the socket for " + std::to_string(config_.send_timeout.count()) +
              " ms";
      return false;
    }
    error = std::string("sendto: ") + (n < 0 ? std::strerror(errno) : "a datagram was cut short");
    return false;
  }
  return true;
}

void SiteServer::run_udp() {
  while (!stopping_.load()) {
    sockaddr_storage from{};
    const std::int64_t n = receive_datagram(from);
    if (aborting_.exchange(false)) {  // no session to abort: drain the wake-up
      std::uint64_t count = 0;
      [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
    }
    if (n < 0) {
      continue;
    }
    const auto datagram =
        std::span<const std::byte>(recv_buffer_).first(std::min<std::size_t>(n, kSetupBytes));
    if (!config_.allowed_peers.empty() &&
        std::find(config_.allowed_peers.begin(), config_.allowed_peers.end(),
                  udp_peer_host(from)) == config_.allowed_peers.end()) {
      log("openfresco site: refused datagram from " + udp_peer_text(from) +
          ": not in allowed_peers");
      refused_peers_.fetch_add(1);
      continue;
    }
    if (n == 1 && datagram[0] == kUdpHandshakeAsk) {  // ShadowSite's handshake: answer, wait
      std::string error;
      (void)send_datagrams(from, std::span(&kUdpHandshakeAnswer, 1), error);
      continue;
    }
    if (n != static_cast<std::int64_t>(kSetupBytes)) {
      dropped_datagrams_.fetch_add(1);
      log("openfresco site: dropped a " + std::to_string(n) + "-byte datagram from " +
          udp_peer_text(from) + " while waiting for a set-up ID (44 bytes)");
      continue;
    }
    serve_udp(from, datagram);
    sessions_.fetch_add(1);
  }
}

void SiteServer::serve_udp(const sockaddr_storage& peer, std::span<const std::byte> setup) {
  const std::string name = udp_peer_text(peer);
  log("openfresco site: udp client " + name + " sent its set-up");
  SiteSession session(layout_, matrices_, rig_);
  (void)session.feed(setup);
  using Clock = std::chrono::steady_clock;
  auto last = Clock::now();
  while (!session.ended()) {
    if (stopping_.load()) {
      session.abort("the site is stopping");
      break;
    }
    sockaddr_storage from{};
    const std::int64_t n = receive_datagram(from);
    if (aborting_.exchange(false)) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto r = ::read(wake_fd_, &count, sizeof count);
      session.abort("aborted by the site (emergency stop)");
      break;
    }
    if (n == -2) {
      session.abort(std::string("recvfrom: ") + std::strerror(errno));
      break;
    }
    // Checked whatever came: datagrams the session drops (a stranger's flood) do not keep it up.
    const bool foreign = n >= 0 && !detail::same_endpoint(from, peer);
    const bool wrong =
        n >= 0 && static_cast<std::size_t>(n) != udp_datagram_bytes(session.pending_bytes());
    if (n < 0 || foreign || wrong) {
      if (n >= 0) {
        session.note_dropped_datagram(foreign);
        dropped_datagrams_.fetch_add(1);
      }
      if (Clock::now() - last > config_.udp_timeout) {
        session.abort("no datagram from the peer for " +
                      std::to_string(config_.udp_timeout.count()) + " ms");
      }
      continue;
    }
    last = Clock::now();
    const auto step =
        session.feed(std::span<const std::byte>(recv_buffer_).first(static_cast<std::size_t>(n)));
    std::string error;
    if (!step.reply.empty() && !send_datagrams(peer, step.reply, error)) {
      session.abort(error);
    }
  }
  const auto& r = session.report();
  log("openfresco site: udp client " + name + " " + std::string(to_string(r.end)) + ": " +
      r.reason + " (" + std::to_string(r.trials) + " trials, " + std::to_string(r.daq_replies) +
      " daq replies, " + std::to_string(r.wrong_size_datagrams + r.foreign_datagrams) +
      " datagrams dropped)");
}

}  // namespace hyloop::hal::openfresco
