#include "hyloop/runtime/component.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "fake_component.hpp"

namespace hyloop::runtime {
namespace {

using testing::FakeComponent;
using ::testing::HasSubstr;

v1::ConfigureRequest request(const std::string& run_id) {
  v1::ConfigureRequest r;
  r.set_run_id(run_id);
  return r;
}

TEST(Component, WalksTheLifecycle) {
  FakeComponent c("sensor");
  EXPECT_EQ(c.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  auto r = c.configure(request("run-1"));
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_EQ(r.service(), "sensor");
  EXPECT_EQ(c.last_run_id, "run-1");
  EXPECT_EQ(c.activate().state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(c.deactivate().state(), v1::LIFECYCLE_STATE_INACTIVE);
  // Reconfiguring from INACTIVE calls on_configure again.
  EXPECT_EQ(c.configure(request("run-2")).state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_EQ(c.configures, 2);
  EXPECT_EQ(c.shutdown().state(), v1::LIFECYCLE_STATE_FINALIZED);
  EXPECT_EQ(c.activates, 1);
  EXPECT_EQ(c.deactivates, 1);
  EXPECT_EQ(c.shutdowns, 1);
  // Shutting down twice does not release twice.
  EXPECT_EQ(c.shutdown().state(), v1::LIFECYCLE_STATE_FINALIZED);
  EXPECT_EQ(c.shutdowns, 1);
}

TEST(Component, RefusesIllegalTransitionsWithoutChangingState) {
  FakeComponent c;
  auto r = c.activate();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(r.message(), "activate: not allowed in state UNCONFIGURED (allowed from INACTIVE)");
  EXPECT_EQ(c.activates, 0);

  c.configure(request("r"));
  c.activate();
  r = c.activate();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(r.message(), "activate: not allowed in state ACTIVE (allowed from INACTIVE)");
  r = c.configure(request("r2"));
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_THAT(r.message(), HasSubstr("allowed from UNCONFIGURED, INACTIVE or ERROR"));
  EXPECT_EQ(c.configures, 1);
  // The stored message is not the refusal.
  EXPECT_EQ(c.state_reply().message(), "active");
  c.deactivate();
  EXPECT_THAT(c.deactivate().message(),
              HasSubstr("deactivate: not allowed in state INACTIVE (allowed from ACTIVE)"));
}

TEST(Component, ThrowingConfigureGivesErrorAndConfigureRecovers) {
  FakeComponent c;
  c.throw_on_configure = true;
  auto r = c.configure(request("r"));
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(r.message(), c.configure_error);
  EXPECT_EQ(c.state_reply().message(), c.configure_error);
  EXPECT_EQ(c.activate().state(), v1::LIFECYCLE_STATE_ERROR);
  c.throw_on_configure = false;
  EXPECT_EQ(c.configure(request("r")).state(), v1::LIFECYCLE_STATE_INACTIVE);
}

// Issue 15, defect 1: Cleanup releases a configuration that will not run (INACTIVE, or ERROR
// after a failed Configure) and returns to UNCONFIGURED; refused while ACTIVE; a no-op when
// UNCONFIGURED.
TEST(Component, CleanupReleasesAConfigurationThatWillNotRun) {
  FakeComponent c;
  EXPECT_EQ(c.cleanup().state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(c.cleanups, 0);
  c.configure(request("r"));
  auto r = c.cleanup();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(r.message(), "unconfigured (released after: configured for run r)");
  EXPECT_EQ(c.cleanups, 1);
  EXPECT_EQ(c.activate().state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  c.throw_on_configure = true;
  EXPECT_EQ(c.configure(request("r")).state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(c.cleanup().state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(c.cleanups, 2);
  c.throw_on_configure = false;
  c.configure(request("r"));
  c.activate();
  r = c.cleanup();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_THAT(r.message(), HasSubstr("cleanup: not allowed in state ACTIVE"));
  EXPECT_EQ(c.cleanups, 2);
}

TEST(Component, ShutdownFromActiveDeactivatesFirst) {
  FakeComponent c;
  c.configure(request("r"));
  c.activate();
  EXPECT_EQ(c.shutdown().state(), v1::LIFECYCLE_STATE_FINALIZED);
  EXPECT_EQ(c.deactivates, 1);
  EXPECT_EQ(c.shutdowns, 1);
  EXPECT_EQ(c.configure(request("r")).state(), v1::LIFECYCLE_STATE_FINALIZED);
}

TEST(Component, FailFromAnyThreadMovesToErrorButNotOutOfFinalized) {
  FakeComponent c;
  c.configure(request("r"));
  c.activate();
  std::thread([&] { c.fail_now("sensor timed out"); }).join();
  auto r = c.state_reply();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(r.message(), "sensor timed out");
  c.shutdown();
  c.fail_now("late");
  EXPECT_EQ(c.state(), v1::LIFECYCLE_STATE_FINALIZED);
}

TEST(Component, LoopFailingWhileDeactivateJoinsItDoesNotDeadlock) {
  FakeComponent c;
  c.fail_in_loop = true;
  c.configure(request("r"));
  c.activate();
  auto r = c.deactivate();  // joins the loop, which calls fail() on its way out
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(r.message(), "loop failed: cycle 7 missing");
}

TEST(Component, EmergencyStopDoesNotWaitForATransition) {
  FakeComponent c;
  c.block_configure = true;
  std::thread configuring([&] { c.configure(request("r")); });
  while (!c.in_configure) std::this_thread::yield();
  auto r = c.emergency_stop("operator");  // configure still holds the transition lock
  EXPECT_EQ(c.estops, 1);
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_THAT(r.message(), HasSubstr("operator"));
  c.block_configure = false;
  configuring.join();
  EXPECT_EQ(c.state(), v1::LIFECYCLE_STATE_INACTIVE);
  c.set_message_now("finished after 10 cycles");
  EXPECT_EQ(c.state_reply().message(), "finished after 10 cycles");
}

TEST(Component, ContextIsOwnUnlessShared) {
  FakeComponent a, b;
  zmq::context_t shared;
  EXPECT_EQ(&a.context(), &a.context());
  b.set_context(&shared);
  EXPECT_EQ(&b.context(), &shared);
  EXPECT_NE(&a.context(), &shared);
}

}  // namespace
}  // namespace hyloop::runtime
