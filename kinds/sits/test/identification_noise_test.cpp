// Issue 11 §3: identification of G_R that survives sensor noise (docs/identification.md).
// The claims about noise hold as rates over the seeds 1–20 of rig.sensor.seed, never one seed.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "hyloop/core/arx.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/kinds/sits/sits_jobs.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

constexpr int kSeeds = 20;
constexpr double kToleranceDeg = 0.2;
constexpr double kSigma = 1e-4;  // m, the position noise

std::string scenario_path(const std::string& name) {
  return std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/" + name + ".yaml";
}

// The emulator's continuous G_R at f, from the scenario's own robot parameters.
double truth_phase_deg(const SitsScenario& s, double f_hz) {
  const std::complex<double> g =
      core::frequency_response(s.rig.robot.transfer_function(), 2.0 * std::numbers::pi * f_hz);
  return std::arg(g) * 180.0 / std::numbers::pi;
}

struct SeedResult {
  bool continuous = false;
  bool response = false;
  double phase_error_deg = std::numeric_limits<double>::quiet_NaN();  // identified − truth at 10 Hz
                                                                      // (continuous models only)
};

std::vector<SeedResult> identify_over_seeds(const std::string& scenario, const std::string& method,
                                            double sigma) {
  std::vector<SeedResult> out;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const SitsScenario s =
        load_scenario(scenario_path(scenario),
                      {"rig.sensor.position_noise_std_m=" + format_number(sigma),
                       "rig.sensor.seed=" + std::to_string(seed), "identification.method=" + method,
                       "identification.report_frequencies_hz=[10]"});
    const auto j = identify_robot(s);
    SeedResult r;
    r.continuous = !j["continuous_model"].is_null();
    r.response = j["frequency_response"].is_array() && j["frequency_response"].size() == 1;
    if (r.continuous && r.response) {
      EXPECT_EQ(j["frequency_response_source"].get<std::string>(), "continuous_model");
      r.phase_error_deg =
          j["frequency_response"][0]["phase_deg"].get<double>() - truth_phase_deg(s, 10.0);
    }
    out.push_back(r);
  }
  return out;
}

int count_within(const std::vector<SeedResult>& results, double tolerance) {
  int n = 0;
  for (const auto& r : results) n += std::abs(r.phase_error_deg) <= tolerance ? 1 : 0;
  return n;
}

TEST(IdentificationNoise, TruthIsTheDefaultPresetsPhase) {
  const SitsScenario s = load_scenario(scenario_path("identify_chirp"));
  EXPECT_NEAR(truth_phase_deg(s, 10.0), -5.9157, 1e-4);  // DESIGN §6
  EXPECT_EQ(s.rig.position_noise_std, kSigma);
  EXPECT_EQ(s.identification.method, core::FitMethod::kOutputError);
  EXPECT_EQ(s.identification.signal, "chirp");
}

// σ = 0.1 mm, the 1–20 Hz chirp: output error and refined IV put the 10 Hz phase within 0.2° of
// the truth in ≥ 19 of 20 seeds (measured: 20/20 for both, |error| ≤ 0.049°; over 50 seeds 50/50,
// std 0.024°), with a continuous model and a frequency response every time, and no bias (|mean|
// < 0.02°, measured 0.0015°). ARX on the same data is biased: mean error above 0.15° (measured
// +0.235° over seeds 1–20, +0.225 ± 0.034° over 50) and within 0.2° in at most 10 of 20
// (measured 1/20, 10/50).
TEST(IdentificationNoise, ChirpOutputErrorAndIvMeetThePhaseClaimWhereArxFails) {
  for (const std::string method : {"oe", "iv"}) {
    SCOPED_TRACE(method);
    const auto results = identify_over_seeds("identify_chirp", method, kSigma);
    double mean = 0.0;
    for (const auto& r : results) {
      EXPECT_TRUE(r.continuous);
      EXPECT_TRUE(r.response);
      mean += r.phase_error_deg / kSeeds;
    }
    EXPECT_GE(count_within(results, kToleranceDeg), 19);
    EXPECT_LT(std::abs(mean), 0.02);
  }
  const auto arx = identify_over_seeds("identify_chirp", "arx", kSigma);
  double arx_mean = 0.0;
  for (const auto& r : arx) {
    EXPECT_TRUE(r.response);
    ASSERT_TRUE(r.continuous);
    arx_mean += r.phase_error_deg / kSeeds;
  }
  EXPECT_GT(arx_mean, 0.15);
  EXPECT_LE(count_within(arx, kToleranceDeg), 10);
}

// The paper's single 3 Hz sine (identify.yaml) with σ = 0.1 mm: the output-error fit gives a
// continuous model and a frequency response in every seed and is unbiased (|mean error| over 20
// seeds < 0.1°, measured −0.050°; −0.015° over 50), while ARX's biased pole pair has no
// continuous model in most seeds (measured 0 of 20, 4 of 50; its frequency response then comes
// from the discrete model). The spread of the OE phase (std 0.118° over 50 seeds) is the
// information limit of one sine (Cramér–Rao bound 0.111° at 10 Hz, docs/identification.md): no
// rate claim at 0.2° here (measured 17/20, 46/50).
TEST(IdentificationNoise, PaperSineOutputErrorIsUnbiasedAndAlwaysContinuous) {
  const auto oe = identify_over_seeds("identify", "oe", kSigma);
  double oe_mean = 0.0;
  for (const auto& r : oe) {
    EXPECT_TRUE(r.continuous);
    EXPECT_TRUE(r.response);
    oe_mean += r.phase_error_deg / kSeeds;
  }
  EXPECT_LT(std::abs(oe_mean), 0.1);
  const auto arx = identify_over_seeds("identify", "arx", kSigma);
  int arx_continuous = 0;
  for (const auto& r : arx) {
    EXPECT_TRUE(r.response);
    arx_continuous += r.continuous ? 1 : 0;
  }
  EXPECT_LE(arx_continuous, 4);
}

// A fitted discrete model with a pole on the negative real axis has no continuous ZOH preimage:
// the report says why and still gives the discrete model's frequency response.
TEST(IdentificationNoise, NoContinuousModelStillGivesTheDiscreteResponse) {
  SitsScenario s = load_scenario(scenario_path("identify"), {"identification.method=arx"});
  // y = (0.5 + 0.2 z⁻¹)/(1 + 0.2 z⁻¹ − 0.15 z⁻²) u: poles 0.3 and −0.5.
  SweepData data;
  const auto n = static_cast<std::size_t>(s.identification.samples);
  data.command.resize(n);
  data.position.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    data.command[k] =
        std::sin(0.37 * static_cast<double>(k)) + std::sin(1.9 * static_cast<double>(k));
    double y = 0.5 * data.command[k];
    if (k >= 1) y += 0.2 * data.command[k - 1] - 0.2 * data.position[k - 1];
    if (k >= 2) y += 0.15 * data.position[k - 2];
    data.position[k] = y;
  }
  const auto j = identify_from_sweep(s, data);
  EXPECT_TRUE(j["continuous_model"].is_null());
  EXPECT_NE(j["continuous_model_error"].get<std::string>().find("negative real axis"),
            std::string::npos);
  ASSERT_TRUE(j["frequency_response"].is_array());
  ASSERT_EQ(j["frequency_response"].size(), s.identification.report_frequencies_hz.size());
  EXPECT_EQ(j["frequency_response"], j["discrete_frequency_response"]);
  EXPECT_EQ(j["frequency_response_source"].get<std::string>().rfind("discrete_model", 0), 0U);
  // H(e^{jωT})·e^{−jωT} of the generating model at the first frequency.
  const double f = s.identification.report_frequencies_hz[0];
  const double w = 2.0 * std::numbers::pi * f * s.timing.step;
  const std::complex<double> zi = std::polar(1.0, -w);
  const std::complex<double> h = (0.5 + 0.2 * zi) / (1.0 + 0.2 * zi - 0.15 * zi * zi) * zi;
  EXPECT_NEAR(j["frequency_response"][0]["magnitude"].get<double>(), std::abs(h), 1e-9);
  EXPECT_NEAR(j["frequency_response"][0]["phase_deg"].get<double>(),
              std::arg(h) * 180.0 / std::numbers::pi, 1e-7);
}

TEST(IdentificationNoise, MethodAndSignalAreValidatedWithTheField) {
  const auto message = [](const std::string& assignment) {
    try {
      (void)load_scenario(scenario_path("identify"), {assignment});
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string method = message("identification.method=ols");
  EXPECT_NE(method.find("identification.method = \"ols\""), std::string::npos) << method;
  EXPECT_NE(method.find("arx"), std::string::npos) << method;
  EXPECT_NE(method.find("oe"), std::string::npos) << method;
  const std::string signal = message("identification.signal=square");
  EXPECT_NE(signal.find("identification.signal"), std::string::npos) << signal;
  const std::string chirp = message("identification.chirp_end_hz=300");
  EXPECT_NE(chirp.find("identification.chirp_end_hz"), std::string::npos) << chirp;
  EXPECT_EQ(message("identification.method=iv"), "accepted");
}

// The chirp of sweep_command: u = A·sin(2π(f0·t + (f1 − f0)·t²/(2·t_N))) and its derivative.
TEST(IdentificationNoise, ChirpCommandIsTheDocumentedChirp) {
  const SitsScenario s = load_scenario(scenario_path("identify_chirp"));
  const auto& id = s.identification;
  const double t_n = static_cast<double>(id.samples - 1) * s.timing.step;
  for (std::uint64_t k : {0ULL, 1ULL, 700ULL, 1500ULL}) {
    const double t = static_cast<double>(k) * s.timing.step;
    const double phase =
        2.0 * std::numbers::pi *
        (id.chirp_start_hz * t + (id.chirp_end_hz - id.chirp_start_hz) * t * t / (2.0 * t_n));
    const SweepCommand c = sweep_command(s, k);
    EXPECT_NEAR(c.position, id.amplitude * std::sin(phase), 1e-12) << k;
    const double h = 1e-7;
    const double slope =
        (id.amplitude * std::sin(phase + 2.0 * std::numbers::pi *
                                             (id.chirp_start_hz +
                                              (id.chirp_end_hz - id.chirp_start_hz) * t / t_n) *
                                             h) -
         id.amplitude * std::sin(phase)) /
        h;
    EXPECT_NEAR(c.velocity, slope, 1e-4) << k;
  }
}

}  // namespace
}  // namespace hyloop::experiment
