// `hyloop montecarlo SCENARIO --runs N --out DIR`: runs the scenario N times in process, run i
// with the kind's Monte Carlo overrides (Kind::monte_carlo_overrides: its perturbed plant and
// noise of seed i), and aggregates the kind's metrics (Kind::monte_carlo_metrics) over the runs:
// mean, sample standard deviation (N − 1), min and max. Writes DIR/montecarlo.json (the
// statistics and every run's metrics, plant and stop reason) and DIR/runs.csv (one row a run).
// A run that stops early (e.g. at the stroke) counts, with its reason; one that fails to build
// is an error naming the run.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

inline constexpr int kMaxMonteCarloRuns = 10000;

struct MonteCarloOptions {
  std::string scenario;
  int runs = 20;
  std::string out;
  bool force = false;
  std::vector<std::string> overrides;
};

CLI::App* add_montecarlo_subcommand(CLI::App& app, MonteCarloOptions& options);

// 0 done; 2 for a bad scenario, a kind without a perturbation model or a run count out of
// [1, kMaxMonteCarloRuns] (the message names it); 1 when DIR cannot be written.
int run_montecarlo(const MonteCarloOptions& options);

}  // namespace hyloop::app
