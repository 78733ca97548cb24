// The x-reduction of the six-axis kind (issue 28): a sits6 scenario moving along x only, without
// offsets or initial rotation, with the numbers of a 1-D sits scenario gives on its x axis
// exactly the 1-D run: every x column bit for bit (EXPECT_EQ on doubles), the same stop and the
// same summary metrics (e_V, e_F, e_R, energy ratio, growth rate, K_h, the guard's figures).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace {

namespace ex = hyloop::experiment;

const std::string kSource = HYLOOP_SOURCE_DIR;
const std::string kTranslationX = "scenarios/sits6/translation_x.yaml";

std::unique_ptr<ex::Experiment> run_file(const std::string& scenario,
                                         const std::vector<std::string>& overrides) {
  auto e = ex::make_experiment_from_text(ex::read_scenario_text(kSource + "/" + scenario), scenario,
                                         overrides);
  e->run();
  return e;
}

std::vector<double> column(const ex::Experiment& e, const std::string& name) {
  const auto& headers = e.samples().headers();
  const auto it = std::find(headers.begin(), headers.end(), name);
  EXPECT_NE(it, headers.end()) << name;
  if (it == headers.end()) return {};
  const auto c = static_cast<std::size_t>(it - headers.begin());
  std::vector<double> out;
  for (std::size_t i = 0; i < e.samples().rows(); ++i) out.push_back(e.samples().row(i)[c]);
  return out;
}

// The 1-D column and its six-axis counterpart.
const std::vector<std::pair<std::string, std::string>> kXColumns = {
    {"time[s]", "time[s]"},
    {"x[m]", "x[m]"},
    {"v[m/s]", "v_x[m/s]"},
    {"x_ideal[m]", "x_ideal[m]"},
    {"v_ideal[m/s]", "v_x_ideal[m/s]"},
    {"x_cmd[m]", "x_cmd[m]"},
    {"x_robot[m]", "x_robot[m]"},
    {"f_contact[N]", "f_x_contact[N]"},
    {"f_meas[N]", "f_x_meas[N]"},
    {"f_ideal[N]", "f_x_ideal[N]"},
    {"f_input[N]", "f_x_input[N]"},
    {"k_h[N*s/m]", "k_h_x[N*s/m]"},
    {"eps_h[J]", "eps_h_x[J]"},
    {"energy[J]", "energy[J]"},
    {"energy_ideal[J]", "energy_ideal[J]"},
    {"power[W]", "power[W]"},
    {"power_ideal[W]", "power_ideal[W]"}};

// Every x column equal, row for row, and every other axis still.
void expect_x_columns_equal(const ex::Experiment& one, const ex::Experiment& six) {
  ASSERT_EQ(six.samples().rows(), one.samples().rows());
  for (const auto& [name1, name6] : kXColumns) {
    const std::vector<double> a = column(one, name1), b = column(six, name6);
    ASSERT_EQ(a.size(), b.size()) << name6;
    const auto diff = std::mismatch(a.begin(), a.end(), b.begin());
    if (diff.first != a.end()) {
      const auto k = diff.first - a.begin();
      EXPECT_EQ(*diff.second, *diff.first)
          << name6 << " differs from the 1-D " << name1 << " first at row " << k;
    }
  }
  for (const char* still : {"y[m]", "z[m]", "rx[rad]", "ry[rad]", "rz[rad]", "v_y[m/s]",
                            "w_z[rad/s]", "f_y_meas[N]", "m_z_meas[N*m]", "m_z_input[N*m]"}) {
    for (double v : column(six, still)) ASSERT_EQ(v, 0.0) << still;
  }
}

// The summary's x figures are the 1-D summary's, under the same names.
void expect_summary_equal(const nlohmann::json& one, const nlohmann::json& six) {
  for (const char* key : {"diverged", "stop_reason", "energy_ratio", "amplitude_growth_rate_per_s",
                          "cycles", "dropped_cycles", "metrics", "k_h", "delays",
                          "rejected_commands", "seed", "stability_guard", "compensator"}) {
    EXPECT_EQ(six[key], one[key]) << key;
  }
  for (const char* key : {"energy_ratio", "metrics", "k_h", "cycles"}) {
    EXPECT_EQ(six["axes"]["x"][key], one[key]) << "axes.x." << key;
  }
}

struct Pair {
  std::unique_ptr<ex::Experiment> one, six;
};

Pair run_pair(const std::string& one_d, const std::vector<std::string>& overrides_1d,
              const std::vector<std::string>& overrides_6d) {
  Pair p{run_file(one_d, overrides_1d), run_file(kTranslationX, overrides_6d)};
  const nlohmann::json s = p.six->summary();
  std::printf("%s: e_V %.6e m/s, e_F %.6e N, e_R %.9f, energy ratio %.9f, stop %s\n", one_d.c_str(),
              s["metrics"]["e_V_peak_mps"].get<double>(), s["metrics"]["e_F_peak_N"].get<double>(),
              s["metrics"]["e_R"].is_number() ? s["metrics"]["e_R"].get<double>() : -1.0,
              s["energy_ratio"].is_number() ? s["energy_ratio"].get<double>() : -1.0,
              s["stop_reason"].dump().c_str());
  return p;
}

TEST(Sits6Reduction, TranslationXIsTheOneDimensionalScvgRunBitForBit) {
  const Pair p = run_pair("scenarios/sits/table1_scvg.yaml", {}, {});
  EXPECT_EQ(p.six->kind(), "sits6");
  EXPECT_EQ(p.six->samples().rows(), 30000U);
  expect_x_columns_equal(*p.one, *p.six);
  const nlohmann::json one = p.one->summary(), six = p.six->summary();
  expect_summary_equal(one, six);
  // The compensated loop: converged, a full run, many cycles.
  EXPECT_FALSE(six["diverged"].get<bool>());
  EXPECT_TRUE(six["stop_reason"].is_null());
  EXPECT_GT(six["cycles"].get<int>(), 50);  // 1 Hz over 60 s
  EXPECT_LT(six["energy_ratio"].get<double>(), 1.01);
}

TEST(Sits6Reduction, TheUncompensatedLoopDivergesExactlyAsTheOneDimensionalOne) {
  const Pair p = run_pair("scenarios/sits/table1_none.yaml", {}, {"compensator.type=none"});
  expect_x_columns_equal(*p.one, *p.six);
  const nlohmann::json one = p.one->summary(), six = p.six->summary();
  expect_summary_equal(one, six);
  EXPECT_TRUE(six["diverged"].get<bool>());
  EXPECT_EQ(six["stop_reason"], "stability_guard");
  EXPECT_LT(p.six->samples().rows(), 30000U);  // stopped by the guard
}

TEST(Sits6Reduction, WithSensorNoiseTheXAxisDrawsTheOneDimensionalNumbers) {
  const Pair p = run_pair("scenarios/sits/table1_scvg.yaml",
                          {"rig.sensor.force_noise_std_n=0.5",
                           "rig.sensor.position_noise_std_m=1e-5", "rig.sensor.seed=7"},
                          {"rig.sensor.force_noise_std_n=[0.5, 0, 0]",
                           "rig.sensor.position_noise_std_m=[1e-5, 0, 0]", "rig.sensor.seed=7"});
  expect_x_columns_equal(*p.one, *p.six);
  expect_summary_equal(p.one->summary(), p.six->summary());
  // The noise is on: the measured force is not the delayed true force.
  const std::vector<double> meas = column(*p.six, "f_x_meas[N]");
  const std::vector<double> truth = column(*p.six, "f_x_contact[N]");
  std::size_t differ = 0;
  for (std::size_t k = 1; k < meas.size(); ++k) differ += meas[k] != truth[k - 1] ? 1 : 0;
  EXPECT_GT(differ, meas.size() / 2);
}

// Three translational axes moving at once, no offset: each axis is the 1-D loop. Undamped with
// the force delay alone, each grows at the 1-D rate, the rightmost root of
// s² + ω_n²·e^(−sτ) = 0 (0.0400 1/s for Table 1, DESIGN §6); compensated (table1_scvg), each
// meets the 1-D run's metrics.
const std::vector<std::string> kThreeAxes = {"model.initial_velocity_mps=[0.05, 0.05, 0.05]"};

TEST(Sits6Growth, EachTranslationalAxisGrowsAtTheDelayEquationsRate) {
  const std::vector<std::string> common = {"timing.duration_s=30", "guard.enabled=false"};
  const auto one = run_file("scenarios/sits/undamped_fmd.yaml", common);
  std::vector<std::string> six = common;
  six.insert(six.end(), {"delays.control_cycle=false", "delays.robot_response=false",
                         "compensator.type=none", "rig.contact.damping_ns_per_m=[0, 0, 0]"});
  six.insert(six.end(), kThreeAxes.begin(), kThreeAxes.end());
  const auto e = run_file(kTranslationX, six);
  const double rate = one->summary()["amplitude_growth_rate_per_s"].get<double>();
  EXPECT_NEAR(rate, 0.0400, 0.0004);
  const nlohmann::json axes = e->summary()["axes"];
  for (const char* axis : {"x", "y", "z"}) {
    EXPECT_EQ(axes[axis]["amplitude_growth_rate_per_s"].get<double>(), rate) << axis;
  }
}

TEST(Sits6Growth, CompensatedEachTranslationalAxisMeetsTheOneDimensionalMetrics) {
  const auto one = run_file("scenarios/sits/table1_scvg.yaml", {});
  const auto e = run_file(kTranslationX, kThreeAxes);
  const nlohmann::json want = one->summary()["metrics"];
  const nlohmann::json axes = e->summary()["axes"];
  for (const char* axis : {"x", "y", "z"}) {
    for (const char* m : {"e_V_peak_mps", "e_F_peak_N", "e_R", "amplitude_ratio"}) {
      EXPECT_EQ(axes[axis]["metrics"][m], want[m]) << axis << " " << m;
    }
  }
  EXPECT_TRUE(e->summary()["stop_reason"].is_null());
}

}  // namespace
