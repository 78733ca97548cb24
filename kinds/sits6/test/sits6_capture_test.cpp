// The capture of a tumbling target (scenarios/sits6/capture.yaml, rig.contact.engage_at_s): the
// body floats free until the capture, then a stiff six-axis contact grips it at the pose of that
// instant (its rotation measured from the capture attitude, core::relative_pose).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"

namespace {

namespace ex = hyloop::experiment;

constexpr double kCaptureAt = 5.0;  // s, the scenario's engage_at_s

std::unique_ptr<ex::Experiment> run_capture(const std::vector<std::string>& overrides) {
  const std::string path = std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits6/capture.yaml";
  auto e = ex::make_experiment_from_text(ex::read_scenario_text(path), "capture", overrides);
  e->run();
  return e;
}

std::size_t index_of(const ex::Experiment& e, const std::string& name) {
  const auto& h = e.samples().headers();
  const auto it = std::find(h.begin(), h.end(), name);
  EXPECT_NE(it, h.end()) << name;
  return static_cast<std::size_t>(it - h.begin());
}

const std::vector<std::string> kDelayFree = {
    "delays.force_measurement=false", "delays.control_cycle=false", "delays.robot_response=false",
    "compensator.type=none", "rotational_compensator.type=none"};

// Without delays the hybrid is its twin, bit for bit, through the capture (the 1-D contract of
// DESIGN §6 on six axes); before the capture no wrench is measured and the tumble's energy stays
// to 1e-9 (measured 1.1e-10).
TEST(Sits6Capture, WithoutDelaysTheHybridIsItsTwinAndBeforeTheCaptureItFloats) {
  const auto e = run_capture(kDelayFree);
  const ex::SampleTable& t = e->samples();
  ASSERT_EQ(t.rows(), 10000U);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (const char* a : {"x", "y", "z"}) {
    pairs.emplace_back(index_of(*e, std::string(a) + "[m]"),
                       index_of(*e, std::string(a) + "_ideal[m]"));
    pairs.emplace_back(index_of(*e, std::string("v_") + a + "[m/s]"),
                       index_of(*e, std::string("v_") + a + "_ideal[m/s]"));
  }
  for (const char* a : {"x", "y", "z"}) {
    pairs.emplace_back(index_of(*e, std::string("r") + a + "[rad]"),
                       index_of(*e, std::string("r") + a + "_ideal[rad]"));
    pairs.emplace_back(index_of(*e, std::string("w_") + a + "[rad/s]"),
                       index_of(*e, std::string("w_") + a + "_ideal[rad/s]"));
  }
  pairs.emplace_back(index_of(*e, "energy[J]"), index_of(*e, "energy_ideal[J]"));
  const std::size_t energy = index_of(*e, "energy[J]"), time = index_of(*e, "time[s]");
  std::vector<std::size_t> measured;
  for (const char* w : {"f_x", "f_y", "f_z", "m_x", "m_y", "m_z"}) {
    measured.push_back(index_of(*e, std::string(w) + "_meas[" + (w[0] == 'f' ? "N" : "N*m") + "]"));
  }
  const double e0 = t.row(0)[energy];
  double worst = 0.0;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const auto row = t.row(r);
    for (const auto& [hybrid, twin] : pairs) ASSERT_EQ(row[hybrid], row[twin]) << r;
    if (row[time] < kCaptureAt - 0.01) {
      for (std::size_t m : measured) ASSERT_EQ(row[m], 0.0) << r;
      worst = std::max(worst, std::abs(row[energy] - e0) / e0);
    }
  }
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(std::abs(t.row(t.rows() - 1)[measured[0]]), 0.0);  // gripped by then
}

// The grip is conservative: undamped and without delays, the energy after the capture keeps its
// value at the capture over each 5 s to 1e-3 on average (measured 1.7e-4) within the
// integrator's bounded oscillation (< 1 %, measured 0.43 %). With a spring on θ − θ_c instead of
// the rotation from the capture attitude, the twin of the shipped (damped) scenario gained
// energy: 0.892 J at the capture, 1.106 J at 20 s.
TEST(Sits6Capture, TheGripIsConservative) {
  std::vector<std::string> o = kDelayFree;
  o.insert(o.end(), {"rig.contact.damping_ns_per_m=[0, 0, 0]",
                     "rig.contact.rotational_damping_nms_per_rad=[0, 0, 0]"});
  const auto e = run_capture(o);
  const std::size_t energy = index_of(*e, "energy_ideal[J]"), time = index_of(*e, "time[s]");
  const ex::SampleTable& t = e->samples();
  double at_capture = -1.0;
  for (double from : {5.0, 10.0, 15.0}) {
    double sum = 0.0, worst = 0.0;
    int n = 0;
    for (std::size_t r = 0; r < t.rows(); ++r) {
      const double s = t.row(r)[time], v = t.row(r)[energy];
      if (s < from - 1e-9 || s >= from + 5.0 - 1e-9) continue;
      if (at_capture < 0.0) at_capture = v;
      sum += v;
      ++n;
      worst = std::max(worst, std::abs(v / at_capture - 1.0));
    }
    EXPECT_NEAR(sum / n / at_capture, 1.0, 1e-3) << "from " << from << " s";
    EXPECT_LT(worst, 1e-2) << "from " << from << " s";
  }
}

// With the three delays the capture pumps energy: without compensation the guard stops the run
// after the capture (measured at 10.2 s); TDPA on every axis, as the scenario has it, holds the
// contact to the end (the guard's largest energy ratio measured 1.009).
TEST(Sits6Capture, TheDelaysPumpEnergyAfterTheCaptureAndTdpaHoldsIt) {
  const nlohmann::json held = run_capture({})->summary();
  EXPECT_TRUE(held["stop_reason"].is_null());
  EXPECT_LT(held["stability_guard"]["max_energy_ratio"].get<double>(), 1.05);
  const nlohmann::json none =
      run_capture({"compensator.type=none", "rotational_compensator.type=none"})->summary();
  EXPECT_EQ(none["stop_reason"], "stability_guard");
  EXPECT_GT(none["stability_guard"]["tripped_at_s"].get<double>(), kCaptureAt);
}

TEST(Sits6Capture, ACaptureTimeOffTheStepOrBeyondTheRunIsRefusedByName) {
  for (const char* bad : {"rig.contact.engage_at_s=5.001", "rig.contact.engage_at_s=20"}) {
    try {
      (void)run_capture({bad});
      FAIL() << bad;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("rig.contact.engage_at_s"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
