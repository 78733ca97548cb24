#include "hyloop/hal/signal_layout.hpp"

#include <set>
#include <stdexcept>

namespace hyloop::hal {

std::optional<std::size_t> SignalLayout::find_quantity(std::string_view quantity) const {
  for (std::size_t i = 0; i < signals.size(); ++i) {
    if (signals[i].quantity == quantity) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> SignalLayout::find(std::string_view name) const {
  for (std::size_t i = 0; i < signals.size(); ++i) {
    if (signals[i].name == name) return i;
  }
  return std::nullopt;
}

namespace {
std::string describe(const Signal& s) {
  return "'" + s.name + "' [" + s.unit + "] (" + s.quantity + ")";
}
}  // namespace

std::string layout_mismatch(std::string_view channel, const SignalLayout& expected,
                            const SignalLayout& got) {
  const std::string where = "channel '" + std::string(channel) + "': ";
  for (std::size_t i = 0; i < expected.size() && i < got.size(); ++i) {
    if (!(expected.signals[i] == got.signals[i])) {
      return where + "signal " + std::to_string(i) + " is " + describe(expected.signals[i]) +
             " here, " + describe(got.signals[i]) + " in the request";
    }
  }
  if (expected.size() != got.size()) {
    return where + std::to_string(expected.size()) + " signals here, " +
           std::to_string(got.size()) + " in the request";
  }
  return {};
}

void validate_layout(std::string_view channel, const SignalLayout& layout, bool command) {
  const std::string where = "layout of channel '" + std::string(channel) + "': ";
  if (layout.size() == 0 || layout.size() > kMaxSignals) {
    throw std::invalid_argument(where + std::to_string(layout.size()) + " signals (allowed: 1 to " +
                                std::to_string(kMaxSignals) + ")");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const Signal& s = layout.signals[i];
    if (s.name.empty() || s.unit.empty() || s.quantity.empty()) {
      throw std::invalid_argument(where + "signal " + std::to_string(i) +
                                  " needs a name, a unit and a quantity");
    }
    if (!names.insert(s.name).second) {
      throw std::invalid_argument(where + "signal name '" + s.name + "' appears twice");
    }
  }
  if (command) {
    if (layout.size() % 2 != 0) {
      throw std::invalid_argument(where +
                                  "a command has a set point and its rate per axis (an "
                                  "even number of signals), not " +
                                  std::to_string(layout.size()));
    }
    for (std::size_t axis = 0; axis < layout.size() / 2; ++axis) {
      const Signal& set_point = layout.signals[command_set_point(axis)];
      const Signal& rate = layout.signals[command_rate(axis)];
      if (rate.unit != set_point.unit + "/s") {
        throw std::invalid_argument(where + "the rate '" + rate.name + "' is in [" + rate.unit +
                                    "], allowed [" + set_point.unit +
                                    "/s] (the set point's unit per second)");
      }
    }
  }
}

}  // namespace hyloop::hal
