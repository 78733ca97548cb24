#include "hyloop/experiment/loop_parts.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {

LoopPlan every_cycle_plan(std::string kind, std::int64_t total_steps, double step,
                          const hal::SafetyConfig& safety, double initial_command) {
  LoopPlan p;
  p.kind = std::move(kind);
  p.total_steps = total_steps;
  p.step = step;
  p.hold_steps = 1;
  p.safety = safety;
  p.initial = {initial_command, 0.0};
  return p;
}

void require_stop_deceleration(const hal::SafetyConfig& safety, const std::string& field,
                               double value, const std::string& unit, const std::string& speed,
                               const std::string& window) {
  const double d_min = hal::min_stop_deceleration(safety);
  if (value >= d_min) return;
  const std::string t = format_value(hal::kMaxStopTime);
  const std::string limits =
      "V = " + format_value(std::min(safety.rate_limit, safety.limits.velocity_max)) +
      ", the speed bound (" + speed +
      "); W = " + format_value(safety.limits.position_max - safety.limits.position_min) +
      ", the window (" + window + ")";
  if (std::isinf(d_min)) {
    invalid(field, value,
            "must be .inf (stop at once): no ramp reaches rest within " + t + " s when " + limits);
  }
  invalid(field, value,
          "must be >= " + format_value(d_min) + " " + unit + " = min(V/t, 2W/t^2) so that an " +
              "e-stop reaches rest within t = " + t + " s; " + limits);
}

hal::DriverStatus step_drivers(hal::ActuatorDriver& actuator, hal::ForceSensorDriver& sensor,
                               PlantClock* clock, const hal::ActuatorCommand& applied,
                               std::span<double> measurement) noexcept {
  const hal::DriverStatus commanded = actuator.command(applied);
  if (clock != nullptr) clock->advance();
  const hal::ActuatorState state = actuator.state();
  hal::ForceSample force{};
  const hal::DriverStatus read = sensor.read(force);
  measurement[0] = state.position;
  measurement[1] = state.velocity;
  measurement[2] = force.force;
  return commanded == hal::DriverStatus::kFault || read == hal::DriverStatus::kFault
             ? hal::DriverStatus::kFault
             : hal::DriverStatus::kOk;
}

hal::SignalLayout mechanical_measurement(std::string position, std::string velocity,
                                         std::string force) {
  return {{{std::move(position), "m", "length"},
           {std::move(velocity), "m/s", "velocity"},
           {std::move(force), "N", "force"}}};
}

hal::SignalLayout set_point_command(const std::string& name, const std::string& unit,
                                    const std::string& quantity) {
  return {{{name, unit, quantity}, {name + "_rate", unit + "/s", quantity + "_rate"}}};
}

std::vector<std::size_t> columns_except(std::size_t count,
                                        const std::vector<std::size_t>& excluded) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < count; ++c) {
    if (std::find(excluded.begin(), excluded.end(), c) == excluded.end()) out.push_back(c);
  }
  return out;
}

LoopPlan loop_plan(const std::string& text) {
  return load_scenario_text(text, "scenario")->loop_plan();
}

std::size_t plan_axes(const LoopPlan& plan) noexcept { return 1 + plan.extra_axes.size(); }

std::vector<hal::SafetyConfig> plan_safety(const LoopPlan& plan) {
  std::vector<hal::SafetyConfig> out{plan.safety};
  for (const PlanAxis& a : plan.extra_axes) out.push_back(a.safety);
  return out;
}

std::array<hal::ActuatorCommand, hal::kMaxAxes> plan_initial(const LoopPlan& plan) {
  std::array<hal::ActuatorCommand, hal::kMaxAxes> out{};
  out[0] = plan.initial;
  for (std::size_t i = 0; i < plan.extra_axes.size() && i + 1 < out.size(); ++i) {
    out[i + 1] = plan.extra_axes[i].initial;
  }
  return out;
}

LoopPlan checked_loop_plan(LoopPlan plan) {
  hal::validate_layout("measurement", plan.measurement, false);
  hal::validate_layout("command", plan.command, true);
  if (plan.command.size() != 2 * plan_axes(plan)) {
    throw std::invalid_argument("kind " + plan.kind + ": the command has " +
                                std::to_string(plan.command.size()) + " signals for " +
                                std::to_string(plan_axes(plan)) +
                                " axes (a set point and its rate per axis)");
  }
  const hal::Signal& measured = plan.measurement.signals[0];
  const hal::Signal& set_point = plan.command.signals[hal::kCommandSetPoint];
  if (measured.unit != set_point.unit || measured.quantity != set_point.quantity) {
    throw std::invalid_argument("kind " + plan.kind + ": the measurement's first signal '" +
                                measured.name + "' [" + measured.unit +
                                "] is not what the set point '" + set_point.name + "' [" +
                                set_point.unit + "] commands");
  }
  return plan;
}

std::unique_ptr<RigPart> make_rig_part(const std::string& text) {
  return load_scenario_text(text, "scenario")->make_rig_part();
}

std::unique_ptr<DynamicsPart> make_dynamics_part(const std::string& text) {
  return load_scenario_text(text, "scenario")->make_dynamics_part();
}

}  // namespace hyloop::experiment
