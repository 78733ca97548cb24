// The virtual RTHS benchmark kind (issue 13 §1): the sample controller against the paper's
// Table 3, the compensators against the goal, the uncompensated loop at the stroke, the
// Monte Carlo plants, and the scenario's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/vrths/vrths_experiment.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

constexpr std::array<const char*, 9> kCriteria = {"J1_ms",      "J2_percent", "J3_percent",
                                                  "J4_percent", "J5_percent", "J6_percent",
                                                  "J7_percent", "J8_percent", "J9_percent"};

nlohmann::json run(const std::string& scenario, const std::vector<std::string>& overrides = {}) {
  const auto e = make_experiment(scenario, overrides);
  e->run();
  return e->summary();
}

std::string scenario(int c, const std::string& controller) {
  return "scenarios/vrths/case" + std::to_string(c) + "_" + controller + ".yaml";
}

std::string error_of(const std::string& scenario, const std::vector<std::string>& overrides) {
  try {
    (void)make_experiment(scenario, overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

// Silva et al. 2020, Table 3: the sample controller (PI + phase lead), El Centro, nominal plant.
constexpr double kTable3[4][9] = {{4.6, 10.4, 11.5, 36.1, 19.0, 32.3, 32.4, 14.8, 14.8},
                                  {4.6, 9.8, 11.1, 33.1, 17.1, 30.5, 30.5, 15.3, 15.2},
                                  {4.6, 9.1, 10.2, 49.9, 36.7, 49.8, 49.8, 35.5, 35.6},
                                  {4.6, 10.5, 11.3, 72.6, 35.2, 68.5, 68.7, 33.4, 33.3}};

TEST(Vrths, TheSampleControllerScoresThePapersTable3OnEveryCase) {
  // The issue asks for J1–J3 within 10 %; measured: every criterion within 4.0 % of the paper
  // (the largest: case 2's J3, 11.55 vs 11.1 %).
  for (int c = 1; c <= 4; ++c) {
    const nlohmann::json s = run(scenario(c, "sample"));
    EXPECT_TRUE(s["stop_reason"].is_null()) << c;
    for (std::size_t j = 0; j < kCriteria.size(); ++j) {
      const double paper = kTable3[c - 1][j];
      EXPECT_NEAR(s[kCriteria[j]].get<double>(), paper, 0.1 * paper)
          << "case " << c << " " << kCriteria[j];
    }
    EXPECT_LT(s["peak_actuator_force_n"].get<double>(), 8900.0) << c;
    EXPECT_FALSE(s["actuator_capacity_exceeded"].get<bool>()) << c;
  }
}

// Over 20 perturbed plants per case (the benchmark's uncertainty on k_e, beta1, beta2, a3, and
// each run's own sensor noise): no compensated loop trips the stability guard (measured: the
// largest tracking ratio 0.19 against its limit 0.3, the sample controller's), and ATS and AMB
// meet the goal J1 ≤ 1 ms and J2 ≤ 3 % in every run (measured: J1 0.24 ms; J2 at most
// 2.77 % for ATS, 2.56 % for AMB). Rates over seeds, not one seed. (Suite VrthsMonteCarlo: 240
// runs, which the sanitizer stage leaves to this build; the single runs below cover the code.)
TEST(VrthsMonteCarlo,
     OverTwentyPerturbedPlantsNoCompensatedLoopTripsTheGuardAndAtsAndAmbMeetTheGoal) {
  const Kind& kind = find_kind("vrths");
  for (int c = 1; c <= 4; ++c) {
    for (const char* controller : {"sample", "ats", "amb"}) {
      int ran = 0, goal = 0;
      double worst_ratio = 0.0;
      for (int i = 1; i <= 20; ++i) {
        const nlohmann::json s = run(scenario(c, controller), kind.monte_carlo_overrides(i));
        if (s["stop_reason"].is_null()) ++ran;
        worst_ratio =
            std::max(worst_ratio, s["stability_guard"]["max_tracking_ratio"].get<double>());
        if (s["J1_ms"].get<double>() <= 1.0 && s["J2_percent"].get<double>() <= 3.0) ++goal;
      }
      EXPECT_EQ(ran, 20) << "case " << c << " " << controller;
      EXPECT_LT(worst_ratio, 0.25) << "case " << c << " " << controller;
      if (std::string(controller) != "sample") {
        EXPECT_EQ(goal, 20) << "case " << c << " " << controller;
      }
    }
  }
}

TEST(Vrths, AtsAndAmbAreAtLeastThreeTimesBetterThanTheSampleController) {
  for (int c = 1; c <= 4; ++c) {
    const nlohmann::json sample = run(scenario(c, "sample"));
    for (const char* controller : {"ats", "amb"}) {
      const nlohmann::json s = run(scenario(c, controller));
      EXPECT_LE(3.0 * s["J1_ms"].get<double>(), sample["J1_ms"].get<double>()) << c << controller;
      // J2: measured 3.8x (ATS, case 1: 2.76 vs 10.44 %) to 5.7x (AMB, case 3).
      EXPECT_LE(3.0 * s["J2_percent"].get<double>(), sample["J2_percent"].get<double>())
          << c << controller;
    }
  }
}

// Every uncompensated loop (the 25 ms of the plant's lag make it unstable on every case) is
// stopped by the stability guard before its amplitude reaches 1.2x the reference structure's
// peak (measured: at 5.91–6.24 s, |x| ≤ 0.88 mm against a 3.9–5.5 mm reference peak); without
// the guard the same loop runs into the stroke. The nominal plant here, 20 perturbed plants per
// case in VrthsMonteCarlo.
// The reference structure does not depend on the controller: the sample controller's run, the
// cheapest to run to the end.
double reference_peak(int c) {
  return run(scenario(c, "sample"))["peak_reference_m"].get<double>();
}

TEST(Vrths, TheStabilityGuardStopsTheUncompensatedLoopBeforeItOutgrowsTheReference) {
  for (int c = 1; c <= 4; ++c) {
    const double reference = reference_peak(c);
    ASSERT_GT(reference, 3e-3) << c;
    const nlohmann::json guarded = run(scenario(c, "none"));
    EXPECT_EQ(guarded["stop_reason"], "stability_guard") << c;
    EXPECT_LT(guarded["peak_displacement_m"].get<double>(), 1.2 * reference) << c;
    const nlohmann::json unguarded = run(scenario(c, "none"), {"guard.enabled=false"});
    EXPECT_EQ(unguarded["stop_reason"], "stroke_limit") << c;
    EXPECT_GT(unguarded["peak_displacement_m"].get<double>(), 1.2 * reference) << c;
    // The guard's replay in the recorder says when it would have stopped.
    EXPECT_LT(unguarded["stability_guard"]["tripped_at_s"].get<double>(), 7.0) << c;
    // The 25 ms of lag: the correlation peak lies beyond the 12 ms J1 searches.
    EXPECT_GT(unguarded["J1_ms"].get<double>(), 11.0) << c;
  }
}

TEST(VrthsMonteCarlo, TheStabilityGuardStopsEveryUncompensatedLoopOverTwentyPerturbedPlants) {
  const Kind& kind = find_kind("vrths");
  for (int c = 1; c <= 4; ++c) {
    const double reference = reference_peak(c);
    int stopped = 0;
    for (int i = 1; i <= 20; ++i) {
      const nlohmann::json s = run(scenario(c, "none"), kind.monte_carlo_overrides(i));
      if (s["stop_reason"] == "stability_guard" &&
          s["peak_displacement_m"].get<double>() < 1.2 * reference) {
        ++stopped;
      }
    }
    EXPECT_EQ(stopped, 20) << "case " << c;
  }
}

TEST(Vrths, ThePerturbedPlantOfASeedIsTheSameInEveryPart) {
  // A seed gives one plant: the summary's (the recorder's) and the parts' (the rig's plant and
  // the numerical substructure's specimen), so a Monte Carlo run through the services is the
  // in-process one.
  const auto a = make_experiment(scenario(2, "amb"), {"perturbation.seed=7"});
  const auto b = make_experiment(scenario(2, "amb"), {"perturbation.seed=7"});
  const auto nominal = make_experiment(scenario(2, "amb"), {});
  a->run();
  b->run();
  EXPECT_EQ(a->summary(), b->summary());
  nominal->run();
  EXPECT_NE(a->summary()["plant"], nominal->summary()["plant"]);
  EXPECT_EQ(nominal->summary()["plant"]["k_e_n_per_m"].get<double>(), 1.19e6);
}

TEST(Vrths, RecordingACycleAllocatesNothing) {
  const auto e = make_experiment(scenario(3, "ats"), {"timing.duration_s=2"});
  {
    const testing::AllocGuard guard;
    while (e->step()) {
    }
    EXPECT_EQ(guard.allocations(), 0U);
  }
  EXPECT_EQ(e->cycle(), 8192);
}

TEST(Vrths, ScenarioErrorsNameTheField) {
  const std::string s = scenario(1, "sample");
  EXPECT_EQ(error_of(s, {"structure.case=5"}), s + ": structure.case = 5: must be in [1, 4]");
  EXPECT_EQ(error_of(s, {"controller.type=pid"}),
            s + ": controller.type = \"pid\": must be none, sample, ats or amb");
  EXPECT_EQ(error_of(s, {"controller.ats.initial=[1, 0.02]"}),
            s + ": controller.ats.initial: must hold 3 numbers [a0, a1, a2], not 2");
  EXPECT_EQ(error_of(s, {"timing.step_s=0.01"}),
            s + ": timing.step_s = 0.01: must be in (0, 0.001] s");
  EXPECT_EQ(error_of(s, {"plant.m_e_kg=-1"}), s + ": plant.m_e_kg = -1: must be > 0 kg");
  // A scenario that arrives as text (a service's) names a file in the data directories only.
  std::string served;
  try {
    (void)make_experiment_from_text(read_scenario_text(s), "served",
                                    {"ground_motion.file=/etc/passwd"});
  } catch (const ScenarioError& e) {
    served = e.what();
  }
  EXPECT_EQ(served.rfind("served: ground_motion.file = \"/etc/passwd\"", 0), 0U) << served;
}

}  // namespace
}  // namespace hyloop::experiment
