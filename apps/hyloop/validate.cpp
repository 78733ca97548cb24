#include "validate.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
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
  namespace ex = hyloop::experiment;
  // One parse, and the scenario described without building its runner (whose recorder would
  // reserve memory for every step of the run).
  const auto loaded =
      ex::load_scenario_text(ex::read_scenario_text(options.scenario), options.scenario,
                             options.overrides, ex::DataSource::local_file(options.scenario));
  print_notices(loaded->notices(), std::cerr);
  const ex::LoadedScenario::Description d = loaded->describe();
  if (options.print) {
    std::cout << d.resolved_yaml;
  } else {
    std::cout << options.scenario << ": valid " << loaded->kind().name() << " scenario ("
              << d.total_steps << " steps of " << d.step << " s)\n";
  }
  report_yaml_parses(std::cerr);
  return 0;
}

}  // namespace hyloop::app
