#include "tune.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <utility>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "run_output.hpp"

namespace hyloop::app {
namespace {

namespace ex = hyloop::experiment;

// The kinds with a tuner and what each tunes (Kind::tuning).
std::string tunable_kinds() {
  std::string out;
  for (const ex::Kind* k : ex::kinds()) {
    if (k->tuning().empty()) continue;
    out += (out.empty() ? "" : "; ") + ("a " + k->name() + " scenario's " + k->tuning());
  }
  return out;
}

std::string tune_scenario_help() { return "scenario YAML file: tunes " + tunable_kinds(); }

// A kind without a tuner: refused naming `kind` and the kinds that have one.
void refuse_untunable_kind(const ex::Kind& kind, const std::string& origin) {
  throw ex::ScenarioError(origin + ": kind = \"" + kind.name() +
                          "\": this kind has no tuner; hyloop tune tunes " + tunable_kinds());
}

// The options the kind's tuner does not take are refused, --runs in [1, kMaxTuneRuns]. 0 when
// the options fit, else 2 (the message on stderr).
int check_tuner_options(const ex::Kind& kind, const TuneCliOptions& o) {
  const std::vector<ex::TuneOption> takes = kind.tune_options();
  const std::pair<ex::TuneOption, const CLI::Option*> given[] = {
      {ex::TuneOption::kRuns, o.runs_option},
      {ex::TuneOption::kSwitchTimes, o.switch_times_option},
      {ex::TuneOption::kCoarse, o.coarse_option}};
  for (const auto& [option, cli] : given) {
    if (cli->count() > 0 && std::find(takes.begin(), takes.end(), option) == takes.end()) {
      std::cerr << "hyloop tune: " << cli->get_name() << ": a " << kind.name()
                << " scenario's tuner does not take it (it tunes " << kind.tuning() << ")\n";
      return 2;
    }
  }
  if (o.runs < 1 || o.runs > ex::kMaxTuneRuns) {
    std::cerr << "hyloop tune: --runs = " << o.runs << ": must be in [1, " << ex::kMaxTuneRuns
              << "]\n";
    return 2;
  }
  return 0;
}

}  // namespace

CLI::App* add_tune_subcommand(CLI::App& app, TuneCliOptions& options) {
  auto* cmd = app.add_subcommand(
      "tune",
      "search a scenario's tunable parameters (its kind's tuner): compensator gains and "
      "the SCVG switch time, or a kind's own parameters");
  cmd->add_option("scenario", options.scenario, tune_scenario_help())->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  cmd->add_option("--out", options.out, "write the candidate table (JSON) here");
  cmd->add_option("--jobs", options.jobs, "parallel runs (default: the machine's cores)");
  options.runs_option = cmd->add_option(
      "--runs", options.runs,
      "a tuner over perturbed plants: plants each candidate runs on (Monte Carlo runs 1..N; "
      "default 5)");
  options.switch_times_option =
      cmd->add_option("--switch-times", options.switch_times,
                      "SCVG t_eps candidates in s, each < timing.duration_s (default 26/60, 36/60 "
                      "and 46/60 of the run)");
  cmd->add_option("--top", options.top, "rows of the table to print");
  options.coarse_option = cmd->add_flag(
      "--coarse", options.coarse, "a 5x5(x7) grid and the middle t_eps only: about 20x fewer runs");
  return cmd;
}

int run_tune(const TuneCliOptions& o) {
  const std::string text = ex::read_scenario_text(o.scenario);
  const ex::Kind& kind = ex::find_scenario_kind(text, o.scenario);
  if (kind.tuning().empty()) refuse_untunable_kind(kind, o.scenario);
  if (const int rc = check_tuner_options(kind, o); rc != 0) return rc;
  const ex::TuneRequest request{.text = text,
                                .origin = o.scenario,
                                .overrides = o.overrides,
                                .data = ex::DataSource::local_file(o.scenario),
                                .runs = o.runs,
                                .jobs = o.jobs,
                                .top = o.top,
                                .switch_times = o.switch_times,
                                .coarse = o.coarse};
  const auto result = kind.tune(request, std::cerr);
  if (!result) refuse_untunable_kind(kind, o.scenario);
  if (!o.out.empty()) write_text_file(o.out, result->document.dump(2) + "\n");
  std::cout << result->text;
  return 0;
}

}  // namespace hyloop::app
