#include "hyloop/experiment/stability_guard_fields.hpp"

#include <cmath>
#include <stdexcept>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {

void validate_stability_guard(StabilityGuardSettings& guard, double step) {
  auto& g = guard.config;
  g.step = step;
  require(g.window > 0.0, "guard.window_s", g.window, "must be > 0 s");
  // The block's own bound, named as the scenario spells the field: 8 to 1e6 steps.
  require(g.window / step >= 8.0 && g.window / step <= 1e6, "guard.window_s", g.window,
          "must hold 8 to 1e6 steps of timing.step_s: [" + format_value(8.0 * step) + ", " +
              format_value(1e6 * step) + "] s");
  require(g.max_tracking_ratio > 0.0, "guard.max_tracking_ratio", g.max_tracking_ratio,
          "must be > 0");
  require(g.amplitude_floor >= 0.0, "guard.amplitude_floor_m", g.amplitude_floor, "must be >= 0 m");
  require(g.hold >= 1, "guard.hold", g.hold, "must be >= 1");
  try {
    (void)core::StabilityGuard(g);  // the window against the step
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(std::string("guard.") + e.what());
  }
}

void validate_energy_guard(const core::EnergyGuardConfig& g) {
  require(std::isfinite(g.max_energy_ratio) && g.max_energy_ratio > 1.0, "guard.max_energy_ratio",
          g.max_energy_ratio, "must be finite and > 1");
  require(std::isfinite(g.energy_floor) && g.energy_floor > 0.0, "guard.energy_floor_j",
          g.energy_floor, "must be finite and > 0 J");
  require(g.hold >= 1, "guard.hold", g.hold, "must be >= 1");
}

}  // namespace hyloop::experiment
