#pragma once
// A wire driver's fault latch: once the loop has commanded, a peer silent for longer than the
// timeout, or one that reports its own stop, latches a fault that stays when the peer comes back.
// The silence is judged both while it lasts (health()) and when it ends (heard()): a loop that
// runs on the peer's messages asks nothing while none come.
// commanded() is called from the loop thread, heard() and device_stopped() from the I/O thread,
// health() from either: relaxed atomics, RT-safe, no allocation.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

class LinkWatch {
 public:
  explicit LinkWatch(double timeout) noexcept : timeout_(timeout) {}

  /// The loop commands: the first call starts the watch.
  void commanded() noexcept {
    if (first_command_at_.load(std::memory_order_relaxed) == 0.0) {
      first_command_at_.store(monotonic_seconds(), std::memory_order_relaxed);
    }
  }
  /// The peer was heard at `now` (monotonic_seconds()): after a silence longer than the
  /// timeout since the loop commanded, that latches the fault.
  void heard(double now) noexcept {
    if (silent_past_timeout(now)) fault_.store(true, std::memory_order_relaxed);
    last_heard_at_.store(now, std::memory_order_relaxed);
  }
  /// The device reported its own stop (latched).
  void device_stopped() noexcept { device_stop_.store(true, std::memory_order_relaxed); }
  [[nodiscard]] bool device_stop() const noexcept {
    return device_stop_.load(std::memory_order_relaxed);
  }

  /// kFault once latched, else kOk.
  [[nodiscard]] DriverStatus health() const noexcept {
    if (fault_.load(std::memory_order_relaxed)) {
      return DriverStatus::kFault;
    }
    const bool commanded = first_command_at_.load(std::memory_order_relaxed) > 0.0;
    if (commanded && (silent_past_timeout(monotonic_seconds()) || device_stop())) {
      fault_.store(true, std::memory_order_relaxed);
      return DriverStatus::kFault;
    }
    return DriverStatus::kOk;
  }

 private:
  /// Since the loop first commanded, nothing heard for longer than the timeout before `now`.
  [[nodiscard]] bool silent_past_timeout(double now) const noexcept {
    const double started = first_command_at_.load(std::memory_order_relaxed);
    return started > 0.0 &&
           now - std::max(started, last_heard_at_.load(std::memory_order_relaxed)) > timeout_;
  }

  double timeout_;
  std::atomic<double> first_command_at_{0.0};
  std::atomic<double> last_heard_at_{0.0};
  std::atomic<bool> device_stop_{false};
  mutable std::atomic<bool> fault_{false};
  static_assert(std::atomic<double>::is_always_lock_free);
};

/// Polls `done` every 200 µs until it holds (true) or `timeout` s passed (false). Not RT: for
/// waiting on a peer before arming.
inline bool poll_until(const std::function<bool()>& done, double timeout) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace hyloop::hal
