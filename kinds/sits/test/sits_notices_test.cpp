// Issue 15, defect 9: a compensator left with all its gains at 0 is a notice at validation; a
// run shorter than the default metrics window gets a window of the whole run (with a notice),
// and a window given longer than the run is an error that says how to fix it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

// Every scenario names its kind; these tests are about the fields after it.
std::string with_kind(const std::string& yaml) {
  return yaml.starts_with("kind:") ? yaml : "kind: sits\n" + yaml;
}

const std::string kSource = HYLOOP_SOURCE_DIR;

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides) {
  try {
    parse_scenario(with_kind(yaml), "test.yaml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

bool has_notice(const SitsScenario& s, const std::string& part) {
  for (const std::string& n : s.notices) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(ScenarioNotices, ShortRunGetsTheWholeRunAsMetricsWindowWithANotice) {
  const SitsScenario s =
      parse_scenario("kind: sits\nname: t\n", "test.yaml", {"timing.duration_s=2"});
  EXPECT_EQ(s.metrics.window, 2.0);
  ASSERT_EQ(s.notices.size(), 1u);
  EXPECT_NE(s.notices[0].find("metrics.window_s"), std::string::npos) << s.notices[0];
  EXPECT_NE(s.notices[0].find("timing.duration_s = 2"), std::string::npos) << s.notices[0];
  // The resolved scenario states the window: it reads back the same, without a notice.
  const SitsScenario back = parse_scenario(to_yaml(s), "resolved.yaml");
  EXPECT_EQ(back.metrics.window, 2.0);
  EXPECT_TRUE(back.notices.empty());
}

TEST(ScenarioNotices, DefaultWindowIsFiveSecondsForALongRunWithoutNotice) {
  const SitsScenario s = parse_scenario("kind: sits\nname: t\n", "test.yaml");
  EXPECT_EQ(s.metrics.window, kDefaultMetricsWindow);
  EXPECT_EQ(s.metrics.window, 5.0);
  EXPECT_TRUE(s.notices.empty());
  const SitsScenario exact =
      parse_scenario("kind: sits\nname: t\n", "test.yaml", {"timing.duration_s=5"});
  EXPECT_EQ(exact.metrics.window, 5.0);
  EXPECT_TRUE(exact.notices.empty());
}

TEST(ScenarioNotices, GivenWindowLongerThanTheRunSaysHowToFixIt) {
  const std::string e = error_of("name: t\nmetrics: {window_s: 5}\n", {"timing.duration_s=2"});
  EXPECT_NE(e.find("metrics.window_s = 5"), std::string::npos) << e;
  EXPECT_NE(e.find("timing.duration_s = 2"), std::string::npos) << e;
  EXPECT_NE(e.find("--set metrics.window_s=2"), std::string::npos) << e;
  // A given window within the run is kept as given.
  const SitsScenario s = parse_scenario("kind: sits\nname: t\n", "test.yaml",
                                        {"timing.duration_s=4", "metrics.window_s=1.5"});
  EXPECT_EQ(s.metrics.window, 1.5);
  EXPECT_TRUE(s.notices.empty());
  EXPECT_NE(error_of("name: t\n", {"metrics.window_s=0"}).find("metrics.window_s = 0"),
            std::string::npos);
}

TEST(ScenarioNotices, CompensatorWithAllItsGainsZeroIsNoticed) {
  struct Case {
    std::string yaml;
    bool noticed;
  };
  const std::vector<Case> cases{
      {"compensator: {type: fgc}\n", true},
      {"compensator: {type: fgc, k_eps0: -80}\n", false},
      {"compensator: {type: fgc, k_eps1: -1, k_eps2: 8}\n", true},  // FGC uses k_eps0 only
      {"compensator: {type: lgc}\n", true},
      {"compensator: {type: lgc, k_eps1: -0.04}\n", false},
      {"compensator: {type: scvg}\n", true},
      {"compensator: {type: scvg, k_eps2: 8.75}\n", false},
      {"compensator: {type: none}\n", false},
  };
  for (const Case& c : cases) {
    const SitsScenario s = parse_scenario("kind: sits\nname: t\n" + c.yaml, "test.yaml");
    EXPECT_EQ(has_notice(s, "K_h is 0 throughout"), c.noticed) << c.yaml;
    if (c.noticed) {
      EXPECT_TRUE(has_notice(s, "compensator.type = ")) << c.yaml;
    }
  }
}

TEST(ScenarioNotices, ShippedCompensatedScenariosHaveNone) {
  for (const char* name : {"table1_none", "table1_fgc", "table1_lgc", "table1_scvg"}) {
    const SitsScenario s = load_scenario(kSource + "/scenarios/sits/" + name + ".yaml");
    EXPECT_TRUE(s.notices.empty()) << name << ": " << (s.notices.empty() ? "" : s.notices[0]);
  }
}

}  // namespace
}  // namespace hyloop::experiment
