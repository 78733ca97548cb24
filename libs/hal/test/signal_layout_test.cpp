// Signal layouts (signal_layout.hpp): a mismatch names the channel and the first signal that
// differs (or the count); a declared layout is refused, naming what is wrong.
#include "hyloop/hal/signal_layout.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace hyloop::hal {
namespace {

using ::testing::HasSubstr;

const SignalLayout kMeasurement{
    {{"x_robot", "m", "length"}, {"v_robot", "m/s", "velocity"}, {"f_meas", "N", "force"}}};
const SignalLayout kCommand{{{"x_cmd", "m", "length"}, {"x_cmd_rate", "m/s", "length_rate"}}};

std::string refusal(const SignalLayout& layout, bool command) {
  try {
    validate_layout("test", layout, command);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SignalLayout, EqualLayoutsHaveNoMismatch) {
  EXPECT_EQ(layout_mismatch("measurement", kMeasurement, kMeasurement), "");
  EXPECT_EQ(kMeasurement.find("f_meas"), 2U);
  EXPECT_EQ(kMeasurement.find_quantity("velocity"), 1U);
  EXPECT_EQ(kMeasurement.find("F"), std::nullopt);
  EXPECT_EQ(kMeasurement.signals[2].label(), "f_meas[N]");
}

TEST(SignalLayout, AMismatchNamesTheChannelAndTheFirstDifferingSignal) {
  SignalLayout kilonewtons = kMeasurement;
  kilonewtons.signals[2].unit = "kN";
  EXPECT_EQ(layout_mismatch("measurement", kMeasurement, kilonewtons),
            "channel 'measurement': signal 2 is 'f_meas' [N] (force) here, 'f_meas' [kN] (force) "
            "in the request");
  SignalLayout renamed = kMeasurement;
  renamed.signals[0] = Signal{"x", "m", "length"};  // (a name assigned from "x" trips GCC 12)
  EXPECT_THAT(layout_mismatch("measurement", kMeasurement, renamed), HasSubstr("signal 0 is"));
  SignalLayout shorter = kMeasurement;
  shorter.signals.pop_back();
  EXPECT_EQ(layout_mismatch("measurement", kMeasurement, shorter),
            "channel 'measurement': 3 signals here, 2 in the request");
}

TEST(SignalLayout, ADeclaredLayoutIsRefusedNamingWhatIsWrong) {
  EXPECT_EQ(refusal(kMeasurement, false), "");
  EXPECT_EQ(refusal(kCommand, true), "");
  EXPECT_THAT(refusal({}, false), HasSubstr("0 signals (allowed: 1 to 16)"));
  SignalLayout twice = kMeasurement;
  twice.signals[1].name = "x_robot";
  EXPECT_THAT(refusal(twice, false), HasSubstr("signal name 'x_robot' appears twice"));
  SignalLayout unitless = kMeasurement;
  unitless.signals[1].unit.clear();
  EXPECT_THAT(refusal(unitless, false), HasSubstr("signal 1 needs a name, a unit and a quantity"));
  EXPECT_THAT(refusal(kMeasurement, true), HasSubstr("an even number of signals), not 3"));
  SignalLayout bad_rate = kCommand;
  bad_rate.signals[1].unit = "m/s^2";
  EXPECT_THAT(refusal(bad_rate, true),
              HasSubstr("allowed [m/s] (the set point's unit per second)"));
  SignalLayout two_axes = kCommand;  // a second axis: its set point at 2, its rate at 3
  two_axes.signals.push_back({"theta", "rad", "angle"});
  two_axes.signals.push_back({"theta_rate", "rad/s", "angle_rate"});
  EXPECT_EQ(refusal(two_axes, true), "");
  two_axes.signals[3].unit = "m/s";
  EXPECT_THAT(refusal(two_axes, true),
              HasSubstr("the rate 'theta_rate' is in [m/s], allowed [rad/s]"));
}

}  // namespace
}  // namespace hyloop::hal
