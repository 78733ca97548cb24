// The SITS loop end to end in process: the cycle contract, the divergence of the undamped loop
// under each delay (paper §5.1), and the allocation-free step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/kinds/sits/sits_runner.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::experiment {
namespace {

std::string scenario_path(const std::string& name) {
  return std::string(HYLOOP_SOURCE_DIR) + "/scenarios/sits/" + name + ".yaml";
}

// The paper's §5.1 and Table 1 numbers are those of the unguarded loop: the stability guard
// (sits_guard_test.cpp) stops an uncompensated one at 1.2x its initial energy.
constexpr const char* kUnguarded = "guard.enabled=false";

std::unique_ptr<SitsRunner> run_scenario(const std::string& name,
                                         const std::vector<std::string>& overrides = {}) {
  auto runner = std::make_unique<SitsRunner>(load_scenario(scenario_path(name), overrides));
  runner->run();
  return runner;
}

// Rightmost root of s² + ω_n²·e^{−sτ} = 0, by Newton's method from s = jω_n.
std::complex<double> delay_root(double wn, double tau) {
  std::complex<double> s(0.0, wn);
  for (int i = 0; i < 50; ++i) {
    const std::complex<double> e = std::exp(-s * tau);
    const std::complex<double> f = s * s + wn * wn * e;
    const std::complex<double> df = 2.0 * s - tau * wn * wn * e;
    s -= f / df;
  }
  return s;
}

TEST(SitsLoop, NoDelaysReproducesTheIdealTwinBitForBit) {
  for (const char* damping : {"50", "0"}) {
    const auto runner_ptr =
        run_scenario("ideal", {std::string("rig.contact.damping_ns_per_m=") + damping});
    const SitsRunner& runner = *runner_ptr;
    ASSERT_EQ(runner.samples().rows(), 30000u);
    for (std::size_t i = 0; i < runner.samples().rows(); ++i) {
      const auto row = runner.samples().row(i);
      ASSERT_EQ(row[static_cast<std::size_t>(SitsColumn::kX)],
                row[static_cast<std::size_t>(SitsColumn::kXIdeal)]);
      ASSERT_EQ(row[static_cast<std::size_t>(SitsColumn::kV)],
                row[static_cast<std::size_t>(SitsColumn::kVIdeal)]);
      ASSERT_EQ(row[static_cast<std::size_t>(SitsColumn::kFInput)],
                row[static_cast<std::size_t>(SitsColumn::kFIdeal)]);
    }
    EXPECT_EQ(runner.metrics().window().e_v_peak, 0.0);
    EXPECT_EQ(runner.metrics().window().amplitude_ratio, 1.0);
  }
}

TEST(SitsLoop, ForceDelayAloneGrowsAtTheRightmostRootOfTheDelayEquation) {
  const double wn = std::sqrt(20000.0 / 500.0);
  const std::complex<double> root = delay_root(wn, 0.002);
  ASSERT_NEAR(std::abs(root * root + wn * wn * std::exp(-root * 0.002)), 0.0, 1e-9);
  EXPECT_NEAR(root.real(), 0.0400, 0.0005);  // DESIGN.md §6
  const auto runner_ptr = run_scenario("undamped_fmd", {kUnguarded});
  const SitsRunner& runner = *runner_ptr;
  const double measured = runner.metrics().amplitude_growth_rate();
  RecordProperty("growth_fmd_per_s", std::to_string(measured));
  RecordProperty("root_real_per_s", std::to_string(root.real()));
  EXPECT_NEAR(measured / root.real(), 1.0, 0.05);
}

TEST(SitsLoop, EachDelayAloneDivergesInThePapersOrder) {
  const double fmd = run_scenario("undamped_fmd", {kUnguarded})->metrics().amplitude_growth_rate();
  const double ecc = run_scenario("undamped_ecc", {kUnguarded})->metrics().amplitude_growth_rate();
  const double srd = run_scenario("undamped_srd", {kUnguarded})->metrics().amplitude_growth_rate();
  const auto all = run_scenario("undamped_all", {kUnguarded});
  RecordProperty("growth_ecc_per_s", std::to_string(ecc));
  RecordProperty("growth_srd_per_s", std::to_string(srd));
  EXPECT_GT(srd, 0.0);
  EXPECT_GT(ecc, srd);
  EXPECT_GT(fmd, ecc);
  EXPECT_NEAR(ecc / fmd, 0.5, 0.1);  // the hold lags (h − 1)/2 = 0.5 step on average
  EXPECT_GT(all->metrics().amplitude_growth_rate(), fmd);
  for (const char* name : {"undamped_fmd", "undamped_ecc", "undamped_srd"}) {
    const auto r_ptr = run_scenario(name, {kUnguarded});
    const SitsRunner& r = *r_ptr;
    const auto cycles = r.metrics().cycles();
    ASSERT_GT(cycles.size(), 50u) << name;
    // energy grows cycle over cycle (compare cycles 5 apart to step over sampling ripple)
    for (std::size_t i = 6; i < cycles.size(); ++i) {
      EXPECT_GT(cycles[i].energy_max, cycles[i - 5].energy_max) << name << " cycle " << i;
    }
    EXPECT_GT(r.metrics().energy_ratio(), 1.01) << name;
  }
}

// Time-domain passivity (compensator.type tdpa, issue 13 §2) on Table 1's loop, all three
// delays: the passivity observer on the model's port to the rig and the variable damping keep
// the model's energy at its initial 0.625 J (measured: at most 1.025x) where the uncompensated
// loop gains 40x; it does not reproduce the contact's own damping as SCVG's tuned gains do
// (measured e_R 5.39 against SCVG's 0.976 and none's 114): passive, not accurate.
TEST(SitsLoop, TdpaKeepsTheDelayedContactPassiveWhereTheUncompensatedLoopDiverges) {
  const auto peak_energy_ratio = [](const Experiment& e) {
    const SampleTable& t = e.samples();
    const auto& h = t.headers();
    const auto c = static_cast<std::size_t>(std::find(h.begin(), h.end(), "energy[J]") - h.begin());
    double peak = 0.0;
    for (std::size_t i = 0; i < t.rows(); ++i) peak = std::max(peak, t.row(i)[c]);
    return peak / t.row(0)[c];
  };
  const auto tdpa = make_experiment(scenario_path("table1_tdpa"), {});
  const auto none = make_experiment(scenario_path("table1_none"), {kUnguarded});
  tdpa->run();
  none->run();
  EXPECT_LT(peak_energy_ratio(*tdpa), 1.03);
  EXPECT_GT(peak_energy_ratio(*none), 30.0);
  const double e_r_tdpa = tdpa->summary()["metrics"]["e_R"].get<double>();
  EXPECT_LT(e_r_tdpa, 6.0);
  EXPECT_GT(none->summary()["metrics"]["e_R"].get<double>(), 100.0);
  EXPECT_GT(e_r_tdpa, 2.0);  // passive, not the twin: the contact's damping is not reproduced
}

TEST(SitsLoop, AStepAllocatesNothing) {
  SitsScenario s =
      load_scenario(scenario_path("undamped_all"),
                    {"compensator.type=scvg", "compensator.k_eps0=-60", "compensator.k_eps1=-0.1",
                     "compensator.k_eps2=-1", "compensator.switch_time_s=5", "timing.duration_s=20",
                     "rig.sensor.force_noise_std_n=0.01", "rig.sensor.position_noise_std_m=1e-6",
                     "guard.max_energy_ratio=1e9"});  // fed every step, never tripped
  SitsRunner runner(s);
  testing::AllocGuard guard;
  std::int64_t steps = 0;
  while (runner.step()) ++steps;
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_EQ(steps + 1, runner.total_steps());
  EXPECT_EQ(runner.samples().rows(), 10000u);
}

TEST(SitsLoop, LeavingTheRigLimitsStopsTheRunAndKeepsTheSamples) {
  const auto runner_ptr = run_scenario(
      "undamped_fmd", {"rig.limits.position_max_m=0.009", "timing.duration_s=200", kUnguarded});
  const SitsRunner& runner = *runner_ptr;
  EXPECT_TRUE(runner.stopped());
  EXPECT_EQ(runner.stop_reason(), StopReason::kDisplacementLimit);
  EXPECT_EQ(static_cast<std::int64_t>(runner.samples().rows()), runner.cycle());
  EXPECT_LT(runner.cycle(), runner.total_steps());
}

}  // namespace
}  // namespace hyloop::experiment
