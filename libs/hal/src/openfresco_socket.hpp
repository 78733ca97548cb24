#pragma once
// Socket helpers shared by the RemoteTest site (openfresco_site.cpp) and client
// (openfresco_client.cpp). Internal to libs/hal.

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace hyloop::hal::openfresco::detail {

inline void set_flag(int fd, int level, int option, int value) {
  ::setsockopt(fd, level, option, &value, sizeof value);
}

inline int poll_ms(std::chrono::milliseconds ms) {
  return static_cast<int>(std::clamp<std::int64_t>(ms.count(), 0, 1 << 30));
}

struct AddrInfoFree {
  void operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoFree>;

/// A numeric IPv4/IPv6 address and port as a socket address of `socktype` (`passive`: to bind).
/// @throws std::invalid_argument naming `field` and the value.
inline AddrInfo numeric_address(const std::string& address, std::uint16_t port, bool passive,
                                const char* field, int socktype = SOCK_STREAM) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socktype;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (address.empty() || ::getaddrinfo(address.c_str(), service.c_str(), &hints, &found) != 0) {
    throw std::invalid_argument(std::string(field) + " = '" + address +
                                "': must be a numeric IPv4 or IPv6 address");
  }
  return AddrInfo(found);
}

/// Whether two datagram sources are the same address and port (IPv4 or IPv6).
inline bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b) noexcept {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port &&
           std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
  }
  return false;
}

/// The length of a socket address of `family` (for sendto).
inline socklen_t address_length(const sockaddr_storage& a) noexcept {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace hyloop::hal::openfresco::detail
