// `hyloop identify SCENARIO [--set ...] [--from RUN] [--out FILE]`: identifies the robot's G_R by
// ARX least squares from a sine sweep (jobs.hpp), or from the recorded data of a run directory;
// prints the JSON report.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct IdentifyOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string from_run;  ///< a run directory whose recorded data is fitted ("" : run the sweep)
  std::string out;       ///< also write the report here ("" : stdout only)
};

// Declares the "identify" subcommand of `app`, writing into `options`.
CLI::App* add_identify_subcommand(CLI::App& app, IdentifyOptions& options);

// 0 done. @throws experiment::ScenarioError for a bad scenario, std::exception otherwise.
int run_identify(const IdentifyOptions& options);

}  // namespace hyloop::app
