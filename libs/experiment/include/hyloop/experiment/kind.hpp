#pragma once
// An experiment kind as a plug-in: everything the tool, the loop services and the coordinator
// need of a kind, at configure time only (never in a cycle). A kind is one object in its own
// file; the framework knows none by name: the shipped kinds register themselves
// (kinds/shipped_kinds.cpp, linked whole into every program that links hyloop::kinds), plug-ins
// when they are loaded (kind_plugin.hpp), tests with register_kind(). Callers look a kind up by the
// scenario's `kind` and never name one: an unknown kind is refused by name (find_kind), never
// defaulted to another.
//
// A kind without a distributed form (no loop services) keeps the defaults of loop_plan(),
// make_rig_part() and make_dynamics_part(), which throw std::invalid_argument naming the kind.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_fields.hpp"

namespace hyloop::experiment {

/// A gauge the dynamics service exports from one of the values its DynamicsPart computes:
/// each cycle, metric{labels} = scale · value of `column` (NaN while a kind without it runs).
struct GaugeSpec {
  std::string metric{};
  std::string help{};
  std::map<std::string, std::string> labels{};
  std::string column{};  ///< "name[unit]" of DynamicsPart::names()
  double scale = 1.0;    ///< column unit → metric unit (e.g. kg/s → g/s: 1000)
};

/// How the actuator and the rig emulator export the command (in the metric's unit, scale ·
/// the loop's value): `command_metric` after the safety layer (actuator_help at the actuator,
/// rig_help at the rig), `limit_metric`{bound="min"|"max"} the configured window, and
/// `position_metric` the rig's measured position (empty: none). Empty command_metric: none.
struct CommandGauges {
  std::string command_metric{}, actuator_help{}, rig_help{};
  std::string limit_metric{}, limit_help{};
  std::string position_metric{}, position_help{};
  double scale = 1.0;
};
/// The command gauges of a kind whose command is a position in m (SITS, RHT).
CommandGauges mechanical_command_gauges();

/// `hyloop tune SCENARIO` as the tool hands it to a kind's tuner (Kind::tune).
struct TuneRequest {
  std::string text{};    ///< the scenario's text
  std::string origin{};  ///< its path (messages; data files relative to it, through `data`)
  std::vector<std::string> overrides{};
  DataSource data{};
  int runs = 5;  ///< perturbed plants per candidate (Kind::monte_carlo_overrides(1..runs))
  int jobs = 0;  ///< parallel runs; 0: the machine's cores
  int top = 10;  ///< rows of the table to print
  std::vector<double> switch_times{};  ///< switch-time candidates (a switching compensator's)
  bool coarse = false;                 ///< a coarser grid: fewer runs
};
/// The options of `hyloop tune` beyond --set/--out/--jobs/--top, each of which only some tuners
/// take (Kind::tune_options): the tool refuses one the scenario's tuner does not, by name.
enum class TuneOption : std::uint8_t { kRuns, kSwitchTimes, kCoarse };
/// What a kind's tuner found: `document` is the table the tool writes (--out; it has "best"),
/// `text` what it prints on stdout (the best candidate as --set lines, beside the default's
/// score).
struct TuneResult {
  nlohmann::json document{};
  std::string text{};
};
inline constexpr int kMaxTuneRuns = 1000;

class Kind {
 public:
  virtual ~Kind() = default;

  /// The scenario's `kind`.
  [[nodiscard]] virtual std::string name() const = 0;
  /// The in-process runner: parses and validates `text` with the overrides, reading any data
  /// file the scenario names through `data`. @throws ScenarioError.
  [[nodiscard]] virtual std::unique_ptr<Experiment> make_experiment(
      const std::string& text, const std::string& origin, const std::vector<std::string>& overrides,
      const DataSource& data) const = 0;
  /// Warnings about a valid scenario that `hyloop run` prints (none by default).
  /// @throws ScenarioError.
  [[nodiscard]] virtual std::vector<std::string> notices(
      const std::string& /*text*/, const std::string& /*origin*/,
      const std::vector<std::string>& /*overrides*/) const {
    return {};
  }

  // ---- the distributed form (loop_parts.hpp) ----
  /// @throws ScenarioError naming the field; std::invalid_argument without a distributed form.
  [[nodiscard]] virtual LoopPlan loop_plan(const std::string& text) const;
  [[nodiscard]] virtual std::unique_ptr<RigPart> make_rig_part(const std::string& text) const;
  [[nodiscard]] virtual std::unique_ptr<DynamicsPart> make_dynamics_part(
      const std::string& text) const;
  /// What its recorded signals mean (experiment.hpp SignalRoles): summary.json "signals", the
  /// report's figures and the dynamics service's tracking gauges read them.
  [[nodiscard]] virtual SignalRoles signal_roles() const { return {}; }
  /// The kind's own dynamics gauges (beyond the tracking ones).
  [[nodiscard]] virtual std::vector<GaugeSpec> dynamics_gauges() const { return {}; }
  [[nodiscard]] virtual CommandGauges command_gauges() const { return {}; }
  /// Its identification from a sweep (`hyloop identify`, the identification service);
  /// nullptr: none (capabilities.hpp).
  [[nodiscard]] virtual const Identification* identification() const { return nullptr; }
  /// Its stability analysis (`hyloop analyze`); nullptr: none.
  [[nodiscard]] virtual const Analysis* analysis() const { return nullptr; }
  /// Monte Carlo (`hyloop montecarlo`): the overrides of run `run` ≥ 1 (its perturbed plant and
  /// its own noise); empty: the kind has no perturbation model.
  [[nodiscard]] virtual std::vector<std::string> monte_carlo_overrides(int /*run*/) const {
    return {};
  }
  /// The numeric summary fields a Monte Carlo aggregates (mean, std, min, max).
  [[nodiscard]] virtual std::vector<std::string> monte_carlo_metrics() const { return {}; }
  /// `hyloop tune`: searches the scenario's tunable parameters, logging its progress and table to
  /// `log`. std::nullopt: the kind has no tuner (`hyloop tune` refuses its scenarios, naming the
  /// kinds that have one). @throws ScenarioError naming the field of a scenario with nothing to
  /// tune, std::runtime_error when no candidate runs.
  [[nodiscard]] virtual std::optional<TuneResult> tune(const TuneRequest& /*request*/,
                                                       std::ostream& /*log*/) const {
    return std::nullopt;
  }
  /// What tune() tunes, one phrase for `hyloop tune --help` and refusals (empty: no tuner).
  [[nodiscard]] virtual std::string tuning() const { return {}; }
  /// The tune options its tuner takes.
  [[nodiscard]] virtual std::vector<TuneOption> tune_options() const { return {}; }
  /// Its scenario fields (parse, emit, `hyloop schema`, docs/scenarios.md); nullptr: none
  /// declared.
  [[nodiscard]] virtual const FieldTable* fields() const { return nullptr; }

 protected:
  /// The error of a kind without a distributed form.
  [[noreturn]] void no_distributed_form() const;
};

/// Adds a kind. @throws std::invalid_argument when its name is empty or already registered.
void register_kind(std::unique_ptr<Kind> kind);
/// Adds a kind that lives as long as the program (a shipped kind's static object); the same
/// checks.
void register_kind(const Kind& kind);
/// The kind named `name`. @throws std::invalid_argument naming it and the known kinds.
const Kind& find_kind(std::string_view name);
/// The kind of a scenario's text (its `kind` field, which it must have). @throws ScenarioError
/// for a malformed text, std::invalid_argument for an unknown kind.
const Kind& find_scenario_kind(const std::string& text, const std::string& origin = "scenario");
/// The kind of a scenario's text if the identification service runs it. @throws
/// std::invalid_argument naming the kind and those that it runs (or an unknown kind).
const Kind& identification_kind(const std::string& text);
/// The identification (analysis) of a scenario's kind. @throws std::invalid_argument "scenario
/// kind "K": identification runs a A or B scenario" when its kind offers none, ScenarioError for
/// a scenario without a known kind.
const Identification& kind_identification(const std::string& text,
                                          const std::string& origin = "scenario");
const Analysis& kind_analysis(const std::string& text, const std::string& origin = "scenario");
/// Every registered kind, in registration order (the shipped ones first).
std::vector<const Kind*> kinds();
/// The names of the registered kinds, sorted.
std::vector<std::string> kind_names();
/// kind_names() joined for a message, with any refused kind plug-in and its reason
/// (kind_plugin.hpp).
std::string known_kinds();

}  // namespace hyloop::experiment
