#include "analyze.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "run_output.hpp"

namespace hyloop::app {
namespace {
namespace ex = hyloop::experiment;
}  // namespace

CLI::App* add_analyze_subcommand(CLI::App& app, AnalyzeCliOptions& options) {
  auto* cmd = app.add_subcommand(
      "analyze", "stability of the loop: Routh test of Eq. 34 and the exact sampled loop");
  cmd->add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  options.k_h_option = cmd->add_option(
      "--k-h", options.k_h,
      "compensation gain K_h in N*s/m (default: the scenario compensator's at t = 0)");
  options.k_x_option = cmd->add_option(
      "--k-x", options.k_x,
      "phase correction K_x in N/m (default: the scenario's, 0 without correction)");
  cmd->add_flag("--true-robot", options.true_robot,
                "use the configured G_R instead of the one identified from the sweep");
  cmd->add_flag("--simulate", options.simulate,
                "also find each predicted boundary on runs (bisection on the growth rate)");
  cmd->add_option("--out", options.out, "also write the JSON report to this file");
  return cmd;
}

int run_analyze(const AnalyzeCliOptions& options) {
  const std::string scenario = ex::read_scenario_text(options.scenario);
  ex::AnalyzeRequest analyze;
  if (options.k_h_option->count() > 0) analyze.k_h = options.k_h;
  if (options.k_x_option->count() > 0) analyze.k_x = options.k_x;
  analyze.identified = !options.true_robot;
  analyze.simulate = options.simulate;
  const auto result = ex::kind_analysis(scenario, options.scenario)
                          .analyze(scenario, options.scenario, options.overrides, analyze);
  const std::string text = result.dump(2);
  std::cout << text << "\n";
  if (!options.out.empty()) write_text_file(options.out, text + "\n");
  return 0;
}

}  // namespace hyloop::app
