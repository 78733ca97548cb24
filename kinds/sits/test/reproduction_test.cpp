// The SITS paper's §5 claims, reproduced (docs/reproduction.md sets the numbers side by side).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/kinds/sits/sits_jobs.hpp"
#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/recording/run_directory.hpp"

namespace hyloop::experiment {
namespace {

std::string scenario_path(const std::string& name) {
  return std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/" + name + ".yaml";
}

struct Result {
  core::WindowMetrics window;
  bool stopped;
  double energy_ratio;
  double kh_min, kh_max;
};

Result run(const std::string& name, const std::string& extra = "outputs.samples=false") {
  SitsRunner runner(load_scenario(scenario_path(name), {"outputs.samples=false", extra}));
  runner.run();
  return {runner.metrics().window(), runner.stopped(), runner.metrics().energy_ratio(),
          runner.k_h_min(), runner.k_h_max()};
}

TEST(Table1, UncompensatedDivergesAndScvgTracksTheTwin) {
  const Result none = run("table1_none", "guard.enabled=false");  // Table 1's column: unguarded
  const Result fgc = run("table1_fgc");
  const Result lgc = run("table1_lgc");
  const Result scvg = run("table1_scvg");
  EXPECT_GT(none.energy_ratio, 1.01);  // diverges: energy grows from the first to the last cycle
  for (const Result* r : {&fgc, &lgc, &scvg}) {
    EXPECT_FALSE(r->stopped);
    EXPECT_LT(r->energy_ratio, 1.0);
  }
  EXPECT_GE(scvg.window.cycles, 4);
  EXPECT_GE(scvg.window.amplitude_ratio, 0.995);
  EXPECT_LE(scvg.window.amplitude_ratio, 1.005);
  EXPECT_LT(scvg.window.e_f_peak, fgc.window.e_f_peak);
  EXPECT_LT(scvg.window.e_f_peak, lgc.window.e_f_peak);
  EXPECT_LT(scvg.window.e_v_peak, fgc.window.e_v_peak);
  EXPECT_LT(scvg.window.e_v_peak, lgc.window.e_v_peak);
}

TEST(Table1, RouthWithTheIdentifiedRobot) {
  const SitsScenario s = load_scenario(scenario_path("table1_scvg"));
  const auto at_zero = analyze_loop(s, 0.0, true);
  EXPECT_FALSE(at_zero["stable"].get<bool>());
  EXPECT_EQ(at_zero["rhp_roots"].get<int>(), 2);  // the paper: two RHP roots at K_h = 0
  EXPECT_EQ(at_zero["routh"]["sign_changes"].get<int>(), 2);
  // The SCVG run's whole K_h range [C_el, C_eh] lies in the stable interval.
  const Result scvg = run("table1_scvg");
  for (double k : {scvg.kh_min, scvg.kh_max}) {
    const auto a = analyze_loop(s, k, true);
    EXPECT_TRUE(a["stable"].get<bool>()) << "K_h = " << k;
    EXPECT_EQ(a["rhp_roots"].get<int>(), 0);
  }
}

TEST(Identification, NoiseFreeSweepRecoversTheEmulatedRobot) {
  const SitsScenario s = load_scenario(scenario_path("identify"));
  const auto j = identify_robot(s);
  EXPECT_LT(j["emulator_truth"]["max_relative_coefficient_error"].get<double>(), 1e-6);
  const auto& freqs = j["frequency_response"];
  bool checked = false;
  for (std::size_t i = 0; i < freqs.size(); ++i) {
    if (freqs[i]["frequency_hz"].get<double>() == 10.0) {
      EXPECT_NEAR(j["emulator_truth"]["phase_error_deg"][i].get<double>(), 0.0, 0.01);
      EXPECT_NEAR(freqs[i]["phase_deg"].get<double>(), -5.9, 0.05);  // DESIGN §6 default preset
      checked = true;
    }
  }
  EXPECT_TRUE(checked);
  EXPECT_EQ(j["continuous_model"]["zeros_count"].get<int>(), 1);
  EXPECT_EQ(j["continuous_model"]["poles_count"].get<int>(), 2);
}

// σ = 0.1 mm on X_R, over the noise seeds 1–20 (one seed is one draw): the prediction NRMSE stays
// above 95 % in every one (measured 99.40–99.43 %).
TEST(Identification, NoisySweepStaysAbove95PercentAndSaysSo) {
  for (int seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("rig.sensor.seed = " + std::to_string(seed));
    const SitsScenario s = load_scenario(
        scenario_path("identify"),
        {"rig.sensor.position_noise_std_m=1e-4", "rig.sensor.seed=" + std::to_string(seed)});
    const auto j = identify_robot(s);
    EXPECT_GT(j["nrmse_prediction_percent"].get<double>(), 95.0);
    EXPECT_TRUE(j["fit_ok"].get<bool>());
    EXPECT_NE(j["fit_note"].get<std::string>().find("above the 95% acceptance threshold"),
              std::string::npos);
    EXPECT_NE(j["fit_note"].get<std::string>().find("position noise"), std::string::npos);
    // Output noise biases an equation-error fit; when a biased discrete pole has no continuous
    // zero-order-hold preimage the report must say so rather than fail.
    if (j["continuous_model"].is_null()) {
      EXPECT_NE(j["continuous_model_error"].get<std::string>().find("negative real axis"),
                std::string::npos);
    }
  }
}

// The tool on bad input: non-zero exit, one line naming the field, no run directory.
TEST(HyloopTool, BadScenarioExitsNonZeroWithOneLineAndWritesNothing) {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("hyloop_bad_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  const std::array<std::pair<std::string, std::string>, 4> cases{{
      {"kind: sits\nname: x\nmodel: {mass_kg: 500, colour: red}\n", "model.colour: unknown field"},
      {"kind: sits\nname: x\nmodel: {mass_kg: -1}\n", "model.mass_kg = -1"},
      {"kind: sits\nname: x\ntiming: {step_s: 0.003, control_period_s: 0.004}\n",
       "timing.control_period_s"},
      {"kind: sits\nname: x\nrig: {contact: {damping_ns_per_m: .nan}}\n",
       "rig.contact.damping_ns_per_m"},
  }};
  for (const auto& [yaml, expected] : cases) {
    const fs::path file = tmp / "bad.yaml";
    FILE* f = std::fopen(file.c_str(), "w");
    std::fputs(yaml.c_str(), f);
    std::fclose(f);
    const fs::path out = tmp / "run";
    const std::string cmd = std::string(HYLOOP_BIN_DIR) + "/hyloop run " + file.string() +
                            " --out " + out.string() + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string output;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) output += buf.data();
    const int status = pclose(pipe);
    EXPECT_NE(status, 0) << yaml;
    EXPECT_NE(output.find(expected), std::string::npos) << output;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << output;
    EXPECT_FALSE(fs::exists(out)) << yaml;
  }
  fs::remove_all(tmp);
}

// hyloop tune keeps only gains whose whole K_h range the Routh analysis calls stable, and its
// best SCVG candidate meets the Table 1 claims.
TEST(Tune, KeepsOnlyRouthStableGainsAndFindsAnScvgThatBeatsFgcAndLgc) {
  const SitsScenario s = load_scenario(scenario_path("table1_scvg"));
  TuneOptions options;
  options.switch_times = {26.0};
  options.top = 5;
  std::ostringstream log;
  const auto result = tune_compensator(s, options, log);
  const auto& intervals = result["stable_k_h_intervals"];
  ASSERT_FALSE(intervals.empty());
  for (const auto& row : result["table"]) {
    EXPECT_TRUE(row["routh_stable"].get<bool>());
    EXPECT_FALSE(row["diverged"].get<bool>());
    const double lo = intervals[0]["lower"].get<double>();
    const double hi = intervals[0]["upper"].get<double>();
    EXPECT_GT(row["k_h_min"].get<double>(), lo);
    EXPECT_LT(row["k_h_max"].get<double>(), hi);
  }
  const auto& best = result["best"];
  EXPECT_TRUE(best["beats_fgc_and_lgc"].get<bool>());
  EXPECT_GE(best["amplitude_ratio"].get<double>(), 0.995);
  EXPECT_LE(best["amplitude_ratio"].get<double>(), 1.005);
  EXPECT_NE(log.str().find("top SCVG candidates"), std::string::npos);
}

// DESIGN §10: identification also works on recorded data (x_cmd → x_robot of a closed-loop run).
TEST(Identification, RecordedRunRecoversTheRobot) {
  namespace fs = std::filesystem;
  const SitsScenario s = load_scenario(scenario_path("table1_scvg"), {"timing.duration_s=10"});
  SitsRunner runner(s);
  runner.run();
  const fs::path dir = fs::temp_directory_path() / ("hyloop_ident_" + std::to_string(::getpid()));
  hyloop::recording::write_run_directory(runner, dir, true);
  const auto j = identify_from_run(load_scenario(scenario_path("identify")), dir);
  fs::remove_all(dir);
  EXPECT_EQ(j["samples"].get<int>(), 5000);
  EXPECT_GT(j["nrmse_prediction_percent"].get<double>(), 99.99);
  for (const auto& p : j["frequency_response"]) {
    if (p["frequency_hz"].get<double>() == 10.0) {
      EXPECT_NEAR(p["phase_deg"].get<double>(), -5.9157, 0.01);
    }
  }
}

}  // namespace
}  // namespace hyloop::experiment
