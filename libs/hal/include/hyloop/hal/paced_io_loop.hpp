#pragma once
// The I/O thread every wire driver and emulator runs: wait until a datagram arrives, the loop
// thread wakes it (notify()), or the handler's next deadline comes; then, in this order,
//   before_receive(now)  deadlines and work handed over by the loop thread (a pending command),
//   on_datagram(...)     each waiting datagram that passed the filter below,
//   after_receive(now)   the handler's own clock (a controller's tick), delayed output,
// and wait again for next_wake(now), an absolute monotonic time (monotonic_seconds()).
//
// The filter (the security rule of issue 24): a datagram from any address but the peer's (and
// port, unless `any_port`) is dropped and counted as foreign; one longer than `max_datagram`
// (≤ kMaxIoDatagram) is dropped and counted as oversized; neither reaches the handler.
//
// Threading: start() spawns the I/O thread, which alone calls the handler; notify() is RT-safe
// from any thread (one eventfd write); stop() joins (idempotent; call it in the owner's
// destructor before the members the handler uses go). The loop allocates nothing after start().

#include <netinet/in.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>

#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

/// The largest datagram any wire protocol here receives (one Ethernet payload).
inline constexpr std::size_t kMaxIoDatagram = 1472;

class IoHandler {
 public:
  virtual ~IoHandler() = default;
  /// The latest time (monotonic s) to wake at if nothing arrives.
  [[nodiscard]] virtual double next_wake(double now) noexcept = 0;
  virtual void before_receive(double /*now*/) noexcept {}
  virtual void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                           double now) noexcept = 0;
  virtual void after_receive(double /*now*/) noexcept {}

 protected:
  IoHandler() = default;
  IoHandler(const IoHandler&) = default;
  IoHandler& operator=(const IoHandler&) = default;
};

/// Who may send to us, and where the rejects are counted (the owner's counters).
struct IoFilter {
  sockaddr_in peer{};
  bool any_port = false;  ///< accept any source port of the peer's address
  std::size_t max_datagram = kMaxIoDatagram;
  std::atomic<std::uint64_t>* foreign = nullptr;
  std::atomic<std::uint64_t>* oversized = nullptr;
};

class PacedIoLoop {
 public:
  /// @throws std::invalid_argument when max_datagram exceeds kMaxIoDatagram or a counter is null.
  PacedIoLoop(const UdpSocket& socket, const IoFilter& filter);
  ~PacedIoLoop();
  PacedIoLoop(const PacedIoLoop&) = delete;
  PacedIoLoop& operator=(const PacedIoLoop&) = delete;

  /// Starts the I/O thread on `handler` (once).
  void start(IoHandler& handler);
  /// Stops and joins the I/O thread; idempotent.
  void stop() noexcept;
  /// Wakes the I/O thread now. RT-safe, any thread.
  void notify() const noexcept { wakeup_.notify(); }

 private:
  void run(IoHandler& handler) noexcept;
  void receive_all(IoHandler& handler) noexcept;
  [[nodiscard]] bool from_peer(const sockaddr_in& from) const noexcept;

  const UdpSocket& socket_;
  IoFilter filter_;
  Wakeup wakeup_;
  std::atomic<bool> stop_{false};
  std::array<std::uint8_t, kMaxIoDatagram + 1> buffer_{};  ///< I/O thread only
  std::thread io_;
};

/// The cycle clock of an emulated controller (the EGM and RSI emulators): a tick every period;
/// a clock that fell more than a period behind restarts from now.
class ControllerClock {
 public:
  void start(double now) noexcept { next_ = now; }
  [[nodiscard]] double next() const noexcept { return next_; }
  /// True when a tick is due at `now` (the next one is then scheduled); `slipped` tells that the
  /// clock fell behind and restarted from now.
  bool due(double now, double period, bool& slipped) noexcept {
    slipped = false;
    if (now < next_) return false;
    next_ += period;
    if (now - next_ > period) {
      slipped = true;
      next_ = now + period;
    }
    return true;
  }

 private:
  double next_ = 0.0;
};

}  // namespace hyloop::hal
