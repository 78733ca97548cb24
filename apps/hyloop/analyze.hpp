// `hyloop analyze SCENARIO [--set ...] [--k-h K] [--k-x K] [--true-robot] [--simulate]
// [--out FILE]`: stability of the loop (jobs.hpp analyze_loop): the Routh test of Eq. 34 and the
// exact sampled loop; prints the JSON report.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hyloop::app {

struct AnalyzeCliOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  double k_h = 0.0;  ///< N*s/m; used only when --k-h was given
  double k_x = 0.0;  ///< N/m; used only when --k-x was given
  bool true_robot = false;
  bool simulate = false;
  std::string out;                          ///< also write the report here ("" : stdout only)
  const CLI::Option* k_h_option = nullptr;  ///< set by add_analyze_subcommand: was --k-h given
  const CLI::Option* k_x_option = nullptr;  ///< ... and --k-x
};

// Declares the "analyze" subcommand of `app`, writing into `options`.
CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeCliOptions& options);

// 0 done. @throws experiment::ScenarioError for a bad scenario, std::exception otherwise.
int run_analyze(const AnalyzeCliOptions& options);

}  // namespace hyloop::app
