// `hyloop tune SCENARIO [--set ...] [--out FILE] [--jobs N] [--top N] ...`: the scenario's kind
// tunes it (Kind::tune): SITS its compensator's gains and switch time (--switch-times,
// --coarse), RHT and vRTHS their own parameters over --runs perturbed plants. An option the
// kind's tuner does not take (Kind::tune_options) and a kind without a tuner are refused by
// name. Prints the best candidate.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hyloop::app {

struct TuneCliOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out;                   ///< write the candidate table (JSON) here ("" : not written)
  int jobs = 0;                      ///< parallel runs; 0: the machine's cores
  int top = 10;                      ///< rows of the table to print
  int runs = 5;                      ///< perturbed plants per candidate
  std::vector<double> switch_times;  ///< switch-time candidates, s
  bool coarse = false;               ///< a coarser grid
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
