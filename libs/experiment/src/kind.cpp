#include "hyloop/experiment/kind.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<const Kind*> kinds;
  std::vector<std::unique_ptr<Kind>> owned;         // the ones register_kind() added
  void* yaml_parses = yaml_parse_counter_handle();  // the host's, shared with its plug-ins
};

// A plug-in's copy of the framework uses the registry of the program that loaded it
// (attach_kind_registry), so its own code (a tuner's runs, Monte Carlo) finds every kind, and
// its YAML parses count in the host's yaml_parses().
Registry*& attached_registry() {
  static Registry* host = nullptr;
  return host;
}

Registry& registry() {
  if (Registry* host = attached_registry()) return *host;
  static Registry r;
  return r;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::unique_ptr<Experiment> LoadedScenario::experiment() const {
  std::unique_ptr<Experiment> e = make_experiment();
  e->set_signal_roles(kind().signal_roles());
  return e;
}

std::unique_ptr<Experiment> LoadedScenario::streamed_experiment() const {
  std::unique_ptr<Experiment> e = make_streamed_experiment();
  e->set_signal_roles(kind().signal_roles());
  return e;
}

LoadedScenario::Description LoadedScenario::describe() const {
  const std::unique_ptr<Experiment> e = experiment();
  return {.name = e->name(),
          .resolved_yaml = e->resolved_yaml(),
          .total_steps = e->total_steps(),
          .step = e->step_size()};
}

LoopPlan LoadedScenario::loop_plan() const { return checked_loop_plan(make_loop_plan()); }

LoopPlan LoadedScenario::make_loop_plan() const { no_distributed_form(); }

std::unique_ptr<RigPart> LoadedScenario::make_rig_part() const { no_distributed_form(); }

std::unique_ptr<DynamicsPart> LoadedScenario::make_dynamics_part() const { no_distributed_form(); }

std::unique_ptr<WireEmulator> LoadedScenario::make_wire_emulator(
    const hal::WireImpairments& /*impairments*/) const {
  throw std::invalid_argument("scenario kind \"" + kind().name() +
                              "\" has no wire emulator (rig.driver): only the kinds whose rig "
                              "drives a plant over a wire driver have one");
}

void LoadedScenario::no_distributed_form() const {
  throw std::invalid_argument("scenario kind \"" + kind().name() +
                              "\" has no distributed form (loop services): run it in process "
                              "(hyloop run)");
}

CommandGauges mechanical_command_gauges() {
  return {.command_metric = "hyloop_actuator_command_meters",
          .actuator_help = "Position command after the safety layer (limits, rate limit).",
          .rig_help = "Position command after the safety layer, as the rig applies it.",
          .limit_metric = "hyloop_actuator_position_limit_meters",
          .limit_help = "The configured position limits.",
          .position_metric = "hyloop_actuator_position_meters",
          .position_help = "Measured actuator (robot) position.",
          .scale = 1.0};
}

namespace {

/// Adds `kind` (and takes `owned`, when given) under the registry's lock.
void add_kind(const Kind* kind, std::unique_ptr<Kind> owned) {
  if (kind == nullptr || kind->name().empty()) {
    throw std::invalid_argument("register_kind: a kind needs a name");
  }
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const Kind* k : r.kinds) {
    if (k->name() == kind->name()) {
      throw std::invalid_argument("register_kind: kind \"" + kind->name() +
                                  "\" is already registered");
    }
  }
  r.kinds.push_back(kind);
  if (owned) r.owned.push_back(std::move(owned));
}

}  // namespace

void register_kind(std::unique_ptr<Kind> kind) {
  const Kind* k = kind.get();
  add_kind(k, std::move(kind));
}

void register_kind(const Kind& kind) { add_kind(&kind, nullptr); }

const Kind& find_kind(std::string_view name) {
  Registry& r = registry();
  {
    const std::lock_guard<std::mutex> lock(r.mutex);
    for (const Kind* k : r.kinds) {
      if (k->name() == name) return *k;
    }
  }
  throw std::invalid_argument("unknown scenario kind \"" + excerpt(name) +
                              "\": the known kinds are " + known_kinds());
}

std::string known_kinds() {
  std::string out = joined(kind_names());
  const std::vector<std::string> refused = kind_plugin_refusals();
  if (!refused.empty()) out += " (kind plug-ins refused: " + joined(refused) + ")";
  if (const std::vector<std::string> dirs = kind_plugin_dirs_searched(); !dirs.empty()) {
    out += " (kind plug-ins looked for in " + joined(dirs) + "; --kinds DIR adds one)";
  }
  return out;
}

const Kind& find_scenario_kind(const std::string& text, const std::string& origin) {
  return find_kind(scenario_kind_of_text(text, origin));
}

namespace {

/// `kind` if it offers `has`; else std::invalid_argument "scenario kind "K": WHAT runs a A or B
/// scenario" (the kinds that offer it; "no shipped or loaded kind offers it" when none).
template <typename Has>
const Kind& kind_offering(const Kind& kind, const std::string& what, Has has) {
  if (has(kind)) return kind;
  std::vector<std::string> able;
  for (const Kind* k : kinds()) {
    if (has(*k)) able.push_back(k->name());
  }
  throw std::invalid_argument("scenario kind \"" + kind.name() + "\": " + what +
                              (able.empty() ? " is offered by no known kind"
                                            : " runs a " + listed_with_or(able) + " scenario"));
}

}  // namespace

const Kind& identification_kind(const std::string& text) {
  return kind_offering(find_scenario_kind(text), "identification",
                       [](const Kind& k) { return k.identification() != nullptr; });
}

const Identification& kind_identification(const Kind& kind) {
  return *kind_offering(kind, "identification", [](const Kind& k) {
            return k.identification() != nullptr;
          }).identification();
}

const Identification& kind_identification(const std::string& text, const std::string& origin) {
  return kind_identification(find_scenario_kind(text, origin));
}

const Analysis& kind_analysis(const std::string& text, const std::string& origin) {
  return *kind_offering(find_scenario_kind(text, origin), "analysis", [](const Kind& k) {
            return k.analysis() != nullptr;
          }).analysis();
}

void* kind_registry_handle() { return &registry(); }

void attach_kind_registry(void* host_registry) {
  attached_registry() = static_cast<Registry*>(host_registry);
  attach_yaml_parse_counter(attached_registry()->yaml_parses);
}

std::vector<const Kind*> kinds() {
  Registry& r = registry();
  std::vector<const Kind*> out;
  {
    const std::lock_guard<std::mutex> lock(r.mutex);
    out = r.kinds;
  }
  std::sort(out.begin(), out.end(),
            [](const Kind* a, const Kind* b) { return a->name() < b->name(); });
  return out;
}

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const Kind* k : kinds()) names.push_back(k->name());  // kinds() is sorted by name
  return names;
}

}  // namespace hyloop::experiment
