// The adaptive RHT test (RHT paper) end to end: delay, the 4-parameter model's accuracy, noise,
// the time-varying servo, the RLS guard, validation of bad inputs, no allocation in a step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hyloop/experiment/rht_experiment.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

std::string path(const std::string& name) {
  return std::string(HYLOOP_SOURCE_DIR) + "/scenarios/rht/" + name + ".yaml";
}

nlohmann::json run(const std::string& name, const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> o = overrides;
  o.push_back("outputs.samples=false");
  RhtExperiment e(load_rht_scenario(path(name), o));
  e.run();
  return e.summary();
}

TEST(Rht, UncompensatedDelayIsThePapers27ms) {
  const auto s = run("none");
  const double delay = s["metrics"]["delay_command_to_measured_s"].get<double>();
  EXPECT_NEAR(delay, 0.027, 0.2 * 0.027);
  EXPECT_NEAR(delay, 0.0271, 0.0005);  // the servo's phase delay at the structure's 1 Hz
  // undamped structure + 27 ms: negative damping, the run stops at the actuator's stroke
  EXPECT_TRUE(s["diverged"].get<bool>());
  EXPECT_EQ(s["stop_reason"].get<std::string>(), "stroke_limit");
}

TEST(Rht, FourParameterModelNoiseFreeTracksBelow1e4mmAfter3s) {
  const auto s = run("p4");
  EXPECT_FALSE(s["diverged"].get<bool>());
  EXPECT_LT(s["metrics"]["max_error_after_settle_m"].get<double>(), 1e-7);  // 1e-4 mm
  EXPECT_NEAR(s["metrics"]["delay_desired_to_measured_s"].get<double>(), 0.0, 1e-4);
}

TEST(Rht, NoiseAndTimeVaryingServoErrorsAreOfThePapersOrder) {
  const auto noisy = run("p4_noise");
  const auto varying = run("p4_varying");
  const auto three = run("p3");
  EXPECT_FALSE(noisy["diverged"].get<bool>());
  EXPECT_LT(noisy["metrics"]["max_error_after_settle_m"].get<double>(), 0.5e-3);  // paper 0.13 mm
  EXPECT_LT(varying["metrics"]["max_error_after_settle_m"].get<double>(),
            0.2e-3);                                                              // paper 0.042 mm
  EXPECT_LT(three["metrics"]["max_error_after_settle_m"].get<double>(), 0.1e-3);  // paper 0.013 mm
}

// The paper's "variance 0.01 mm" read as a variance of 0.01 mm² (σ = 0.1 mm): the 7-parameter
// model's command oscillates at 2Δt; the 4-parameter model's does not (docs/rht.md).
TEST(Rht, SevenParameterCommandOscillatesAtTwoStepsAndIsFlagged) {
  const auto p4 = run("p4_noise_high");
  const auto p7 = run("p7_noise_high");
  const auto clean = run("p4");
  EXPECT_FALSE(clean["metrics"]["command_two_step_oscillation"].get<bool>());
  EXPECT_FALSE(p4["metrics"]["command_two_step_oscillation"].get<bool>());
  EXPECT_TRUE(p7["metrics"]["command_two_step_oscillation"].get<bool>());
  EXPECT_GT(p7["metrics"]["command_two_step_ratio"].get<double>(),
            5.0 * p4["metrics"]["command_two_step_ratio"].get<double>());
}

TEST(Rht, RlsGuardKeepsTheModelAndCountsRejections) {
  const auto s = run("p4", {"compensator.max_parameter_jump=1e-6"});
  EXPECT_GT(s["rls"]["guard_rejections"].get<std::uint64_t>(), 0u);
  EXPECT_FALSE(s["diverged"].get<bool>());
}

TEST(Rht, AStepAllocatesNothing) {
  RhtExperiment e(load_rht_scenario(path("p4_noise"), {}));
  testing::AllocGuard guard;
  while (e.step()) {
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_GT(e.cycle(), 3000);
}

std::string error_of(const std::string& name, const std::vector<std::string>& overrides) {
  try {
    RhtExperiment e(load_rht_scenario(path(name), overrides));
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Rht, BadInputsAreRejectedNamingTheField) {
  EXPECT_NE(error_of("p4", {"compensator.forgetting_factor=-0.5"})
                .find("compensator.forgetting_factor = -0.5: must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of("p4", {"servo.colour=red"}).find("servo.colour: unknown field"),
            std::string::npos);
  EXPECT_NE(error_of("p4", {"timing.step_s=0.4"}).find("timing.step_s"), std::string::npos);
  // a ground-motion file whose point count disagrees with its NPTS header
  const auto dir = std::filesystem::temp_directory_path() / "hyloop_rht_test";
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.at2";
  std::ofstream(bad)
      << "title\nline\nunits (g)\nNPTS=    6, DT= .02000 SEC\n 0.1 0.2 0.3 0.4 0.5\n";
  const std::string e = error_of("p4", {"ground_motion.file=" + bad.string()});
  EXPECT_NE(e.find("ground_motion"), std::string::npos) << e;
  EXPECT_NE(e.find("NPTS"), std::string::npos) << e;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hyloop::experiment
