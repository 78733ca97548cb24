// Kind plug-ins (issue 23): the loader's checks (version, who can write it, name clashes) and
// the example kind (examples/kinds/oscillator) loaded from its shared module and run: the
// zero-lag loop equals its ideal twin bit for bit, the twin's steady state matches the
// oscillator's analytic frequency response, and the lagged loop grows at the rate the
// spectral radius of its linear cycle map predicts.
#include "hyloop/experiment/kind_plugin.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace ex = hyloop::experiment;
namespace fs = std::filesystem;

namespace {

const fs::path kGood = HYLOOP_TEST_GOOD_KIND;
const fs::path kWrongVersion = HYLOOP_TEST_WRONG_VERSION_KIND;
const fs::path kReparsing = HYLOOP_TEST_REPARSING_KIND;
const fs::path kScenario =
    fs::path(HYLOOP_SOURCE_DIR) / "examples" / "kinds" / "oscillator" / "oscillator.yaml";

void load_good() {
  const ex::PluginLoad load = ex::load_kind_plugin(kGood);
  ASSERT_TRUE(load.error.empty()) << load.error;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string scenario_text() { return read_file(kScenario); }

// A fresh directory of the test's own (mode 0755), under the build tree.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(HYLOOP_BIN_DIR).parent_path() / "test_kinds" / "scratch" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  return dir;
}

struct Recorded {
  std::vector<std::string> headers;
  std::vector<std::vector<double>> rows;
  [[nodiscard]] std::vector<double> column(const std::string& name) const {
    for (std::size_t c = 0; c < headers.size(); ++c) {
      if (headers[c] != name) continue;
      std::vector<double> out;
      for (const auto& r : rows) out.push_back(r[c]);
      return out;
    }
    ADD_FAILURE() << "no column " << name;
    return {};
  }
};

Recorded run(const std::vector<std::string>& overrides) {
  auto e = ex::make_experiment_from_text(scenario_text(), "oscillator.yaml", overrides);
  e->run();
  Recorded r;
  r.headers = e->samples().headers();
  for (std::size_t i = 0; i < e->samples().rows(); ++i) {
    const auto row = e->samples().row(i);
    r.rows.emplace_back(row.begin(), row.end());
  }
  return r;
}

}  // namespace

TEST(KindPlugin, TheExampleKindLoadsAndRegistersByName) {
  load_good();
  EXPECT_EQ(ex::find_kind("oscillator").name(), "oscillator");
  // Loading the same file again is a no-op, not a clash.
  const ex::PluginLoad again = ex::load_kind_plugin(kGood);
  EXPECT_TRUE(again.error.empty()) << again.error;
}

// The one-parse tests count yaml_parses() in the program; a plug-in parses in its own copy of the
// framework, which counts in the program's counter once loaded (kind ABI 6).
TEST(KindPlugin, APluginsYamlParsesCountInTheProgram) {
  const ex::PluginLoad load = ex::load_kind_plugin(kReparsing);
  ASSERT_TRUE(load.error.empty()) << load.error;
  const std::uint64_t before = ex::yaml_parses();
  EXPECT_THROW((void)ex::load_scenario_text("kind: reparsing\n", "reparsing.yaml", {}),
               ex::ScenarioError);
  EXPECT_EQ(ex::yaml_parses() - before, 2U);  // the program's parse and the plug-in's
}

TEST(KindPlugin, EachDirectorySearchedIsListedOnce) {
  const fs::path dir = kGood.parent_path();
  (void)ex::load_kind_plugins({dir});
  (void)ex::load_kind_plugins({dir, dir});
  const std::vector<std::string> searched = ex::kind_plugin_dirs_searched();
  EXPECT_EQ(std::count(searched.begin(), searched.end(), dir.string()), 1) << searched.size();
}

TEST(KindPlugin, APluginBuiltForAnotherVersionIsRefusedWithTheReason) {
  const ex::PluginLoad load = ex::load_kind_plugin(kWrongVersion);
  EXPECT_TRUE(load.kind.empty());
  EXPECT_NE(load.error.find("built for hyloop 0.0.0-test"), std::string::npos) << load.error;
  EXPECT_NE(load.error.find(std::string("this is hyloop ") + hyloop::kHyloopVersion),
            std::string::npos)
      << load.error;
  EXPECT_NE(load.error.find("rebuild it"), std::string::npos) << load.error;
  // An unknown kind's message names the refusal.
  try {
    (void)ex::find_kind("wrong_version");
    FAIL() << "an unknown kind was found";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0.0.0-test"), std::string::npos) << e.what();
  }
}

TEST(KindPlugin, APluginInAWorldWritableDirectoryIsRefused) {
  const fs::path dir = scratch("world_writable");
  fs::copy_file(kGood, dir / "hyloop_kind_oscillator.so");
  fs::permissions(dir, fs::perms::all);  // 0777
  const ex::PluginLoad load = ex::load_kind_plugin(dir / "hyloop_kind_oscillator.so");
  EXPECT_TRUE(load.kind.empty());
  EXPECT_NE(load.error.find("has mode 0777: writable by anyone"), std::string::npos) << load.error;
  EXPECT_NE(load.error.find(dir.string()), std::string::npos) << load.error;
  // The directory search refuses it the same way.
  const auto loads = ex::load_kind_plugins({dir});
  ASSERT_EQ(loads.size(), 1U);
  EXPECT_NE(loads[0].error.find("writable by anyone"), std::string::npos);
}

TEST(KindPlugin, AGroupWritablePluginIsRefused) {
  const fs::path dir = scratch("group_writable");
  const fs::path file = dir / "hyloop_kind_oscillator.so";
  fs::copy_file(kGood, file);
  ::chmod(file.c_str(), 0664);
  const ex::PluginLoad load = ex::load_kind_plugin(file);
  EXPECT_NE(load.error.find("has mode 0664: writable by its group"), std::string::npos)
      << load.error;
}

TEST(KindPlugin, APluginOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  const fs::path dir = scratch("other_owner");
  const fs::path file = dir / "hyloop_kind_oscillator.so";
  fs::copy_file(kGood, file);
  ASSERT_EQ(::chown(file.c_str(), 12345, 12345), 0);
  const ex::PluginLoad load = ex::load_kind_plugin(file);
  EXPECT_NE(load.error.find("owned by uid 12345"), std::string::npos) << load.error;
}

TEST(KindPlugin, AStickyWorldWritableDirectoryAboveTheOwnOneIsAccepted) {
  const fs::path top = scratch("sticky");
  ::chmod(top.c_str(), 01777);  // as /tmp
  const fs::path own = top / "mine";
  fs::create_directories(own);
  ::chmod(own.c_str(), 0755);
  std::ofstream(own / "file.so") << "x";
  ::chmod((own / "file.so").c_str(), 0644);
  EXPECT_EQ(ex::writable_by_others(own / "file.so"), "");
  // ... but not as the plug-in's own directory.
  std::ofstream(top / "file.so") << "x";
  ::chmod((top / "file.so").c_str(), 0644);
  EXPECT_NE(ex::writable_by_others(top / "file.so").find("writable by anyone"), std::string::npos);
}

TEST(KindPlugin, ASecondPluginOfTheSameKindIsRefusedByName) {
  load_good();
  const fs::path dir = scratch("clash");
  fs::copy_file(kGood, dir / "copy.so");
  const ex::PluginLoad load = ex::load_kind_plugin(dir / "copy.so");
  EXPECT_TRUE(load.kind.empty());
  EXPECT_NE(load.error.find("\"oscillator\""), std::string::npos) << load.error;
}

TEST(KindPlugin, NotAPluginIsRefused) {
  const fs::path dir = scratch("not_a_plugin");
  std::ofstream(dir / "junk.so") << "not an ELF file";
  ::chmod((dir / "junk.so").c_str(), 0644);
  const ex::PluginLoad load = ex::load_kind_plugin(dir / "junk.so");
  EXPECT_NE(load.error.find("cannot load"), std::string::npos) << load.error;
}

// The shipped kinds are plug-ins too: built into lib/hyloop/kinds beside bin/, each registering
// the kind its file names, and runnable from this program, which links no kind.
TEST(ShippedKinds, EachIsAPluginBesideTheBinariesAndRunsHere) {
  const fs::path dir = fs::path(HYLOOP_BIN_DIR).parent_path() / "lib" / "hyloop" / "kinds";
  for (const std::string name : {"fcu", "rht", "sits", "sits6", "vrths"}) {
    const ex::PluginLoad load = ex::load_kind_plugin(dir / ("hyloop_kind_" + name + ".so"));
    ASSERT_TRUE(load.error.empty()) << name << ": " << load.error;
    EXPECT_EQ(load.kind, name);
  }
  auto e = ex::make_experiment_from_text(
      read_file(fs::path(HYLOOP_SOURCE_DIR) / "scenarios" / "sits" / "table1_none.yaml"),
      "table1_none.yaml", {"timing.duration_s=0.5"});
  e->run();
  EXPECT_EQ(e->samples().rows(), 250u);  // 2 ms steps over 0.5 s
}

// `hyloop` carries no kind: copied where no kinds directory lies beside it, it knows none and
// says so; given the shipped kinds' directory (--kinds), it runs a SITS scenario.
TEST(ShippedKinds, TheToolLinksNoKindAndRunsTheLoadedOnes) {
  const fs::path prefix = scratch("bare_prefix");
  fs::create_directories(prefix / "bin");
  fs::copy_file(fs::path(HYLOOP_BIN_DIR) / "hyloop", prefix / "bin" / "hyloop");
  const std::string scenario =
      (fs::path(HYLOOP_SOURCE_DIR) / "scenarios" / "sits" / "table1_none.yaml").string();
  const std::string run = "env -u HYLOOP_KIND_PATH " + (prefix / "bin" / "hyloop").string() +
                          " run " + scenario + " --set timing.duration_s=0.2 --force --out ";
  const fs::path log = prefix / "log.txt";
  const int bare =
      std::system((run + (prefix / "bare").string() + " >" + log.string() + " 2>&1").c_str());
  EXPECT_NE(bare, 0);
  const std::string said = read_file(log);
  const std::size_t refused = said.find("kind = \"sits\": must be one of ");
  ASSERT_NE(refused, std::string::npos) << said;
  EXPECT_EQ(said.find("rht", refused), std::string::npos) << said;  // no shipped kind is known
  // ... and says where it looked.
  EXPECT_NE(said.find("looked for in " + (prefix / "lib" / "hyloop" / "kinds").string()),
            std::string::npos)
      << said;
  const fs::path kinds = fs::path(HYLOOP_BIN_DIR).parent_path() / "lib" / "hyloop" / "kinds";
  const int loaded = std::system((run + (prefix / "loaded").string() + " --kinds " +
                                  kinds.string() + " >" + log.string() + " 2>&1")
                                     .c_str());
  EXPECT_EQ(loaded, 0) << read_file(log);
  EXPECT_TRUE(fs::exists(prefix / "loaded" / "samples.csv")) << read_file(log);
}

TEST(OscillatorExample, WithoutLagTheLoopIsItsIdealTwinBitForBit) {
  load_good();
  const Recorded r = run({"rig.actuator_lag_s=0"});
  const auto x = r.column("x[m]");
  const auto xi = r.column("x_ideal[m]");
  ASSERT_EQ(x.size(), 5000U);
  double peak = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i], xi[i]) << "cycle " << i;
    peak = std::max(peak, std::abs(x[i]));
  }
  EXPECT_GT(peak, 1e-3);  // it moved
}

TEST(OscillatorExample, TheTwinMatchesTheAnalyticFrequencyResponse) {
  load_good();
  // ζ ≈ 0.41: the transient is gone (e^-t/0.1 s) long before the last second.
  const Recorded r = run({"model.damping_nspm=2000"});
  const auto xi = r.column("x_ideal[m]");
  double peak = 0.0;
  for (std::size_t i = xi.size() - 1000; i < xi.size(); ++i) peak = std::max(peak, std::abs(xi[i]));
  const double m = 100.0, c = 2000.0, k = 4.0e4 + 2.0e4, w = 2.0 * std::numbers::pi * 2.0;
  const double analytic = 500.0 / std::hypot(k - m * w * w, c * w);
  EXPECT_NEAR(peak / analytic, 1.0, 5e-3) << peak << " vs " << analytic;
}

TEST(OscillatorExample, TheLaggedLoopGrowsAtTheRateOfItsCycleMap) {
  load_good();
  const double m = 100.0, c = 20.0, k = 4.0e4, ks = 2.0e4, tau = 0.005, t = 0.001;
  const Recorded r = run({"model.force_amplitude_n=0", "model.x0_m=0.002", "timing.duration_s=4"});
  // The cycle's linear map on (x, v, x_a of the last cycle) (oscillator_kind.cpp).
  const double a = -std::expm1(-t / tau);
  Eigen::Matrix3d map;
  const Eigen::RowVector3d xa(a, 0.0, 1.0 - a);  // x_a[k]
  const Eigen::RowVector3d acc =
      (-k * Eigen::RowVector3d(1, 0, 0) - c * Eigen::RowVector3d(0, 1, 0) - ks * xa) / m;
  const Eigen::RowVector3d v_next = Eigen::RowVector3d(0, 1, 0) + t * acc;
  map.row(0) = Eigen::RowVector3d(1, 0, 0) + t * v_next;
  map.row(1) = v_next;
  map.row(2) = xa;
  const double rho = map.eigenvalues().cwiseAbs().maxCoeff();
  const double predicted = std::log(rho) / t;  // 1/s
  ASSERT_GT(predicted, 0.0) << "the lag should destabilise this loop";
  // Least-squares slope of ln(peak) over the positive peaks of x.
  const auto x = r.column("x[m]");
  double sn = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (std::size_t i = 1; i + 1 < x.size(); ++i) {
    if (x[i] > x[i - 1] && x[i] >= x[i + 1] && x[i] > 0.0) {
      const double ti = static_cast<double>(i) * t, yi = std::log(x[i]);
      sn += 1;
      st += ti;
      sy += yi;
      stt += ti * ti;
      sty += ti * yi;
    }
  }
  ASSERT_GT(sn, 10);
  const double measured = (sn * sty - st * sy) / (sn * stt - st * st);
  EXPECT_NEAR(measured / predicted, 1.0, 0.02) << measured << " vs " << predicted;
  // The first-order estimate (k_s·(τ − T/2) − c)/(2m) is close: the lag is a negative damping.
  EXPECT_NEAR(predicted, (ks * (tau - t / 2) - c) / (2 * m), 0.1 * predicted);
}

TEST(OscillatorExample, BadFieldsAreRefusedNamingTheField) {
  load_good();
  try {
    (void)run({"rig.actuator_lag_s=-1"});
    FAIL() << "a negative lag was accepted";
  } catch (const ex::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("rig.actuator_lag_s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[0, 10]"), std::string::npos) << e.what();
  }
  try {  // an e-stop would take longer than hal::kMaxStopTime: min(1 m/s / 1 s, 2·0.2 m / 1 s²)
    (void)run({"rig.acceleration_max_mps2=0.1"});
    FAIL() << "a stop ramp slower than the bound was accepted";
  } catch (const ex::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("rig.acceleration_max_mps2 = 0.1: must be >= 0.4"),
              std::string::npos)
        << e.what();
  }
  try {
    (void)run({"rig.nonsense=1"});
    FAIL() << "an unknown field was accepted";
  } catch (const ex::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("rig.nonsense"), std::string::npos) << e.what();
  }
}
