// The wire drivers' fault latch (link_watch.hpp).
#include "hyloop/hal/link_watch.hpp"

#include <gtest/gtest.h>

namespace hyloop::hal {
namespace {

TEST(LinkWatch, ASilenceLongerThanTheTimeoutLatchesWhenThePeerComesBack) {
  // Nobody asks for the health while the peer is silent (a loop that runs on its messages):
  // the silence is judged when the next message comes (found by kuka_experimental's simulator,
  // which paused 1 s and resumed: our RSI driver re-zeroed its position without a fault).
  LinkWatch watch(0.1);
  const double t0 = monotonic_seconds();
  watch.heard(t0);
  watch.commanded();
  watch.heard(t0 + 0.05);
  EXPECT_EQ(watch.health(), DriverStatus::kOk);
  watch.heard(t0 + 0.5);  // 0.45 s of silence, now over
  EXPECT_EQ(watch.health(), DriverStatus::kFault);
  watch.heard(t0 + 0.52);
  EXPECT_EQ(watch.health(), DriverStatus::kFault) << "latched";
}

TEST(LinkWatch, BeforeTheFirstCommandASilenceIsNoFault) {
  LinkWatch watch(0.1);
  const double t0 = monotonic_seconds();
  watch.heard(t0);
  watch.heard(t0 + 0.5);  // the robot streams before the run starts; gaps there are no fault
  EXPECT_EQ(watch.health(), DriverStatus::kOk);
  watch.commanded();
  watch.heard(t0 + 0.55);
  EXPECT_EQ(watch.health(), DriverStatus::kOk);
}

TEST(LinkWatch, AReportedStopLatchesAtOnce) {
  LinkWatch watch(10.0);
  watch.commanded();
  watch.heard(monotonic_seconds());
  watch.device_stopped();
  EXPECT_EQ(watch.health(), DriverStatus::kFault);
}

}  // namespace
}  // namespace hyloop::hal
