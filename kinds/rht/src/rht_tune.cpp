// `hyloop tune` of an RHT scenario (Kind::tune): the grid tuner (grid_tune.hpp) on ATS's or
// AMB's parameters, each candidate run on the noise seeds servo.seed 1..N (--runs) and scored by
// its mean RMS tracking error (the summary's metrics.rms_error_m, d_m − d; peak_error_m beside
// it); a candidate with a run that stops (stability guard, stroke) is disqualified. The seed
// draws only the measurement noise: a scenario without noise (servo.noise_std_m = 0) is one plant
// whatever the seed, so it runs once, as it is.
//   amb  a scale {0.25, 0.5, 1, 2, 4} on compensator.amb.gain_per_s (Γ_i·Δt ≤ 0.1: at the RHT's
//        Δt = 0.01 s and the default 2/s, all five) × compensator.amb.filter_cutoff_hz
//        {0.25, 0.5, 0.75, 1, 1.2}× its own (below 0.25/Δt = 25 Hz)
//   ats  compensator.ats.filter_time_constant_s {0.5, 1, 2, 4, 8}× × compensator.ats.window_s
//        {0.5, 1, 2}× (at least 8 steps, at most a third of the run)
#include <ostream>

#include "hyloop/jobs/grid_tune.hpp"
#include "hyloop/kinds/rht/rht_dynamics.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"

namespace hyloop::experiment {

TuneResult tune_rht(const Kind& kind, const TuneRequest& request, std::ostream& log) {
  const RhtScenario s =
      parse_rht_scenario(request.text, request.origin, request.overrides, request.data);
  const RhtScenario::Compensator& c = s.compensator;
  const auto steps = rht_total_steps(s, load_rht_ground_motion(s));
  jobs::GridTune tune =
      jobs::adaptive_grid_tune({.prefix = "compensator",
                                .type = c.type,
                                .origin = s.origin,
                                .step = s.timing.step,
                                .duration = s.timing.step * static_cast<double>(steps),
                                .amb = c.amb,
                                .amb_gain = c.amb_gain,
                                .cutoff_factors = {0.25, 0.5, 0.75, 1.2},
                                .ats = c.ats});
  tune.primary = {"rms_error_m", "/metrics/rms_error_m", "RMS", "mm", 1e3};
  tune.secondary = {"peak_error_m", "/metrics/peak_error_m", "peak", "mm", 1e3};
  tune.plants = jobs::tune_plants(request, [](int seed) -> std::vector<std::string> {
    return {"servo.seed=" + std::to_string(seed)};
  });
  tune.plants_noun = "noise seeds";
  tune.plants_detail = "servo.seed 1.." + std::to_string(request.runs);
  if (s.servo.noise_std == 0.0) {
    tune.plants = {{}};
    tune.plants_noun = "noise-free plant";
    tune.plants_detail = "the scenario's own";
    tune.note =
        "servo.noise_std_m = 0: every servo.seed is the same plant; one run per "
        "candidate (--runs " +
        std::to_string(request.runs) + " not used)";
  }
  return jobs::run_grid_tune(kind, request, tune, log);
}

std::string rht_tuning() {
  return jobs::adaptive_tuning(
      "compensator",
      "the mean RMS tracking error over --runs noise seeds (servo.seed 1..N; "
      "one run without noise)");
}

}  // namespace hyloop::experiment
