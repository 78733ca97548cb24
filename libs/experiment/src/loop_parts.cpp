#include "hyloop/experiment/loop_parts.hpp"

#include <algorithm>
#include <utility>

#include "hyloop/experiment/kind.hpp"

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

std::vector<std::size_t> columns_except(std::size_t count,
                                        const std::vector<std::size_t>& excluded) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < count; ++c) {
    if (std::find(excluded.begin(), excluded.end(), c) == excluded.end()) out.push_back(c);
  }
  return out;
}

LoopPlan loop_plan(const std::string& text) { return find_scenario_kind(text).loop_plan(text); }

std::unique_ptr<RigPart> make_rig_part(const std::string& text) {
  return find_scenario_kind(text).make_rig_part(text);
}

std::unique_ptr<DynamicsPart> make_dynamics_part(const std::string& text) {
  return find_scenario_kind(text).make_dynamics_part(text);
}

}  // namespace hyloop::experiment
