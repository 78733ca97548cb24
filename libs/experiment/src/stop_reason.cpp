#include "hyloop/experiment/stop_reason.hpp"

namespace hyloop::experiment {

std::string_view to_string(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::kNone:
      return "none";
    case StopReason::kNotFinite:
      return "not_finite";
    case StopReason::kDisplacementLimit:
      return "displacement_limit";
    case StopReason::kDriverFault:
      return "driver_fault";
    case StopReason::kStrokeLimit:
      return "stroke_limit";
    case StopReason::kSpeedLimit:
      return "speed_limit";
    case StopReason::kServiceFault:
      return "service_fault";
    case StopReason::kStabilityGuard:
      return "stability_guard";
  }
  return "unknown";
}

StopReason parse_stop_reason(std::string_view name) noexcept {
  for (StopReason r : {StopReason::kNotFinite, StopReason::kDisplacementLimit,
                       StopReason::kDriverFault, StopReason::kStrokeLimit, StopReason::kSpeedLimit,
                       StopReason::kServiceFault, StopReason::kStabilityGuard}) {
    if (to_string(r) == name) return r;
  }
  return StopReason::kNone;
}

}  // namespace hyloop::experiment
