#include "montecarlo.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;
namespace ex = experiment;

// What --force may replace: a directory holding only what a Monte Carlo writes.
bool replaceable(const fs::path& out) {
  static const std::set<std::string> ours = {"montecarlo.json", "runs.csv"};
  if (fs::is_symlink(out) || !fs::is_directory(out)) return false;
  return std::all_of(fs::directory_iterator(out), fs::directory_iterator{},
                     [](const fs::directory_entry& e) {
                       return e.is_regular_file() && ours.count(e.path().filename().string()) > 0;
                     });
}

void prepare_out(const fs::path& out, bool force) {
  if (!fs::exists(fs::symlink_status(out))) {
    fs::create_directories(out);
    return;
  }
  if (fs::is_directory(out) && !fs::is_symlink(out) && fs::is_empty(out)) return;
  if (force && replaceable(out)) return;
  throw std::runtime_error(out.string() +
                           " exists and is not an empty directory (--force replaces only an "
                           "earlier Monte Carlo's montecarlo.json and runs.csv)");
}

nlohmann::json statistics(const std::vector<double>& v) {
  if (v.empty()) return {{"runs", 0}};
  double sum = 0.0;
  for (const double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  double ss = 0.0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  const double std = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return {{"runs", v.size()},
          {"mean", mean},
          {"std", std},
          {"min", *std::min_element(v.begin(), v.end())},
          {"max", *std::max_element(v.begin(), v.end())}};
}

std::string csv_value(const nlohmann::json& v) {
  if (v.is_number()) {
    std::ostringstream s;
    s << std::setprecision(17) << v.get<double>();
    return s.str();
  }
  return v.is_null() ? "" : v.dump();
}

// DIR/montecarlo.json (`result`) and DIR/runs.csv (a row a run of `runs`: its metrics and stop
// reason). @throws std::runtime_error when DIR may not be written or a write fails.
void write_results(const fs::path& out, bool force, const nlohmann::json& result,
                   const nlohmann::json& runs, const std::vector<std::string>& metrics) {
  prepare_out(out, force);
  std::ofstream(out / "montecarlo.json") << result.dump(2) << "\n";
  std::ofstream csv(out / "runs.csv");
  csv << "run";
  for (const std::string& m : metrics) csv << "," << m;
  csv << ",stop_reason\n";
  for (const nlohmann::json& r : runs) {
    csv << r["run"].get<int>();
    for (const std::string& m : metrics) csv << "," << csv_value(r[m]);
    csv << "," << (r["stop_reason"].is_null() ? "" : r["stop_reason"].get<std::string>()) << "\n";
  }
  if (!csv) throw std::runtime_error((out / "runs.csv").string() + ": write failed");
}

// The statistics table on stdout (a metric without a finite value in any run left out).
void print_statistics(nlohmann::json& stats, const std::vector<std::string>& metrics) {
  std::cout << std::left << std::setw(24) << "metric" << std::right << std::setw(14) << "mean"
            << std::setw(14) << "std" << std::setw(14) << "min" << std::setw(14) << "max\n";
  for (const std::string& m : metrics) {
    const nlohmann::json& s = stats[m];
    if (!s.contains("mean")) continue;
    std::cout << std::left << std::setw(24) << m << std::right << std::setprecision(5)
              << std::setw(14) << s["mean"].get<double>() << std::setw(14) << s["std"].get<double>()
              << std::setw(14) << s["min"].get<double>() << std::setw(14) << s["max"].get<double>()
              << "\n";
  }
}

}  // namespace

CLI::App* add_montecarlo_subcommand(CLI::App& app, MonteCarloOptions& options) {
  auto* cmd = app.add_subcommand(
      "montecarlo",
      "run a scenario on N perturbed plants in process and report each metric's mean and spread");
  cmd->add_option("scenario", options.scenario, "scenario YAML file")->required();
  cmd->add_option("--runs", options.runs, "number of perturbed runs (seeds 1..N)");
  cmd->add_option("--out", options.out, "directory for montecarlo.json and runs.csv")->required();
  cmd->add_option("--set", options.overrides, "override a field: dotted.path=value");
  cmd->add_flag("--force", options.force, "replace an earlier Monte Carlo's files in --out");
  return cmd;
}

int run_montecarlo(const MonteCarloOptions& o) {
  if (o.runs < 1 || o.runs > kMaxMonteCarloRuns) {
    std::cerr << "hyloop montecarlo: --runs = " << o.runs << ": must be in [1, "
              << kMaxMonteCarloRuns << "]\n";
    return 2;
  }
  std::vector<std::string> metrics;
  std::string kind_name;
  try {
    const ex::Kind& kind = ex::find_scenario_kind(ex::read_scenario_text(o.scenario), o.scenario);
    kind_name = kind.name();
    metrics = kind.monte_carlo_metrics();
    if (kind.monte_carlo_overrides(1).empty() || metrics.empty()) {
      std::cerr << "hyloop montecarlo: " << o.scenario << ": kind " << kind_name
                << " has no perturbation model (Kind::monte_carlo_overrides)\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "hyloop montecarlo: " << e.what() << "\n";
    return 2;
  }
  const ex::Kind& kind = ex::find_kind(kind_name);
  nlohmann::json runs = nlohmann::json::array();
  std::map<std::string, std::vector<double>> values;
  int stopped = 0;
  for (int i = 1; i <= o.runs; ++i) {
    std::vector<std::string> overrides = o.overrides;
    for (const std::string& x : kind.monte_carlo_overrides(i)) overrides.push_back(x);
    nlohmann::json summary;
    try {
      const auto experiment = ex::make_experiment(o.scenario, overrides);
      experiment->run();
      summary = experiment->summary();
    } catch (const std::exception& e) {
      std::cerr << "hyloop montecarlo: run " << i << ": " << e.what() << "\n";
      return 2;
    }
    nlohmann::json run = {{"run", i}, {"overrides", kind.monte_carlo_overrides(i)}};
    for (const std::string& m : metrics) {
      const nlohmann::json v = summary.value(m, nlohmann::json());
      run[m] = v;
      if (v.is_number() && std::isfinite(v.get<double>())) values[m].push_back(v.get<double>());
    }
    run["stop_reason"] = summary.value("stop_reason", nlohmann::json());
    if (!run["stop_reason"].is_null()) ++stopped;
    if (summary.contains("plant")) run["plant"] = summary["plant"];
    runs.push_back(run);
    std::cerr << "\rhyloop montecarlo: " << i << "/" << o.runs << std::flush;
  }
  std::cerr << "\n";
  nlohmann::json stats = nlohmann::json::object();
  for (const std::string& m : metrics) stats[m] = statistics(values[m]);
  const nlohmann::json result = {{"scenario", o.scenario},  {"kind", kind_name},
                                 {"runs", o.runs},          {"overrides", o.overrides},
                                 {"stopped_runs", stopped}, {"statistics", stats},
                                 {"per_run", runs}};
  try {
    write_results(fs::path(o.out), o.force, result, runs, metrics);
  } catch (const std::exception& e) {
    std::cerr << "hyloop montecarlo: " << e.what() << "\n";
    return 1;
  }
  print_statistics(stats, metrics);
  std::cout << o.runs << " runs, " << stopped << " stopped early; " << o.out
            << "/montecarlo.json\n";
  return 0;
}

}  // namespace hyloop::app
