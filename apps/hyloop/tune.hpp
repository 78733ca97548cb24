// `hyloop tune SCENARIO [--set ...] [--out FILE] [--jobs N] [--top N] ...`: a kind with a tuner
// of its own (Kind::tune: --runs perturbed plants per candidate) tunes its own parameters; else
// the compensator tuner (jobs.hpp tune_compensator) searches a SITS scenario's compensator gains
// and the SCVG switch time (--switch-times, --coarse). Prints the best candidate.
#pragma once

#include <string>
#include <vector>

#include "hyloop/experiment/jobs.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hyloop::app {

struct TuneCliOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out;               ///< write the candidate table (JSON) here ("" : not written)
  experiment::TuneOptions tune;  ///< --jobs, --switch-times, --top, --coarse
  int runs = 5;                  ///< a kind's own tuner: perturbed plants per candidate
  const CLI::Option* runs_option = nullptr;  ///< set by add_tune_subcommand: was --runs given
  const CLI::Option* switch_times_option = nullptr;  ///< ... --switch-times
  const CLI::Option* coarse_option = nullptr;        ///< ... --coarse
};

// Declares the "tune" subcommand of `app`, writing into `options`.
CLI::App* add_tune_subcommand(CLI::App& app, TuneCliOptions& options);

// 0 done; 2 for an option the scenario's tuner does not take or --runs out of
// [1, kMaxTuneRuns]. @throws experiment::ScenarioError for a bad scenario or a kind without a
// tuner (naming the kinds that have one).
int run_tune(const TuneCliOptions& options);

}  // namespace hyloop::app
