// `hyloop run SCENARIO --out DIR [--set dotted.path=value ...] [--force]`: runs a scenario in
// process and writes its run directory (run_directory.hpp): the directory is created first
// (INCOMPLETE and the journal), every row goes to the journal as it is recorded, and INCOMPLETE
// goes last. Prints the summary on stdout.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out;
  bool force = false;  ///< replace an existing run directory (run_output.hpp)
};

// Declares the "run" subcommand of `app`, writing into `options`.
CLI::App* add_run_subcommand(CLI::App& app, RunOptions& options);

// 0 done; 1 when writing the run directory failed (it is left INCOMPLETE, the message says how
// to recover it). @throws experiment::ScenarioError for a bad scenario, std::runtime_error for an
// --out that may not be written.
int run_in_process(const RunOptions& options);

}  // namespace hyloop::app
