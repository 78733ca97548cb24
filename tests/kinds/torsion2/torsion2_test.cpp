// A fourth kind as one folder and one registration line (issue 12): the test-only torsion2 kind
// runs in process (LoopExperiment) and in lockstep through the loop services and the
// coordinator, which never name it, and both give the same samples.csv byte for byte; its own
// signals travel under their names and units, and a stop of its dynamics ends both runs alike.
#include <gtest/gtest.h>

#include <algorithm>
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
#include "torsion2_kind.hpp"

namespace {

namespace fs = std::filesystem;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

const bool kRegistered = (ex::register_kind(hyloop::testing::make_torsion2_kind()), true);

const fs::path kScenario = fs::path(HYLOOP_SOURCE_DIR) / "tests/kinds/torsion2/torsion2.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// The in-process run of the scenario with `overrides`, written as `hyloop run` writes it.
fs::path run_in_process(const fs::path& dir, const std::vector<std::string>& overrides) {
  auto e = ex::make_experiment_from_text(ex::read_scenario_text(kScenario.string()), "torsion2",
                                         overrides);
  e->run();
  rec::write_run_directory(*e, dir / "in_process");
  return dir / "in_process";
}

/// The same through the co-located services in lockstep.
fs::path run_lockstep(const fs::path& dir, const std::string& name,
                      const std::vector<std::string>& overrides, std::string& outcome) {
  hyloop::testing::CoLocated stack(name, dir);
  const grpc::Status loaded =
      stack.load_text(ex::read_scenario_text(kScenario.string()), overrides);
  EXPECT_TRUE(loaded.ok()) << loaded.error_message();
  const grpc::Status started = stack.start("lockstep");
  EXPECT_TRUE(started.ok()) << started.error_message();
  const hyloop::v1::RunStatus status = stack.finish();
  outcome = status.message();
  return dir / "lockstep";
}

TEST(Torsion2Kind, IsRegisteredAndCarriesItsOwnSignals) {
  ASSERT_TRUE(kRegistered);
  EXPECT_EQ(ex::find_kind("torsion2").name(), "torsion2");
  const ex::LoopPlan plan = ex::loop_plan(ex::read_scenario_text(kScenario.string()));
  EXPECT_EQ(plan.measurement.signals.at(2), (hyloop::hal::Signal{"tau", "N*m", "torque"}));
  EXPECT_EQ(plan.command.signals.at(0), (hyloop::hal::Signal{"theta_cmd", "rad", "angle"}));
  EXPECT_EQ(plan.command.signals.at(1),
            (hyloop::hal::Signal{"theta_cmd_rate", "rad/s", "angle_rate"}));
}

TEST(Torsion2Kind, InProcessAndLockstepThroughTheServicesAreBitForBit) {
  const fs::path dir = hyloop::testing::scratch_dir("torsion2", "bit_for_bit");
  const fs::path a = run_in_process(dir, {});
  std::string outcome;
  const fs::path b = run_lockstep(dir, "torsion2", {}, outcome);
  const std::string in_process = slurp(a / "samples.csv");
  ASSERT_EQ(std::count(in_process.begin(), in_process.end(), '\n'), 2001) << outcome;
  EXPECT_EQ(in_process.substr(0, in_process.find('\n')),
            "time[s],theta_1[rad],omega_1[rad/s],tau_meas[N*m],torque_in[N*m],phi[rad],"
            "omega_2[rad/s],tau_true[N*m]");
  EXPECT_EQ(slurp(b / "samples.csv"), in_process) << outcome;
  const auto summary = nlohmann::json::parse(slurp(b / "summary.json"));
  EXPECT_TRUE(summary["stop_reason"].is_null()) << summary.dump();
  EXPECT_EQ(summary["peak_abs"], nlohmann::json::parse(slurp(a / "summary.json"))["peak_abs"]);
}

// Its dynamics stops at |θ1| > limits.angle_rad: both runs record the same rows up to the stop.
TEST(Torsion2Kind, ItsStopEndsBothRunsAtTheSameRow) {
  const fs::path dir = hyloop::testing::scratch_dir("torsion2", "stop");
  const std::vector<std::string> overrides = {"numerical.torque_amplitude_n_m=60",
                                              "limits.angle_rad=0.2"};
  const fs::path a = run_in_process(dir, overrides);
  std::string outcome;
  const fs::path b = run_lockstep(dir, "torsion2stop", overrides, outcome);
  const std::string in_process = slurp(a / "samples.csv");
  const auto rows = std::count(in_process.begin(), in_process.end(), '\n');
  EXPECT_GT(rows, 10);
  EXPECT_LT(rows, 2001);
  EXPECT_EQ(slurp(b / "samples.csv"), in_process) << outcome;
  EXPECT_EQ(nlohmann::json::parse(slurp(a / "summary.json"))["stop_reason"], "angle limit");
  EXPECT_NE(outcome.find("angle limit"), std::string::npos) << outcome;
}

}  // namespace
