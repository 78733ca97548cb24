// `hyloop tune` of a vrths scenario (Kind::tune; issue 13 §2): a coarse grid of the adaptive
// compensator's parameters, each candidate run on N perturbed plants (the kind's Monte Carlo
// overrides 1..N) and scored by its mean J2; a candidate with a run that stops (stability guard,
// stroke, not finite) is disqualified. The scenario's own values are always a candidate, so the
// best is never worse than the default on the same plants.
//   amb  a scale s on controller.amb.gain_per_s (the whole vector) ×
//   controller.amb.filter_cutoff_hz ats  controller.ats.filter_time_constant_s ×
//   controller.ats.window_s
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

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/experiment/vrths_experiment.hpp"

namespace hyloop::experiment {
namespace {

using nlohmann::json;

// The core's bound on an adaptation step (AdaptiveModelBased: Γ_i·T ≤ 0.1).
constexpr double kMaxGainStep = 0.1;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string number(double v) {
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

// One tuned parameter's value in a candidate: its field, the value as the scenario spells it
// (a number or a list) and, for a scaled list, the scale.
struct Setting {
  std::string field;
  std::string value;
  json json_value;
};

struct Candidate {
  std::vector<Setting> settings;
  json parameters = json::object();  // the search variables (scale, Hz, s)
  bool is_default = false;
};

struct RunResult {
  double j1 = kInf, j2 = kInf;
  json stop_reason;
  std::string error;
};

struct Scored {
  std::size_t index = 0;
  std::vector<RunResult> runs;
  double j1_mean = kInf, j2_mean = kInf, j2_max = kInf;
  int stopped = 0;
  bool qualified = false;
};

std::string list_text(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + number(v[i]);
  return s + "]";
}

// `values` with `own` added (the default is always a candidate), sorted, without repeats.
std::vector<double> with_own(std::vector<double> values, double own) {
  values.push_back(own);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<Candidate> amb_grid(const VrthsScenario& s) {
  const auto& c = s.controller.amb;
  if (!c.adapt) {
    throw ScenarioError(s.origin +
                        ": controller.amb.adapt = false: nothing to tune (the gains and the "
                        "filter act only while adapting); set controller.amb.adapt=true");
  }
  const double g_max = *std::max_element(c.gain.begin(), c.gain.end());
  if (g_max <= 0.0) {
    throw ScenarioError(s.origin + ": controller.amb.gain_per_s = " + list_text(s.amb_gain) +
                        ": nothing to tune (every coefficient frozen); give a gain > 0");
  }
  const double nyquist_quarter = 0.25 / s.timing.step;
  std::vector<double> scales;
  for (const double k : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    if (k == 1.0 || k * g_max * s.timing.step <= kMaxGainStep) scales.push_back(k);
  }
  std::vector<double> cutoffs;
  for (const double k : {0.5, 2.0, 4.0}) {
    if (k * c.filter_cutoff < nyquist_quarter) cutoffs.push_back(k * c.filter_cutoff);
  }
  cutoffs = with_own(cutoffs, c.filter_cutoff);
  std::vector<Candidate> grid;
  for (const double k : scales) {
    std::vector<double> gains(c.gain.begin(), c.gain.end());
    for (double& g : gains) g *= k;
    for (const double f : cutoffs) {
      Candidate x;
      x.settings = {{"controller.amb.gain_per_s", list_text(gains), gains},
                    {"controller.amb.filter_cutoff_hz", number(f), f}};
      x.parameters = {{"gain_scale", k}, {"filter_cutoff_hz", f}};
      x.is_default = k == 1.0 && f == c.filter_cutoff;
      grid.push_back(std::move(x));
    }
  }
  return grid;
}

std::vector<Candidate> ats_grid(const VrthsScenario& s) {
  const auto& c = s.controller.ats;
  std::vector<double> taus;
  if (c.filter_time_constant > 0.0) {
    for (const double k : {0.5, 2.0, 4.0, 8.0}) taus.push_back(k * c.filter_time_constant);
  } else {
    taus = {0.005, 0.01, 0.02, 0.04};
  }
  taus = with_own(taus, c.filter_time_constant);
  // At least 8 samples (AdaptiveTimeSeries) and at most a third of the run.
  const double duration = s.timing.step * static_cast<double>(s.steps(load_vrths_ground_motion(s)));
  std::vector<double> windows;
  for (const double k : {0.5, 2.0}) {
    const double w = k * c.window;
    if (w >= 8.0 * s.timing.step && w <= duration / 3.0) windows.push_back(w);
  }
  windows = with_own(windows, c.window);
  std::vector<Candidate> grid;
  for (const double tau : taus) {
    for (const double w : windows) {
      Candidate x;
      x.settings = {{"controller.ats.filter_time_constant_s", number(tau), tau},
                    {"controller.ats.window_s", number(w), w}};
      x.parameters = {{"filter_time_constant_s", tau}, {"window_s", w}};
      x.is_default = tau == c.filter_time_constant && w == c.window;
      grid.push_back(std::move(x));
    }
  }
  return grid;
}

RunResult run_one(const TuneRequest& request, const Candidate& candidate,
                  const std::vector<std::string>& plant) {
  std::vector<std::string> overrides = request.overrides;
  for (const Setting& x : candidate.settings) overrides.push_back(x.field + "=" + x.value);
  overrides.insert(overrides.end(), plant.begin(), plant.end());
  overrides.push_back("outputs.samples=false");
  RunResult r;
  try {
    VrthsExperiment e(parse_vrths_scenario(request.text, request.origin, overrides, request.data));
    e.run();
    const json summary = e.summary();
    r.stop_reason = summary.value("stop_reason", json());
    const json j1 = summary.value("J1_ms", json()), j2 = summary.value("J2_percent", json());
    if (j1.is_number()) r.j1 = j1.get<double>();
    if (j2.is_number()) r.j2 = j2.get<double>();
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

json set_lines(const Candidate& c) {
  json lines = json::array();
  for (const Setting& x : c.settings) lines.push_back(x.field + "=" + x.value);
  return lines;
}

json row_json(const Candidate& c, const Scored& s, int rank, int runs) {
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json per_run = json::array();
  for (std::size_t i = 0; i < s.runs.size(); ++i) {
    const RunResult& r = s.runs[i];
    json row = {{"run", i + 1},
                {"J1_ms", num(r.j1)},
                {"J2_percent", num(r.j2)},
                {"stop_reason", r.stop_reason}};
    if (!r.error.empty()) row["error"] = r.error;
    per_run.push_back(row);
  }
  json settings = json::object();
  for (const Setting& x : c.settings) settings[x.field] = x.json_value;
  return {{"rank", rank},
          {"default", c.is_default},
          {"parameters", c.parameters},
          {"settings", settings},
          {"set", set_lines(c)},
          {"runs", runs},
          {"J1_ms_mean", num(s.j1_mean)},
          {"J2_percent_mean", num(s.j2_mean)},
          {"J2_percent_max", num(s.j2_max)},
          {"stopped_runs", s.stopped},
          {"disqualified", !s.qualified},
          {"per_run", per_run}};
}

std::string describe(const Candidate& c) {
  std::string s;
  for (const auto& [k, v] : c.parameters.items()) {
    s += (s.empty() ? "" : "  ") + k + " " + number(v.get<double>());
  }
  return s;
}

}  // namespace

std::string vrths_tuning() {
  return "controller.type ats (controller.ats.filter_time_constant_s and window_s) or amb (a "
         "scale on controller.amb.gain_per_s and filter_cutoff_hz), scored by the mean J2 over "
         "--runs perturbed plants";
}

TuneResult tune_vrths(const Kind& kind, const TuneRequest& request, std::ostream& log) {
  if (request.runs < 1 || request.runs > kMaxTuneRuns) {
    throw std::invalid_argument("tune: --runs = " + std::to_string(request.runs) +
                                ": must be in [1, " + std::to_string(kMaxTuneRuns) + "]");
  }
  const VrthsScenario base =
      parse_vrths_scenario(request.text, request.origin, request.overrides, request.data);
  const std::string& type = base.controller.type;
  std::vector<Candidate> grid;
  if (type == "amb") {
    grid = amb_grid(base);
  } else if (type == "ats") {
    grid = ats_grid(base);
  } else {
    throw ScenarioError(base.origin + ": controller.type = \"" + type +
                        "\": nothing to tune; hyloop tune tunes controller.type ats "
                        "(controller.ats.filter_time_constant_s, window_s) or amb "
                        "(controller.amb.gain_per_s, filter_cutoff_hz)");
  }
  std::vector<std::vector<std::string>> plants;
  for (int i = 1; i <= request.runs; ++i) plants.push_back(kind.monte_carlo_overrides(i));
  const int jobs = request.jobs > 0
                       ? request.jobs
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  log << "tune: " << kind.name() << " " << type << ": " << grid.size() << " candidates x "
      << request.runs << " perturbed plants (Monte Carlo runs 1.." << request.runs << ") on "
      << jobs << " threads\n";

  // Every (candidate, plant) pair, in parallel.
  const std::size_t n = grid.size() * plants.size();
  std::vector<RunResult> results(n);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      results[i] = run_one(request, grid[i / plants.size()], plants[i % plants.size()]);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();

  std::vector<Scored> scored(grid.size());
  for (std::size_t c = 0; c < grid.size(); ++c) {
    Scored& s = scored[c];
    s.index = c;
    s.runs.assign(results.begin() + static_cast<std::ptrdiff_t>(c * plants.size()),
                  results.begin() + static_cast<std::ptrdiff_t>((c + 1) * plants.size()));
    double j1 = 0.0, j2 = 0.0, j2_max = 0.0;
    bool finite = true;
    for (const RunResult& r : s.runs) {
      if (!r.stop_reason.is_null() || !r.error.empty()) ++s.stopped;
      finite = finite && std::isfinite(r.j1) && std::isfinite(r.j2);
      j1 += r.j1;
      j2 += r.j2;
      j2_max = std::max(j2_max, r.j2);
    }
    if (finite) {
      s.j1_mean = j1 / static_cast<double>(s.runs.size());
      s.j2_mean = j2 / static_cast<double>(s.runs.size());
      s.j2_max = j2_max;
    }
    s.qualified = finite && s.stopped == 0;
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.qualified != b.qualified) return a.qualified;
    if (a.j2_mean != b.j2_mean) return a.j2_mean < b.j2_mean;
    return a.j1_mean < b.j1_mean;
  });
  const auto own = std::find_if(scored.begin(), scored.end(),
                                [&](const Scored& s) { return grid[s.index].is_default; });
  if (own == scored.end())
    throw std::logic_error("tune: the scenario's own values are no candidate");
  if (own->runs.front().error.size() > 0) {
    throw std::runtime_error("tune: the scenario's own values fail on plant 1: " +
                             own->runs.front().error);
  }
  if (!scored.front().qualified) {
    throw std::runtime_error("tune: every candidate stops on at least one of the " +
                             std::to_string(request.runs) + " perturbed plants");
  }

  log << "tune: candidates by mean J2 over the plants (a run that stops disqualifies; * the "
         "scenario's own)\n"
      << "  rank  J2 mean[%]  J2 max[%]  J1 mean[ms]  stopped  parameters\n";
  const int top = std::max(request.top, 1);
  const auto print_row = [&](std::size_t rank, const Scored& s) {
    std::ostringstream line;
    line << "  " << std::setw(4) << rank << (grid[s.index].is_default ? "*" : " ") << std::fixed
         << std::setprecision(4) << std::setw(11) << s.j2_mean << std::setw(11) << s.j2_max
         << std::setw(13) << s.j1_mean << std::setw(6) << s.stopped << "/" << s.runs.size() << "  "
         << describe(grid[s.index]) << "\n";
    log << line.str();
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(scored.size(), top); ++i) {
    print_row(i + 1, scored[i]);
  }
  const std::size_t own_rank = static_cast<std::size_t>(own - scored.begin()) + 1;
  if (own_rank > static_cast<std::size_t>(top)) print_row(own_rank, *own);

  json table = json::array();
  for (std::size_t i = 0; i < scored.size(); ++i) {
    table.push_back(
        row_json(grid[scored[i].index], scored[i], static_cast<int>(i + 1), request.runs));
  }
  const Scored& best = scored.front();
  TuneResult result;
  json& d = result.document;
  d["scenario"] = request.origin;
  d["kind"] = kind.name();
  d["controller"] = type;
  d["overrides"] = request.overrides;
  d["runs"] = request.runs;
  d["plants"] = plants;
  d["score"] =
      "J2_percent_mean over the plants (lower is better); a candidate with a run that stops is "
      "disqualified";
  d["candidates"] = grid.size();
  d["candidates_run"] = n;
  d["candidates_qualified"] =
      std::count_if(scored.begin(), scored.end(), [](const Scored& s) { return s.qualified; });
  d["table"] = table;
  d["best"] = table.front();
  d["default"] = table[own_rank - 1];
  d["J2_percent_gain"] = own->qualified ? json(own->j2_mean - best.j2_mean) : json(nullptr);

  std::ostringstream text;
  text << std::fixed << std::setprecision(4) << "# best of " << grid.size() << " " << type
       << " candidates over " << request.runs << " perturbed plants: J2 " << best.j2_mean
       << " % (J1 " << best.j1_mean << " ms); the scenario's own: ";
  if (own->qualified) {
    text << "J2 " << own->j2_mean << " % (J1 " << own->j1_mean << " ms)";
  } else {
    text << "stops on " << own->stopped << " of " << request.runs << " plants";
  }
  text << (grid[best.index].is_default ? "; the scenario's own is the best\n" : "\n");
  for (const Setting& x : grid[best.index].settings) {
    text << "--set '" << x.field << "=" << x.value << "'\n";
  }
  result.text = text.str();
  return result;
}

}  // namespace hyloop::experiment
