#pragma once
// The non-loop jobs of the hyloop tool on a SITS scenario (the SITS kind's capabilities):
//   identify  the sine sweep of Eq. 23 (or a chirp) through the emulated robot, an ARX (Eq.
//             27–30), instrumental-variable or output-error fit (identification.method), the
//             continuous zeros/poles/gain (Eq. 32) and the frequency response
//   analyze   the characteristic polynomial of the linearised loop (Eq. 34, errata of DESIGN §8),
//             its Routh array, the roots, and the stable K_h interval; beside it the exact
//             sampled loop's Floquet multipliers and stable K_h interval (the prediction of
//             what a run does), optionally checked by bisection on runs
//   tune      a search of K_ε0, K_ε1, K_ε2 and t_ε on repeated runs in parallel, keeping only
//             gains whose whole K_h range the Routh analysis calls stable
// Each returns a JSON document (the tool prints it).

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/core/sampled_loop_stability.hpp"
#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {

/// The SITS kind's Identification and Analysis (sits_capabilities.cpp; Kind::identification(),
/// Kind::analysis()).
const Identification& sits_identification();
const Analysis& sits_analysis();

/// The identification input of cycle k at t = k·T (SweepCommand: capabilities.hpp): the
/// position u[k] (m) and its time derivative (m/s), for identification.signal
///   sine   u = A·sin(ω·t)                                       (Eq. 23)
///   chirp  u = A·sin(2π(f0·t + (f1 − f0)·t²/(2·t_N))),  t_N = (N − 1)·T
/// The one definition of the sweep: run_sweep and the identification service both call it.
/// RT-safe (no allocation, no exception).
SweepCommand sweep_command(const SitsScenario& scenario, std::uint64_t k) noexcept;

/// The scenario of a sweep as the services run it (RunIdentification): `yaml` with `overrides`,
/// then delays.control_cycle = false (the actuator latches every step) and timing.duration_s =
/// metrics.window_s = N·T, N = identification.samples.
/// @throws ScenarioError naming the field, as parse_scenario.
SitsScenario identification_run_scenario(const std::string& yaml, const std::string& origin,
                                         std::vector<std::string> overrides = {});

/// Drives the rig emulator's robot (with its position noise) with u[k] of sweep_command.
SweepData run_sweep(const SitsScenario& scenario);

/// Sweep, fit and report. The report's "robot_model" holds the identified continuous model.
nlohmann::json identify_robot(const SitsScenario& scenario);
/// The fit and report of identify_robot on a sweep already taken (by run_sweep, or the same
/// sweep played through the distributed loop by the identification service):
/// identify_robot(s) is identify_from_sweep(s, run_sweep(s)).
nlohmann::json identify_from_sweep(const SitsScenario& scenario, const SweepData& data);
/// Fits x_cmd → x_robot recorded in a run directory's samples.csv instead of a new sweep.
nlohmann::json identify_from_run(const SitsScenario& scenario,
                                 const std::filesystem::path& run_dir);

/// The identified continuous G_R of the scenario's rig (sweep + identification.method's fit +
/// inverse ZOH).
core::ZeroPoleGain identified_robot(const SitsScenario& scenario);

/// @param identified use the identified G_R (else the configured one). K_x: the scenario's.
nlohmann::json analyze_loop(const SitsScenario& scenario, double k_h, bool identified);

struct AnalyzeOptions {
  std::optional<double> k_h;  ///< N·s/m; empty: the scenario's compensator gain at t = 0
  std::optional<double> k_x;  ///< N/m; empty: the scenario's (analysis_k_x; 0 without correction)
  bool identified = true;     ///< the identified G_R (else the configured one)
  bool simulate = false;      ///< also find the boundary on runs (simulated_stability_boundary)
};

/// Routh test of Eq. 34 (rational part) and the exact sampled loop (sampled_loop_stability.hpp)
/// at K_h and K_x, each with its stable K_h intervals; says where K_h and K_x came from.
nlohmann::json analyze_loop(const SitsScenario& scenario, const AnalyzeOptions& options);

/// The exact sampled loop of a scenario (core::SampledSitsLoop) with this G_R, K_h and K_x.
core::SampledSitsLoop sampled_loop(const SitsScenario& scenario, const core::ZeroPoleGain& robot,
                                   double k_h, double k_x);

/// What a run at a fixed K_h (and K_x) does: "stops growing" is defined on this number.
/// σ (1/s) is the least-squares slope of ln(per-cycle peak |v|) against the cycle's end time
/// (core::CycleMetrics::amplitude_growth_rate) over the cycles from the 3rd on (the first two
/// hold the start-up transient of the fast modes). The run is the scenario with the compensator
/// set to FGC K_ε0 = K_h, the phase correction held at K_x (no adaptation), no samples written.
struct GrowthMeasurement {
  double k_h = 0.0;
  double growth_rate = 0.0;  ///< σ, 1/s (NaN: fewer than 2 cycles)
  bool stopped = false;      ///< the run stopped early (limits, not finite): growing
  std::size_t cycles = 0;
};
GrowthMeasurement simulated_growth_rate(const SitsScenario& scenario, double k_h, double k_x,
                                        double duration_s);

/// The K_h where the simulated loop stops growing (σ = 0), by bisection between k_a and k_b
/// (σ must change sign between them) to |Δ| ≤ tolerance; each probe is one run of duration_s.
struct SimulatedBoundary {
  double k_h = 0.0;       ///< midpoint of the final bracket, N·s/m
  double growing = 0.0;   ///< end of the bracket with σ > 0
  double decaying = 0.0;  ///< end of the bracket with σ ≤ 0
  int runs = 0;
};
/// @throws std::invalid_argument if σ has the same sign at k_a and k_b.
SimulatedBoundary simulated_stability_boundary(const SitsScenario& scenario, double k_a, double k_b,
                                               double k_x, double duration_s,
                                               double tolerance = 0.01);

struct TuneOptions {
  int jobs = 0;  ///< 0: the machine's cores
  /// t_ε candidates (SCVG), s, each in (0, duration); empty: 26/60, 36/60 and 46/60 of the run.
  std::vector<double> switch_times;
  /// A 5×5(×7) grid around the best fixed gain and one (the middle) t_ε instead of the full
  /// 11×13(×17)×3 grid: about 20× fewer runs.
  bool coarse = false;
  int top = 10;
};

/// Tunes the scenario's compensator.type: fgc the fixed gain; lgc also K_ε1; scvg also K_ε2
/// and t_ε (none is refused). Runs keep the scenario's phase correction when it is on.
nlohmann::json tune_compensator(const SitsScenario& scenario, const TuneOptions& options,
                                std::ostream& log);

}  // namespace hyloop::experiment
