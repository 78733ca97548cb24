#include "validate.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/experiment.hpp"
#include "run_output.hpp"

namespace hyloop::app {

CLI::App* add_validate_subcommand(CLI::App& app, ValidateOptions& options) {
  auto* cmd = app.add_subcommand("validate", "check a scenario without running it");
  cmd->add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  cmd->add_flag("--print", options.print, "print the resolved scenario");
  return cmd;
}

int run_validate(const ValidateOptions& options) {
  const auto experiment = hyloop::experiment::make_experiment(options.scenario, options.overrides);
  print_scenario_notices(options.scenario, options.overrides, std::cerr);
  if (options.print) {
    std::cout << experiment->resolved_yaml();
  } else {
    std::cout << options.scenario << ": valid " << experiment->kind() << " scenario ("
              << experiment->total_steps() << " steps of " << experiment->step_size() << " s)\n";
  }
  return 0;
}

}  // namespace hyloop::app
