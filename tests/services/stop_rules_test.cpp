// The coordinator's stop rules (services/coordinator/stop_rules.hpp): each predicate is true on
// its trigger and false otherwise.
#include "coordinator/stop_rules.hpp"

#include <gtest/gtest.h>

namespace sr = hyloop::services::stop_rules;
namespace v1 = hyloop::v1;
namespace v2 = hyloop::v2;
using namespace std::chrono_literals;

namespace {

/// A lockstep run of 100 cycles, 40 recorded, nothing requested, health due in 200 ms.
sr::LoopView running() {
  sr::LoopView v;
  v.total_cycles = 100;
  v.next_record = 40;
  v.recorded_cycles = 40;
  v.rig_last_cycle = 45;
  v.now = sr::Clock::time_point{} + 10s;
  v.next_health = v.now + 200ms;
  return v;
}

/// Every predicate that fires on `v`, by name.
std::vector<std::string> firing(const sr::LoopView& v) {
  std::vector<std::string> out;
  if (sr::finished(v)) out.emplace_back("finished");
  if (sr::rig_done(v)) out.emplace_back("rig_done");
  if (sr::lost_tail(v)) out.emplace_back("lost_tail");
  if (sr::dynamics_stopped(v)) out.emplace_back("dynamics_stopped");
  if (sr::loop_fault(v)) out.emplace_back("loop_fault");
  if (sr::watchdog_at_rest(v)) out.emplace_back("watchdog_at_rest");
  if (sr::operator_stop(v)) out.emplace_back("operator_stop");
  if (sr::emergency_stop_done(v)) out.emplace_back("emergency_stop_done");
  if (sr::health_due(v)) out.emplace_back("health_due");
  return out;
}

using Names = std::vector<std::string>;

}  // namespace

TEST(StopRules, NoneFiresOnARunningLoop) {
  EXPECT_EQ(firing(running()), Names{});
  EXPECT_TRUE(sr::keep_reading(running()));
}

TEST(StopRules, FinishedWhenEveryCycleIsRecorded) {
  sr::LoopView v = running();
  v.next_record = 99;
  v.recorded_cycles = 99;
  EXPECT_EQ(firing(v), Names{});
  v.next_record = 100;
  EXPECT_EQ(firing(v), Names{"finished"});
  v.next_record = 99;
  v.recorded_cycles = 100;  // the dynamics' last row recorded out of order (stop:)
  EXPECT_EQ(firing(v), Names{"finished"});
  EXPECT_FALSE(sr::keep_reading(v));
}

TEST(StopRules, LostTailOnlyInRealTimeAfterTheGracePeriod) {
  sr::LoopView v = running();
  v.rig_last_cycle = 99;
  EXPECT_EQ(firing(v), Names{});  // lockstep: never
  v.real_time = true;
  EXPECT_EQ(firing(v), Names{"rig_done"});  // the grace period has not started
  v.rig_done_at = v.now - sr::kLostTailGrace;
  EXPECT_EQ(firing(v), Names{"rig_done"});  // not yet over
  v.rig_done_at = v.now - sr::kLostTailGrace - 1ms;
  EXPECT_EQ(firing(v), (Names{"rig_done", "lost_tail"}));
  v.rig_last_cycle = 98;  // the rig has not run its last cycle
  EXPECT_EQ(firing(v), Names{});
}

TEST(StopRules, DynamicsStoppedOnItsStopEvent) {
  sr::LoopView v = running();
  v.event = v2::LOOP_EVENT_STOP;
  v.event_detail = "position limit";
  EXPECT_EQ(firing(v), Names{"dynamics_stopped"});
  EXPECT_FALSE(sr::keep_reading(v));
  EXPECT_EQ(sr::describe(v.event, v.event_detail), "stop:position limit");
  v.event = v2::LOOP_EVENT_IDENTIFIED;  // only a STOP event
  EXPECT_EQ(firing(v), Names{});
}

TEST(StopRules, AnEmergencyOrOperatorStopUnderWayIsNotEndedByTheModelsStop) {
  // The rig brought to rest no longer follows the model, whose stability guard may then stop it:
  // the e-stop (or the operator's stop) stays the run's end.
  sr::LoopView v = running();
  v.stop_seen = true;
  v.event = v2::LOOP_EVENT_STOP;
  v.event_detail = "stability_guard";
  v.estop_requested = true;
  v.estop_since = v.now;
  EXPECT_EQ(firing(v), Names{});
  v.event = v2::LOOP_EVENT_AT_REST;
  v.event_detail = "estop";
  EXPECT_EQ(firing(v), Names{"emergency_stop_done"});
  v = running();
  v.stop_seen = true;
  v.event = v2::LOOP_EVENT_STOP;
  v.stop_requested = true;
  EXPECT_EQ(firing(v), Names{"operator_stop"});
}

TEST(StopRules, DynamicsStoppedWaitsForItsLastRowUpToTheGrace) {
  sr::LoopView v = running();
  v.stop_seen = true;  // the stop event may since have been followed by another event
  v.event = v2::LOOP_EVENT_AT_REST;
  v.event_detail = "watchdog";
  v.stop_row_pending = true;
  v.stop_seen_at = v.now - sr::kStopRowGrace;
  EXPECT_FALSE(sr::dynamics_stopped(v));  // the rig's part of the last row may still come
  v.stop_seen_at = v.now - sr::kStopRowGrace - 1ms;
  EXPECT_TRUE(sr::dynamics_stopped(v));  // recorded as it is
  v.stop_seen_at = v.now;
  v.stop_row_pending = false;  // the last row is in
  EXPECT_TRUE(sr::dynamics_stopped(v));
}

TEST(StopRules, LoopFaultUnlessTheRunIsAlreadyEnding) {
  sr::LoopView v = running();
  v.event = v2::LOOP_EVENT_FAULT;
  v.event_detail = "actuator silent";
  EXPECT_EQ(firing(v), Names{"loop_fault"});
  EXPECT_FALSE(sr::keep_reading(v));
  v.failing = true;
  EXPECT_EQ(firing(v), Names{});
  v.failing = false;
  v.stop_requested = true;
  EXPECT_EQ(firing(v), Names{"operator_stop"});
  v.stop_requested = false;
  v.estop_requested = true;
  EXPECT_EQ(firing(v), Names{});  // the e-stop waits for the rig at rest
}

TEST(StopRules, WatchdogAtRestOnce) {
  sr::LoopView v = running();
  v.event = v2::LOOP_EVENT_AT_REST;
  v.event_detail = "watchdog";
  EXPECT_EQ(firing(v), Names{"watchdog_at_rest"});
  EXPECT_EQ(sr::describe(v.event, v.event_detail), "watchdog:at_rest");
  EXPECT_TRUE(sr::keep_reading(v));  // the health poll or a quiet moment evaluates it
  v.failing = true;                  // already applied: the run drains on
  EXPECT_EQ(firing(v), Names{});
}

TEST(StopRules, OperatorStopOnRequest) {
  sr::LoopView v = running();
  v.stop_requested = true;
  EXPECT_EQ(firing(v), Names{"operator_stop"});
}

TEST(StopRules, EmergencyStopDoneAtRestOrAfterTheTimeout) {
  sr::LoopView v = running();
  v.estop_requested = true;
  EXPECT_EQ(firing(v), Names{});  // its wait has not started
  v.estop_since = v.now - 1s;
  EXPECT_EQ(firing(v), Names{});
  v.event = v2::LOOP_EVENT_AT_REST;
  v.event_detail = "estop";
  EXPECT_EQ(firing(v), Names{"emergency_stop_done"});
  v.event = v2::LOOP_EVENT_NONE;
  v.event_detail = "";
  v.estop_since = v.now - sr::kEstopRestTimeout - 1ms;
  EXPECT_EQ(firing(v), Names{"emergency_stop_done"});
  v.estop_requested = false;
  v.event = v2::LOOP_EVENT_AT_REST;  // a latch from before: no e-stop of this run
  v.event_detail = "estop";
  EXPECT_EQ(firing(v), Names{});
}

TEST(StopRules, HealthDueAtItsTime) {
  sr::LoopView v = running();
  v.now = v.next_health - 1ms;
  EXPECT_EQ(firing(v), Names{});
  v.now = v.next_health;
  EXPECT_EQ(firing(v), Names{"health_due"});
  EXPECT_FALSE(sr::keep_reading(v));
}

TEST(StopRules, ServiceFaultNamesUnreachableErrorAndLeftTheRun) {
  EXPECT_EQ(sr::service_fault("dynamics", std::nullopt, true),
            "service dynamics failed: not answering (died or stopped?)");
  v1::LifecycleReply st;
  st.set_state(v1::LIFECYCLE_STATE_ERROR);
  st.set_message("model diverged");
  EXPECT_EQ(sr::service_fault("dynamics", st, true), "service dynamics failed: model diverged");
  st.set_state(v1::LIFECYCLE_STATE_INACTIVE);
  st.set_message("deactivated");
  EXPECT_EQ(sr::service_fault("actuator", st, true),
            "service actuator left the run: INACTIVE mid-run (deactivated; deactivated or shut "
            "down by another client?)");
  EXPECT_EQ(sr::service_fault("identification", st, false), "");  // not in the loop
  st.set_state(v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(sr::service_fault("actuator", st, true), "");
}

// Issue 27, finding 5: a real-time run whose commands nearly all came late (2 999 of 3 000: a
// CURVE key mismatch) ended FINISHED. More than half late: the run fails, saying why.
TEST(StopRules, MostCommandsLateIsAFaultHalfIsNot) {
  EXPECT_EQ(sr::late_commands_fault(0, 0), "");
  EXPECT_EQ(sr::late_commands_fault(1500, 3000), "");
  const std::string fault = sr::late_commands_fault(2999, 3000);
  EXPECT_EQ(fault.rfind("2999 of 3000 cycles ran on a late command (more than 50 %)", 0), 0U)
      << fault;
}
