#pragma once
// The sensor side of a controller-paced exchange (EGM, RSI): the robot controller sends a message
// every cycle and steers by the answer it gets before its next one. We answer each message once:
// with the first command the loop gives after the message arrived (on time: command() wakes the
// I/O thread), or, if none comes within `reply_deadline`, with the newest command we have (late,
// counted): the controller never waits on the loop. A message that arrives while the previous one
// is unanswered gets the previous one answered first (late).
//
// Call order: the loop thread calls command(); the I/O thread (paced_io_loop.hpp) calls arrived()
// for each accepted message before publishing it to the loop, restart() when a session starts,
// due() in before_receive(), then take() and sent() to answer. Until the loop commands in the
// session, take() says so (answer without motion). A device of several axes (a robot's whole
// pose, up to kMaxPacedAxes) is commanded on all of them at once: one axis out of its limits
// rejects the command as a whole.
//
// RT-safety: command(), health(), link() and metrics() are wait-free (a seqlock, relaxed atomics,
// one eventfd write through the loop); no allocation, no lock, no exception.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/link_watch.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/seqlock.hpp"

namespace hyloop::hal {

inline constexpr std::size_t kMaxPacedAxes = 6;

struct PacedReplyMetrics {
  std::uint64_t replies = 0;
  std::uint64_t rejected_commands = 0;  ///< not finite or outside the limits
  std::uint64_t late_replies = 0;       ///< commanded replies sent at the deadline
  /// Σ over late replies of how many replies in a row were late (so far): the cycles' worth of
  /// command lag the controller saw.
  std::uint64_t late_weight = 0;
  double reply_time_max = 0.0;  ///< s, message received → answer sent
};

/// What a controller-paced driver (EGM, RSI) counts of its link: the messages it accepted and
/// those it dropped, its sessions, and the PacedReply's answers.
struct ControllerLinkMetrics {
  std::uint64_t received = 0;  ///< accepted controller messages
  std::uint64_t replies = 0;
  std::uint64_t lost = 0;       ///< sequence numbers (IPOC cycles) skipped
  std::uint64_t duplicate = 0;  ///< a sequence number seen before, dropped
  std::uint64_t reordered = 0;  ///< older than the newest, dropped
  std::uint64_t sessions = 0;
  std::uint64_t rejected_foreign = 0;    ///< from another address than the controller's
  std::uint64_t rejected_malformed = 0;  ///< unparsable, wrong type, oversized, not finite
  std::uint64_t rejected_commands = 0;   ///< not finite or outside the limits
  /// Commanded replies sent at the deadline, i.e. with a command older than the message.
  std::uint64_t late_replies = 0;
  /// Σ over late replies of how many replies in a row were late (so far): the number of
  /// cycles' worth of command lag the controller saw.
  std::uint64_t late_weight = 0;
  double reply_time_max = 0.0;  ///< s, message received → answer sent
};

/// The I/O thread's counters of a controller-paced driver (relaxed atomics, read by metrics()).
struct ControllerLinkCounters {
  std::atomic<std::uint64_t> received{0}, lost{0}, duplicate{0}, reordered{0}, sessions{0},
      rejected_foreign{0}, rejected_malformed{0};
  /// These counters and the reply's, as one snapshot (wait-free).
  [[nodiscard]] ControllerLinkMetrics snapshot(const PacedReplyMetrics& reply) const noexcept;
};

class PacedReply {
 public:
  enum class Due : std::uint8_t { kNotYet, kOnTime, kLate };
  struct Answer {
    bool commanded = false;                        ///< the loop has commanded in this session
    std::array<double, kMaxPacedAxes> position{};  ///< the newest command per axis, loop units
  };

  /// One axis. `limits`: loop units; `timeout`: s of silence once commanded → fault (link()).
  PacedReply(const ActuatorLimits& limits, double reply_deadline, double timeout) noexcept;
  /// limits.size() axes (1..kMaxPacedAxes). @throws std::invalid_argument naming limits.
  PacedReply(std::span<const ActuatorLimits> limits, double reply_deadline, double timeout);

  // The loop thread.
  /// Checks `c` (check_command) and hands it to the I/O thread, waking `io`. RT-safe.
  DriverStatus command(const ActuatorCommand& c, const PacedIoLoop& io) noexcept;
  /// Every axis at once (c.size() must be axes()). RT-safe.
  DriverStatus command(std::span<const ActuatorCommand> c, const PacedIoLoop& io) noexcept;
  [[nodiscard]] std::size_t axes() const noexcept { return axes_; }
  [[nodiscard]] DriverStatus health() const noexcept { return link_.health(); }
  [[nodiscard]] LinkWatch& link() noexcept { return link_; }
  [[nodiscard]] const LinkWatch& link() const noexcept { return link_; }
  [[nodiscard]] PacedReplyMetrics metrics() const noexcept;

  // The I/O thread.
  [[nodiscard]] double next_wake(double now) const noexcept;
  [[nodiscard]] Due due(double now) const noexcept;
  [[nodiscard]] bool awaiting() const noexcept { return awaiting_; }
  [[nodiscard]] double received_at() const noexcept { return received_at_; }
  /// A controller message to answer arrived at `now`.
  void arrived(double now) noexcept;
  /// A new session: commands the loop gave before it do not move the robot.
  void restart() noexcept;
  /// The answer to the awaiting message (no longer awaiting); counts a commanded late one.
  Answer take(bool late) noexcept;
  /// The answer went out at `now`.
  void sent(double now) noexcept;

 private:
  struct Pending {
    std::array<double, kMaxPacedAxes> position{};
    std::uint64_t sequence = 0;
  };

  std::array<ActuatorLimits, kMaxPacedAxes> limits_{};
  std::size_t axes_ = 1;
  double reply_deadline_;
  LinkWatch link_;
  SeqLock<Pending> pending_;
  std::uint64_t command_sequence_ = 0;  ///< loop thread only
  std::atomic<std::uint64_t> replies_{0}, rejected_commands_{0}, late_replies_{0}, late_weight_{0};
  std::atomic<double> reply_time_max_{0.0};
  // I/O thread only.
  bool awaiting_ = false;
  double received_at_ = 0.0;
  std::uint64_t command_at_arrival_ = 0;
  std::uint64_t command_base_ = 0;  ///< the command sequence when the session started
  std::uint64_t late_run_ = 0;
};

}  // namespace hyloop::hal
