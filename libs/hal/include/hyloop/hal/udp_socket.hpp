#pragma once
// The UDP plumbing the wire drivers and their emulators share: an IPv4 endpoint, a non-blocking
// datagram socket bound to exactly one address, and an eventfd to wake an I/O thread.
// Construction is not RT (it resolves, binds and throws); send_to(), receive(), notify() and
// drain() are single non-blocking system calls: no allocation, no lock, no exception.

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace hyloop::hal {

struct UdpEndpoint {
  std::string address = "127.0.0.1";  ///< a numeric IPv4 address
  std::uint16_t port = 0;             ///< 0 on a local endpoint: an ephemeral port
};

/// The endpoint as a socket address. @throws std::invalid_argument naming `what` and the address.
[[nodiscard]] sockaddr_in to_sockaddr(std::string_view what, const UdpEndpoint& endpoint);
[[nodiscard]] bool same_endpoint(const sockaddr_in& a, const sockaddr_in& b) noexcept;

class UdpSocket {
 public:
  /// Binds `local` (what names it in errors). @throws std::system_error naming the address.
  UdpSocket(std::string_view what, const UdpEndpoint& local);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// The bound port (the ephemeral one when 0 was asked).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  /// Sends one datagram; false when the kernel refused it (counted by the caller). RT-safe.
  bool send_to(std::span<const std::uint8_t> data, const sockaddr_in& to) const noexcept;
  /// Receives one datagram into `buffer`: its full length (larger than the buffer when it was
  /// truncated), or -1 when none is waiting. RT-safe.
  long receive(std::span<std::uint8_t> buffer, sockaddr_in& from) const noexcept;

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// An eventfd: notify() from any thread, the I/O thread polls fd() and drain()s it.
class Wakeup {
 public:
  Wakeup();
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;
  [[nodiscard]] int fd() const noexcept { return fd_; }
  void notify() const noexcept;
  void drain() const noexcept;

 private:
  int fd_ = -1;
};

/// A UDP port free on `address` now (bound once, then released): to wire an emulator and its
/// driver on loopback, each of which must know the other's port before binding. Not RT.
[[nodiscard]] std::uint16_t free_udp_port(const std::string& address = "127.0.0.1");

/// CLOCK_MONOTONIC in seconds (vDSO, no system call). RT-safe.
[[nodiscard]] double monotonic_seconds() noexcept;

/// Waits until `fd` is readable or `timeout` s passed (also wakes on `wake`); returns a bit mask:
/// 1 = fd readable, 2 = wake readable. Blocking: I/O threads only.
int wait_readable(int fd, int wake, double timeout) noexcept;

}  // namespace hyloop::hal
