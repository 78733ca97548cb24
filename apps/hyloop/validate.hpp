// `hyloop validate SCENARIO [--set ...] [--print]`: checks a scenario without running it; prints
// what it is (kind, steps, step size) or, with --print, the resolved scenario.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct ValidateOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  bool print = false;  ///< print the resolved scenario instead of the one-line verdict
};

// Declares the "validate" subcommand of `app`, writing into `options`.
CLI::App* add_validate_subcommand(CLI::App& app, ValidateOptions& options);

// 0 for a valid scenario. @throws experiment::ScenarioError naming what is wrong.
int run_validate(const ValidateOptions& options);

}  // namespace hyloop::app
