#include "hyloop/kinds/sits/sits_scenario.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"

namespace hyloop::experiment {
namespace {

// Every scenario names its kind; these tests are about the fields after it.
std::string with_kind(const std::string& yaml) {
  return yaml.starts_with("kind:") ? yaml : "kind: sits\n" + yaml;
}

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(with_kind(yaml), "test.yaml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Scenario, DefaultsAreTable1) {
  const SitsScenario s = parse_scenario("kind: sits\nname: t\n", "test.yaml");
  EXPECT_EQ(s.model.mass, 500.0);
  EXPECT_EQ(s.rig.contact.stiffness, 20000.0);
  EXPECT_EQ(s.rig.contact.damping, 50.0);
  EXPECT_EQ(s.hold_steps(), 2);
  EXPECT_DOUBLE_EQ(s.sensor_delay_steps(), 1.0);
  EXPECT_EQ(s.steps(), 30000);
}

TEST(Scenario, UnknownFieldIsAnErrorNamingItAndTheAllowedOnes) {
  const std::string e = error_of("model: {mass_kg: 500, masss: 3}\n");
  EXPECT_NE(e.find("model.masss: unknown field"), std::string::npos) << e;
  EXPECT_NE(e.find("mass_kg"), std::string::npos) << e;
  EXPECT_NE(error_of("colour: red\n").find("colour: unknown field"), std::string::npos);
}

TEST(Scenario, NegativeMassIsRejectedWithFieldValueAndRange) {
  const std::string e = error_of("model: {mass_kg: -5}\n");
  EXPECT_NE(e.find("model.mass_kg = -5: must be in [0.001, 10000000] kg"), std::string::npos) << e;
}

TEST(Scenario, StepMustDivideTheControlPeriod) {
  const std::string e = error_of("timing: {step_s: 0.003, control_period_s: 0.004}\n");
  EXPECT_NE(e.find("timing.control_period_s = 0.004: must be a whole multiple"), std::string::npos)
      << e;
}

TEST(Scenario, NaNAndTextAreRejected) {
  EXPECT_NE(error_of("rig: {contact: {stiffness_n_per_m: .nan}}\n")
                .find("rig.contact.stiffness_n_per_m: .nan is not finite"),
            std::string::npos);
  EXPECT_NE(error_of("model: {mass_kg: heavy}\n").find("model.mass_kg: \"heavy\" is not a number"),
            std::string::npos);
  EXPECT_NE(error_of("delays: {control_cycle: maybe}\n").find("delays.control_cycle"),
            std::string::npos);
  EXPECT_NE(error_of("compensator: {type: pid}\n").find("none, fgc, lgc, scvg"), std::string::npos);
}

TEST(Scenario, OverridesApplyAsYamlScalarsAndAreValidated) {
  const SitsScenario s = parse_scenario(
      "kind: sits\nname: t\n", "t.yaml",
      {"compensator.type=scvg", "compensator.k_eps0=-111.5", "delays.robot_response=false"});
  EXPECT_EQ(s.compensator.kind, core::CompensatorKind::kSwitching);
  EXPECT_EQ(s.compensator.k_eps0, -111.5);
  EXPECT_FALSE(s.delays.robot_response);
  EXPECT_NE(error_of("name: t\n", {"model.mass_kg=0"}).find("model.mass_kg = 0"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\n", {"model.bogus=1"}).find("model.bogus: unknown field"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\n", {"nonsense"}).find("expected dotted.path=value"),
            std::string::npos);
}

TEST(Scenario, ResolvedYamlReadsBackIdentically) {
  const SitsScenario a = parse_scenario(
      "kind: sits\nname: t\nrig: {robot: {preset: paper}}\ncompensator: {type: lgc, k_eps0: "
      "-0.1}\n",
      "t.yaml");
  const SitsScenario b = parse_scenario(to_yaml(a), "resolved.yaml");
  EXPECT_EQ(to_yaml(a), to_yaml(b));
  EXPECT_EQ(b.rig.robot.omega_n, a.rig.robot.omega_n);
  EXPECT_EQ(b.compensator.k_eps0, -0.1);
}

TEST(Scenario, WrongSchemaVersionIsRejected) {
  EXPECT_NE(error_of("schema_version: 2\n").find("schema_version = 2"), std::string::npos);
}

}  // namespace
}  // namespace hyloop::experiment

namespace hyloop::experiment {
namespace {

// The compensator tuner is the SITS kind's (Kind::tune), taking --switch-times and --coarse and
// not --runs; a scenario with no compensator has nothing to tune.
TEST(SitsTune, TheCompensatorTunerIsTheKindsOwn) {
  const Kind& sits = find_kind("sits");
  EXPECT_THAT(sits.tuning(), ::testing::HasSubstr("compensator.type"));
  EXPECT_EQ(sits.tune_options(),
            (std::vector<TuneOption>{TuneOption::kSwitchTimes, TuneOption::kCoarse}));
  std::ostringstream log;
  const TuneRequest none{.text = "kind: sits\nname: t\ncompensator: {type: none}\n",
                         .origin = "none.yaml"};
  EXPECT_ANY_THROW((void)sits.tune(none, log));
}

}  // namespace
}  // namespace hyloop::experiment
