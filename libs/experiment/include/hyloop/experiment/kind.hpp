#pragma once
// An experiment kind as a plug-in: everything the tool, the loop services and the coordinator
// need of a kind, at configure time only (never in a cycle). A kind is one object in its own
// file; the framework knows none by name: the shipped kinds register themselves
// (kinds/shipped_kinds.cpp, linked whole into every program that links hyloop::kinds), plug-ins
// when they are loaded (kind_plugin.hpp), tests with register_kind(). Callers look a kind up by the
// scenario's `kind` and never name one: an unknown kind is refused by name (find_kind), never
// defaulted to another.
//
// One parse: Kind::load turns the scenario's YAML (parsed once by load_scenario_text) into a
// LoadedScenario, from which the runner, the notices, the loop plan and the parts all come. A
// kind without a distributed form (no loop services) keeps the LoadedScenario's defaults of
// loop_plan(), make_rig_part() and make_dynamics_part(), which throw std::invalid_argument
// naming the kind.

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_fields.hpp"

namespace YAML {
class Node;
}  // namespace YAML

namespace hyloop::experiment {

class LoadedScenario;

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
  /// Reads the scenario's fields from `root` (its YAML, parsed once with the overrides applied,
  /// whose `kind` names this kind) and validates them, reading any data file the scenario names
  /// through `data`: the one parse of a run or a service's Configure. @throws ScenarioError
  /// naming the field.
  [[nodiscard]] virtual std::unique_ptr<LoadedScenario> load(const YAML::Node& root,
                                                             const std::string& origin,
                                                             const DataSource& data) const = 0;
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
};

/// A kind's scenario, parsed and validated once (Kind::load): the runner, the notices, the loop
/// plan and the parts all come from this one object, so a run or a service's Configure reads
/// the scenario's YAML once (issue 23).
class LoadedScenario {
 public:
  explicit LoadedScenario(const Kind& kind) : kind_(&kind) {}
  virtual ~LoadedScenario() = default;
  LoadedScenario(const LoadedScenario&) = delete;
  LoadedScenario& operator=(const LoadedScenario&) = delete;

  [[nodiscard]] const Kind& kind() const noexcept { return *kind_; }

  /// What `hyloop validate` and the coordinator's LoadScenario report of a scenario.
  struct Description {
    std::string name{};
    std::string resolved_yaml{};  ///< every field, defaults resolved (what the services get)
    std::int64_t total_steps = 0;
    double step = 0.0;  ///< s
  };
  /// The scenario described without building its runner, when the kind can (ParsedScenario
  /// with a plan): loading a long run costs nothing proportional to its length. The default
  /// builds the runner and asks it.
  [[nodiscard]] virtual Description describe() const;
  /// The in-process runner, with the kind's signal roles set (summary.json "signals").
  [[nodiscard]] std::unique_ptr<Experiment> experiment() const;
  /// The same runner as a streamed recorder (the coordinator's, issue 27): it keeps none of
  /// its tables' rows in memory but writes them where Experiment::stream_tables says, so that
  /// its memory does not grow with the run's length; the same files and summary. A kind whose
  /// runner cannot stream gives its experiment().
  [[nodiscard]] std::unique_ptr<Experiment> streamed_experiment() const;
  /// Warnings about the valid scenario that `hyloop run` prints (none by default).
  [[nodiscard]] virtual std::vector<std::string> notices() const { return {}; }

  // ---- the distributed form (loop_parts.hpp); a kind without one keeps the defaults, which
  // throw std::invalid_argument naming the kind ----
  /// The kind's plan, its layouts checked (checked_loop_plan).
  [[nodiscard]] LoopPlan loop_plan() const;
  [[nodiscard]] virtual std::unique_ptr<RigPart> make_rig_part() const;
  [[nodiscard]] virtual std::unique_ptr<DynamicsPart> make_dynamics_part() const;
  /// The wire-level emulator of the device the scenario's rig.driver names, driving the kind's
  /// plant (hyloop up --emulate-wire). The default throws std::invalid_argument naming the kind.
  [[nodiscard]] virtual std::unique_ptr<WireEmulator> make_wire_emulator(
      const hal::WireImpairments& impairments) const;

 protected:
  [[nodiscard]] virtual std::unique_ptr<Experiment> make_experiment() const = 0;
  /// The streamed recorder (streamed_experiment); the default: make_experiment().
  [[nodiscard]] virtual std::unique_ptr<Experiment> make_streamed_experiment() const {
    return make_experiment();
  }
  [[nodiscard]] virtual LoopPlan make_loop_plan() const;
  /// The error of a kind without a distributed form.
  [[noreturn]] void no_distributed_form() const;

 private:
  const Kind* kind_;
};

/// The LoadedScenario of a kind whose parsed scenario is an `S` and whose runner is an `E`
/// (constructed from the S): the kind names the functions that make its plan, parts and
/// notices from the S; one left null is what the kind does not have.
template <typename S, typename E>
class ParsedScenario final : public LoadedScenario {
 public:
  struct Form {
    LoopPlan (*plan)(const S&) = nullptr;
    std::unique_ptr<RigPart> (*rig)(const S&) = nullptr;
    std::unique_ptr<DynamicsPart> (*dynamics)(const S&) = nullptr;
    std::vector<std::string> (*notices)(const S&) = nullptr;
    std::string (*yaml)(const S&) = nullptr;  ///< the resolved scenario (to_yaml)
    std::unique_ptr<WireEmulator> (*wire_emulator)(const S&, const hal::WireImpairments&) = nullptr;
  };
  ParsedScenario(const Kind& kind, S scenario, Form form)
      : LoadedScenario(kind), scenario_(std::move(scenario)), form_(form) {}
  [[nodiscard]] const S& scenario() const noexcept { return scenario_; }
  [[nodiscard]] std::vector<std::string> notices() const override {
    return form_.notices != nullptr ? form_.notices(scenario_) : std::vector<std::string>{};
  }
  /// From the plan and the resolved YAML, without the runner (and its recorder).
  [[nodiscard]] Description describe() const override {
    if (form_.plan == nullptr || form_.yaml == nullptr) return LoadedScenario::describe();
    const LoopPlan plan = form_.plan(scenario_);
    return {.name = scenario_.name,
            .resolved_yaml = form_.yaml(scenario_),
            .total_steps = plan.total_steps,
            .step = plan.step};
  }
  [[nodiscard]] std::unique_ptr<RigPart> make_rig_part() const override {
    if (form_.rig == nullptr) no_distributed_form();
    return form_.rig(scenario_);
  }
  [[nodiscard]] std::unique_ptr<DynamicsPart> make_dynamics_part() const override {
    if (form_.dynamics == nullptr) no_distributed_form();
    return form_.dynamics(scenario_);
  }
  [[nodiscard]] std::unique_ptr<WireEmulator> make_wire_emulator(
      const hal::WireImpairments& impairments) const override {
    if (form_.wire_emulator == nullptr) return LoadedScenario::make_wire_emulator(impairments);
    return form_.wire_emulator(scenario_, impairments);
  }

 protected:
  [[nodiscard]] std::unique_ptr<Experiment> make_experiment() const override {
    return std::make_unique<E>(scenario_);
  }
  /// An E constructed with SampleTable::Streamed is a streamed recorder.
  [[nodiscard]] std::unique_ptr<Experiment> make_streamed_experiment() const override {
    if constexpr (std::is_constructible_v<E, const S&, SampleTable::Streamed>) {
      return std::make_unique<E>(scenario_, SampleTable::Streamed{});
    } else {
      return make_experiment();
    }
  }
  [[nodiscard]] LoopPlan make_loop_plan() const override {
    if (form_.plan == nullptr) no_distributed_form();
    return form_.plan(scenario_);
  }

 private:
  S scenario_;
  Form form_;
};

/// Parses `text` once (overrides applied), finds its kind and has it load the scenario.
/// @throws ScenarioError naming the field (a missing or unknown `kind` too).
std::unique_ptr<LoadedScenario> load_scenario_text(const std::string& text,
                                                   const std::string& origin,
                                                   const std::vector<std::string>& overrides = {},
                                                   const DataSource& data = DataSource::server());

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
/// The identification `kind` offers, refused by name like kind_identification.
const Identification& kind_identification(const Kind& kind);
const Analysis& kind_analysis(const std::string& text, const std::string& origin = "scenario");
/// The plug-in machinery (kind_plugin.hpp): this program's registry, as an opaque handle, and
/// the call a plug-in's copy of the framework gets before its kind is created, after which its
/// find_kind, kinds() and make_experiment_* see the loading program's kinds.
void* kind_registry_handle();
void attach_kind_registry(void* host_registry);
/// Every registered kind, sorted by name (the same whether a program loaded the kinds as
/// plug-ins or linked them).
std::vector<const Kind*> kinds();
/// The names of the registered kinds, sorted.
std::vector<std::string> kind_names();
/// kind_names() joined for a message, with any refused kind plug-in and its reason
/// (kind_plugin.hpp).
std::string known_kinds();

}  // namespace hyloop::experiment
