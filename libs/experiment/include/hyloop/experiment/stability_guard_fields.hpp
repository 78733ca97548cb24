#pragma once
// The stability guard's scenario block (guard.*; issue 13 §3), declared once for every kind that
// has one: the fields with their names, units, ranges and help, and their validation.
//  - the tracking-ratio guard (core::StabilityGuard; vrths, rht): each kind keeps its own
//    defaults (the window and the ratio follow the structure's frequency and the loop's residual
//    lag) and names its target and measured signals in the help text;
//  - the energy guard (core::EnergyGuard; sits): a loop with no energy source of its own, whose
//    observed energy against its initial energy is the criterion. guard.enabled and guard.hold
//    are spelled and meant as the tracking-ratio guard's.

#include <string>
#include <vector>

#include "hyloop/core/energy_guard.hpp"
#include "hyloop/core/stability_guard.hpp"
#include "hyloop/experiment/scenario_fields.hpp"

namespace hyloop::experiment {

/// guard.*: whether the guard may stop the run, and its settings (config.step is the scenario's
/// timing.step_s, set by validate_stability_guard).
struct StabilityGuardSettings {
  bool enabled = true;
  core::StabilityGuardConfig config;
};

/// Sets config.step to `step` and checks the block. @throws ScenarioError naming the guard.*
/// field, its value and the allowed range.
void validate_stability_guard(StabilityGuardSettings& guard, double step);

/// Checks the energy guard's block. @throws ScenarioError naming the guard.* field, its value and
/// the allowed range.
void validate_energy_guard(const core::EnergyGuardConfig& guard);

namespace fields {

/// guard.enabled, guard.window_s, guard.max_tracking_ratio, guard.amplitude_floor_m, guard.hold:
/// `get` returns the scenario's StabilityGuardSettings ([](auto& s) -> auto& { return s.guard; });
/// `target` and `measured` name the guard's signals in the help text (e.g. "y1", "x_m").
template <typename S, typename Get>
std::vector<BoundField<S>> stability_guard(Get get, const std::string& target,
                                           const std::string& measured) {
  return {
      boolean<S>(
          "guard.enabled", "the stability guard stops a loop leaving its target",
          [get](auto& s) -> auto& { return get(s).enabled; }),
      number<S>(
          "guard.window_s", "s", above(0), "the tracking-error ratio's window",
          [get](auto& s) -> auto& { return get(s).config.window; }),
      number<S>(
          "guard.max_tracking_ratio", "", above(0),
          "RMS(" + measured + " - " + target + ")/RMS(" + target +
              ") over the window above which it stops",
          [get](auto& s) -> auto& { return get(s).config.max_tracking_ratio; }),
      number<S>(
          "guard.amplitude_floor_m", "m", at_least(0),
          "RMS of " + target + " below which the ratio is not judged",
          [get](auto& s) -> auto& { return get(s).config.amplitude_floor; }),
      integer<S>(
          "guard.hold", "", at_least(1), "consecutive cycles above the ratio",
          [get](auto& s) -> auto& { return get(s).config.hold; }),
  };
}

/// guard.enabled, guard.max_energy_ratio, guard.energy_floor_j, guard.hold of the energy guard:
/// `get` returns the scenario's block, with `bool enabled` and `core::EnergyGuardConfig config`;
/// `energy` names the observed energy in the help text (e.g. "energy").
template <typename S, typename Get>
std::vector<BoundField<S>> energy_guard(Get get, const std::string& energy) {
  return {
      boolean<S>(
          "guard.enabled", "the stability guard stops a loop leaving its target",
          [get](auto& s) -> auto& { return get(s).enabled; }),
      number<S>(
          "guard.max_energy_ratio", "", above(1),
          energy + "/max(" + energy + " at t = 0, guard.energy_floor_j) above which it stops",
          [get](auto& s) -> auto& { return get(s).config.max_energy_ratio; }),
      number<S>(
          "guard.energy_floor_j", "J", above(0), "the least reference energy",
          [get](auto& s) -> auto& { return get(s).config.energy_floor; }),
      integer<S>(
          "guard.hold", "", at_least(1), "consecutive cycles above the ratio",
          [get](auto& s) -> auto& { return get(s).config.hold; }),
  };
}

}  // namespace fields
}  // namespace hyloop::experiment
