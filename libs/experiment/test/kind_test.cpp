// The kind registry (kind.hpp, issue 12): the shipped kinds are exactly sits, rht and fcu; an
// unknown kind is refused by name, listing the known ones, by every entry point (never
// defaulted to another kind); a kind registered at run time is dispatched to without any edit
// of the loop code.
#include "hyloop/experiment/kind.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr const char* kUnknown = "kind: crane\nname: tower\n";

/// The message of what `f` throws as E ("" when it throws nothing).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(KindRegistry, ListsExactlyTheShippedKinds) {
  EXPECT_EQ(kind_names(), (std::vector<std::string>{"fcu", "rht", "sits", "sits6", "vrths"}));
  for (const std::string& name : kind_names()) EXPECT_EQ(find_kind(name).name(), name);
}

TEST(KindRegistry, UnknownKindIsRefusedByNameWithTheKnownOnes) {
  const std::string m = message_of<std::invalid_argument>([] { (void)find_kind("crane"); });
  EXPECT_THAT(m, HasSubstr("\"crane\"")) << m;
  EXPECT_THAT(m, HasSubstr("fcu, rht, sits, sits6, vrths")) << m;
}

TEST(KindRegistry, MakeExperimentRefusesAnUnknownKindByName) {
  const std::string m = message_of<ScenarioError>(
      [] { (void)make_experiment_from_text(kUnknown, "tower.yaml", {}); });
  EXPECT_THAT(m, HasSubstr("tower.yaml: kind = \"crane\": must be one of fcu, rht, sits")) << m;
}

// Issue 23: no kind is the default. A scenario without `kind` (or no scenario at all) is refused,
// naming the kinds there are, wherever it enters: the tool, a service's Configure, the loop parts.
TEST(KindRegistry, AScenarioWithoutKindIsRefusedNamingTheKinds) {
  for (const std::string text : {"name: t\n", "{}", ""}) {
    const std::string m =
        message_of<ScenarioError>([&] { (void)make_experiment_from_text(text, "plain.yaml", {}); });
    EXPECT_THAT(m, HasSubstr("plain.yaml: ")) << m;
    EXPECT_THAT(m, AnyOf(HasSubstr("kind: missing: a scenario names its kind, one of fcu, rht, "
                                   "sits, sits6, vrths"),
                         HasSubstr("not a scenario")))
        << m;
    EXPECT_THROW((void)loop_plan(text), ScenarioError) << text;
    EXPECT_THROW((void)find_scenario_kind(text), ScenarioError) << text;
  }
}

// A scenario's unknown kind is a scenario error naming the field, the value and the known kinds,
// the same wherever the scenario enters (one parse: load_scenario_text).
TEST(KindRegistry, LoopPartsRefuseAnUnknownKindByName) {
  const std::string text = kUnknown;
  for (const std::string& m :
       {message_of<ScenarioError>([&] { (void)loop_plan(text); }),
        message_of<ScenarioError>([&] { (void)make_rig_part(text); }),
        message_of<ScenarioError>([&] { (void)make_dynamics_part(text); })}) {
    EXPECT_THAT(m, HasSubstr("scenario: kind = \"crane\": must be one of fcu, rht, sits")) << m;
  }
  const std::string m = message_of<std::invalid_argument>([&] { (void)identification_kind(text); });
  EXPECT_THAT(m, HasSubstr("\"crane\"")) << m;
  EXPECT_THAT(m, HasSubstr("the known kinds are fcu, rht, sits")) << m;
}

TEST(KindRegistry, IdentificationRefusesTheKindsWithoutIt) {
  const std::string m =
      message_of<std::invalid_argument>([] { (void)identification_kind("kind: rht\n"); });
  EXPECT_EQ(m, "scenario kind \"rht\": identification runs a sits scenario");
}

// Identification and analysis are capabilities a kind offers or not (capabilities.hpp): the
// kinds without one are refused by name, naming those that offer it.
TEST(KindRegistry, CapabilitiesAreOfferedByKindAndRefusedByName) {
  for (const char* kind : {"rht", "fcu", "vrths"}) {
    const std::string text = std::string("kind: ") + kind + "\n";
    EXPECT_EQ(
        message_of<std::invalid_argument>([&] { (void)kind_analysis(text, "s.yaml"); }),
        std::string("scenario kind \"") + kind + "\": analysis runs a sits or sits6 scenario");
    EXPECT_EQ(message_of<std::invalid_argument>([&] { (void)kind_identification(text, "s.yaml"); }),
              std::string("scenario kind \"") + kind + "\": identification runs a sits scenario");
  }
  const std::string sits = "kind: sits\n";
  EXPECT_EQ(&kind_identification(sits), find_kind("sits").identification());
  EXPECT_EQ(&kind_analysis(sits), find_kind("sits").analysis());
  EXPECT_EQ(&kind_analysis("kind: sits6\n"), find_kind("sits6").analysis());
  EXPECT_NE(find_kind("sits6").analysis(), find_kind("sits").analysis());
  // The identification service's check: a scenario that is not a sweep run is refused with the
  // field it needs, before any loop exists.
  const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/identify.yaml";
  const std::string text = read_scenario_text(path);
  EXPECT_THAT(message_of<std::invalid_argument>([&] {
                (void)kind_identification(text).sweep(*load_scenario_text(text, "scenario"));
              }),
              HasSubstr("delays.control_cycle: the actuator holds each command for h = 2 steps"));
  const auto run = kind_identification(text).sweep_run(text, "scenario", {});
  EXPECT_EQ(run->samples(), 1501U);  // identification.samples
  EXPECT_EQ(run->step_s(), 0.002);
  EXPECT_EQ(run->command(0).position, 0.0);  // A·sin(0)
  EXPECT_NEAR(run->command(25).position, 0.025 * std::sin(18.84955592153876 * 0.05), 1e-15);
  const auto again =
      kind_identification(text).sweep(*load_scenario_text(run->scenario_yaml(), "scenario"));
  EXPECT_EQ(again->samples(), run->samples());
  EXPECT_EQ(again->step_s(), run->step_s());
  for (std::uint64_t k : {0U, 1U, 17U, 1000U}) {
    EXPECT_EQ(again->command(k).position, run->command(k).position) << k;
    EXPECT_EQ(again->command(k).velocity, run->command(k).velocity) << k;
  }
}

/// A test-only kind's scenario: a distributed form whose plan says where it came from; no
/// runner.
class ProbeScenario final : public LoadedScenario {
 public:
  ProbeScenario(const Kind& kind, std::string origin, bool distributed)
      : LoadedScenario(kind), origin_(std::move(origin)), distributed_(distributed) {}

 protected:
  std::unique_ptr<Experiment> make_experiment() const override {
    throw ScenarioError(origin_ + ": probe kind " + kind().name() + " has no runner");
  }
  LoopPlan make_loop_plan() const override {
    if (!distributed_) return LoadedScenario::make_loop_plan();
    LoopPlan p;
    p.kind = kind().name();
    p.total_steps = 7;
    p.step = 0.25;
    p.measurement = {{{"level", "m", "length"}}};
    p.command = set_point_command("level_set", "m", "length");
    return p;
  }

 private:
  std::string origin_;
  bool distributed_;
};

class ProbeKind final : public Kind {
 public:
  explicit ProbeKind(std::string name, bool distributed)
      : name_(std::move(name)), distributed_(distributed) {}
  std::string name() const override { return name_; }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& /*root*/, const std::string& origin,
                                       const DataSource& /*data*/) const override {
    return std::make_unique<ProbeScenario>(*this, origin, distributed_);
  }

 private:
  std::string name_;
  bool distributed_;
};

TEST(KindRegistry, ARegisteredKindIsDispatchedToAndNeverDefaulted) {
  register_kind(std::make_unique<ProbeKind>("probe", true));
  register_kind(std::make_unique<ProbeKind>("probe_local", false));
  EXPECT_EQ(find_kind("probe").name(), "probe");
  const LoopPlan p = loop_plan("kind: probe\n");
  EXPECT_EQ(p.kind, "probe");
  EXPECT_EQ(p.total_steps, 7);
  EXPECT_EQ(p.step, 0.25);
  EXPECT_THAT(message_of<ScenarioError>(
                  [] { (void)make_experiment_from_text("kind: probe\n", "p.yaml", {}); }),
              HasSubstr("p.yaml: probe kind probe has no runner"));
  // A kind without a distributed form is refused by name, not run as another kind.
  for (const std::string& m :
       {message_of<std::invalid_argument>([] { (void)loop_plan("kind: probe_local\n"); }),
        message_of<std::invalid_argument>([] { (void)make_rig_part("kind: probe_local\n"); }),
        message_of<std::invalid_argument>(
            [] { (void)make_dynamics_part("kind: probe_local\n"); })}) {
    EXPECT_THAT(m, HasSubstr("scenario kind \"probe_local\" has no distributed form")) << m;
  }
  EXPECT_THAT(message_of<std::invalid_argument>(
                  [] { register_kind(std::make_unique<ProbeKind>("sits", true)); }),
              HasSubstr("\"sits\" is already registered"));
  EXPECT_EQ(find_kind("sits").name(), "sits");
}

// Issue 27, finding 3: checking and describing a scenario (hyloop validate, the coordinator's
// LoadScenario) costs memory independent of the run's length: a 24 h SITS run (43.2 M steps)
// and a 10 s one ask for the same bytes, under 4 MB; building the runner is what reserves the
// steps (its recorder).
TEST(KindRegistry, DescribingAScenarioCostsNothingProportionalToItsLength) {
  const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/table1_scvg.yaml";
  const std::string text = read_scenario_text(path);
  const auto bytes_of = [&](const std::string& duration) {
    const hyloop::testing::AllocGuard guard;
    const auto loaded = load_scenario_text(text, path, {"timing.duration_s=" + duration});
    const LoadedScenario::Description d = loaded->describe();
    (void)loaded->loop_plan();
    EXPECT_EQ(d.step, 0.002);
    return std::make_pair(guard.bytes(), d.total_steps);
  };
  const auto [short_bytes, short_steps] = bytes_of("10");
  const auto [long_bytes, long_steps] = bytes_of("86400");
  EXPECT_EQ(short_steps, 5000);
  EXPECT_EQ(long_steps, 43200000);
  EXPECT_LT(long_bytes, std::size_t{4} << 20);
  EXPECT_LT(long_bytes, short_bytes + (std::size_t{64} << 10)) << short_bytes;
  const hyloop::testing::AllocGuard guard;
  (void)load_scenario_text(text, path, {"timing.duration_s=100"})->experiment();
  EXPECT_GT(guard.bytes(), std::size_t{50000} * 8) << "the runner's recorder reserves its steps";
}

// One parse (issue 23): a scenario's YAML is parsed once by load_scenario_text, and the runner,
// the notices, the plan and both parts all come from that one LoadedScenario; the text-taking
// entry points parse once each.
TEST(KindRegistry, AScenarioIsParsedOnceForEverythingMadeFromIt) {
  for (const char* file :
       {"sits/table1_scvg.yaml", "rht/ats.yaml", "fcu/polynomial.yaml", "vrths/case1_amb.yaml"}) {
    const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/" + file;
    const std::string text = read_scenario_text(path);
    const std::uint64_t before = yaml_parses();
    const auto loaded =
        load_scenario_text(text, path, {"timing.duration_s=4"}, DataSource::local_file(path));
    const auto experiment = loaded->experiment();
    (void)loaded->notices();
    const LoopPlan plan = loaded->loop_plan();
    const auto rig = loaded->make_rig_part();
    const auto dynamics = loaded->make_dynamics_part();
    EXPECT_EQ(yaml_parses() - before, 1U) << file;
    EXPECT_EQ(plan.kind, loaded->kind().name()) << file;
    EXPECT_EQ(experiment->kind(), loaded->kind().name()) << file;
    EXPECT_FALSE(experiment->signal_roles().target.empty()) << file;
    const std::uint64_t again = yaml_parses();
    (void)make_experiment_from_text(text, path, {"timing.duration_s=4"},
                                    DataSource::local_file(path));
    EXPECT_EQ(yaml_parses() - again, 1U) << file;
  }
}

}  // namespace
}  // namespace hyloop::experiment
