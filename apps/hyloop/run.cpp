#include "run.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "run_output.hpp"

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

bool show_progress(const std::string& mode) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return isatty(STDERR_FILENO) != 0;
}

}  // namespace

CLI::App* add_run_subcommand(CLI::App& app, RunOptions& options) {
  auto* cmd = app.add_subcommand("run", "run a scenario in process and write a run directory");
  cmd->add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd->add_option("--out", options.out, "run directory to write")->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value (YAML scalar)");
  cmd->add_flag("--force", options.force, "replace an existing run directory");
  return cmd;
}

int run_in_process(const RunOptions& options) {
  const std::string& scenario_path = options.scenario;
  const std::vector<std::string>& overrides = options.overrides;
  const fs::path out = options.out;
  const bool force = options.force;
  // One parse: the runner and the notices from one loaded scenario.
  const auto loaded = ex::load_scenario_text(ex::read_scenario_text(scenario_path), scenario_path,
                                             overrides, ex::DataSource::local_file(scenario_path));
  if (const std::string d = ex::rig_driver_type(*loaded); ex::is_wire_driver(d)) {
    throw ex::ScenarioError(scenario_path + ": " + ex::wire_refusal(d, "in_process"));
  }
  const auto experiment = loaded->experiment();
  check_out_directory(out, force);
  print_notices(loaded->notices(), std::cerr);
  if (force) replace_out_directory(out);
  const std::string name = experiment->name();
  auto recording = std::make_unique<rec::RunRecording>(
      out, rec::journal_header(*experiment, rec::make_run_id(name), "hyloop run", "in_process"),
      true);
  nlohmann::json summary;
  try {
    experiment->set_row_observer(&recording->observer());
    const bool progress = show_progress(experiment->progress_mode());
    experiment->run([&](double t, double duration) {
      if (progress) {
        std::fprintf(stderr, "\r%s: %.1f / %.1f s (%.0f%%)", name.c_str(), t, duration,
                     100.0 * t / duration);
        std::fflush(stderr);
      }
    });
    if (progress) std::fprintf(stderr, "\n");
    experiment->set_row_observer(nullptr);
    recording->journal().event("end",
                               "finished: " + std::to_string(experiment->cycle()) + " cycles");
    summary = recording->complete(*experiment);
  } catch (const std::exception& e) {
    experiment->set_row_observer(nullptr);
    recording.reset();
    std::cerr << "hyloop: writing the run directory " << out.string() << " failed: " << e.what()
              << "\nhyloop: " << out.string()
              << " is marked INCOMPLETE: recover what was recorded with `hyloop summary "
                 "--recover "
              << out.string() << "`, or replace it with --force\n";
    return 1;
  }
  std::cout << summary.dump(2) << "\n";
  warn_about_outcome(summary, std::cerr);
  std::cerr << "run directory: " << out.string() << "\n";
  report_yaml_parses(std::cerr);
  return 0;
}

}  // namespace hyloop::app
