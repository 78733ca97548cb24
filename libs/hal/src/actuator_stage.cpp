#include "hyloop/hal/actuator_stage.hpp"

#include <stdexcept>
#include <string>

namespace hyloop::hal {

ActuatorStage::ActuatorStage(std::int64_t hold_steps, const SafetyConfig& safety)
    : ActuatorStage(hold_steps, std::span(&safety, 1)) {}

ActuatorStage::ActuatorStage(std::int64_t hold_steps, std::span<const SafetyConfig> axes)
    : hold_steps_(hold_steps < 1 ? 1 : hold_steps), axes_(axes.size()) {
  if (axes.empty() || axes.size() > kMaxAxes) {
    throw std::invalid_argument("actuator stage: " + std::to_string(axes.size()) +
                                " axes, must be 1.." + std::to_string(kMaxAxes));
  }
  for (std::size_t i = 0; i < axes_; ++i) {
    try {
      safety_[i].emplace(axes[i]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("axis " + std::to_string(i) + ": " + e.what());
    }
  }
}

void ActuatorStage::reset(std::span<const ActuatorCommand> initial) noexcept {
  for (std::size_t i = 0; i < axes_; ++i) {
    const ActuatorCommand c = i < initial.size() ? initial[i] : ActuatorCommand{};
    safety_[i]->reset(c.position);
    applied_[i] = c;
  }
  output_ = {applied_[0], false, false, false, SafetyEvent::kNone};
}

std::optional<std::size_t> ActuatorStage::refusing_axis(
    const ActuatorCommand* commands) const noexcept {
  if (commands == nullptr || axes_ == 1) return std::nullopt;
  for (std::size_t i = 0; i < axes_; ++i) {
    if (check_command(commands[i], safety_[i]->config().limits) != LimitVerdict::kOk) return i;
  }
  return std::nullopt;
}

const SafetyOutput& ActuatorStage::update(std::int64_t cycle,
                                          const ActuatorCommand* commands) noexcept {
  if (cycle % hold_steps_ != 0) return output_;
  if (axes_ == 1) {
    output_ = safety_[0]->filter(commands);
    applied_[0] = output_.command;
    return output_;
  }
  const std::optional<std::size_t> refused = refusing_axis(commands);
  SafetyOutput combined{};
  for (std::size_t i = 0; i < axes_; ++i) {
    const bool offered = commands != nullptr && (!refused || *refused == i);
    const SafetyOutput o = safety_[i]->filter(offered ? &commands[i] : nullptr);
    applied_[i] = o.command;
    if (i == 0) combined = o;
    combined.limited = combined.limited || o.limited;
    combined.watchdog = combined.watchdog || o.watchdog;
    combined.estopped = combined.estopped || o.estopped;
    if (combined.event == SafetyEvent::kNone || (refused && *refused == i))
      combined.event = o.event;
  }
  output_ = combined;
  return output_;
}

void ActuatorStage::emergency_stop() noexcept {
  for (std::size_t i = 0; i < axes_; ++i) safety_[i]->emergency_stop();
}

void ActuatorStage::trip_watchdog() noexcept {
  for (std::size_t i = 0; i < axes_; ++i) safety_[i]->trip_watchdog();
}

bool ActuatorStage::at_rest() const noexcept {
  for (std::size_t i = 0; i < axes_; ++i) {
    if (!safety_[i]->at_rest()) return false;
  }
  return true;
}

std::uint64_t ActuatorStage::total(std::uint64_t (ActuatorSafety::*counter)()
                                       const) const noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < axes_; ++i) sum += ((*safety_[i]).*counter)();
  return sum;
}

}  // namespace hyloop::hal
