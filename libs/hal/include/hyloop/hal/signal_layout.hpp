#pragma once
// The signals a loop channel carries (loop contract v2, proto/hyloop/v2/loop.proto): each value
// of a frame has a name, an SI unit and a quantity. A kind declares two layouts (loop_parts.hpp):
// the measurement (rig → sensor → dynamics) and the command (dynamics → actuator → rig, whose
// two signals are what the safety layer limits: the set point and its rate; the measurement's
// first signal is the set point's measured counterpart, in its unit). The
// coordinator sends both at configure and every service checks them against its own
// (layout_mismatch), so two services that read a scenario differently never exchange values.
//
// Not RT: layouts are built and compared at configure time only; in a cycle a frame is a span
// of doubles of the layout's size.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::hal {

struct Signal {
  std::string name;      ///< the kind's own name, e.g. "x_R", "fuel_flow_measured"
  std::string unit;      ///< SI unit, e.g. "m", "m/s", "N", "kg/s"
  std::string quantity;  ///< what the unit measures: "length", "velocity", "force", "mass_flow"
  bool operator==(const Signal&) const = default;
  /// "name[unit]", the form of record columns and telemetry names.
  [[nodiscard]] std::string label() const { return name + "[" + unit + "]"; }
};

struct SignalLayout {
  std::vector<Signal> signals;
  bool operator==(const SignalLayout&) const = default;
  [[nodiscard]] std::size_t size() const noexcept { return signals.size(); }
  /// The index of the first signal of `quantity`, if any.
  [[nodiscard]] std::optional<std::size_t> find_quantity(std::string_view quantity) const;
  /// The index of the signal named `name`, if any.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
};

/// The largest layout a frame may carry (fixed-size buffers on the loop path).
inline constexpr std::size_t kMaxSignals = 16;
/// The command layout's two signals the safety layer limits (axis 0's).
inline constexpr std::size_t kCommandSetPoint = 0;
inline constexpr std::size_t kCommandRate = 1;
/// Axis `axis`'s set point and rate in a command layout of several axes.
[[nodiscard]] constexpr std::size_t command_set_point(std::size_t axis) noexcept {
  return 2 * axis + kCommandSetPoint;
}
[[nodiscard]] constexpr std::size_t command_rate(std::size_t axis) noexcept {
  return 2 * axis + kCommandRate;
}

/// Why `got` is not `expected` on `channel` ("" when they are equal): the first signal that
/// differs, or the count, e.g. "channel 'measurement': signal 2 is 'force' [N] (force) here,
/// 'F' [kN] (force) in the request".
[[nodiscard]] std::string layout_mismatch(std::string_view channel, const SignalLayout& expected,
                                          const SignalLayout& got);

/// Checks a layout a kind declares: 1..kMaxSignals signals, names unique and non-empty, units
/// and quantities non-empty; a command layout has a set point and its rate per axis (axis i at
/// 2i, 2i+1), each rate in its set point's unit per second. @throws std::invalid_argument naming
/// the channel and the signal.
void validate_layout(std::string_view channel, const SignalLayout& layout, bool command);

}  // namespace hyloop::hal
