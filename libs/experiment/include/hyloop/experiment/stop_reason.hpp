#pragma once
// Why an experiment's loop stopped before its last cycle: one type for every kind. Its names
// are the `stop_reason` of summary.json and the detail of the dynamics' LOOP_EVENT_STOP, so a
// distributed run's recorder reads back the reason its dynamics service sent.

#include <cstdint>
#include <string_view>

namespace hyloop::experiment {

enum class StopReason : std::uint8_t {
  kNone,
  kNotFinite,          ///< a state or command is NaN or infinite (every kind)
  kDisplacementLimit,  ///< SITS: the target left the rig's stroke
  kDriverFault,        ///< SITS: a driver reported a fault
  kStrokeLimit,        ///< RHT: the command would leave the servo's stroke
  kSpeedLimit,         ///< FCU: the engine's speed left its window
  kServiceFault,       ///< a distributed run stopped for a reason none of the above names
  kStabilityGuard,     ///< vrths, RHT, SITS: the stability guard saw the loop leave its target
};

/// "none", "not_finite", "displacement_limit", "driver_fault", "stroke_limit", "speed_limit",
/// "service_fault" (NUL-terminated literals: data() may be passed on as a C string).
std::string_view to_string(StopReason reason) noexcept;
/// Inverse of to_string; kNone for an unknown name.
StopReason parse_stop_reason(std::string_view name) noexcept;

}  // namespace hyloop::experiment
