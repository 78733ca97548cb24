#include "tune.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::app {
namespace {

namespace ex = hyloop::experiment;

// The kind a scenario without `kind` is: the one the compensator tuner (jobs.hpp) reads.
const ex::Kind& default_kind() { return ex::find_scenario_kind("{}"); }

// The kinds with a tuner of their own and what each tunes (Kind::tuning).
std::string tunable_kinds() {
  std::string out;
  for (const ex::Kind* k : ex::kinds()) {
    if (k->tuning().empty()) continue;
    out += (out.empty() ? "" : "; ") + ("a " + k->name() + " scenario's " + k->tuning());
  }
  return out;
}

std::string tune_scenario_help() {
  std::string help = "scenario YAML file: tunes a " + default_kind().name() +
                     " scenario's compensator.type (fgc, lgc or scvg), with its phase correction "
                     "when compensator.phase_correction.enabled";
  const std::string own = tunable_kinds();
  return own.empty() ? help : help + "; " + own;
}

// A kind with no tuner of its own that is not the compensator tuner's: refused naming `kind`.
void refuse_untunable_kind(const ex::Kind& kind, const std::string& origin) {
  if (&kind == &default_kind()) return;
  std::string message = origin + ": kind = \"" + kind.name() + "\": hyloop tune tunes a " +
                        default_kind().name() + " scenario's compensator";
  const std::string own = tunable_kinds();
  throw ex::ScenarioError(message + (own.empty() ? "" : "; " + own));
}

// A kind's own tuner: the compensator tuner's options refused, --runs in [1, kMaxTuneRuns].
// 0 when the options fit, else 2 (the message on stderr).
int check_own_tuner_options(const ex::Kind& kind, const TuneCliOptions& o) {
  for (const CLI::Option* opt : {o.switch_times_option, o.coarse_option}) {
    if (opt->count() > 0) {
      std::cerr << "hyloop tune: " << opt->get_name() << ": the compensator tuner's option; a "
                << kind.name() << " scenario tunes " << kind.tuning() << "\n";
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
      "search compensator gains and the SCVG switch time, or a kind's own tunable parameters");
  cmd->add_option("scenario", options.scenario, tune_scenario_help())->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  cmd->add_option("--out", options.out, "write the candidate table (JSON) here");
  cmd->add_option("--jobs", options.tune.jobs, "parallel runs (default: the machine's cores)");
  options.runs_option = cmd->add_option(
      "--runs", options.runs,
      "a kind with its own tuner: perturbed plants each candidate runs on (Monte Carlo runs "
      "1..N; default 5)");
  options.switch_times_option =
      cmd->add_option("--switch-times", options.tune.switch_times,
                      "SCVG t_eps candidates in s, each < timing.duration_s (default 26/60, 36/60 "
                      "and 46/60 of the run)");
  cmd->add_option("--top", options.tune.top, "rows of the table to print");
  options.coarse_option =
      cmd->add_flag("--coarse", options.tune.coarse,
                    "a 5x5(x7) grid and the middle t_eps only: about 20x fewer runs");
  return cmd;
}

int run_tune(const TuneCliOptions& o) {
  // A kind with a tuner of its own (Kind::tune); else the compensator tuner (jobs.hpp).
  const std::string text = ex::read_scenario_text(o.scenario);
  const ex::Kind& kind = ex::find_scenario_kind(text, o.scenario);
  ex::TuneRequest request{.text = text,
                          .origin = o.scenario,
                          .overrides = o.overrides,
                          .data = ex::DataSource::local_file(o.scenario),
                          .runs = o.runs,
                          .jobs = o.tune.jobs,
                          .top = o.tune.top};
  if (!kind.tuning().empty()) {
    if (const int rc = check_own_tuner_options(kind, o); rc != 0) return rc;
  }
  if (const auto result = kind.tune(request, std::cerr)) {
    if (!o.out.empty()) ex::write_text_file(o.out, result->document.dump(2) + "\n");
    std::cout << result->text;
    return 0;
  }
  refuse_untunable_kind(kind, o.scenario);
  if (o.runs_option->count() > 0) {
    std::cerr << "hyloop tune: --runs: a " << kind.name()
              << " scenario is tuned on its own plant; --runs goes with " << tunable_kinds()
              << "\n";
    return 2;
  }
  const ex::SitsScenario s = ex::load_scenario(o.scenario, o.overrides);
  const auto result = ex::tune_compensator(s, o.tune, std::cerr);
  if (!o.out.empty()) ex::write_text_file(o.out, result.dump(2) + "\n");
  std::cout << result["best"].dump(2) << "\n";
  return 0;
}

}  // namespace hyloop::app
