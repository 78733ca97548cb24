// hyloop: run, validate, identify, analyse, tune and report hybrid-simulation experiments.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "certs.hpp"
#include "ctl.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/jobs.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/experiment/run_directory.hpp"
#include "hyloop/experiment/run_export.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/experiment/sits_runner.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "montecarlo.hpp"
#include "run_output.hpp"
#include "schema.hpp"
#include "up.hpp"

namespace fs = std::filesystem;
using namespace hyloop::experiment;

namespace {

constexpr int kMaxCompared = 16;  // runs `hyloop compare` overlays

// The kind a scenario without `kind` is: the one the compensator tuner (jobs.hpp) reads.
const Kind& default_kind() { return find_scenario_kind("{}"); }

// The kinds with a tuner of their own and what each tunes (Kind::tuning).
std::string tunable_kinds() {
  std::string out;
  for (const Kind* k : kinds()) {
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
void refuse_untunable_kind(const Kind& kind, const std::string& origin) {
  if (&kind == &default_kind()) return;
  std::string message = origin + ": kind = \"" + kind.name() + "\": hyloop tune tunes a " +
                        default_kind().name() + " scenario's compensator";
  const std::string own = tunable_kinds();
  throw ScenarioError(message + (own.empty() ? "" : "; " + own));
}

fs::path share_dir(const char* argv0) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) exe = fs::absolute(argv0);
  const fs::path installed = exe.parent_path().parent_path() / "share" / "hyloop";
  if (fs::exists(installed / "report.py")) return installed;
  return fs::path(HYLOOP_SOURCE_DIR) / "tools";
}

int run_python(const fs::path& script, const std::vector<std::string>& args) {
  std::string cmd = "/usr/bin/python3 '" + script.string() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  const int rc = std::system(cmd.c_str());
  return rc == 0 ? 0 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 1);
}

bool show_progress(const std::string& mode) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return isatty(STDERR_FILENO) != 0;
}

// `hyloop run`: the run directory is created first (INCOMPLETE and the journal), every row goes
// to the journal as it is recorded, and INCOMPLETE goes last (run_directory.hpp).
int run_in_process(const std::string& scenario_path, const std::vector<std::string>& overrides,
                   const fs::path& out, bool force) {
  const auto experiment = make_experiment(scenario_path, overrides);
  hyloop::app::check_out_directory(out, force);
  hyloop::app::print_scenario_notices(scenario_path, overrides, std::cerr);
  if (force) hyloop::app::replace_out_directory(out);
  const std::string name = experiment->name();
  auto recording = std::make_unique<RunRecording>(
      out, journal_header(*experiment, make_run_id(name), "hyloop run", "in_process"), true);
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
  hyloop::app::warn_about_outcome(summary, std::cerr);
  std::cerr << "run directory: " << out.string() << "\n";
  return 0;
}

// `hyloop summary DIR [--recover]`.
int summary(const fs::path& dir, bool recover) {
  if (recover) {
    const RecoveryResult r = recover_run_directory(dir);
    std::cout << r.summary.dump(2) << "\n";
    std::cerr << "hyloop summary: recovered " << r.cycles << " cycles (" << r.reason
              << ")\nrun directory: " << dir.string() << "\n";
    return 0;
  }
  if (is_incomplete(dir)) {
    std::cerr << "hyloop summary: " << dir.string()
              << " is incomplete (INCOMPLETE): its recorder is running or ended before "
                 "completing it; `hyloop summary --recover "
              << dir.string() << "` rebuilds it from its journal\n";
    return 1;
  }
  std::ifstream f(dir / "summary.json");
  if (!f) {
    std::cerr << "hyloop summary: " << (dir / "summary.json").string() << ": cannot be read\n";
    return 1;
  }
  std::cout << f.rdbuf();
  return 0;
}

// `hyloop report` of an incomplete directory: says so and recovers it first (a directory whose
// recorder is still alive is refused); of a recovered one: says what is missing.
bool prepare_report(const fs::path& dir) {
  if (is_incomplete(dir)) {
    std::cerr << "hyloop report: " << dir.string()
              << " is incomplete (INCOMPLETE): recovering it from its journal first\n";
    const RecoveryResult r = recover_run_directory(dir);
    std::cerr << "hyloop report: recovered " << r.cycles << " cycles (" << r.reason << ")\n";
    return true;
  }
  std::ifstream f(dir / "summary.json");
  if (f) {
    try {
      const nlohmann::json s = nlohmann::json::parse(f);
      if (s.value("incomplete", false)) {
        std::cerr << "hyloop report: " << dir.string() << " holds an incomplete run ("
                  << s.value("incomplete_reason", std::string("no reason recorded"))
                  << "): " << s.value("cycles_recovered", 0) << " cycles recovered\n";
      }
    } catch (const nlohmann::json::exception&) {
      // report.py says what is wrong with summary.json.
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Before the options: the kinds' help texts come from the loaded kinds.
  if (!take_kind_options_or_report(argc, argv, "hyloop")) return 2;
  CLI::App app{"hyloop: real-time hybrid simulation and hardware-in-the-loop testing"};
  app.add_option("--kinds",
                 "directory of kind plug-ins (repeatable; searched after "
                 "<prefix>/lib/hyloop/kinds and HYLOOP_KIND_PATH; docs/kinds.md)");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("hyloop ") + hyloop::kHyloopVersion);

  std::string scenario_path;
  std::vector<std::string> overrides;
  std::string out;
  bool force = false;

  auto* run = app.add_subcommand("run", "run a scenario in process and write a run directory");
  run->add_option("scenario", scenario_path, "scenario YAML file")->required();
  run->add_option("--out", out, "run directory to write")->required();
  run->add_option("--set", overrides, "override a field: dotted.path=value (YAML scalar)");
  run->add_flag("--force", force, "replace an existing run directory");

  hyloop::app::CtlOptions ctl_options;
  CLI::App* ctl = hyloop::app::add_ctl_subcommand(app, ctl_options);

  hyloop::app::CertsCliOptions certs_options;
  CLI::App* certs = hyloop::app::add_certs_subcommand(app, certs_options);

  hyloop::app::SchemaOptions schema_options;
  CLI::App* schema = hyloop::app::add_schema_subcommand(app, schema_options);

  hyloop::app::MonteCarloOptions montecarlo_options;
  CLI::App* montecarlo = hyloop::app::add_montecarlo_subcommand(app, montecarlo_options);

  hyloop::app::UpOptions up_options;
  auto* up = app.add_subcommand(
      "up",
      "run a scenario through the services (separate processes, or --inproc) and write "
      "the same run directory as run");
  up->add_option("scenario", up_options.scenario, "scenario YAML file");
  up->add_option("--out", up_options.out, "run directory to write");
  up->add_option("--set", up_options.overrides, "override a field: dotted.path=value");
  hyloop::app::add_mode_option(*up, up_options.mode);
  up->add_flag("--force", up_options.force,
               "replace an existing run directory (only a run directory: never any other)");
  up->add_flag("--inproc", up_options.inproc,
               "the services as components in this process (inproc:// endpoints)");
  up->add_flag("--serve", up_options.serve,
               "start the stack, print the coordinator's address, serve until Ctrl-C");
  up->add_option("--runs-dir", up_options.runs_dir,
                 "--serve: the coordinator's runs directory (Start.out_dir names a directory in "
                 "it; default: the working directory)");
  up->add_option("--address", up_options.coordinator_address,
                 "--serve: the coordinator's gRPC address (default 127.0.0.1:0, any free port)");

  auto* validate_cmd = app.add_subcommand("validate", "check a scenario without running it");
  bool print_resolved = false;
  validate_cmd->add_option("scenario", scenario_path, "scenario YAML file")->required();
  validate_cmd->add_option("--set", overrides, "override a field: dotted.path=value");
  validate_cmd->add_flag("--print", print_resolved, "print the resolved scenario");

  auto* identify =
      app.add_subcommand("identify", "identify the robot's G_R by ARX from a sine sweep");
  std::string from_run;
  identify->add_option("scenario", scenario_path, "scenario YAML file (rig and identification)")
      ->required();
  identify->add_option("--set", overrides, "override a field: dotted.path=value");
  identify->add_option("--from", from_run, "fit recorded data of a run directory instead");
  identify->add_option("--out", out, "also write the JSON report to this file");

  auto* analyze = app.add_subcommand(
      "analyze", "stability of the loop: Routh test of Eq. 34 and the exact sampled loop");
  double k_h = 0.0;
  double k_x = 0.0;
  bool use_true_robot = false;
  bool analyze_simulate = false;
  analyze->add_option("scenario", scenario_path, "scenario YAML file")->required();
  analyze->add_option("--set", overrides, "override a field: dotted.path=value");
  auto* k_h_option = analyze->add_option(
      "--k-h", k_h,
      "compensation gain K_h in N*s/m (default: the scenario compensator's at t = 0)");
  auto* k_x_option = analyze->add_option(
      "--k-x", k_x, "phase correction K_x in N/m (default: the scenario's, 0 without correction)");
  analyze->add_flag("--true-robot", use_true_robot,
                    "use the configured G_R instead of the one identified from the sweep");
  analyze->add_flag("--simulate", analyze_simulate,
                    "also find each predicted boundary on runs (bisection on the growth rate)");
  analyze->add_option("--out", out, "also write the JSON report to this file");

  auto* tune = app.add_subcommand(
      "tune",
      "search compensator gains and the SCVG switch time, or a kind's own tunable parameters");
  TuneOptions tune_options;
  int tune_runs = 5;
  tune->add_option("scenario", scenario_path, tune_scenario_help())->required();
  tune->add_option("--set", overrides, "override a field: dotted.path=value");
  tune->add_option("--out", out, "write the candidate table (JSON) here");
  tune->add_option("--jobs", tune_options.jobs, "parallel runs (default: the machine's cores)");
  auto* tune_runs_option = tune->add_option(
      "--runs", tune_runs,
      "a kind with its own tuner: perturbed plants each candidate runs on (Monte Carlo runs "
      "1..N; default 5)");
  auto* switch_times_option =
      tune->add_option("--switch-times", tune_options.switch_times,
                       "SCVG t_eps candidates in s, each < timing.duration_s (default 26/60, 36/60 "
                       "and 46/60 of the run)");
  tune->add_option("--top", tune_options.top, "rows of the table to print");
  auto* coarse_option =
      tune->add_flag("--coarse", tune_options.coarse,
                     "a 5x5(x7) grid and the middle t_eps only: about 20x fewer runs");

  auto* summary_cmd = app.add_subcommand(
      "summary", "print a run directory's summary.json; --recover rebuilds an incomplete one");
  std::string summary_dir;
  bool recover = false;
  summary_cmd->add_option("dir", summary_dir, "run directory")->required();
  summary_cmd->add_flag("--recover", recover,
                        "rebuild samples.csv, cycles.csv and summary.json of an incomplete run "
                        "directory (INCOMPLETE) from its journal");

  auto* report = app.add_subcommand("report", "PNG plots of a run directory");
  std::string report_dir;
  report->add_option("dir", report_dir, "run directory")->required();
  report->add_option("--out", out, "directory for the plots (default DIR/plots)");

  auto* export_cmd = app.add_subcommand(
      "export", "write a run directory as HDF5 or MATLAB (.mat), units and metadata included");
  std::string export_dir;
  std::string export_format;
  export_cmd->add_option("dir", export_dir, "run directory")->required();
  export_cmd->add_option("--format", export_format, "hdf5 or mat")->required();
  export_cmd->add_option("--out", out, "file to write (replaced if it exists)")->required();

  auto* compare = app.add_subcommand("compare", "set runs' metrics side by side, with plots");
  std::vector<std::string> compare_dirs;
  // Any count >= 2 parses (the usage line reads "RUN_DIR..."); main() refuses more than 16.
  compare->add_option("RUN_DIR", compare_dirs, "two or more run directories (at most 16)")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size)
      ->option_text("RUN_DIR [RUN_DIR ...] (2 to 16) REQUIRED");
  compare->add_option("--out", out, "directory for the comparison")->required();

  CLI11_PARSE(app, argc, argv);

  if (*ctl) return hyloop::app::run_ctl(ctl_options);
  if (*certs) return hyloop::app::run_certs(certs_options);
  if (*schema) return hyloop::app::run_schema(schema_options);
  if (*montecarlo) return hyloop::app::run_montecarlo(montecarlo_options);
  try {
    if (*up) {
      if (!up_options.serve && (up_options.scenario.empty() || up_options.out.empty())) {
        std::cerr << "hyloop up: SCENARIO and --out DIR are required (or --serve)\n";
        return 2;
      }
      if (up_options.serve && up_options.force) {
        std::cerr << "hyloop up: --force goes with --out (a served coordinator refuses an "
                     "existing run directory)\n";
        return 2;
      }
      if (!up_options.serve) {
        // The coordinator writes --out as a name in its runs directory, --out's parent.
        const fs::path o = fs::absolute(up_options.out).lexically_normal();
        const fs::path leaf = o.has_filename() ? o : o.parent_path();
        hyloop::app::check_out_directory(leaf, up_options.force);
        fs::create_directories(leaf.parent_path());
        up_options.out = leaf.string();
        up_options.runs_dir = leaf.parent_path().string();
        hyloop::app::print_scenario_notices(up_options.scenario, up_options.overrides, std::cerr);
      }
      return hyloop::app::run_up(up_options);
    }
    if (*run) return run_in_process(scenario_path, overrides, out, force);
    if (*summary_cmd) return summary(summary_dir, recover);
    if (*validate_cmd) {
      const auto experiment = make_experiment(scenario_path, overrides);
      hyloop::app::print_scenario_notices(scenario_path, overrides, std::cerr);
      if (print_resolved) {
        std::cout << experiment->resolved_yaml();
      } else {
        std::cout << scenario_path << ": valid " << experiment->kind() << " scenario ("
                  << experiment->total_steps() << " steps of " << experiment->step_size()
                  << " s)\n";
      }
      return 0;
    }
    if (*identify) {
      const SitsScenario s = load_scenario(scenario_path, overrides);
      const auto result = from_run.empty() ? identify_robot(s) : identify_from_run(s, from_run);
      const std::string text = result.dump(2);
      std::cout << text << "\n";
      if (!out.empty()) write_text_file(out, text + "\n");
      return 0;
    }
    if (*analyze) {
      const SitsScenario s = load_scenario(scenario_path, overrides);
      AnalyzeOptions options;
      if (k_h_option->count() > 0) options.k_h = k_h;
      if (k_x_option->count() > 0) options.k_x = k_x;
      options.identified = !use_true_robot;
      options.simulate = analyze_simulate;
      const auto result = analyze_loop(s, options);
      const std::string text = result.dump(2);
      std::cout << text << "\n";
      if (!out.empty()) write_text_file(out, text + "\n");
      return 0;
    }
    if (*tune) {
      // A kind with a tuner of its own (Kind::tune); else the compensator tuner (jobs.hpp).
      const std::string text = read_scenario_text(scenario_path);
      const Kind& kind = find_scenario_kind(text, scenario_path);
      TuneRequest request{.text = text,
                          .origin = scenario_path,
                          .overrides = overrides,
                          .data = DataSource::local_file(scenario_path),
                          .runs = tune_runs,
                          .jobs = tune_options.jobs,
                          .top = tune_options.top};
      if (!kind.tuning().empty()) {
        for (const CLI::Option* o : {switch_times_option, coarse_option}) {
          if (o->count() > 0) {
            std::cerr << "hyloop tune: " << o->get_name() << ": the compensator tuner's option; a "
                      << kind.name() << " scenario tunes " << kind.tuning() << "\n";
            return 2;
          }
        }
        if (tune_runs < 1 || tune_runs > kMaxTuneRuns) {
          std::cerr << "hyloop tune: --runs = " << tune_runs << ": must be in [1, " << kMaxTuneRuns
                    << "]\n";
          return 2;
        }
      }
      if (const auto result = kind.tune(request, std::cerr)) {
        if (!out.empty()) write_text_file(out, result->document.dump(2) + "\n");
        std::cout << result->text;
        return 0;
      }
      refuse_untunable_kind(kind, scenario_path);
      if (tune_runs_option->count() > 0) {
        std::cerr << "hyloop tune: --runs: a " << kind.name()
                  << " scenario is tuned on its own plant; --runs goes with " << tunable_kinds()
                  << "\n";
        return 2;
      }
      const SitsScenario s = load_scenario(scenario_path, overrides);
      const auto result = tune_compensator(s, tune_options, std::cerr);
      if (!out.empty()) write_text_file(out, result.dump(2) + "\n");
      std::cout << result["best"].dump(2) << "\n";
      return 0;
    }
    if (*report) {
      if (!prepare_report(report_dir)) return 1;
      std::vector<std::string> args{report_dir};
      if (!out.empty()) {
        args.push_back("--out");
        args.push_back(out);
      }
      return run_python(share_dir(argv[0]) / "report.py", args);
    }
    if (*export_cmd) {
      export_run(export_dir, parse_export_format(export_format), out);
      std::cerr << "hyloop export: " << out << " (" << export_format << ")\n";
      return 0;
    }
    if (*compare) {
      if (compare_dirs.size() > static_cast<std::size_t>(kMaxCompared)) {
        std::cerr << "hyloop compare: " << compare_dirs.size() << " run directories: at most "
                  << kMaxCompared << "\n";
        return 2;
      }
      std::vector<std::string> args{"--compare"};
      args.insert(args.end(), compare_dirs.begin(), compare_dirs.end());
      args.push_back("--out");
      args.push_back(out);
      return run_python(share_dir(argv[0]) / "report.py", args);
    }
  } catch (const ScenarioError& e) {
    std::cerr << "hyloop: invalid scenario: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hyloop: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
