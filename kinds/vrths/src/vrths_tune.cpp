// `hyloop tune` of a vrths scenario (Kind::tune; issue 13 §2): the grid tuner (grid_tune.hpp) on
// the adaptive compensator's parameters, each candidate run on N perturbed plants (the kind's
// Monte Carlo overrides 1..N) and scored by its mean J2; a candidate with a run that stops
// (stability guard, stroke, not finite) is disqualified. The scenario's own values are always a
// candidate, so the best is never worse than the default on the same plants.
//   amb  a scale s on controller.amb.gain_per_s (the whole vector) ×
//        controller.amb.filter_cutoff_hz {0.5, 1, 2, 4}× its own
//   ats  controller.ats.filter_time_constant_s × controller.ats.window_s
#include <ostream>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/jobs/grid_tune.hpp"
#include "hyloop/kinds/vrths/vrths_experiment.hpp"

namespace hyloop::experiment {

std::string vrths_tuning() {
  return jobs::adaptive_tuning("controller", "the mean J2 over --runs perturbed plants");
}

TuneResult tune_vrths(const Kind& kind, const TuneRequest& request, std::ostream& log) {
  const VrthsScenario s =
      parse_vrths_scenario(request.text, request.origin, request.overrides, request.data);
  const auto& c = s.controller;
  const double duration =
      c.type == "ats" ? s.timing.step * static_cast<double>(s.steps(load_vrths_ground_motion(s)))
                      : 0.0;
  jobs::GridTune tune = jobs::adaptive_grid_tune({.prefix = "controller",
                                                  .type = c.type,
                                                  .origin = s.origin,
                                                  .step = s.timing.step,
                                                  .duration = duration,
                                                  .amb = c.amb,
                                                  .amb_gain = s.amb_gain,
                                                  .cutoff_factors = {0.5, 2.0, 4.0},
                                                  .ats = c.ats});
  tune.plants_noun = "perturbed plants";
  tune.plants_detail = "Monte Carlo runs 1.." + std::to_string(request.runs);
  tune.primary = {"J2_percent", "/J2_percent", "J2", "%"};
  tune.secondary = {"J1_ms", "/J1_ms", "J1", "ms"};
  tune.plants =
      jobs::tune_plants(request, [&](int run) { return kind.monte_carlo_overrides(run); });
  return jobs::run_grid_tune(kind, request, tune, log);
}

}  // namespace hyloop::experiment
