// The grid tuner of the kinds with an adaptive compensator (grid_tune.hpp).
#include "hyloop/jobs/grid_tune.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "hyloop/experiment/scenario_error.hpp"

namespace hyloop::jobs {

using experiment::kMaxTuneRuns;
using experiment::make_experiment_from_text;
using experiment::ScenarioError;
namespace {

using nlohmann::json;

// The core's bound on an adaptation step (AdaptiveModelBased: Γ_i·T ≤ 0.1).
constexpr double kMaxGainStep = 0.1;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct RunResult {
  double primary = kInf, secondary = kInf;
  json stop_reason;
  std::string error;
};

struct Scored {
  std::size_t index = 0;
  std::vector<RunResult> runs;
  double secondary_mean = kInf, primary_mean = kInf, primary_max = kInf;
  int stopped = 0;
  bool qualified = false;
};

double score_of(const json& summary, const TuneScore& score) {
  const json::json_pointer p(score.pointer);
  return summary.contains(p) && summary.at(p).is_number() ? summary.at(p).get<double>() : kInf;
}

RunResult run_one(const TuneRequest& request, const GridTune& tune, const TuneCandidate& candidate,
                  const std::vector<std::string>& plant) {
  std::vector<std::string> overrides = request.overrides;
  for (const TuneSetting& x : candidate.settings) overrides.push_back(x.field + "=" + x.value);
  overrides.insert(overrides.end(), plant.begin(), plant.end());
  overrides.push_back("outputs.samples=false");
  RunResult r;
  try {
    const auto e =
        experiment::load_scenario_text(request.text, request.origin, overrides, request.data)
            ->experiment();
    e->run();
    const json summary = e->summary();
    r.stop_reason = summary.value("stop_reason", json());
    r.primary = score_of(summary, tune.primary);
    r.secondary = score_of(summary, tune.secondary);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

// Every (candidate, plant) pair, in parallel.
std::vector<RunResult> run_all(const TuneRequest& request, const GridTune& tune, int jobs) {
  const std::size_t plants = tune.plants.size();
  const std::size_t n = tune.grid.size() * plants;
  std::vector<RunResult> results(n);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      results[i] = run_one(request, tune, tune.grid[i / plants], tune.plants[i % plants]);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return results;
}

// The candidates, best first: qualified before disqualified, then by the primary mean, then by
// the secondary.
std::vector<Scored> rank(const std::vector<RunResult>& results, std::size_t candidates,
                         std::size_t plants) {
  std::vector<Scored> scored(candidates);
  for (std::size_t c = 0; c < candidates; ++c) {
    Scored& s = scored[c];
    s.index = c;
    s.runs.assign(results.begin() + static_cast<std::ptrdiff_t>(c * plants),
                  results.begin() + static_cast<std::ptrdiff_t>((c + 1) * plants));
    double secondary = 0.0, primary = 0.0, primary_max = 0.0;
    bool finite = true;
    for (const RunResult& r : s.runs) {
      if (!r.stop_reason.is_null() || !r.error.empty()) ++s.stopped;
      finite = finite && std::isfinite(r.secondary) && std::isfinite(r.primary);
      secondary += r.secondary;
      primary += r.primary;
      primary_max = std::max(primary_max, r.primary);
    }
    if (finite) {
      s.secondary_mean = secondary / static_cast<double>(s.runs.size());
      s.primary_mean = primary / static_cast<double>(s.runs.size());
      s.primary_max = primary_max;
    }
    s.qualified = finite && s.stopped == 0;
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.qualified != b.qualified) return a.qualified;
    if (a.primary_mean != b.primary_mean) return a.primary_mean < b.primary_mean;
    return a.secondary_mean < b.secondary_mean;
  });
  return scored;
}

json set_lines(const TuneCandidate& c) {
  json lines = json::array();
  for (const TuneSetting& x : c.settings) lines.push_back(x.field + "=" + x.value);
  return lines;
}

json row_json(const GridTune& tune, const Scored& s, int rank) {
  const TuneCandidate& c = tune.grid[s.index];
  const std::string& p = tune.primary.key;
  const std::string& q = tune.secondary.key;
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json per_run = json::array();
  for (std::size_t i = 0; i < s.runs.size(); ++i) {
    const RunResult& r = s.runs[i];
    json row = {
        {"run", i + 1}, {q, num(r.secondary)}, {p, num(r.primary)}, {"stop_reason", r.stop_reason}};
    if (!r.error.empty()) row["error"] = r.error;
    per_run.push_back(row);
  }
  json settings = json::object();
  for (const TuneSetting& x : c.settings) settings[x.field] = x.json_value;
  return {{"rank", rank},
          {"default", c.is_default},
          {"parameters", c.parameters},
          {"settings", settings},
          {"set", set_lines(c)},
          {"runs", tune.plants.size()},
          {q + "_mean", num(s.secondary_mean)},
          {p + "_mean", num(s.primary_mean)},
          {p + "_max", num(s.primary_max)},
          {"stopped_runs", s.stopped},
          {"disqualified", !s.qualified},
          {"per_run", per_run}};
}

std::string describe(const TuneCandidate& c) {
  std::string s;
  for (const auto& [k, v] : c.parameters.items()) {
    s += (s.empty() ? "" : "  ") + k + " " + tune_number(v.get<double>());
  }
  return s;
}

// The table on the log: the top rows and the scenario's own (marked *) when below them.
void log_table(const GridTune& tune, const std::vector<Scored>& scored, std::size_t own_rank,
               int top, std::ostream& log) {
  const TuneScore& p = tune.primary;
  const TuneScore& q = tune.secondary;
  const std::string p_mean = p.label + " mean[" + p.unit + "]",
                    p_max = p.label + " max[" + p.unit + "]";
  const std::string q_mean = q.label + " mean[" + q.unit + "]";
  const int wp = static_cast<int>(std::max({std::size_t{11}, p_mean.size() + 1, p_max.size() + 2}));
  const int wq = static_cast<int>(std::max(std::size_t{13}, q_mean.size() + 2));
  std::ostringstream head;
  head << "tune: candidates by mean " << p.label
       << " over the plants (a run that stops disqualifies; * the scenario's own)\n"
       << "  rank " << std::setw(wp) << p_mean << std::setw(wp) << p_max << std::setw(wq) << q_mean
       << "  stopped  parameters\n";
  log << head.str();
  const auto print_row = [&](std::size_t rank, const Scored& s) {
    std::ostringstream line;
    line << "  " << std::setw(4) << rank << (tune.grid[s.index].is_default ? "*" : " ")
         << std::fixed << std::setprecision(4) << std::setw(wp) << s.primary_mean * p.scale
         << std::setw(wp) << s.primary_max * p.scale << std::setw(wq) << s.secondary_mean * q.scale
         << std::setw(6) << s.stopped << "/" << s.runs.size() << "  "
         << describe(tune.grid[s.index]) << "\n";
    log << line.str();
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(scored.size(), top); ++i) {
    print_row(i + 1, scored[i]);
  }
  if (own_rank > static_cast<std::size_t>(top)) print_row(own_rank, scored[own_rank - 1]);
}

// "J2 2.5490 % (J1 0.2440 ms)"
std::string scores_text(const GridTune& tune, const Scored& s) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(4) << tune.primary.label << " "
       << s.primary_mean * tune.primary.scale << " " << tune.primary.unit << " ("
       << tune.secondary.label << " " << s.secondary_mean * tune.secondary.scale << " "
       << tune.secondary.unit << ")";
  return text.str();
}

std::string best_text(const GridTune& tune, const Scored& best, const Scored& own) {
  std::ostringstream text;
  text << "# best of " << tune.grid.size() << " " << tune.type << " candidates over "
       << tune.plants.size() << " " << tune.plants_noun << ": " << scores_text(tune, best)
       << "; the scenario's own: ";
  if (own.qualified) {
    text << scores_text(tune, own);
  } else {
    text << "stops on " << own.stopped << " of " << tune.plants.size() << " plants";
  }
  text << (tune.grid[best.index].is_default ? "; the scenario's own is the best\n" : "\n");
  for (const TuneSetting& x : tune.grid[best.index].settings) {
    text << "--set '" << x.field << "=" << x.value << "'\n";
  }
  return text.str();
}

[[noreturn]] void refuse_tune_type(const std::string& origin, const std::string& prefix,
                                   const std::string& type) {
  throw ScenarioError(origin + ": " + prefix + ".type = \"" + type +
                      "\": nothing to tune; hyloop tune tunes " + prefix + ".type ats (" + prefix +
                      ".ats.filter_time_constant_s, window_s) or amb (" + prefix +
                      ".amb.gain_per_s, filter_cutoff_hz)");
}

}  // namespace

void check_tune_runs(const TuneRequest& request) {
  if (request.runs < 1 || request.runs > kMaxTuneRuns) {
    throw std::invalid_argument("tune: --runs = " + std::to_string(request.runs) +
                                ": must be in [1, " + std::to_string(kMaxTuneRuns) + "]");
  }
}

std::vector<std::vector<std::string>> tune_plants(
    const TuneRequest& request, const std::function<std::vector<std::string>(int)>& plant) {
  check_tune_runs(request);
  std::vector<std::vector<std::string>> plants;
  for (int i = 1; i <= request.runs; ++i) plants.push_back(plant(i));
  return plants;
}

std::string adaptive_tuning(const std::string& prefix, const std::string& score) {
  return prefix + ".type ats (" + prefix + ".ats.filter_time_constant_s and window_s) or amb (a " +
         "scale on " + prefix + ".amb.gain_per_s and filter_cutoff_hz), scored by " + score;
}

std::string tune_number(double v) {
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

std::string tune_list_text(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + tune_number(v[i]);
  return s + "]";
}

std::vector<double> with_own(std::vector<double> values, double own) {
  values.push_back(own);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<TuneCandidate> amb_tune_grid(const core::AdaptiveModelBasedConfig& c,
                                         const std::vector<double>& gain_text,
                                         const std::vector<double>& cutoff_factors,
                                         const std::string& prefix, const std::string& origin,
                                         double step) {
  const std::string amb = prefix + ".amb.";
  if (!c.adapt) {
    throw ScenarioError(origin + ": " + amb +
                        "adapt = false: nothing to tune (the gains and the filter act only while "
                        "adapting); set " +
                        amb + "adapt=true");
  }
  const double g_max = *std::max_element(c.gain.begin(), c.gain.end());
  if (g_max <= 0.0) {
    throw ScenarioError(origin + ": " + amb + "gain_per_s = " + tune_list_text(gain_text) +
                        ": nothing to tune (every coefficient frozen); give a gain > 0");
  }
  const double nyquist_quarter = 0.25 / step;
  std::vector<double> scales;
  for (const double k : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    if (k == 1.0 || k * g_max * step <= kMaxGainStep) scales.push_back(k);
  }
  std::vector<double> cutoffs;
  for (const double k : cutoff_factors) {
    if (k * c.filter_cutoff < nyquist_quarter) cutoffs.push_back(k * c.filter_cutoff);
  }
  cutoffs = with_own(cutoffs, c.filter_cutoff);
  std::vector<TuneCandidate> grid;
  for (const double k : scales) {
    std::vector<double> gains(c.gain.begin(), c.gain.end());
    for (double& g : gains) g *= k;
    for (const double f : cutoffs) {
      TuneCandidate x;
      x.settings = {{amb + "gain_per_s", tune_list_text(gains), gains},
                    {amb + "filter_cutoff_hz", tune_number(f), f}};
      x.parameters = {{"gain_scale", k}, {"filter_cutoff_hz", f}};
      x.is_default = k == 1.0 && f == c.filter_cutoff;
      grid.push_back(std::move(x));
    }
  }
  return grid;
}

std::vector<TuneCandidate> ats_tune_grid(const core::AdaptiveTimeSeriesConfig& c,
                                         const std::string& prefix, double step, double duration) {
  const std::string ats = prefix + ".ats.";
  std::vector<double> taus;
  if (c.filter_time_constant > 0.0) {
    for (const double k : {0.5, 2.0, 4.0, 8.0}) taus.push_back(k * c.filter_time_constant);
  } else {
    taus = {0.005, 0.01, 0.02, 0.04};
  }
  taus = with_own(taus, c.filter_time_constant);
  // At least 8 samples (AdaptiveTimeSeries) and at most a third of the run.
  std::vector<double> windows;
  for (const double k : {0.5, 2.0}) {
    const double w = k * c.window;
    if (w >= 8.0 * step && w <= duration / 3.0) windows.push_back(w);
  }
  windows = with_own(windows, c.window);
  std::vector<TuneCandidate> grid;
  for (const double tau : taus) {
    for (const double w : windows) {
      TuneCandidate x;
      x.settings = {{ats + "filter_time_constant_s", tune_number(tau), tau},
                    {ats + "window_s", tune_number(w), w}};
      x.parameters = {{"filter_time_constant_s", tau}, {"window_s", w}};
      x.is_default = tau == c.filter_time_constant && w == c.window;
      grid.push_back(std::move(x));
    }
  }
  return grid;
}

GridTune adaptive_grid_tune(const AdaptiveCompensator& c) {
  GridTune tune{.type_key = c.prefix, .type = c.type};
  if (c.type == "amb") {
    tune.grid = amb_tune_grid(c.amb, c.amb_gain, c.cutoff_factors, c.prefix, c.origin, c.step);
  } else if (c.type == "ats") {
    tune.grid = ats_tune_grid(c.ats, c.prefix, c.step, c.duration);
  } else {
    refuse_tune_type(c.origin, c.prefix, c.type);
  }
  return tune;
}

TuneResult run_grid_tune(const Kind& kind, const TuneRequest& request, const GridTune& tune,
                         std::ostream& log) {
  check_tune_runs(request);
  const int jobs = request.jobs > 0
                       ? request.jobs
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  log << "tune: " << kind.name() << " " << tune.type << ": " << tune.grid.size() << " candidates x "
      << tune.plants.size() << " " << tune.plants_noun << " (" << tune.plants_detail << ") on "
      << jobs << " threads\n";
  if (!tune.note.empty()) log << "tune: " << tune.note << "\n";
  const std::vector<RunResult> results = run_all(request, tune, jobs);
  const std::vector<Scored> scored = rank(results, tune.grid.size(), tune.plants.size());
  const auto own = std::find_if(scored.begin(), scored.end(),
                                [&](const Scored& s) { return tune.grid[s.index].is_default; });
  if (own == scored.end())
    throw std::logic_error("tune: the scenario's own values are no candidate");
  if (own->runs.front().error.size() > 0) {
    throw std::runtime_error("tune: the scenario's own values fail on plant 1: " +
                             own->runs.front().error);
  }
  if (!scored.front().qualified) {
    throw std::runtime_error("tune: every candidate stops on at least one of the " +
                             std::to_string(tune.plants.size()) + " " + tune.plants_noun);
  }
  const std::size_t own_rank = static_cast<std::size_t>(own - scored.begin()) + 1;
  log_table(tune, scored, own_rank, std::max(request.top, 1), log);

  json table = json::array();
  for (std::size_t i = 0; i < scored.size(); ++i) {
    table.push_back(row_json(tune, scored[i], static_cast<int>(i + 1)));
  }
  const Scored& best = scored.front();
  const std::string& p = tune.primary.key;
  TuneResult result;
  json& d = result.document;
  d["scenario"] = request.origin;
  d["kind"] = kind.name();
  d[tune.type_key] = tune.type;
  d["overrides"] = request.overrides;
  d["runs"] = tune.plants.size();
  d["plants"] = tune.plants;
  d["score"] = p +
               "_mean over the plants (lower is better); a candidate with a run that stops is "
               "disqualified";
  d["candidates"] = tune.grid.size();
  d["candidates_run"] = results.size();
  d["candidates_qualified"] =
      std::count_if(scored.begin(), scored.end(), [](const Scored& s) { return s.qualified; });
  d["table"] = table;
  d["best"] = table.front();
  d["default"] = table[own_rank - 1];
  d[p + "_gain"] = own->qualified ? json(own->primary_mean - best.primary_mean) : json(nullptr);
  if (!tune.note.empty()) d["note"] = tune.note;
  result.text = best_text(tune, best, *own);
  return result;
}

}  // namespace hyloop::jobs
