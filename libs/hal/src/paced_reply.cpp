#include "hyloop/hal/paced_reply.hpp"

#include <algorithm>

#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;

PacedReply::PacedReply(const ActuatorLimits& limits, double reply_deadline, double timeout) noexcept
    : reply_deadline_(reply_deadline), link_(timeout) {
  limits_[0] = limits;
}

PacedReply::PacedReply(std::span<const ActuatorLimits> limits, double reply_deadline,
                       double timeout)
    : axes_(limits.size()), reply_deadline_(reply_deadline), link_(timeout) {
  detail::require(!limits.empty() && limits.size() <= kMaxPacedAxes, "limits",
                  static_cast<double>(limits.size()), "1..6 axes");
  std::copy(limits.begin(), limits.end(), limits_.begin());
}

DriverStatus PacedReply::command(const ActuatorCommand& c, const PacedIoLoop& io) noexcept {
  return command(std::span<const ActuatorCommand>(&c, 1), io);
}

DriverStatus PacedReply::command(std::span<const ActuatorCommand> c,
                                 const PacedIoLoop& io) noexcept {
  const DriverStatus now = health();
  bool ok = c.size() == axes_;
  for (std::size_t i = 0; ok && i < axes_; ++i) {
    ok = check_command(c[i], limits_[i]) == LimitVerdict::kOk;
  }
  if (!ok) {
    bump(rejected_commands_);
    return now == DriverStatus::kFault ? now : DriverStatus::kRejected;
  }
  link_.commanded();
  Pending p;
  for (std::size_t i = 0; i < axes_; ++i) p.position[i] = c[i].position;
  p.sequence = ++command_sequence_;
  pending_.store(p);
  io.notify();
  return now;
}

PacedReplyMetrics PacedReply::metrics() const noexcept {
  constexpr auto r = std::memory_order_relaxed;
  return {replies_.load(r), rejected_commands_.load(r), late_replies_.load(r), late_weight_.load(r),
          reply_time_max_.load(r)};
}

double PacedReply::next_wake(double now) const noexcept {
  return awaiting_ ? received_at_ + reply_deadline_ : now + 0.1;
}

PacedReply::Due PacedReply::due(double now) const noexcept {
  if (!awaiting_) {
    return Due::kNotYet;
  }
  if (pending_.load().sequence > command_at_arrival_) {
    return Due::kOnTime;
  }
  return now >= received_at_ + reply_deadline_ ? Due::kLate : Due::kNotYet;
}

void PacedReply::arrived(double now) noexcept {
  command_at_arrival_ = pending_.load().sequence;  // before the loop can see the message
  received_at_ = now;
  awaiting_ = true;
}

void PacedReply::restart() noexcept { command_base_ = pending_.load().sequence; }

PacedReply::Answer PacedReply::take(bool late) noexcept {
  awaiting_ = false;
  const Pending p = pending_.load();
  if (p.sequence <= command_base_) {
    return {};
  }
  late_run_ = late ? late_run_ + 1 : 0;
  if (late) {
    bump(late_replies_);
    bump(late_weight_, late_run_);
  }
  return {true, p.position};
}

void PacedReply::sent(double now) noexcept {
  bump(replies_);
  const double took = now - received_at_;
  reply_time_max_.store(std::max(took, reply_time_max_.load(std::memory_order_relaxed)),
                        std::memory_order_relaxed);
}

ControllerLinkMetrics ControllerLinkCounters::snapshot(const PacedReplyMetrics& p) const noexcept {
  constexpr auto r = std::memory_order_relaxed;
  ControllerLinkMetrics m;
  m.received = received.load(r);
  m.replies = p.replies;
  m.lost = lost.load(r);
  m.duplicate = duplicate.load(r);
  m.reordered = reordered.load(r);
  m.sessions = sessions.load(r);
  m.rejected_foreign = rejected_foreign.load(r);
  m.rejected_malformed = rejected_malformed.load(r);
  m.rejected_commands = p.rejected_commands;
  m.late_replies = p.late_replies;
  m.late_weight = p.late_weight;
  m.reply_time_max = p.reply_time_max;
  return m;
}

}  // namespace hyloop::hal
