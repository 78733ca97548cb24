#pragma once
// The message of the std::invalid_argument a callable throws, for asserting that a validation
// message names the field, the value and what is allowed.
//
//   EXPECT_THAT(invalid_argument_message([] { DelayLine(-1.0); }), HasSubstr("delay_steps"));

#include <stdexcept>
#include <string>

namespace hyloop::testing {

template <typename F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
}

}  // namespace hyloop::testing
