// The x-reduction of the six-axis kind (issue 28): a sits6 scenario moving along x only, without
// offsets or initial rotation, with the numbers of a 1-D sits scenario gives on its x axis
// exactly the 1-D run: every x column bit for bit (EXPECT_EQ on doubles), the same stop and the
// same summary metrics (e_V, e_F, e_R, energy ratio, growth rate, K_h, the guard's figures).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hyloop/core/coupled_modes.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/testing/scratch_dir.hpp"
#include "sits6_test_overrides.hpp"

namespace {

namespace ex = hyloop::experiment;

const std::string kSource = HYLOOP_SOURCE_DIR;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
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

// cycles.csv too: x's cycles in the 1-D form, byte for byte; cycles_axes.csv has them as axis 0.
TEST(Sits6Reduction, TranslationXWritesTheOneDimensionalCyclesCsv) {
  const Pair p = run_pair("scenarios/sits/table1_scvg.yaml", {}, {});
  const std::filesystem::path dir = hyloop::testing::scratch_dir("sits6", "cycles");
  std::filesystem::create_directories(dir / "one");
  std::filesystem::create_directories(dir / "six");
  p.one->write_extra_files(dir / "one");
  p.six->write_extra_files(dir / "six");
  const std::string one = slurp(dir / "one" / "cycles.csv");
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 60);  // the header and 59 cycles
  EXPECT_EQ(slurp(dir / "six" / "cycles.csv"), one);
  // Every line of cycles.csv is a line of cycles_axes.csv with the axis 0 before it.
  std::string from_axes;
  std::istringstream axes(slurp(dir / "six" / "cycles_axes.csv"));
  std::string line;
  std::getline(axes, line);
  while (std::getline(axes, line)) {
    if (line.rfind("0,", 0) == 0) from_axes += line.substr(2) + "\n";
  }
  EXPECT_EQ(from_axes, one.substr(one.find('\n') + 1));
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

// TDPA, the model-free baseline, per axis: on x alone the 1-D table1_tdpa run bit for bit.
TEST(Sits6Reduction, TdpaOnXIsTheOneDimensionalTdpaRunBitForBit) {
  const Pair p = run_pair("scenarios/sits/table1_tdpa.yaml", {},
                          {"compensator={type: tdpa, max_damping_ns_per_m: 10000, "
                           "tracking_differentiator: {r: 10000, h_s: 0.0034}}"});
  expect_x_columns_equal(*p.one, *p.six);
  expect_summary_equal(p.one->summary(), p.six->summary());
  EXPECT_EQ(p.six->summary()["compensator"], "tdpa");
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

// A rotational axis about a principal axis of inertia I_i against a rotational spring K_r,i is
// the same loop in rad and N·m: undamped, with the force (moment) delay alone, each grows at the
// root for ω_n² = K_r,i/I_i. Three stiffnesses give three different roots (ω_n² = 40, 60 and
// 20 1/s² on I = 50, 60, 70 kg·m²); one axis turning at a time, each rate meets its root.
// Turning about all three at once, the gyroscopic terms (I_j − I_k)·ω_j·ω_k of Euler's equations
// and the rotation vector's own non-linearity couple the axes, and the per-axis analysis holds
// only in the limit of small angles: at ω0 = 0.05 rad/s on each axis (about 8 mrad) the rates
// move by −0.16, +0.02 and +2.8 %, at a quarter of that by −0.05, +0.01 and +0.22 % (printed).
const std::vector<std::string> kRotationalUndamped = [] {
  std::vector<std::string> o = ex::testing::force_delay_alone("30");
  o.insert(o.end(), {"model.initial_velocity_mps=[0, 0, 0]",
                     "rig.contact.rotational_stiffness_nm_per_rad=[2000, 3600, 1400]",
                     "rig.contact.rotational_damping_nms_per_rad=[0, 0, 0]"});
  return o;
}();

TEST(Sits6Growth, EachRotationalAxisGrowsAtItsDelayEquationsRate) {
  const std::array<const char*, 3> axes = {"rx", "ry", "rz"};
  const std::array<double, 3> inertia = {50.0, 60.0, 70.0}, stiffness = {2000.0, 3600.0, 1400.0};
  const std::array<const char*, 3> spin = {"[0.05, 0, 0]", "[0, 0.05, 0]", "[0, 0, 0.05]"};
  std::array<double, 3> alone{};
  for (std::size_t a = 0; a < 3; ++a) {
    std::vector<std::string> o = kRotationalUndamped;
    o.push_back(std::string("model.initial_angular_velocity_rad_s=") + spin[a]);
    const auto e = run_file(kTranslationX, o);
    const nlohmann::json ax = e->summary()["axes"];
    alone[a] = ax[axes[a]]["amplitude_growth_rate_per_s"].get<double>();
    const double root = hyloop::core::delay_equation_root(stiffness[a] / inertia[a], 0.002).real();
    std::printf("%s alone: %.8f 1/s, root %.8f 1/s (%+.3f %%)\n", axes[a], alone[a], root,
                100.0 * (alone[a] / root - 1.0));
    EXPECT_NEAR(alone[a], root, 1e-3 * root) << axes[a];  // measured within 0.012 %
    for (std::size_t b = 0; b < 3; ++b) {                 // the other two stay at rest
      if (b != a) {
        EXPECT_EQ(ax[axes[b]]["cycles"].get<int>(), 0) << axes[a] << " " << axes[b];
      }
    }
  }
  // All three turning: the deviation from the axis alone, at ω0 = 0.05 and 0.0125 rad/s each.
  std::array<std::array<double, 3>, 2> deviation{};
  for (std::size_t i = 0; i < 2; ++i) {
    const char* w = i == 0 ? "0.05" : "0.0125";
    std::vector<std::string> o = kRotationalUndamped;
    o.push_back(std::string("model.initial_angular_velocity_rad_s=[") + w + ", " + w + ", " + w +
                "]");
    const nlohmann::json ax = run_file(kTranslationX, o)->summary()["axes"];
    for (std::size_t a = 0; a < 3; ++a) {
      const double rate = ax[axes[a]]["amplitude_growth_rate_per_s"].get<double>();
      deviation[i][a] = rate / alone[a] - 1.0;
      std::printf("%s, all three turning at %s rad/s: %.8f 1/s (%+.3f %% of the axis alone)\n",
                  axes[a], w, rate, 100.0 * deviation[i][a]);
    }
  }
  for (std::size_t a = 0; a < 3; ++a) {
    EXPECT_LT(std::abs(deviation[0][a]), 0.05) << axes[a];  // measured 0.16, 0.02, 2.8 %
    EXPECT_LT(std::abs(deviation[1][a]), 0.5 * std::abs(deviation[0][a])) << axes[a];
    EXPECT_LT(std::abs(deviation[1][a]), 0.005) << axes[a];  // measured 0.05, 0.01, 0.22 %
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

// A rotational axis is the translational loop in other units: with I = m/10 (50 kg·m²), K_r and
// B_r = K_t/10 and B_t/10 (N·m/rad, N·m·s/rad) and SCVG's K_ε0, K_ε1 divided by 10 (K_ε2 as it
// is: ε_h and K_h both scale by 1/10), ω0 = 0.05 rad/s is table1_scvg's loop with every force
// divided by 10. Each rotational axis then meets the 1-D run's e_V (in rad/s), e_R and amplitude
// ratio, and e_F/10 (in N·m): alone to rounding (measured ≤ 5e-14 relative), all three at once to
// 1e-7 (measured 4.7e-9: the inertia is isotropic, so Euler's equations do not couple the axes;
// what is left is the rotation vector composing three rotations).
const std::vector<std::string> kRotationalScvg = {
    "model.initial_velocity_mps=[0, 0, 0]",
    "model.inertia={ixx_kg_m2: 50, iyy_kg_m2: 50, izz_kg_m2: 50}",
    "rig.contact.rotational_stiffness_nm_per_rad=[2000, 2000, 2000]",
    "rig.contact.rotational_damping_nms_per_rad=[5, 5, 5]",
    "rotational_compensator={type: scvg, k_eps0: -8.081500964101288, "
    "k_eps1: -0.004002497746394231, k_eps2: 8.75, switch_time_s: 26, bumpless: false}"};

void expect_scaled_metrics(const nlohmann::json& want, const nlohmann::json& got, double rel) {
  const auto near = [rel](double a, double b) { return std::abs(a - b) <= rel * std::abs(b); };
  EXPECT_PRED2(near, got["e_V_peak_rad_s"].get<double>(), want["e_V_peak_mps"].get<double>());
  EXPECT_PRED2(near, 10.0 * got["e_F_peak_N_m"].get<double>(), want["e_F_peak_N"].get<double>());
  EXPECT_PRED2(near, got["e_R"].get<double>(), want["e_R"].get<double>());
  EXPECT_PRED2(near, got["amplitude_ratio"].get<double>(), want["amplitude_ratio"].get<double>());
  EXPECT_EQ(got["cycles_in_window"], want["cycles_in_window"]);
}

TEST(Sits6Growth, CompensatedEachRotationalAxisIsTheScaledOneDimensionalLoop) {
  const nlohmann::json want = run_file("scenarios/sits/table1_scvg.yaml", {})->summary()["metrics"];
  const std::array<const char*, 3> axes = {"rx", "ry", "rz"};
  const std::array<const char*, 3> spin = {"[0.05, 0, 0]", "[0, 0.05, 0]", "[0, 0, 0.05]"};
  for (std::size_t a = 0; a < 3; ++a) {
    SCOPED_TRACE(std::string(axes[a]) + " alone");
    std::vector<std::string> o = kRotationalScvg;
    o.push_back(std::string("model.initial_angular_velocity_rad_s=") + spin[a]);
    const nlohmann::json s = run_file(kTranslationX, o)->summary();
    expect_scaled_metrics(want, s["axes"][axes[a]]["metrics"], 1e-12);
    EXPECT_TRUE(s["stop_reason"].is_null());
  }
  std::vector<std::string> o = kRotationalScvg;
  o.emplace_back("model.initial_angular_velocity_rad_s=[0.05, 0.05, 0.05]");
  const nlohmann::json s = run_file(kTranslationX, o)->summary();
  for (const char* axis : axes) {
    SCOPED_TRACE(std::string(axis) + " with all three turning");
    expect_scaled_metrics(want, s["axes"][axis]["metrics"], 1e-7);
  }
  EXPECT_TRUE(s["stop_reason"].is_null());
}

// Sensor noise on all six axes (0.5 N and 0.05 N·m, 10 µm and 10 µrad), the six axes moving
// at once (translation as table1_scvg, rotation as its scaled loop above), compensated, 60 s,
// seeds 1–20: the body's energy stays within 1.2× the twin's at every row in 20 of 20 seeds
// (measured: largest ratio 1.118, seed 19 at 59.98 s; the ratio rises late in the run, as the
// twin's energy decays to 1.4 % of its start and the noise keeps feeding the hybrid). The same
// seeds uncompensated pass 1.2× in 20 of 20 (the guard then stops them).
double largest_energy_ratio(const ex::Experiment& e) {
  const std::vector<double> energy = column(e, "energy[J]"), ideal = column(e, "energy_ideal[J]");
  double largest = 0.0;
  for (std::size_t k = 0; k < energy.size(); ++k) largest = std::max(largest, energy[k] / ideal[k]);
  return largest;
}

TEST(Sits6Noise, CompensatedSixAxesStayWithinTheTwinsEnergyOverTwentySeeds) {
  std::vector<std::string> base = kRotationalScvg;
  base.insert(base.end(), {"model.initial_velocity_mps=[0.05, 0.05, 0.05]",
                           "model.initial_angular_velocity_rad_s=[0.05, 0.05, 0.05]",
                           "rig.sensor.force_noise_std_n=[0.5, 0.5, 0.5]",
                           "rig.sensor.torque_noise_std_nm=[0.05, 0.05, 0.05]",
                           "rig.sensor.position_noise_std_m=[1e-5, 1e-5, 1e-5]",
                           "rig.sensor.angle_noise_std_rad=[1e-5, 1e-5, 1e-5]"});
  int within = 0, uncompensated_beyond = 0;
  double largest = 0.0;
  for (int seed = 1; seed <= 20; ++seed) {
    std::vector<std::string> o = base;
    o.push_back("rig.sensor.seed=" + std::to_string(seed));
    const auto e = run_file(kTranslationX, o);
    EXPECT_TRUE(e->summary()["stop_reason"].is_null()) << seed;
    const double ratio = largest_energy_ratio(*e);
    largest = std::max(largest, ratio);
    within += ratio <= 1.2 ? 1 : 0;
    o.insert(o.end(), {"compensator.type=none", "rotational_compensator.type=none"});
    uncompensated_beyond += largest_energy_ratio(*run_file(kTranslationX, o)) > 1.2 ? 1 : 0;
  }
  std::printf("within 1.2x: %d of 20 (largest %.4f); uncompensated beyond: %d of 20\n", within,
              largest, uncompensated_beyond);
  RecordProperty("within_rate", std::to_string(within) + "/20");
  RecordProperty("largest_energy_ratio", std::to_string(largest));
  EXPECT_EQ(within, 20);
  EXPECT_EQ(uncompensated_beyond, 20);
}

// SCVG's energy observer over the whole body (energy_observer: body): every axis's K_h follows
// Σ over the six axes of |ε_h|·T. On x alone the other axes' ε_h are exactly 0, so the run is
// the per-axis one bit for bit but for the gains of y and z (at rest), which now follow x's
// (equal to it at every row); on three equal axes it is the per-axis run with K_ε2 tripled
// (the body's sum is 3ε), to rounding.
TEST(Sits6Observer, OnXAloneTheRunIsThePerAxisOneAndEveryAxisTakesXsGain) {
  const auto axis = run_file(kTranslationX, {});
  const auto body = run_file(kTranslationX, {"energy_observer=body"});
  ASSERT_EQ(body->samples().rows(), axis->samples().rows());
  const auto& h = axis->samples().headers();
  const auto at = [&h](const char* name) {
    return static_cast<std::size_t>(std::find(h.begin(), h.end(), name) - h.begin());
  };
  const std::size_t kx = at("k_h_x[N*s/m]"), ky = at("k_h_y[N*s/m]"), kz = at("k_h_z[N*s/m]");
  std::size_t gains_moved = 0;
  for (std::size_t r = 0; r < axis->samples().rows(); ++r) {
    const auto a = axis->samples().row(r), b = body->samples().row(r);
    for (std::size_t c = 0; c < h.size(); ++c) {
      if (c == ky || c == kz) continue;
      ASSERT_EQ(b[c], a[c]) << h[c] << " row " << r;
    }
    ASSERT_EQ(b[ky], b[kx]) << "row " << r;
    ASSERT_EQ(b[kz], b[kx]) << "row " << r;
    gains_moved += a[ky] != b[ky] ? 1 : 0;
  }
  EXPECT_GT(gains_moved, 10000U);  // after the switch at 26 s: rows 13 001 to 30 000
  EXPECT_EQ(body->summary()["energy_observer"], "body");
  EXPECT_EQ(axis->summary()["energy_observer"], "axis");
}

TEST(Sits6Observer, OnThreeEqualAxesTheBodyObserverTriplesTheEnergyGain) {
  std::vector<std::string> body = kThreeAxes, axis = kThreeAxes;
  body.emplace_back("energy_observer=body");
  axis.emplace_back("compensator.k_eps2=26.25");  // 3 × 8.75
  const nlohmann::json b = run_file(kTranslationX, body)->summary();
  const nlohmann::json a = run_file(kTranslationX, axis)->summary();
  for (const char* ax : {"x", "y", "z"}) {
    for (const char* m : {"e_V_peak_mps", "e_F_peak_N", "e_R", "amplitude_ratio"}) {
      const double want = a["axes"][ax]["metrics"][m].get<double>();
      EXPECT_NEAR(b["axes"][ax]["metrics"][m].get<double>(), want, 1e-9 * std::abs(want))
          << ax << " " << m;
    }
    const double k = a["axes"][ax]["k_h"]["final"].get<double>();
    EXPECT_NEAR(b["axes"][ax]["k_h"]["final"].get<double>(), k, 1e-9 * std::abs(k)) << ax;
  }
  // and the body's sum did move K_h away from the per-axis run with the paper's K_ε2
  const nlohmann::json paper = run_file(kTranslationX, kThreeAxes)->summary();
  EXPECT_NE(paper["axes"]["x"]["k_h"]["final"], b["axes"]["x"]["k_h"]["final"]);
}

}  // namespace
