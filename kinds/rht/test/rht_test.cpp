// The adaptive RHT test (RHT paper) end to end: delay, the 4-parameter model's accuracy, noise,
// the time-varying servo, the RLS guard, ATS and AMB beside the RLS compensators (issue 13), the
// stability guard (issue 13 §3),
// validation of bad inputs, no allocation in a step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"
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

// A noisy run is one draw: every claim about one is a rate over the noise seeds 1…20
// (servo.seed; docs/rht.md, "Noise: rates over seeds").
constexpr int kSeeds = 20;

struct SeedRates {
  int flagged = 0;             ///< command_two_step_oscillation
  int stopped = 0;             ///< the command left the stroke (never sent)
  int unsafe = 0;              ///< flagged or stopped
  std::vector<double> ratios;  ///< command_two_step_ratio of the runs that have one
  std::vector<double> errors;  ///< max_error_after_settle_m of the runs that were not stopped
};

SeedRates over_seeds(const std::string& name) {
  SeedRates r;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const auto s = run(name, {"servo.seed=" + std::to_string(seed)});
    const auto& m = s["metrics"];
    const bool flagged = m["command_two_step_oscillation"].get<bool>();
    const bool stopped = s["diverged"].get<bool>();
    r.flagged += flagged ? 1 : 0;
    r.stopped += stopped ? 1 : 0;
    r.unsafe += flagged || stopped ? 1 : 0;
    if (!m["command_two_step_ratio"].is_null()) {
      r.ratios.push_back(m["command_two_step_ratio"].get<double>());
    }
    if (!stopped) r.errors.push_back(m["max_error_after_settle_m"].get<double>());
  }
  return r;
}

double median(std::vector<double> v) {
  EXPECT_FALSE(v.empty());
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST(Rht, UncompensatedDelayIsThePapers27ms) {
  // Unguarded: the stability guard would stop the run at 2 s (StabilityGuard* below).
  const auto s = run("none", {"guard.enabled=false"});
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
  // σ = 0.01 mm over 20 seeds: measured 0.053–0.13 mm, median 0.065 mm (paper 0.1349 mm).
  const SeedRates noisy = over_seeds("p4_noise");
  EXPECT_EQ(noisy.unsafe, 0);
  ASSERT_EQ(noisy.errors.size(), static_cast<std::size_t>(kSeeds));
  for (double e : noisy.errors) EXPECT_LT(e, 0.5e-3);
  EXPECT_LT(median(noisy.errors), 0.1349e-3);
  // No noise: one run each.
  const auto varying = run("p4_varying");
  const auto three = run("p3");
  EXPECT_LT(varying["metrics"]["max_error_after_settle_m"].get<double>(),
            0.2e-3);                                                              // paper 0.042 mm
  EXPECT_LT(three["metrics"]["max_error_after_settle_m"].get<double>(), 0.1e-3);  // paper 0.013 mm
}

// The paper's "variance 0.01 mm" read as a variance of 0.01 mm² (σ = 0.1 mm): the 7-parameter
// model's command oscillates at 2Δt (flagged) or leaves the stroke; the 4-parameter model's
// does neither (docs/rht.md). Measured over seeds 1–20: p7 unsafe in 17 (13 flagged, 6 stopped),
// median Nyquist share 6.4 %; p4 in 0, median 0.75 %. Over seeds 1–200: 176 and 3.
TEST(Rht, SevenParameterCommandOscillatesAtTwoStepsAndIsFlagged) {
  const auto clean = run("p4");
  EXPECT_FALSE(clean["metrics"]["command_two_step_oscillation"].get<bool>());
  const SeedRates p4 = over_seeds("p4_noise_high");
  const SeedRates p7 = over_seeds("p7_noise_high");
  RecordProperty("p7_unsafe_of_20", p7.unsafe);
  RecordProperty("p4_unsafe_of_20", p4.unsafe);
  EXPECT_GE(p7.unsafe, 14) << "flagged " << p7.flagged << ", stopped " << p7.stopped;
  EXPECT_GE(p7.flagged, 8);
  EXPECT_LE(p4.unsafe, 2) << "flagged " << p4.flagged << ", stopped " << p4.stopped;
  EXPECT_GT(median(p7.ratios), 5.0 * median(p4.ratios));
  // At the paper's σ = 0.01 mm neither model's command oscillates (not reproduced there).
  EXPECT_EQ(over_seeds("p7_noise").unsafe, 0);
}

// Issue 13 §2: ATS (Chae et al.) and AMB (Fermandois) in the RLS compensator's place, on the
// same El Centro test (docs/rht.md, "ATS and AMB"). Measured (noise-free):
//   none (unguarded): stopped at 4.27 s (stroke), RMS error 16.1 mm, delay desired->measured 26.9
//   ms ats:  RMS 0.192 mm, max 2.41 mm (the first second, before the first fit), 0.081 mm after
//         3 s, delay desired->measured 0.009 ms, a = [1.000, 0.0269 s, 3.8e-4 s^2]
//   amb:  RMS 0.047 mm, max 0.47 mm, 0.148 mm after 3 s, delay 0.003 ms,
//         a = [1.002, 0.0269 s, 4.3e-4 s^2, 0]
//   p4:   RMS 8.5e-12 m (the RLS 4-parameter model is the servo's exact sampled inverse here)
TEST(Rht, AtsAndAmbTrackElCentroBesideTheRlsCompensators) {
  const auto none = run("none", {"guard.enabled=false"});  // to its stroke, as measured
  const auto p4 = run("p4");
  ASSERT_TRUE(none["diverged"].get<bool>());
  const double none_rms = none["metrics"]["rms_error_m"].get<double>();
  const double p4_rms = p4["metrics"]["rms_error_m"].get<double>();
  for (const char* name : {"ats", "amb"}) {
    const auto s = run(name);
    const auto& m = s["metrics"];
    EXPECT_EQ(s["compensator"], name);
    EXPECT_FALSE(s["diverged"].get<bool>()) << name;
    EXPECT_LT(m["rms_error_m"].get<double>(), none_rms / 50.0) << name;
    EXPECT_GT(m["rms_error_m"].get<double>(), 1e3 * p4_rms) << name;  // p4 stays the reference
    EXPECT_LT(m["max_error_after_settle_m"].get<double>(), 0.3e-3) << name;
    EXPECT_LT(std::abs(m["delay_desired_to_measured_s"].get<double>()), 1e-4) << name;
    EXPECT_NEAR(m["delay_command_to_measured_s"].get<double>(), 0.0271, 0.0005) << name;
    EXPECT_FALSE(m["command_two_step_oscillation"].get<bool>()) << name;
    // the adapted a1 (s): the servo's sampled lead, 2*zeta/omega = 0.032 s less the differences'
    const auto& a = s[name]["final_coefficients"];
    EXPECT_NEAR(a[0].get<double>(), 1.0, 0.01) << name;
    EXPECT_NEAR(a[1].get<double>(), 0.0269, 0.001) << name;
  }
}

// The same under noise σ = 0.01 mm, as rates over the seeds 1…20. Measured: unsafe (flagged or
// stopped) in 0 of 20 for both, Nyquist share of the command median 0.013 % (ats) and 0.015 %
// (amb) against p4_noise's 0.28 %; max error after 3 s ats 0.076–0.106 mm (median 0.090),
// amb 0.141–0.169 mm (median 0.155); p4_noise 0.053–0.13 mm (median 0.065); RMS error ats
// 0.192–0.194 mm, amb 0.047–0.049 mm, p4_noise 0.016–0.017 mm.
TEST(Rht, AtsAndAmbUnderNoiseOverSeeds) {
  for (const char* name : {"ats_noise", "amb_noise"}) {
    const SeedRates r = over_seeds(name);
    EXPECT_EQ(r.unsafe, 0) << name;
    ASSERT_EQ(r.errors.size(), static_cast<std::size_t>(kSeeds)) << name;
    for (double e : r.errors) EXPECT_LT(e, 0.5e-3) << name;
    RecordProperty(std::string(name) + "_median_error_after_3s_m",
                   std::to_string(median(r.errors)));
  }
}

// Issue 13 §3: the stability guard (guard.*; RhtScenario::default_guard(): ρ = RMS(d_m − d)/RMS(d)
// over 2 s above 0.1 while RMS(d) >= 2 mm) stops the uncompensated loop before its measured
// displacement exceeds 1.2x the reference structure's peak over the whole record (0.1558 m, the
// d_numerical column of a full run; 1.2x = 0.187 m). Measured:
//   scenario      guard: stop at, ρ, peak |d_m|   unguarded: stop, peak |d_m|
//   none          2.00 s, 0.151, 51.2 mm          stroke_limit at 4.27 s, 244.6 mm
//   none_noise    2.00 s, 0.151, 51.2 mm          stroke_limit at 4.27 s, 244.6 mm
//   none_varying  2.00 s, 0.143, 51.1 mm          stroke_limit at 4.28 s, 227.3 mm
// (unguarded, |d_m| passes 0.187 m at 3.82 s; the guard judges from 2 s, when its window fills).
double peak_of(const SampleTable& t, RhtColumn c) {
  double peak = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) peak = std::max(peak, std::abs(t.row(i)[col(c)]));
  return peak;
}

TEST(Rht, StabilityGuardStopsTheUncompensatedLoopBeforeItOvershoots) {
  RhtExperiment full(load_rht_scenario(path("p4"), {}));
  full.run();
  const double reference_peak = peak_of(full.samples(), RhtColumn::kNumerical);
  EXPECT_NEAR(reference_peak, 0.1558, 0.0005);
  for (const char* name : {"none", "none_noise", "none_varying"}) {
    RhtExperiment e(load_rht_scenario(path(name), {}));
    e.run();
    const auto s = e.summary();
    EXPECT_EQ(s["stop_reason"], "stability_guard") << name;
    const auto& g = s["stability_guard"];
    EXPECT_TRUE(g["enabled"].get<bool>()) << name;
    EXPECT_NEAR(g["tripped_at_s"].get<double>(), 2.0, 1e-9) << name;
    EXPECT_GT(g["max_tracking_ratio"].get<double>(), 0.14) << name;  // 0.143–0.151
    EXPECT_LT(peak_of(e.samples(), RhtColumn::kMeasured), 1.2 * reference_peak) << name;
    EXPECT_LT(peak_of(e.samples(), RhtColumn::kMeasured), 0.06) << name;  // 51 mm
    RhtExperiment unguarded(load_rht_scenario(path(name), {"guard.enabled=false"}));
    unguarded.run();
    EXPECT_EQ(unguarded.summary()["stop_reason"], "stroke_limit") << name;
    EXPECT_GE(unguarded.cycle(), 427) << name;  // 4.27 s
    EXPECT_GT(peak_of(unguarded.samples(), RhtColumn::kMeasured), 1.2 * reference_peak) << name;
  }
}

// No false stop: the guard stops none of the shipped compensated scenarios, nor any of 20 noise
// seeds (servo.seed 1…20) of a noisy one unless that seed's run is unsafe without the guard (its
// command flagged as a 2Δt oscillation, or stopped at the stroke). Measured largest ρ (2 s window):
//   shipped: ats/ats_noise 0.050, p4_varying 0.034, amb 0.010, p7_noise_high (seed 11) 0.024,
//     p3/p4/p7 (noise, varying) <= 0.010; p7_varying stops at its stroke at 0.27 s, unguarded too
//   seeds, safe runs: p7_noise_high 0.069 (seed 6), p4_noise_high 0.064 (seed 18), ats_noise
//     0.050, amb_noise 0.011, p3/p4/p7_noise <= 0.004: 0 stops in 123 safe runs of 140
//   seeds, unsafe runs (p7_noise_high only, 17 of 20): stopped by the guard 5 (seeds 4, 7, 8, 10,
//     13; ρ 0.100–0.106), the other 12 reach 0.057–0.099.
TEST(Rht, StabilityGuardStopsNoSafeCompensatedRun) {
  int stops = 0;
  for (const char* name :
       {"p3", "p4", "p7", "ats", "amb", "p3_noise", "p4_noise", "p7_noise", "ats_noise",
        "amb_noise", "p3_varying", "p4_varying", "p7_varying", "p4_noise_high", "p7_noise_high"}) {
    const auto s = run(name);
    EXPECT_NE(s["stop_reason"], "stability_guard") << name;
    EXPECT_LT(s["stability_guard"]["max_tracking_ratio"].get<double>(), 0.07) << name;
  }
  int runs = 0, safe = 0, false_stops = 0, unsafe_stops = 0;
  for (const char* name : {"p3_noise", "p4_noise", "p7_noise", "ats_noise", "amb_noise",
                           "p4_noise_high", "p7_noise_high"}) {
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const std::string seed_set = "servo.seed=" + std::to_string(seed);
      const auto s = run(name, {seed_set});
      const auto u = run(name, {seed_set, "guard.enabled=false"});
      const bool unsafe =
          u["diverged"].get<bool>() || u["metrics"]["command_two_step_oscillation"].get<bool>();
      const bool stopped = s["stop_reason"] == "stability_guard";
      ++runs;
      safe += unsafe ? 0 : 1;
      false_stops += stopped && !unsafe ? 1 : 0;
      unsafe_stops += stopped && unsafe ? 1 : 0;
      stops += stopped ? 1 : 0;
      EXPECT_FALSE(stopped && !unsafe) << name << " seed " << seed;
    }
  }
  RecordProperty("false_stops_of_safe_seed_runs",
                 std::to_string(false_stops) + "/" + std::to_string(safe));
  EXPECT_EQ(runs, 140);
  EXPECT_EQ(false_stops, 0) << "of " << safe << " safe runs";  // rate 0/123
  EXPECT_GE(safe, 120);
  EXPECT_EQ(stops, unsafe_stops);
  EXPECT_LE(unsafe_stops, 8);  // 5 of p7_noise_high's 17 unsafe seeds
}

TEST(Rht, RlsGuardKeepsTheModelAndCountsRejections) {
  const auto s = run("p4", {"compensator.max_parameter_jump=1e-6"});
  EXPECT_GT(s["rls"]["guard_rejections"].get<std::uint64_t>(), 0u);
  EXPECT_FALSE(s["diverged"].get<bool>());
}

TEST(Rht, AStepAllocatesNothing) {
  for (const char* name : {"p4_noise", "ats_noise", "amb_noise"}) {
    RhtExperiment e(load_rht_scenario(path(name), {}));
    std::size_t allocations = 0;
    {
      testing::AllocGuard guard;
      while (e.step()) {
      }
      allocations = guard.allocations();
    }
    EXPECT_EQ(allocations, 0u) << name;
    EXPECT_GT(e.cycle(), 3000) << name;
  }
}

// The stopping cycle too: its reason reaches the recorder without an allocation.
TEST(Rht, AStoppingRunAllocatesNothingAndNamesItsReason) {
  RhtExperiment e(load_rht_scenario(path("p4"), {"servo.stroke_m=0.002"}));
  std::size_t allocations = 0;
  {
    testing::AllocGuard guard;
    while (e.step()) {
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0u);
  EXPECT_LT(e.cycle(), e.total_steps());
  EXPECT_EQ(e.summary()["stop_reason"], "stroke_limit");
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
  EXPECT_NE(error_of("ats", {"compensator.ats.initial=[1, 0]"})
                .find("compensator.ats.initial: must hold 3 numbers"),
            std::string::npos);
  EXPECT_NE(error_of("amb", {"compensator.amb.filter_cutoff_hz=30"})
                .find("compensator.amb.filter_cutoff_hz = 30: must be in (0, "),
            std::string::npos);
  EXPECT_NE(error_of("amb", {"compensator.amb.gain_per_s=[2, 2, 20, 0]"})
                .find("compensator.amb.gain_per_s[2] = 20"),
            std::string::npos);
  EXPECT_NE(error_of("ats", {"compensator.type=pid"}).find("must be none, adaptive, ats or amb"),
            std::string::npos);
  EXPECT_NE(error_of("p4", {"guard.window_s=0.05"})
                .find("guard.window_s = 0.05: must hold 8 to 1e6 steps of timing.step_s: [0.08, "),
            std::string::npos);
  EXPECT_NE(error_of("none", {"guard.max_tracking_ratio=0"})
                .find("guard.max_tracking_ratio = 0: must be > 0"),
            std::string::npos);
  // AMB's limits depend on the step; they do not bind a scenario of another type.
  EXPECT_EQ(error_of("p4", {"compensator.amb.filter_cutoff_hz=30"}), "");
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
