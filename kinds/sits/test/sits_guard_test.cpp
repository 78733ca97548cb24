// The SITS stability guard (guard.*, core::EnergyGuard in SitsDynamics; issue 13 §3,
// docs/reproduction.md "Stability guard"): every uncompensated or destabilised shipped scenario
// stops (stop_reason stability_guard) before its amplitude exceeds 1.2x the ideal twin's peak,
// and diverges as before without the guard; no shipped compensated scenario stops, nor any of
// 20 noisy seeds of each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

std::string scenario_path(const std::string& name) {
  return std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/" + name + ".yaml";
}

std::unique_ptr<SitsRunner> run_scenario(const std::string& name,
                                         const std::vector<std::string>& overrides = {}) {
  auto runner = std::make_unique<SitsRunner>(load_scenario(scenario_path(name), overrides));
  runner->run();
  return runner;
}

// The largest |value| of a column over the recorded rows.
double peak(const SitsRunner& r, SitsColumn c) {
  double p = 0.0;
  for (std::size_t i = 0; i < r.samples().rows(); ++i) {
    p = std::max(p, std::abs(r.samples().row(i)[col(c)]));
  }
  return p;
}

// The rig's amplitude: the target's and the robot's positions.
double amplitude(const SitsRunner& r) {
  return std::max(peak(r, SitsColumn::kX), peak(r, SitsColumn::kXRobot));
}

// The shipped scenarios whose loop has a delay and no compensation. identify*.yaml are meant for
// `hyloop identify`; `hyloop run` runs their (default) loop, uncompensated, as table1_none's.
// Measured trip times (s) with the defaults.
struct Destabilised {
  const char* name;
  double tripped_at;
};
constexpr Destabilised kDestabilised[] = {{"table1_none", 2.970},   {"undamped_fmd", 2.126},
                                          {"undamped_ecc", 4.494},  {"undamped_srd", 8.518},
                                          {"undamped_all", 1.406},  {"identify", 2.970},
                                          {"identify_chirp", 2.970}};

TEST(SitsGuard, StopsEveryUncompensatedScenarioBeforeItsAmplitudeExceedsTheTwinsBy20Percent) {
  for (const Destabilised& d : kDestabilised) {
    SCOPED_TRACE(d.name);
    const auto unguarded = run_scenario(d.name, {"guard.enabled=false"});
    const auto guarded = run_scenario(d.name);
    // The reference: the ideal twin's peak over the whole run.
    const double reference = peak(*unguarded, SitsColumn::kXIdeal);
    ASSERT_GT(reference, 7e-3);
    // Unguarded, the loop diverges as before (past 1.2x; undamped_all to the rig's stroke).
    EXPECT_GT(amplitude(*unguarded), 1.5 * reference);
    EXPECT_NE(unguarded->stop_reason(), StopReason::kStabilityGuard);
    // Guarded, it stops at the measured time, below 1.2x (the bound: √1.2 of the initial
    // energy's amplitude, 1.095x, 1.109x of a damped twin's peak; measured ≤ 1.125x with
    // identify_chirp's position noise on X_R).
    EXPECT_EQ(guarded->stop_reason(), StopReason::kStabilityGuard);
    const double t = guarded->last_row()[col(SitsColumn::kTime)];
    EXPECT_NEAR(t, d.tripped_at, 1e-9);
    EXPECT_LT(amplitude(*guarded), 1.2 * reference);
    EXPECT_LT(peak(*guarded, SitsColumn::kX), 1.11 * reference);
    // The rows before the stop are the unguarded run's.
    ASSERT_LT(guarded->samples().rows(), unguarded->samples().rows());
    for (std::size_t i = 0; i < guarded->samples().rows(); ++i) {
      const auto g = guarded->samples().row(i);
      const auto u = unguarded->samples().row(i);
      ASSERT_TRUE(std::equal(g.begin(), g.end(), u.begin())) << "row " << i;
    }
    const nlohmann::json j = guarded->summary();
    EXPECT_EQ(j["stop_reason"], "stability_guard");
    EXPECT_TRUE(j["diverged"].get<bool>());
    const auto& g = j["stability_guard"];
    EXPECT_TRUE(g["enabled"].get<bool>());
    EXPECT_DOUBLE_EQ(g["limit"].get<double>(), 1.2);
    EXPECT_DOUBLE_EQ(g["tripped_at_s"].get<double>(), t);
    EXPECT_GT(g["max_energy_ratio"].get<double>(), 1.2);
    EXPECT_LT(g["max_energy_ratio"].get<double>(), 1.201);
    // Unguarded, the summary still says when the guard would have stopped it.
    EXPECT_DOUBLE_EQ(unguarded->summary()["stability_guard"]["tripped_at_s"].get<double>(), t);
  }
}

// The compensated (and delay-free) shipped scenarios: the largest energy ratio of each
// (measured: tdpa 1.0249, fgc/lgc/scvg and their _corrected 1.0018, ideal 1).
constexpr const char* kCompensated[] = {"ideal",
                                        "table1_fgc",
                                        "table1_fgc_corrected",
                                        "table1_lgc",
                                        "table1_lgc_corrected",
                                        "table1_scvg",
                                        "table1_scvg_corrected",
                                        "table1_tdpa"};

TEST(SitsGuard, StopsNoShippedCompensatedScenario) {
  for (const char* name : kCompensated) {
    SCOPED_TRACE(name);
    const auto r = run_scenario(name, {"outputs.samples=false"});
    EXPECT_FALSE(r->stopped());
    EXPECT_EQ(r->cycle(), r->total_steps());
    const nlohmann::json g = r->summary()["stability_guard"];
    EXPECT_TRUE(g["tripped_at_s"].is_null());
    EXPECT_LT(g["max_energy_ratio"].get<double>(), 1.026);  // 1.17x below the limit
  }
}

// 20 seeds of sensor noise (0.5 N force, 10 µm position: the phase-correction tests' noise) on
// each compensated scenario, the whole 60 s: the false-stop rate is 0 of 160 (measured: largest
// ratio 1.0262, table1_tdpa seed 12; with 2 N and 0.1 mm, 1.0299).
TEST(SitsGuard, StopsNoneOfTwentyNoisySeedsOfEachCompensatedScenario) {
  int runs = 0, stops = 0;
  double largest = 0.0;
  for (const char* name : kCompensated) {
    for (int seed = 1; seed <= 20; ++seed) {
      const auto r =
          run_scenario(name, {"outputs.samples=false", "rig.sensor.force_noise_std_n=0.5",
                              "rig.sensor.position_noise_std_m=1e-5",
                              "rig.sensor.seed=" + std::to_string(seed)});
      ++runs;
      if (r->stop_reason() == StopReason::kStabilityGuard) ++stops;
      largest =
          std::max(largest, r->summary()["stability_guard"]["max_energy_ratio"].get<double>());
    }
  }
  RecordProperty("false_stop_rate", std::to_string(stops) + "/" + std::to_string(runs));
  RecordProperty("largest_energy_ratio", std::to_string(largest));
  EXPECT_EQ(runs, 160);
  EXPECT_EQ(stops, 0);
  EXPECT_LT(largest, 1.03);
}

TEST(SitsGuard, BadSettingsNameTheFieldValueAndRange) {
  const auto error = [](const std::string& field) {
    try {
      (void)load_scenario(scenario_path("table1_scvg"), {field});
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("guard.max_energy_ratio=1").find("guard.max_energy_ratio"), std::string::npos);
  EXPECT_NE(error("guard.max_energy_ratio=1").find("> 1"), std::string::npos);
  EXPECT_NE(error("guard.energy_floor_j=0").find("guard.energy_floor_j"), std::string::npos);
  EXPECT_NE(error("guard.hold=0").find("guard.hold"), std::string::npos);
  EXPECT_EQ(error("guard.max_energy_ratio=1.5"), "no error");
}

}  // namespace
}  // namespace hyloop::experiment
