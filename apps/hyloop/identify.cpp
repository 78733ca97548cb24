#include "identify.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "run_output.hpp"

namespace hyloop::app {
namespace {
namespace ex = hyloop::experiment;
}  // namespace

CLI::App* add_identify_subcommand(CLI::App& app, IdentifyOptions& options) {
  auto* cmd = app.add_subcommand("identify", "identify the robot's G_R by ARX from a sine sweep");
  cmd->add_option("scenario", options.scenario, "scenario YAML file (rig and identification)")
      ->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  cmd->add_option("--from", options.from_run, "fit recorded data of a run directory instead");
  cmd->add_option("--out", options.out, "also write the JSON report to this file");
  return cmd;
}

int run_identify(const IdentifyOptions& options) {
  const std::string text = ex::read_scenario_text(options.scenario);
  const auto result = ex::kind_identification(text, options.scenario)
                          .identify(text, options.scenario, options.overrides, options.from_run);
  const std::string report = result.dump(2);
  std::cout << report << "\n";
  if (!options.out.empty()) write_text_file(options.out, report + "\n");
  return 0;
}

}  // namespace hyloop::app
