// The multi-axis loop contract (issue 28): a kind of two commanded axes runs in process
// (LoopExperiment) and in lockstep through the unchanged loop services with the same samples.csv
// byte for byte; each axis keeps its own safety window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "co_located.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/testing/scratch_dir.hpp"
#include "planar2_kind.hpp"

namespace {

namespace fs = std::filesystem;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

const bool kRegistered = (ex::register_kind(hyloop::testing::make_planar2_kind()), true);

const fs::path kScenario = fs::path(HYLOOP_SOURCE_DIR) / "tests/kinds/planar2/planar2.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::unique_ptr<ex::Experiment> run(const std::vector<std::string>& overrides) {
  auto e = ex::make_experiment_from_text(ex::read_scenario_text(kScenario.string()), "planar2",
                                         overrides);
  e->run();
  return e;
}

std::vector<double> column(const ex::Experiment& e, const std::string& name) {
  const auto& headers = e.samples().headers();
  const auto c =
      static_cast<std::size_t>(std::find(headers.begin(), headers.end(), name) - headers.begin());
  std::vector<double> out;
  for (std::size_t i = 0; i < e.samples().rows(); ++i) out.push_back(e.samples().row(i)[c]);
  return out;
}

double peak(const std::vector<double>& v) {
  double p = 0.0;
  for (double x : v) p = std::max(p, std::abs(x));
  return p;
}

TEST(Planar2Kind, ItsPlanCarriesTwoAxes) {
  ASSERT_TRUE(kRegistered);
  const ex::LoopPlan plan = ex::loop_plan(ex::read_scenario_text(kScenario.string()));
  EXPECT_EQ(ex::plan_axes(plan), 2U);
  ASSERT_EQ(plan.command.size(), 4U);
  EXPECT_EQ(plan.command.signals[2], (hyloop::hal::Signal{"y_cmd", "m", "length"}));
  EXPECT_EQ(plan.command.signals[3], (hyloop::hal::Signal{"y_cmd_rate", "m/s", "length_rate"}));
}

TEST(Planar2Kind, InProcessAndLockstepThroughTheServicesAreBitForBit) {
  const fs::path dir = hyloop::testing::scratch_dir("planar2", "bit_for_bit");
  rec::write_run_directory(*run({}), dir / "in_process");
  hyloop::testing::CoLocated stack("planar2", dir);
  const grpc::Status loaded = stack.load_text(ex::read_scenario_text(kScenario.string()), {});
  ASSERT_TRUE(loaded.ok()) << loaded.error_message();
  const grpc::Status started = stack.start("lockstep");
  ASSERT_TRUE(started.ok()) << started.error_message();
  const std::string outcome = stack.finish().message();
  const std::string in_process = slurp(dir / "in_process" / "samples.csv");
  ASSERT_EQ(std::count(in_process.begin(), in_process.end(), '\n'), 2001) << outcome;
  EXPECT_EQ(in_process.substr(0, in_process.find('\n')),
            "time[s],x[m],f_x[N],y[m],f_y[N],x_applied[m],y_applied[m]");
  EXPECT_EQ(slurp(dir / "lockstep" / "samples.csv"), in_process) << outcome;
}

// Both axes move, the rig applies what the numerical mass commands on each (one cycle later).
TEST(Planar2Kind, EachAxisIsCommandedAndApplied) {
  const auto e = run({});
  const std::vector<double> x = column(*e, "x[m]"), y = column(*e, "y[m]");
  const std::vector<double> xa = column(*e, "x_applied[m]"), ya = column(*e, "y_applied[m]");
  EXPECT_GT(peak(x), 1e-3);
  EXPECT_GT(peak(y), 1e-3);
  for (std::size_t k = 1; k < x.size(); ++k) {
    ASSERT_EQ(xa[k], x[k - 1]) << k;
    ASSERT_EQ(ya[k], y[k - 1]) << k;
  }
}

// y's window narrowed below what the mass asks: the safety layer holds y inside it, x untouched.
TEST(Planar2Kind, EachAxisKeepsItsOwnWindow) {
  const auto free = run({});
  const auto e = run({"limits.y_m=0.002"});
  ASSERT_GT(peak(column(*free, "y[m]")), 0.002);
  EXPECT_LE(peak(column(*e, "y_applied[m]")), 0.002);
  EXPECT_GT(peak(column(*e, "x_applied[m]")), 0.002);
  // The whole command is refused when y leaves its window: x holds on those cycles too.
  const std::vector<double> y = column(*e, "y[m]"), xa = column(*e, "x_applied[m]");
  std::size_t held = 0;
  for (std::size_t k = 2; k < y.size(); ++k) {
    if (std::abs(y[k - 1]) > 0.002 && xa[k] == xa[k - 1]) ++held;
  }
  EXPECT_GT(held, 0U);
}

}  // namespace
