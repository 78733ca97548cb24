// Fuzz target: the scenario reader of every kind, as the coordinator's LoadScenario and the loop
// services' Configure use it (libs/experiment experiment.hpp, loop_parts.hpp).
//
// Input: scenario text; a line "#--set" (a YAML comment, so mutations that drop it still leave
// YAML) ends it, and every following line is one `--set dotted.path=value` override.
// tests/fuzz/corpus/scenario/ holds every shipped scenario (scenarios/**) with and without
// overrides.
//
// What runs, in the coordinator's order: make_experiment_from_text (server data policy: data
// files only by name from the project's data/), loop_plan of the resolved scenario, the rig and
// dynamics parts the services build from it, 100 cycles, the summary.
// Invariants: the only exception is ScenarioError, or std::invalid_argument from loop_plan/
// make_*_part for a kind without services (their documented contract); the resolved scenario
// (what LoadScenario stores and a run journal keeps) reads back to the same resolved scenario;
// an error message is at most kMaxMessageChars long.

#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_error.hpp"

namespace {

namespace ex = hyloop::experiment;
namespace hal = hyloop::hal;

constexpr std::string_view kOverridesMarker = "\n#--set\n";
constexpr int kMaxCycles = 100;
constexpr std::int64_t kPartCycles = 20;  ///< cycles of the loop parts each input runs
constexpr std::size_t kMaxMessageChars = 1024;

void split(std::string_view input, std::string& text, std::vector<std::string>& overrides) {
  const auto marker = input.find(kOverridesMarker);
  text = std::string(input.substr(0, marker));
  if (marker == std::string_view::npos) return;
  std::string_view rest = input.substr(marker + kOverridesMarker.size());
  while (!rest.empty()) {
    const auto eol = rest.find('\n');
    overrides.emplace_back(rest.substr(0, eol));
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
}

void exercise_services(const std::string& resolved) {
  ex::LoopPlan plan;
  try {
    plan = ex::loop_plan(resolved);
  } catch (const std::invalid_argument&) {
    return;  // a kind that has no services (loop_plan's documented contract)
  }
  auto rig = ex::make_rig_part(resolved);
  auto dynamics = ex::make_dynamics_part(resolved);
  FUZZ_CHECK(rig != nullptr && dynamics != nullptr, "a loop part is missing");
  // The parts step in their layouts' sizes (loop contract v2), as the services step them.
  std::array<double, hal::kMaxSignals> measured{};
  std::array<double, ex::kMaxTruth> truth{};
  std::vector<double> values(dynamics->names().size(), 0.0);
  const std::span<double> m(measured.data(), plan.measurement.size());
  hal::ActuatorCommand applied = plan.initial;
  for (std::int64_t k = 0; k < kPartCycles; ++k) {
    rig->step(applied, m, std::span<double>(truth.data(), rig->truth_names().size()));
    hal::ActuatorCommand next{};
    if (dynamics->step(k, m, values, next).stopped()) break;
    applied = next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text;
  std::vector<std::string> overrides;
  split({reinterpret_cast<const char*>(data), size}, text, overrides);
  std::unique_ptr<ex::Experiment> experiment;
  try {
    experiment = ex::make_experiment_from_text(text, "fuzz", overrides);
  } catch (const ex::ScenarioError& e) {
    // Refused with a message: the expected outcome for most inputs. Values are quoted at most
    // 200 characters (yaml_fields.hpp), so a message stays short whatever the input.
    FUZZ_CHECK(std::string_view(e.what()).size() <= kMaxMessageChars,
               std::string(e.what()).substr(0, 400).c_str());
    return 0;
  } catch (const std::exception& e) {
    hyloop::fuzz::fail(__FILE__, __LINE__, "a scenario error is not a ScenarioError", e.what());
  }
  const std::string resolved = experiment->resolved_yaml();
  std::string again;
  try {
    again = ex::make_experiment_from_text(resolved, "resolved", {})->resolved_yaml();
    exercise_services(resolved);
  } catch (const std::exception& e) {
    hyloop::fuzz::fail(__FILE__, __LINE__, "the resolved scenario does not read back", e.what());
  }
  FUZZ_CHECK(again == resolved, "the resolved scenario reads back differently");
  for (int k = 0; k < kMaxCycles && experiment->step(); ++k) {
  }
  (void)experiment->summary().dump();
  return 0;
}
