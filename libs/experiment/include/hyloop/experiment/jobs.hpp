#pragma once
// The non-loop jobs of the hyloop tool, on a SITS scenario:
//   identify  the sine sweep of Eq. 23 through the emulated robot, ARX fit (Eq. 27–30), the
//             continuous zeros/poles/gain (Eq. 32) and the frequency response
//   analyze   the characteristic polynomial of the linearised loop (Eq. 34, errata of DESIGN §8),
//             its Routh array, the roots, and the stable K_h interval
//   tune      a search of K_ε0, K_ε1, K_ε2 and t_ε on repeated runs in parallel, keeping only
//             gains whose whole K_h range the Routh analysis calls stable
// Each returns a JSON document (the tool prints it).

#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/experiment/scenario.hpp"

namespace hyloop::experiment {

/// Samples of an identification experiment: the command u[k] and the measured position y[k].
struct SweepData {
  std::vector<double> command;
  std::vector<double> position;
};

/// Drives the rig emulator's robot (with its position noise) with u[k] = A·sin(ω·k·T).
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

/// The identified continuous G_R of the scenario's rig (sweep + ARX + inverse ZOH).
core::ZeroPoleGain identified_robot(const SitsScenario& scenario);

/// @param identified use the identified G_R (else the configured one).
nlohmann::json analyze_loop(const SitsScenario& scenario, double k_h, bool identified);

struct TuneOptions {
  int jobs = 0;  ///< 0: the machine's cores
  /// t_ε candidates (SCVG), s, each in (0, duration); empty: 26/60, 36/60 and 46/60 of the run.
  std::vector<double> switch_times;
  /// A 5×5(×7) grid around the best fixed gain and one (the middle) t_ε instead of the full
  /// 11×13(×17)×3 grid: about 20× fewer runs.
  bool coarse = false;
  int top = 10;
};

nlohmann::json tune_compensator(const SitsScenario& scenario, const TuneOptions& options,
                                std::ostream& log);

void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace hyloop::experiment
/// Tunes the scenario's compensator.type: fgc the fixed gain; lgc also K_ε1; scvg also K_ε2
/// and t_ε (none is refused). Runs keep the scenario's phase correction when it is on.
