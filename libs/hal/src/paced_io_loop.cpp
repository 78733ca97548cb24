#include "hyloop/hal/paced_io_loop.hpp"

#include <stdexcept>

#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;

PacedIoLoop::PacedIoLoop(const UdpSocket& socket, const IoFilter& filter)
    : socket_(socket), filter_(filter) {
  detail::require(filter.max_datagram > 0 && filter.max_datagram <= kMaxIoDatagram, "max_datagram",
                  static_cast<double>(filter.max_datagram), "1..1472 bytes");
  if (filter.foreign == nullptr || filter.oversized == nullptr) {
    throw std::invalid_argument("PacedIoLoop: the reject counters must be given");
  }
}

PacedIoLoop::~PacedIoLoop() { stop(); }

void PacedIoLoop::start(IoHandler& handler) {
  if (!io_.joinable()) {
    io_ = std::thread([this, &handler] { run(handler); });
  }
}

void PacedIoLoop::stop() noexcept {
  if (io_.joinable()) {
    stop_.store(true);
    wakeup_.notify();
    io_.join();
  }
}

void PacedIoLoop::run(IoHandler& handler) noexcept {
  while (!stop_.load(std::memory_order_relaxed)) {
    const double before = monotonic_seconds();
    const int ready = wait_readable(socket_.fd(), wakeup_.fd(), handler.next_wake(before) - before);
    if ((ready & 2) != 0) {
      wakeup_.drain();
    }
    handler.before_receive(monotonic_seconds());
    if ((ready & 1) != 0) {
      receive_all(handler);
    }
    handler.after_receive(monotonic_seconds());
  }
}

bool PacedIoLoop::from_peer(const sockaddr_in& from) const noexcept {
  return from.sin_addr.s_addr == filter_.peer.sin_addr.s_addr &&
         (filter_.any_port || from.sin_port == filter_.peer.sin_port);
}

void PacedIoLoop::receive_all(IoHandler& handler) noexcept {
  sockaddr_in from{};
  for (long n = socket_.receive(buffer_, from); n >= 0; n = socket_.receive(buffer_, from)) {
    if (!from_peer(from)) {
      bump(*filter_.foreign);
    } else if (static_cast<std::size_t>(n) > filter_.max_datagram) {
      bump(*filter_.oversized);
    } else {
      handler.on_datagram({buffer_.data(), static_cast<std::size_t>(n)}, from, monotonic_seconds());
    }
  }
}

}  // namespace hyloop::hal
