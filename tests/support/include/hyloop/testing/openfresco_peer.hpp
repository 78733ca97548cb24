#pragma once
// A protocol peer playing OpenSees/OpenFresco's TCP_Socket for tests of the RemoteTest site
// (transport/openfresco*.hpp, services/site): blocking IPv4 TCP to 127.0.0.1, Nagle left ON
// (noDelay 0), each message one send() as TCP_Socket::sendVector does, a 5 s receive timeout so
// that a test never hangs; and OpenFrescoUdpPeer, its UDP_Socket counterpart. Header-only; the
// including test links hyloop::transport.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hyloop/hal/openfresco.hpp"

namespace hyloop::testing {

class OpenFrescoPeer {
 public:
  explicit OpenFrescoPeer(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~OpenFrescoPeer() { close(); }
  OpenFrescoPeer(const OpenFrescoPeer&) = delete;
  OpenFrescoPeer& operator=(const OpenFrescoPeer&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool send(std::span<const std::byte> b) {
    while (!b.empty()) {
      const auto n = ::send(fd_, b.data(), b.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      b = b.subspan(static_cast<std::size_t>(n));
    }
    return true;
  }
  bool send_setup(const hal::openfresco::SetupId& id) {
    std::array<std::byte, hal::openfresco::kSetupBytes> b{};
    hal::openfresco::encode_setup(id, b);
    return send(b);
  }
  /// GenericTCP's set-up: ctrl disp; daq disp and force; dataSize 256.
  bool send_generic_tcp_setup() { return send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256}); }
  bool send_doubles(const std::vector<double>& v) {
    std::vector<std::byte> b(v.size() * sizeof(double));
    hal::openfresco::encode_doubles(v, b);
    return send(b);
  }
  /// False on end of stream, error or timeout.
  bool recv_doubles(std::vector<double>& v) {
    std::vector<std::byte> b(v.size() * sizeof(double));
    for (std::size_t got = 0; got < b.size();) {
      const auto n = ::recv(fd_, b.data() + got, b.size() - got, 0);
      if (n < 0 && errno == EINTR) continue;  // a signal to this thread is not the peer's end
      if (n <= 0) {
        last_errno_ = n < 0 ? errno : 0;
        return false;
      }
      got += static_cast<std::size_t>(n);
    }
    hal::openfresco::decode_doubles(b, v);
    return true;
  }
  /// GenericTCP's step: trial [3, d] then getDaq [6] and its reply (`reply` sized dataSize).
  bool step(double d, std::vector<double>& reply) {
    msg_[0] = 3.0;
    msg_[1] = d;
    if (!send_doubles(msg_)) return false;
    msg_[0] = 6.0;
    return send_doubles(msg_) && recv_doubles(reply);
  }
  /// Waits for the site to close: true when recv sees end of stream.
  bool sees_eof() {
    std::byte b{};
    long n = 0;
    do {
      n = ::recv(fd_, &b, 1, 0);
    } while (n < 0 && errno == EINTR);
    return n == 0;
  }

  /// errno of the last receive that failed (0: end of stream).
  [[nodiscard]] int last_errno() const { return last_errno_; }

 private:
  int fd_;
  bool connected_ = false;
  int last_errno_ = 0;
  std::vector<double> msg_ = std::vector<double>(256, 0.0);
};

/// What a GenericTCP run received, per step: the daq reply's disp and force, and the time from
/// the trial's send to the reply's last byte (µs). `failed_step` > 0: the step whose reply never
/// came (the run stopped there); `closed`: the site closed after terminate.
struct GenericTcpRun {
  std::vector<double> disp, force, step_us;
  int failed_step = 0;
  int failed_errno = 0;  ///< errno of the failed receive (0: the site closed)
  bool closed = false;
};

/// ECGenericTCP's exchange against the site at 127.0.0.1:`port`: set-up (ctrl disp; daq disp,
/// force; 256), per step k = 1..steps trial [3, trial(k)], getDaq [6] and its reply, then
/// commit [5] (genericClient's; GenericTCP sends none); terminate [99] at the end.
template <typename Trial>
GenericTcpRun run_generic_tcp(std::uint16_t port, int steps, Trial trial) {
  GenericTcpRun out;
  OpenFrescoPeer peer(port);
  (void)peer.send_generic_tcp_setup();
  std::vector<double> msg(256, 0.0);
  std::vector<double> reply(256, 0.0);
  for (int k = 1; k <= steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!peer.step(trial(k), reply)) {
      out.failed_step = k;
      out.failed_errno = peer.last_errno();
      return out;
    }
    out.step_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    out.disp.push_back(reply[0]);
    out.force.push_back(reply[1]);
    msg[0] = 5.0;
    (void)peer.send_doubles(msg);
  }
  msg[0] = 99.0;
  (void)peer.send_doubles(msg);
  out.closed = peer.sees_eof();
  return out;
}

/// OpenFresco's UDP_Socket as GenericTCP -udp uses it: no handshake, every message sent with
/// sendto() in datagrams of at most 9126 bytes to 127.0.0.1:`port`, replies taken from any
/// source (as UDP_Socket does). A receive timeout (default 5 s) so that a test never hangs.
class OpenFrescoUdpPeer {
 public:
  explicit OpenFrescoUdpPeer(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_DGRAM, 0)) {
    site_.sin_family = AF_INET;
    site_.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &site_.sin_addr);
    set_receive_timeout(std::chrono::milliseconds(5000));
  }
  ~OpenFrescoUdpPeer() { ::close(fd_); }
  OpenFrescoUdpPeer(const OpenFrescoUdpPeer&) = delete;
  OpenFrescoUdpPeer& operator=(const OpenFrescoUdpPeer&) = delete;

  void set_receive_timeout(std::chrono::milliseconds ms) {
    timeval tv{static_cast<time_t>(ms.count() / 1000),
               static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  /// One datagram exactly as given.
  bool send_datagram(std::span<const std::byte> b) {
    return ::sendto(fd_, b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&site_),
                    sizeof site_) == static_cast<ssize_t>(b.size());
  }
  /// A message, cut as UDP_Socket cuts it.
  bool send(std::span<const std::byte> b) {
    while (!b.empty()) {
      const auto piece = b.first(hal::openfresco::udp_datagram_bytes(b.size()));
      if (!send_datagram(piece)) return false;
      b = b.subspan(piece.size());
    }
    return true;
  }
  bool send_setup(const hal::openfresco::SetupId& id) {
    std::array<std::byte, hal::openfresco::kSetupBytes> b{};
    hal::openfresco::encode_setup(id, b);
    return send(b);
  }
  bool send_doubles(const std::vector<double>& v) {
    std::vector<std::byte> b(v.size() * sizeof(double));
    hal::openfresco::encode_doubles(v, b);
    return send(b);
  }
  /// One datagram (its whole size, even when longer than `out`); -1 on timeout.
  long receive_datagram(std::span<std::byte> out) {
    long n = 0;
    do {
      n = static_cast<long>(::recv(fd_, out.data(), out.size(), MSG_TRUNC));
    } while (n < 0 && errno == EINTR);
    return n;
  }
  /// A message of v.size() doubles from datagrams of the sizes UDP_Socket reads; false on a
  /// timeout or a datagram of another size.
  bool recv_doubles(std::vector<double>& v) {
    std::vector<std::byte> b(v.size() * sizeof(double));
    for (std::size_t got = 0; got < b.size();) {
      const auto want = hal::openfresco::udp_datagram_bytes(b.size() - got);
      if (receive_datagram(std::span(b).subspan(got, want)) != static_cast<long>(want)) {
        return false;
      }
      got += want;
    }
    hal::openfresco::decode_doubles(b, v);
    return true;
  }
  /// GenericTCP's step: trial [3, d] then getDaq [6] and its reply (`reply` sized dataSize).
  bool step(double d, std::vector<double>& reply) {
    msg_[0] = 3.0;
    msg_[1] = d;
    if (!send_doubles(msg_)) return false;
    msg_[0] = 6.0;
    return send_doubles(msg_) && recv_doubles(reply);
  }

 private:
  int fd_;
  sockaddr_in site_{};
  std::vector<double> msg_ = std::vector<double>(256, 0.0);
};

/// run_generic_tcp over UDP (GenericTCP -udp); `closed` is not used (UDP has no close).
template <typename Trial>
GenericTcpRun run_generic_udp(std::uint16_t port, int steps, Trial trial) {
  GenericTcpRun out;
  OpenFrescoUdpPeer peer(port);
  (void)peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256});
  std::vector<double> msg(256, 0.0);
  std::vector<double> reply(256, 0.0);
  for (int k = 1; k <= steps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!peer.step(trial(k), reply)) {
      out.failed_step = k;
      return out;
    }
    out.step_us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    out.disp.push_back(reply[0]);
    out.force.push_back(reply[1]);
    msg[0] = 5.0;
    (void)peer.send_doubles(msg);
  }
  msg[0] = 99.0;
  (void)peer.send_doubles(msg);
  return out;
}

}  // namespace hyloop::testing
