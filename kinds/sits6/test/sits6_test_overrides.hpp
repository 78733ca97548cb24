#pragma once
// The loop the delay-equation claims are about, as scenario overrides: the force (moment) delay
// alone (no hold, no robot, no compensation on either group of axes), the guard off so that the
// growth is measured, over `duration_s`.
#include <string>
#include <vector>

namespace hyloop::experiment::testing {

inline std::vector<std::string> force_delay_alone(const std::string& duration_s) {
  return {"timing.duration_s=" + duration_s, "guard.enabled=false",
          "delays.control_cycle=false",      "delays.robot_response=false",
          "compensator.type=none",           "rotational_compensator.type=none"};
}

}  // namespace hyloop::experiment::testing
