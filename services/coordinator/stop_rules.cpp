#include "coordinator/stop_rules.hpp"

namespace hyloop::services::stop_rules {

bool finished(const LoopView& v) {
  return v.next_record >= v.total_cycles || v.recorded_cycles >= v.total_cycles;
}

bool rig_done(const LoopView& v) { return v.real_time && v.rig_last_cycle + 1 >= v.total_cycles; }

bool lost_tail(const LoopView& v) {
  return rig_done(v) && v.rig_done_at != Clock::time_point{} &&
         v.now - v.rig_done_at > kLostTailGrace;
}

bool dynamics_stopped(const LoopView& v) {
  return (v.stop_seen || v.event == v2::LOOP_EVENT_STOP) && !v.estop_requested &&
         !v.stop_requested && (!v.stop_row_pending || v.now - v.stop_seen_at > kStopRowGrace);
}

bool loop_fault(const LoopView& v) {
  return v.event == v2::LOOP_EVENT_FAULT && !v.failing && !v.estop_requested && !v.stop_requested;
}

bool watchdog_at_rest(const LoopView& v) {
  return v.event == v2::LOOP_EVENT_AT_REST && v.event_detail == "watchdog" && !v.failing;
}

bool operator_stop(const LoopView& v) { return v.stop_requested; }

bool emergency_stop_done(const LoopView& v) {
  return v.estop_requested && v.estop_since != Clock::time_point{} &&
         ((v.event == v2::LOOP_EVENT_AT_REST && v.event_detail == "estop") ||
          v.now - v.estop_since > kEstopRestTimeout);
}

bool health_due(const LoopView& v) { return v.now >= v.next_health; }

bool keep_reading(const LoopView& v) {
  return !finished(v) && v.event != v2::LOOP_EVENT_STOP && v.event != v2::LOOP_EVENT_FAULT &&
         !health_due(v);
}

std::string late_commands_fault(std::uint64_t late, std::uint64_t cycles) {
  if (cycles == 0 || static_cast<double>(late) <= kLateCommandLimit * static_cast<double>(cycles)) {
    return {};
  }
  return std::to_string(late) + " of " + std::to_string(cycles) +
         " cycles ran on a late command (more than " +
         std::to_string(static_cast<int>(kLateCommandLimit * 100)) +
         " %): the commands did not reach the rig in time (a loop channel that never connected, "
         "e.g. CURVE keys that do not match?)";
}

std::string describe(v2::LoopEvent event, std::string_view detail) {
  switch (event) {
    case v2::LOOP_EVENT_STOP:
      return "stop:" + std::string(detail);
    case v2::LOOP_EVENT_FAULT:
      return "fault:" + std::string(detail);
    case v2::LOOP_EVENT_AT_REST:
      return std::string(detail) + ":at_rest";
    case v2::LOOP_EVENT_IDENTIFIED:
      return "identified";
    default:
      return {};
  }
}

std::string service_fault(const std::string& name, const std::optional<v1::LifecycleReply>& st,
                          bool in_loop) {
  if (!st) return "service " + name + " failed: not answering (died or stopped?)";
  if (st->state() == v1::LIFECYCLE_STATE_ERROR) {
    return "service " + name + " failed: " + st->message();
  }
  if (in_loop && st->state() != v1::LIFECYCLE_STATE_ACTIVE) {
    return "service " + name + " left the run: " + v1::LifecycleState_Name(st->state()).substr(16) +
           " mid-run (" + st->message() + "; deactivated or shut down by another client?)";
  }
  return {};
}

}  // namespace hyloop::services::stop_rules
