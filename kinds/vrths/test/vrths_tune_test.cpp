// `hyloop tune` of a vrths scenario (Kind::tune, vrths_tune.cpp; issue 13 §2): the chosen
// candidate scores no worse than the scenario's own values on the same perturbed plants (they are
// a candidate), its score is what a Monte Carlo of it gives, and a scenario with nothing to tune
// is refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace {

using namespace hyloop::experiment;

// 20 s of the record (the strong motion) keeps the test short; two plants.
TuneRequest request_for(const std::string& name, std::vector<std::string> overrides = {}) {
  const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/vrths/" + name + ".yaml";
  overrides.insert(overrides.begin(), "timing.duration_s=20");
  return {.text = read_scenario_text(path),
          .origin = path,
          .overrides = overrides,
          .data = DataSource::local_file(path),
          .runs = 2,
          .jobs = 2,
          .top = 3};
}

// Mean J2 of the scenario with `set` on Monte Carlo runs 1..runs, as `hyloop montecarlo` runs it.
double monte_carlo_j2(const TuneRequest& r, const nlohmann::json& set) {
  const Kind& kind = find_scenario_kind(r.text, r.origin);
  double sum = 0.0;
  for (int i = 1; i <= r.runs; ++i) {
    std::vector<std::string> overrides = r.overrides;
    for (const auto& line : set) overrides.push_back(line.get<std::string>());
    for (const std::string& x : kind.monte_carlo_overrides(i)) overrides.push_back(x);
    const auto e = make_experiment_from_text(r.text, r.origin, overrides, r.data);
    e->run();
    const nlohmann::json summary = e->summary();
    EXPECT_TRUE(summary["stop_reason"].is_null()) << set.dump();
    sum += summary["J2_percent"].get<double>();
  }
  return sum / r.runs;
}

void expect_best_no_worse_than_default(const std::string& name) {
  const TuneRequest r = request_for(name);
  const Kind& kind = find_scenario_kind(r.text, r.origin);
  ASSERT_FALSE(kind.tuning().empty());
  std::ostringstream log;
  const auto result = kind.tune(r, log);
  ASSERT_TRUE(result.has_value());
  const nlohmann::json& d = result->document;
  const nlohmann::json& best = d["best"];
  const nlohmann::json& own = d["default"];
  EXPECT_TRUE(own["default"].get<bool>());
  EXPECT_FALSE(best["disqualified"].get<bool>());
  EXPECT_FALSE(own["disqualified"].get<bool>()) << "the shipped scenario runs on every plant";
  EXPECT_LE(best["J2_percent_mean"].get<double>(), own["J2_percent_mean"].get<double>());
  EXPECT_EQ(d["table"].size(), d["candidates"].get<std::size_t>());
  EXPECT_EQ(d["candidates_run"].get<std::size_t>(), d["candidates"].get<std::size_t>() * 2);
  // Scored on the same plants a Monte Carlo runs: the default's and the best's means reproduce.
  EXPECT_NEAR(monte_carlo_j2(r, own["set"]), own["J2_percent_mean"].get<double>(), 1e-12);
  EXPECT_NEAR(monte_carlo_j2(r, best["set"]), best["J2_percent_mean"].get<double>(), 1e-12);
  // The printed lines are the best's settings, pasteable as --set.
  for (const auto& line : best["set"]) {
    EXPECT_NE(result->text.find("--set '" + line.get<std::string>() + "'"), std::string::npos)
        << result->text;
  }
  EXPECT_NE(result->text.find("the scenario's own: J2"), std::string::npos) << result->text;
  EXPECT_NE(log.str().find("rank"), std::string::npos);
}

TEST(VrthsTune, AmbBestScoresNoWorseThanTheDefaultOnTheSamePlants) {
  expect_best_no_worse_than_default("case1_amb");
}

TEST(VrthsTune, AtsBestScoresNoWorseThanTheDefaultOnTheSamePlants) {
  expect_best_no_worse_than_default("case1_ats");
}

std::string refusal(const TuneRequest& r) {
  std::ostringstream log;
  try {
    (void)find_scenario_kind(r.text, r.origin).tune(r, log);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(not refused)";
}

TEST(VrthsTune, RefusesAControllerWithNothingToTuneNamingTheField) {
  for (const std::string name : {"case1_none", "case1_sample"}) {
    const std::string m = refusal(request_for(name));
    EXPECT_NE(m.find("controller.type"), std::string::npos) << m;
    EXPECT_NE(m.find("ats"), std::string::npos) << m;
    EXPECT_NE(m.find("amb"), std::string::npos) << m;
  }
  std::string m = refusal(request_for("case1_amb", {"controller.amb.adapt=false"}));
  EXPECT_NE(m.find("controller.amb.adapt"), std::string::npos) << m;
  m = refusal(request_for("case1_amb", {"controller.amb.gain_per_s=[0, 0, 0, 0]"}));
  EXPECT_NE(m.find("controller.amb.gain_per_s"), std::string::npos) << m;
  TuneRequest r = request_for("case1_ats");
  r.runs = 0;
  m = refusal(r);
  EXPECT_NE(m.find("--runs = 0"), std::string::npos) << m;
}

// Its tuner takes --runs, not the compensator tuner's options (the tool refuses those by name).
TEST(VrthsTune, TakesRunsOnly) {
  EXPECT_EQ(find_kind("vrths").tune_options(), std::vector<TuneOption>{TuneOption::kRuns});
}

}  // namespace
