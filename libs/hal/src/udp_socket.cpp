#include "hyloop/hal/udp_socket.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <system_error>

namespace hyloop::hal {

sockaddr_in to_sockaddr(std::string_view what, const UdpEndpoint& endpoint) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(endpoint.port);
  if (::inet_pton(AF_INET, endpoint.address.c_str(), &addr.sin_addr) != 1) {
    throw std::invalid_argument(std::string(what) + ".address = '" + endpoint.address +
                                "': must be a numeric IPv4 address (e.g. 192.168.0.10)");
  }
  return addr;
}

bool same_endpoint(const sockaddr_in& a, const sockaddr_in& b) noexcept {
  return a.sin_family == b.sin_family && a.sin_port == b.sin_port &&
         a.sin_addr.s_addr == b.sin_addr.s_addr;
}

UdpSocket::UdpSocket(std::string_view what, const UdpEndpoint& local) {
  const sockaddr_in addr = to_sockaddr(what, local);
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), std::string(what) + ": socket");
  }
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::system_error(
        err, std::generic_category(),
        std::string(what) + ": bind " + local.address + ":" + std::to_string(local.port));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.sin_port);
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool UdpSocket::send_to(std::span<const std::uint8_t> data, const sockaddr_in& to) const noexcept {
  const ssize_t n = ::sendto(fd_, data.data(), data.size(), MSG_DONTWAIT,
                             reinterpret_cast<const sockaddr*>(&to), sizeof to);
  return n == static_cast<ssize_t>(data.size());
}

long UdpSocket::receive(std::span<std::uint8_t> buffer, sockaddr_in& from) const noexcept {
  socklen_t len = sizeof from;
  const ssize_t n = ::recvfrom(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC,
                               reinterpret_cast<sockaddr*>(&from), &len);
  return n < 0 ? -1 : static_cast<long>(n);
}

Wakeup::Wakeup() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
}

Wakeup::~Wakeup() { ::close(fd_); }

void Wakeup::notify() const noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
}

void Wakeup::drain() const noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(fd_, &count, sizeof count);
}

std::uint16_t free_udp_port(const std::string& address) {
  const UdpSocket probe("free port", {address, 0});
  return probe.port();
}

double monotonic_seconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int wait_readable(int fd, int wake, double timeout) noexcept {
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake, POLLIN, 0}};
  timespec ts{};
  const double t = std::max(timeout, 0.0);
  ts.tv_sec = static_cast<time_t>(t);
  ts.tv_nsec = static_cast<long>((t - static_cast<double>(ts.tv_sec)) * 1e9);
  if (::ppoll(fds, 2, &ts, nullptr) <= 0) {
    return 0;
  }
  return ((fds[0].revents & POLLIN) != 0 ? 1 : 0) | ((fds[1].revents & POLLIN) != 0 ? 2 : 0);
}

}  // namespace hyloop::hal
