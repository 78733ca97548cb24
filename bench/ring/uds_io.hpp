#pragma once
// Backend "uds": raw Unix-domain SOCK_SEQPACKET sockets with read/write (SO_RCVTIMEO for the
// timeout), raw bytes of the hyloop message's size. Owns (closes) both descriptors.

#include <array>
#include <cstddef>

#include "node_io.hpp"

namespace hyloop::bench {

class UdsIo final : public NodeIo {
 public:
  UdsIo(int in_fd, int out_fd, std::size_t message_bytes)
      : in_fd_(in_fd), out_fd_(out_fd), message_bytes_(message_bytes) {}
  ~UdsIo() override;
  UdsIo(const UdsIo&) = delete;
  UdsIo& operator=(const UdsIo&) = delete;
  UdsIo(UdsIo&&) = delete;
  UdsIo& operator=(UdsIo&&) = delete;

  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override;
  std::optional<Stamp> receive(milliseconds timeout) override;
  void forward() override { write_all(rx_.data(), rx_bytes_); }
  [[nodiscard]] bool closed() const override { return closed_; }

 private:
  void write_all(const std::byte* data, std::size_t n);

  int in_fd_;
  int out_fd_;
  std::size_t message_bytes_;
  std::size_t rx_bytes_ = 0;
  long timeout_ms_ = -1;
  bool closed_ = false;
  std::uint64_t errors_ = 0;
  std::array<std::byte, kBufferBytes> tx_{};
  std::array<std::byte, kBufferBytes> rx_{};
};

}  // namespace hyloop::bench
