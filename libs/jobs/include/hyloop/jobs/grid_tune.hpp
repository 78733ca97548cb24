#pragma once
// The grid tuner behind Kind::tune of the kinds with an adaptive compensator (vrths_tune.cpp,
// rht_tune.cpp; issue 13 §2): a coarse grid of candidates, each run on the same list of plants
// (a plant: the overrides that make one run's plant and noise), scored by the mean of a summary
// figure over them; a candidate with a run that stops (stability guard, stroke, not finite) or
// fails is disqualified. The scenario's own values are always a candidate (with_own), so the
// best is never worse than the default on the same plants. The kinds give the grid, the plants
// and the scores; the runs, the ranking, the log table, the --out document and the --set text
// are this file's.
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hyloop/core/adaptive_model_based.hpp"
#include "hyloop/core/adaptive_time_series.hpp"
#include "hyloop/experiment/kind.hpp"

namespace hyloop::jobs {

// The tuner drives a kind through the framework's tuning interface (kind.hpp).
using experiment::Kind;
using experiment::TuneRequest;
using experiment::TuneResult;

/// One tuned parameter's value in a candidate: its field, the value as the scenario spells it
/// (a number or a list, pasteable as --set) and as JSON.
struct TuneSetting {
  std::string field{};
  std::string value{};
  nlohmann::json json_value{};
};

struct TuneCandidate {
  std::vector<TuneSetting> settings{};
  nlohmann::json parameters = nlohmann::json::object();  ///< the search variables (scale, Hz, s)
  bool is_default = false;                               ///< the scenario's own values
};

/// A score read from a run's summary.
struct TuneScore {
  std::string key{};      ///< its name in the document ("J2_percent": J2_percent_mean, …)
  std::string pointer{};  ///< where the summary has it (a JSON pointer: "/J2_percent")
  std::string label{};    ///< in the log and the text ("J2")
  std::string unit{};     ///< the unit the log and the text print it in ("%")
  double scale = 1.0;     ///< the summary's unit → `unit`
};

/// What a kind's tuner hands the grid tuner.
struct GridTune {
  std::string type_key{};  ///< the document's key of the compensator's type ("controller")
  std::string type{};      ///< its value ("ats")
  std::vector<TuneCandidate> grid{};
  std::vector<std::vector<std::string>> plants{};  ///< one run per candidate and plant
  std::string plants_noun{};                       ///< "perturbed plants"
  std::string plants_detail{};                     ///< "Monte Carlo runs 1..5"
  std::string note{};                              ///< a line for the log (empty: none)
  TuneScore primary{};                             ///< ranked by its mean (lower is better)
  TuneScore secondary{};                           ///< reported beside it; breaks ties
};

/// Runs every candidate on every plant (request.jobs threads; each run: the request's overrides,
/// the candidate's settings, the plant's and outputs.samples=false), ranks them, logs the table
/// (request.top rows and the scenario's own) and returns the document and the --set text.
/// @throws std::invalid_argument for request.runs out of range (check_tune_runs),
/// std::runtime_error when the own values fail or every candidate is disqualified.
TuneResult run_grid_tune(const Kind& kind, const TuneRequest& request, const GridTune& tune,
                         std::ostream& log);

/// @throws std::invalid_argument for request.runs out of [1, kMaxTuneRuns] ("--runs = N: …").
void check_tune_runs(const TuneRequest& request);
/// plant(1) … plant(request.runs), after check_tune_runs.
std::vector<std::vector<std::string>> tune_plants(
    const TuneRequest& request, const std::function<std::vector<std::string>(int)>& plant);
/// Kind::tuning() of a kind tuned by adaptive_grid_tune: what `prefix`.ats and .amb tune, then
/// "scored by " `score`.
std::string adaptive_tuning(const std::string& prefix, const std::string& score);
/// `v` as the shortest text that reads back to it.
std::string tune_number(double v);
/// "[a, b, …]" as a scenario spells a list.
std::string tune_list_text(const std::vector<double>& v);
/// `values` with `own` added (the default is always a candidate), sorted, without repeats.
std::vector<double> with_own(std::vector<double> values, double own);

/// An adaptive compensator as a kind's scenario holds it: fields `prefix`.type, `prefix`.amb.*
/// and `prefix`.ats.*, on a run of `duration` s at `step` s.
struct AdaptiveCompensator {
  std::string prefix{};  ///< "controller"
  std::string type{};    ///< amb and ats are tuned
  std::string origin{};  ///< the scenario (messages)
  double step = 0.0, duration = 0.0;
  core::AdaptiveModelBasedConfig amb{};
  std::vector<double> amb_gain{};        ///< the gains as the scenario spells them (messages)
  std::vector<double> cutoff_factors{};  ///< amb_tune_grid's
  core::AdaptiveTimeSeriesConfig ats{};
};
/// A GridTune with type_key `prefix`, the type and its grid (amb_tune_grid, ats_tune_grid).
/// @throws ScenarioError naming `prefix`.type for any other type, or amb_tune_grid's.
GridTune adaptive_grid_tune(const AdaptiveCompensator& c);

/// The grid of an AdaptiveModelBased compensator (fields `prefix`.amb.*): a scale
/// {0.25, 0.5, 1, 2, 4} on the whole gain vector (a scale other than 1 with Γ_i·step > 0.1 is
/// dropped, the core's bound) × the cut-off: its own and `cutoff_factors` × its own (those
/// below 0.25/step). `gain_text` is the gains as the scenario spells them (messages).
/// @throws ScenarioError when it does not adapt or every gain is 0.
std::vector<TuneCandidate> amb_tune_grid(const core::AdaptiveModelBasedConfig& c,
                                         const std::vector<double>& gain_text,
                                         const std::vector<double>& cutoff_factors,
                                         const std::string& prefix, const std::string& origin,
                                         double step);
/// The grid of an AdaptiveTimeSeries compensator (fields `prefix`.ats.*): the filter's time
/// constant {0.5, 1, 2, 4, 8}× its own (0.005–0.04 s and 0 when it is 0) × the window
/// {0.5, 1, 2}× its own (at least 8 steps, at most a third of the run of `duration` s).
std::vector<TuneCandidate> ats_tune_grid(const core::AdaptiveTimeSeriesConfig& c,
                                         const std::string& prefix, double step, double duration);

}  // namespace hyloop::jobs
