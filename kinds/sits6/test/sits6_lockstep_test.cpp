// The six-axis kind through the unchanged loop services (issue 28): a lockstep distributed run of
// the co-located rig, sensor, actuator and dynamics services records the in-process run's
// samples.csv, cycles.csv and cycles_axes.csv byte for byte, its plan carries the six axes'
// layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

namespace {

namespace fs = std::filesystem;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

const fs::path kScenarios = fs::path(HYLOOP_SOURCE_DIR) / "scenarios/sits6";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Sits6Loop, ItsPlanCarriesSixAxesInTheirUnits) {
  const ex::LoopPlan plan =
      ex::loop_plan(ex::read_scenario_text((kScenarios / "off_centre.yaml").string()));
  EXPECT_EQ(ex::plan_axes(plan), 6U);
  ASSERT_EQ(plan.command.size(), 12U);
  EXPECT_EQ(plan.command.signals[0], (hyloop::hal::Signal{"x_cmd", "m", "length"}));
  EXPECT_EQ(plan.command.signals[7], (hyloop::hal::Signal{"rx_cmd_rate", "rad/s", "angle_rate"}));
  ASSERT_EQ(plan.measurement.size(), 12U);
  EXPECT_EQ(plan.measurement.signals[0], (hyloop::hal::Signal{"x_R", "m", "length"}));
  EXPECT_EQ(plan.measurement.signals[6], (hyloop::hal::Signal{"f_x", "N", "force"}));
  EXPECT_EQ(plan.measurement.signals[11], (hyloop::hal::Signal{"m_z", "N*m", "torque"}));
  // Each rotational axis has its own window, in rad.
  EXPECT_EQ(plan.safety.limits.position_max, 0.5);
  EXPECT_EQ(plan.extra_axes.at(2).safety.limits.position_max, 1.0);
  EXPECT_EQ(plan.extra_axes.at(0).initial.position, 0.0);
  EXPECT_EQ(plan.initial.velocity, 0.05);
}

// Off-centre (force and torque coupled through the body) with noise on all six sensor axes.
TEST(Sits6Loop, InProcessAndLockstepThroughTheServicesAreBitForBit) {
  const std::vector<std::string> overrides = {"timing.duration_s=3",
                                              "rig.sensor.force_noise_std_n=[0.5, 0.4, 0.3]",
                                              "rig.sensor.torque_noise_std_nm=[0.05, 0.04, 0.03]",
                                              "rig.sensor.position_noise_std_m=[1e-5, 1e-5, 1e-5]",
                                              "rig.sensor.angle_noise_std_rad=[1e-5, 1e-5, 1e-5]"};
  const std::string text = ex::read_scenario_text((kScenarios / "off_centre.yaml").string());
  const fs::path dir = hyloop::testing::scratch_dir("sits6", "bit_for_bit");
  auto e = ex::make_experiment_from_text(text, "off_centre", overrides);
  e->run();
  rec::write_run_directory(*e, dir / "in_process");
  hyloop::testing::CoLocated stack("sits6", dir);
  const grpc::Status loaded = stack.load_text(text, overrides);
  ASSERT_TRUE(loaded.ok()) << loaded.error_message();
  const grpc::Status started = stack.start("lockstep");
  ASSERT_TRUE(started.ok()) << started.error_message();
  const std::string outcome = stack.finish().message();
  const std::string in_process = slurp(dir / "in_process" / "samples.csv");
  ASSERT_EQ(std::count(in_process.begin(), in_process.end(), '\n'), 1501) << outcome;
  const std::string header = in_process.substr(0, in_process.find('\n'));
  EXPECT_EQ(header.rfind("time[s],x[m],v_x[m/s],x_ideal[m],v_x_ideal[m/s],x_robot[m],", 0), 0U);
  EXPECT_NE(header.find(",m_z_contact[N*m],x_cmd[m]"), std::string::npos) << header;
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), 71);
  EXPECT_EQ(slurp(dir / "lockstep" / "samples.csv"), in_process) << outcome;
  // The cycles files: the coordinator streams them as cycles end, the in-process run writes them
  // at the end; the same bytes. x and rz both swing in off_centre.
  for (const char* file : {"cycles.csv", "cycles_axes.csv"}) {
    EXPECT_EQ(slurp(dir / "lockstep" / file), slurp(dir / "in_process" / file)) << file;
  }
  const std::string axes = slurp(dir / "in_process" / "cycles_axes.csv");
  EXPECT_EQ(axes.rfind("axis[-],cycle[-],t_start[s],", 0), 0U);
  EXPECT_NE(axes.find("\n0,1,"), std::string::npos) << axes;  // x's second cycle
  EXPECT_NE(axes.find("\n5,0,"), std::string::npos) << axes;  // rz's first
}

}  // namespace
