#pragma once
// Socket helpers shared by the RemoteTest site (openfresco_site.cpp) and client
// (openfresco_client.cpp). Internal to libs/transport.

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace hyloop::transport::openfresco::detail {

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

/// A numeric IPv4/IPv6 address and port as a stream socket address (`passive`: to bind).
/// @throws std::invalid_argument naming `field` and the value.
inline AddrInfo numeric_address(const std::string& address, std::uint16_t port, bool passive,
                                const char* field) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (address.empty() || ::getaddrinfo(address.c_str(), service.c_str(), &hints, &found) != 0) {
    throw std::invalid_argument(std::string(field) + " = '" + address +
                                "': must be a numeric IPv4 or IPv6 address");
  }
  return AddrInfo(found);
}

}  // namespace hyloop::transport::openfresco::detail
