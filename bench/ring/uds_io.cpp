#include "uds_io.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace hyloop::bench {

UdsIo::~UdsIo() {
  ::close(in_fd_);
  ::close(out_fd_);
}

void UdsIo::send_origin(std::uint64_t cycle, std::int64_t origin_ns) {
  put_stamp(tx_, {cycle, origin_ns});
  write_all(tx_.data(), message_bytes_);
}

std::optional<Stamp> UdsIo::receive(milliseconds timeout) {
  const auto ms = timeout.count();
  if (ms != timeout_ms_) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
    ::setsockopt(in_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    timeout_ms_ = ms;
  }
  const ssize_t n = ::read(in_fd_, rx_.data(), rx_.size());
  if (n == 0) {
    closed_ = true;
    return std::nullopt;
  }
  if (n < static_cast<ssize_t>(kStampBytes)) {
    return std::nullopt;  // timeout (EAGAIN) or EINTR
  }
  rx_bytes_ = static_cast<std::size_t>(n);
  return get_stamp(rx_);
}

void UdsIo::write_all(const std::byte* data, std::size_t n) {
  if (::write(out_fd_, data, n) < 0) {
    ++errors_;
  }
}

}  // namespace hyloop::bench
