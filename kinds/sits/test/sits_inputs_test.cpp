// Issue 10, "inputs that cannot reach outside": findings 3 (a scenario reads server files), 7
// (duplicate keys) and 11 (denormals, quoted numbers, huge values), each reproduced.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/kinds/fcu/fcu_dynamics.hpp"
#include "hyloop/kinds/fcu/fcu_experiment.hpp"
#include "hyloop/kinds/rht/rht_dynamics.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"
#include "hyloop/kinds/sits/sits_dynamics.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kSource = HYLOOP_SOURCE_DIR;

// ---- finding 3: data files --------------------------------------------------------------------

/// A scratch folder holding a data directory and, beside it, a secret no scenario may reach.
class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = server_data_directories();
    root_ = fs::temp_directory_path() /
            ("hyloop_inputs_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    data_ = root_ / "data";
    secret_ = root_ / "secret.txt";
    fs::create_directories(data_ / "records");
    std::ofstream(secret_) << "# header\nSECRET-LINE-42 hunter2\nSECRET-LINE-43 swordfish\n";
    std::ofstream record(data_ / "records" / "quake.txt");
    for (int i = 0; i < 200; ++i) record << i * 0.01 << " " << 0.1 * std::sin(0.3 * i) << "\n";
    record.close();
    set_server_data_directories({data_});
  }
  void TearDown() override {
    set_server_data_directories(saved_);
    fs::remove_all(root_);
  }

  static std::string rht_text(const std::string& file) {
    return "kind: rht\nground_motion: {file: \"" + file + "\", peak_g: 0.1}\n";
  }

  /// The error of loading an RHT scenario sent as text (the coordinator's LoadScenario path).
  static std::string remote_error(const std::string& file) {
    try {
      (void)make_experiment_from_text(rht_text(file), "remote.yaml", {});
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }

  std::vector<fs::path> saved_;
  fs::path root_;
  fs::path data_;
  fs::path secret_;
};

TEST_F(DataFiles, ARemoteScenarioCannotNameAPathAndNothingOfTheFileComesBack) {
  for (const std::string& ref :
       {secret_.string(), std::string("../secret.txt"), std::string("records/../../secret.txt"),
        std::string("/dev/zero"), std::string("/etc/shadow")}) {
    const std::string e = remote_error(ref);
    EXPECT_NE(e.find("ground_motion.file"), std::string::npos) << ref << ": " << e;
    EXPECT_NE(e.find("not a data file name"), std::string::npos) << ref << ": " << e;
    EXPECT_EQ(e.find("SECRET"), std::string::npos) << ref << ": " << e;
    EXPECT_EQ(e.find("hunter2"), std::string::npos) << ref << ": " << e;
  }
}

TEST_F(DataFiles, ARemoteScenarioReadsANamedFileFromTheDataDirectory) {
  const auto e = make_experiment_from_text(rht_text("records/quake.txt"), "remote.yaml", {});
  EXPECT_EQ(e->total_steps(), 198);  // 200 samples at 0.01 s, the step: N − 2 cycles
  e->run();
  const std::string source = e->summary()["ground_motion"]["source"].get<std::string>();
  EXPECT_EQ(source.rfind("data:records/quake.txt", 0), 0u) << source;
  // the shipped scenarios' project-relative spelling names the same file
  EXPECT_NO_THROW(
      (void)make_experiment_from_text(rht_text("data/records/quake.txt"), "remote.yaml", {}));
  EXPECT_NE(remote_error("records/missing.txt").find("no such file"), std::string::npos);
}

TEST_F(DataFiles, ASymbolicLinkInsideTheDataDirectoryIsRefused) {
  fs::create_symlink(secret_, data_ / "link.txt");
  fs::create_directory_symlink(root_, data_ / "up");
  for (const char* ref : {"link.txt", "up/secret.txt"}) {
    const std::string e = remote_error(ref);
    EXPECT_NE(e.find("symbolic link"), std::string::npos) << ref << ": " << e;
    EXPECT_EQ(e.find("SECRET"), std::string::npos) << e;
  }
}

TEST_F(DataFiles, AFifoDoesNotBlockTheCall) {
  const fs::path fifo = data_ / "records" / "pipe.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto result = std::async(std::launch::async, [] { return remote_error("records/pipe.txt"); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Unblock the reader so that the test can end, then fail.
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    FAIL() << "opening a FIFO named by the scenario blocked for 10 s";
  }
  const std::string e = result.get();
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}

TEST_F(DataFiles, ADeviceOrAnOversizedFileIsRefusedBeforeReading) {
  // The user's own scenario file may name a path, but still only a regular file is read.
  const std::string local_scenario = (root_ / "mine.yaml").string();
  std::ofstream(local_scenario) << rht_text("/dev/zero");
  try {
    (void)make_experiment(local_scenario, {});
    FAIL() << "/dev/zero was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  // A sparse file just over the limit, in the data directory.
  const fs::path big = data_ / "big.txt";
  std::ofstream(big).close();
  fs::resize_file(big, kMaxDataFileBytes + 1);
  const std::string e = remote_error("big.txt");
  EXPECT_NE(e.find("larger than the limit of 67108864 bytes"), std::string::npos) << e;
}

TEST_F(DataFiles, AParseErrorNamesTheFileAndLineAndQuotesAtMost200Characters) {
  std::ofstream(data_ / "bad.txt") << "time accel\n0 0.1\n0.01 0.2\n"
                                   << std::string(5000, 'x') << " 0.3\n";
  const std::string e = remote_error("bad.txt");
  EXPECT_NE(e.find("data:bad.txt: line 4"), std::string::npos) << e;
  EXPECT_NE(e.find("must hold two numbers"), std::string::npos) << e;
  EXPECT_LT(e.size(), 600u) << e;
}

TEST_F(DataFiles, TheCommandLineKeepsPathsRelativeToTheScenario) {
  fs::create_directories(root_ / "mine");
  fs::copy_file(data_ / "records" / "quake.txt", root_ / "mine" / "local.txt");
  const std::string path = (root_ / "mine" / "s.yaml").string();
  std::ofstream(path) << rht_text("local.txt");
  EXPECT_EQ(make_experiment(path, {})->total_steps(), 198);
  // the same text sent to a server is refused: local.txt is not in its data directories
  EXPECT_NE(remote_error("local.txt").find("no such file"), std::string::npos);
}

TEST_F(DataFiles, ALoopServiceConfiguredWithAScenarioTextReadsOnlyNames) {
  // What the dynamics service does with the scenario its Configure carries (loop_parts.cpp).
  const RhtScenario s = parse_rht_scenario(rht_text(secret_.string()), "configure", {});
  try {
    const RhtDynamics dynamics(s);
    FAIL() << "the dynamics opened " << secret_;
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("not a data file name"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(
      (void)RhtDynamics(parse_rht_scenario(rht_text("records/quake.txt"), "configure", {})));
}

TEST(DataDirOptions, AreTakenOutOfArgvAndMustBeDirectories) {
  const auto saved = server_data_directories();
  std::string a0 = "svc", a1 = "--data-dir", a2 = kSource.string() + "/data", a3 = "--x",
              a4 = "--data-dir=" + kSource.string() + "/scenarios";
  std::vector<char*> argv{a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
  int argc = 5;
  EXPECT_EQ(take_data_dir_options(argc, argv.data()), "");
  ASSERT_EQ(argc, 2);
  EXPECT_EQ(std::string(argv[1]), "--x");
  ASSERT_EQ(server_data_directories().size(), 2u);
  EXPECT_EQ(server_data_directories()[1], kSource / "scenarios");
  std::string b1 = "--data-dir", b2 = "/nonexistent/dir";
  std::vector<char*> bad{a0.data(), b1.data(), b2.data(), nullptr};
  argc = 3;
  EXPECT_NE(take_data_dir_options(argc, bad.data()).find("not a directory"), std::string::npos);
  set_server_data_directories(saved);
}

// A directory whose path has ':' cannot travel in HYLOOP_DATA_DIRS (a plug-in would read two).
TEST(DataDirOptions, ADirectoryWithAColonIsRefusedNamingIt) {
  const auto saved = server_data_directories();
  const fs::path dir = fs::temp_directory_path() / ("hyloop_data:" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_THAT([&] { set_server_data_directories({dir}); },
              ::testing::ThrowsMessage<ScenarioError>(
                  AllOf(HasSubstr(dir.string()), HasSubstr("contains ':'"))));
  EXPECT_EQ(server_data_directories(), saved);
  fs::remove_all(dir);
}

// ---- finding 7: duplicate keys ------------------------------------------------------------------

std::string sits_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    // `kind` last: the line numbers the messages quote stay the test's own.
    const std::string text = yaml.starts_with("kind:") ? yaml : yaml + "\nkind: sits\n";
    (void)make_experiment_from_text(text, "dup.yaml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(DuplicateKeys, ASecondRigBlockWithTighterLimitsIsAnError) {
  const std::string e = sits_error(
      "name: t\n"
      "rig:\n"
      "  limits: {position_min_m: -0.5, position_max_m: 0.5}\n"
      "timing: {duration_s: 1}\n"
      "rig:\n"
      "  limits: {position_min_m: -0.01, position_max_m: 0.01}\n");
  EXPECT_EQ(e, "dup.yaml: rig: duplicate key (lines 2 and 5; a key may appear once in a mapping)");
}

TEST(DuplicateKeys, ASecondModelBlockWithANegativeMassIsNotIgnored) {
  const std::string e = sits_error("model: {mass_kg: 500}\nmodel: {mass_kg: -1}\n");
  EXPECT_NE(e.find("dup.yaml: model: duplicate key (lines 1 and 2"), std::string::npos) << e;
}

TEST(DuplicateKeys, AreFoundAtAnyDepthAndInEveryKind) {
  EXPECT_NE(sits_error("rig:\n  limits:\n    position_max_m: 0.5\n    position_max_m: 0.1\n")
                .find("rig.limits.position_max_m: duplicate key (lines 3 and 4"),
            std::string::npos);
  EXPECT_NE(sits_error("kind: rht\nservo: {omega_rad_s: 50, omega_rad_s: 40}\n")
                .find("servo.omega_rad_s: duplicate key"),
            std::string::npos);
  EXPECT_NE(sits_error("kind: fcu\nkind: sits\n").find("kind: duplicate key"), std::string::npos);
  // and in the value of an override
  EXPECT_NE(sits_error("name: t\n", {"model={mass_kg: 1, mass_kg: 2}"}).find("duplicate key"),
            std::string::npos);
}

// ---- finding 11: numbers and sizes
// ---------------------------------------------------------------

TEST(Numbers, ASubnormalMassOrStepIsRefusedNamingTheField) {
  const std::string mass = sits_error("model: {mass_kg: 4.9e-324}\n");
  EXPECT_NE(mass.find("model.mass_kg: 4.9e-324 is subnormal"), std::string::npos) << mass;
  const std::string step = sits_error("timing: {step_s: 4.9e-324}\n");
  EXPECT_NE(step.find("timing.step_s: 4.9e-324 is subnormal"), std::string::npos) << step;
  const std::string rht = sits_error("kind: rht\nstructure: {mass_kg: 1e-310}\n");
  EXPECT_NE(rht.find("structure.mass_kg"), std::string::npos) << rht;
  // normal but far outside the documented range
  EXPECT_NE(sits_error("model: {mass_kg: 1e-300}\n").find("model.mass_kg = 1e-300: must be in"),
            std::string::npos);
  EXPECT_NE(sits_error("model: {mass_kg: 1e300}\n").find("model.mass_kg"), std::string::npos);
  // exactly zero stays allowed where zero is allowed
  EXPECT_EQ(sits_error("name: t\nrig: {contact: {damping_ns_per_m: 0}}\n"), "");
}

TEST(Numbers, AQuotedNumberOrBooleanIsRefused) {
  const std::string e = sits_error("model: {mass_kg: \"500\"}\n");
  EXPECT_NE(e.find("model.mass_kg: \"500\" is quoted"), std::string::npos) << e;
  EXPECT_NE(sits_error("model: {mass_kg: '500'}\n").find("is quoted"), std::string::npos);
  EXPECT_NE(sits_error("delays: {control_cycle: \"false\"}\n").find("delays.control_cycle"),
            std::string::npos);
  EXPECT_NE(sits_error("rig: {limits: {acceleration_max_mps2: \".inf\"}}\n").find("is quoted"),
            std::string::npos);
  EXPECT_NE(sits_error("identification: {report_frequencies_hz: [1, \"2\"]}\n")
                .find("identification.report_frequencies_hz[1]"),
            std::string::npos);
  EXPECT_NE(sits_error("rig: {sensor: {seed: \"7\"}}\n").find("is quoted"), std::string::npos);
  // plain and explicitly tagged numbers are numbers
  EXPECT_EQ(sits_error("name: t\nmodel: {mass_kg: 500}\n"), "");
  EXPECT_EQ(sits_error("name: t\nmodel: {mass_kg: !!float 500}\n"), "");
  EXPECT_EQ(sits_error("name: t\n", {"model.mass_kg=400"}), "");
}

TEST(Numbers, AnErrorQuotesAtMost200CharactersOfAValue) {
  const std::string huge(500000, '7');
  for (const std::string& yaml :
       {"model: {mass_kg: 1" + huge + "x}\n", "compensator: {type: " + huge + "}\n",
        "name: " + huge + "\n", "model:\n  " + huge.substr(0, 1000) + ": 1\n",
        "kind: " + huge + "\n", "kind: rht\ncompensator: {model: " + huge + "}\n"}) {
    const std::string e = sits_error(yaml);
    EXPECT_FALSE(e.empty());
    EXPECT_LT(e.size(), 700u) << e.substr(0, 700);
  }
  const std::string e = sits_error("name: t\n", {"model.mass_kg=" + std::string(3000, '1') + "x"});
  EXPECT_LT(e.size(), 700u) << e.substr(0, 700);
  // a scenario larger than the limit is refused before it is parsed
  const std::string big =
      sits_error("name: t\ndescription: " + std::string(kMaxScenarioBytes, 'a'));
  EXPECT_NE(big.find("larger than the limit of 1048576 bytes"), std::string::npos) << big.size();
}

TEST(Numbers, NestedAliasesCannotMakeTheCheckExponential) {
  std::string yaml = "a0: &a0 [1, 1]\n";
  for (int i = 1; i < 40; ++i) {
    const std::string n = std::to_string(i);
    const std::string p = std::to_string(i - 1);
    yaml.append("a").append(n).append(": &a").append(n);
    yaml.append(" [*a").append(p).append(", *a").append(p).append("]\n");
  }
  auto result = std::async(std::launch::async, [&] { return sits_error(yaml); });
  ASSERT_EQ(result.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_NE(result.get().find("YAML nodes"), std::string::npos);
}

// ---- finding 11: a default acceleration limit in every kind's safety window ---------------------

TEST(AccelerationLimit, EveryKindHasAFiniteDefaultInItsSafetyWindow) {
  const SitsScenario sits = parse_scenario("kind: sits\nname: t\n", "t.yaml");
  EXPECT_EQ(sits_safety_config(sits).limits.acceleration_max, 500.0);
  const RhtScenario rht = parse_rht_scenario("kind: rht\n", "t.yaml", {});
  EXPECT_EQ(rht_safety_config(rht).limits.acceleration_max, 1e5);
  const FcuScenario fcu = parse_fcu_scenario("kind: fcu\n", "t.yaml", {});
  EXPECT_EQ(fcu_safety_config(fcu).limits.acceleration_max, 1e3);
  // each is a scenario field, written in the resolved scenario and settable (.inf: off)
  EXPECT_NE(to_yaml(sits).find("acceleration_max_mps2: 500"), std::string::npos);
  EXPECT_NE(to_yaml(rht).find("acceleration_max_mps2: 100000"), std::string::npos);
  EXPECT_NE(to_yaml(fcu).find("command_acceleration_max_kg_s3: 1000"), std::string::npos);
  EXPECT_TRUE(std::isinf(rht_safety_config(parse_rht_scenario("kind: rht\n", "t",
                                                              {"servo.acceleration_max_mps2=.inf"}))
                             .limits.acceleration_max));
}

TEST(AccelerationLimit, TheSitsWindowClipsAReversalBeyondTheDefault) {
  hal::ActuatorSafety window(sits_safety_config(parse_scenario("kind: sits\nname: t\n", "t.yaml")));
  window.reset(0.0);
  // 1.9 m/s over one control period (4 ms) from rest: 475 m/s², inside the default
  const hal::ActuatorCommand out{0.0076, 1.9};
  const hal::SafetyOutput first = window.filter(&out);
  EXPECT_EQ(first.event, hal::SafetyEvent::kNone);
  EXPECT_EQ(first.command.position, 0.0076);
  // straight back: −1.9 m/s, a change of 3.8 m/s in 4 ms = 950 m/s² > 500
  const hal::ActuatorCommand back{0.0, -1.9};
  const hal::SafetyOutput second = window.filter(&back);
  EXPECT_EQ(second.event, hal::SafetyEvent::kRejectedAcceleration);
  EXPECT_TRUE(second.limited);
  // the implied velocity changed by at most a·T = 2 m/s
  EXPECT_NEAR((second.command.position - first.command.position) / 0.004, 1.9 - 2.0, 1e-9);
}

TEST(AccelerationLimit, TheDefaultsLeaveEveryShippedRunBitForBit) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string path = entry.path().string();
    const std::string kind = scenario_kind(path);
    std::vector<std::string> unbounded_overrides = {"outputs.progress=off"};
    if (kind == "sits6") {
      unbounded_overrides.emplace_back("rig.limits.acceleration_max_mps2=.inf");
      unbounded_overrides.emplace_back("rig.limits.angular_acceleration_max_rad_s2=.inf");
    } else {
      unbounded_overrides.emplace_back(kind == "sits"  ? "rig.limits.acceleration_max_mps2=.inf"
                                       : kind == "rht" ? "servo.acceleration_max_mps2=.inf"
                                       : kind == "vrths"
                                           ? "limits.acceleration_max_mps2=.inf"
                                           : "safety.command_acceleration_max_kg_s3=.inf");
    }
    const auto bounded = make_experiment(path, {"outputs.progress=off"});
    const auto unbounded = make_experiment(path, unbounded_overrides);
    bounded->run();
    unbounded->run();
    const SampleTable& a = bounded->samples();
    const SampleTable& b = unbounded->samples();
    ASSERT_EQ(a.rows(), b.rows()) << path;
    ASSERT_GT(a.rows(), 10u) << path;
    ASSERT_EQ(a.columns(), b.columns()) << path;
    for (std::size_t r = 0; r < a.rows(); ++r) {
      ASSERT_EQ(std::memcmp(a.row(r).data(), b.row(r).data(), a.columns() * sizeof(double)), 0)
          << path << " row " << r;
    }
    ++count;
  }
  EXPECT_GE(count, 27);
}

// ---- the shipped scenarios still validate, from a file and as text ------------------------------

TEST(ShippedScenarios, AllValidateFromTheirFileAndAsTextSentToAService) {
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string path = entry.path().string();
    std::unique_ptr<Experiment> local;
    ASSERT_NO_THROW(local = make_experiment(path, {})) << path;
    std::unique_ptr<Experiment> remote;
    ASSERT_NO_THROW(remote = make_experiment_from_text(read_scenario_text(path), path, {})) << path;
    EXPECT_EQ(local->total_steps(), remote->total_steps()) << path;
    // the resolved scenario reads back (the coordinator sends it to the services)
    EXPECT_NO_THROW((void)make_experiment_from_text(remote->resolved_yaml(), "resolved", {}))
        << path;
    ++count;
  }
  EXPECT_GE(count, 27);
}

// ---- issue 27, High 1: an e-stop that does not stop --------------------------------------------

std::string scenario_error(const std::string& yaml, const std::vector<std::string>& overrides) {
  try {
    (void)make_experiment_from_text(yaml, "t.yaml", overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(StopTime, ARampSlowerThanTheBoundIsRefusedNamingTheFieldAndTheRange) {
  // The reproduction: the default SITS window (2 m/s, a 1 m stroke) needs >= 2 m/s².
  const std::string sits = "kind: sits\nname: t\n";
  EXPECT_THAT(scenario_error(sits, {"safety.stop_deceleration_mps2=1e-30"}),
              AllOf(HasSubstr("safety.stop_deceleration_mps2 = 1e-30"),
                    HasSubstr("must be >= 2 m/s^2"), HasSubstr("rest within t = 1 s")));
  EXPECT_THAT(scenario_error(sits, {"safety.stop_deceleration_mps2=1.99"}),
              HasSubstr("safety.stop_deceleration_mps2 = 1.99: must be >= 2 m/s^2"));
  EXPECT_THAT(scenario_error(sits, {"rig.limits.acceleration_max_mps2=1e-30"}),
              HasSubstr("rig.limits.acceleration_max_mps2 = 1e-30: must be >= 2 m/s^2"));
  // A slower robot or a shorter stroke allows a gentler ramp: min(V/1 s, 2W/(1 s)²).
  EXPECT_EQ(scenario_error(
                sits, {"safety.stop_deceleration_mps2=0.5", "rig.limits.velocity_max_mps=0.5"}),
            "");
  EXPECT_EQ(
      scenario_error(sits, {"safety.stop_deceleration_mps2=0.2", "safety.rate_limit_mps=0.2"}), "");
  EXPECT_THAT(
      scenario_error(sits, {"safety.stop_deceleration_mps2=0.03", "rig.limits.position_min_m=-0.01",
                            "rig.limits.position_max_m=0.01"}),
      HasSubstr("must be >= 0.04 m/s^2"));
  // RHT ramps at 1 m/s² (capped by its acceleration bound) across +-stroke: stroke <= 0.25 m.
  EXPECT_EQ(scenario_error("kind: rht\n", {}), "");
  EXPECT_THAT(scenario_error("kind: rht\n", {"servo.stroke_m=0.3"}),
              AllOf(HasSubstr("servo.stroke_m = 0.3"), HasSubstr("must be <= 0.25 m")));
  EXPECT_THAT(scenario_error("kind: rht\n", {"servo.acceleration_max_mps2=1e-30"}),
              HasSubstr("servo.acceleration_max_mps2 = 1e-30: must be >= 1 m/s^2"));
  // FCU brakes its command at the acceleration bound across the 0.15 kg/s window.
  EXPECT_THAT(scenario_error("kind: fcu\n", {"safety.command_acceleration_max_kg_s3=1e-30"}),
              HasSubstr("safety.command_acceleration_max_kg_s3 = 1e-30: must be >= 0.3 kg/s^3"));
  EXPECT_THAT(scenario_error("kind: fcu\n", {"safety.command_max_kg_s=.inf"}),
              HasSubstr("safety.command_acceleration_max_kg_s3 = 1000: must be .inf"));
  EXPECT_EQ(scenario_error("kind: fcu\n", {"safety.command_max_kg_s=.inf",
                                           "safety.command_acceleration_max_kg_s3=.inf"}),
            "");
  // vrths ramps at 50 m/s² across +-limits.stroke_m.
  EXPECT_THAT(scenario_error("kind: vrths\n", {"limits.acceleration_max_mps2=1e-30"}),
              HasSubstr("limits.acceleration_max_mps2 = 1e-30: must be >= 0.028 m/s^2"));
  EXPECT_THAT(scenario_error("kind: vrths\n", {"limits.stroke_m=13"}),
              HasSubstr("limits.stroke_m = 13: must be <= 12.5 m"));
}

// Every shipped scenario's stop ramp reaches rest within the bound; the defaults are the worst.
TEST(StopTime, EveryShippedScenarioStopsWithinTheBound) {
  double worst = 0.0;
  std::string worst_path;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string path = entry.path().string();
    const hal::SafetyConfig safety = loop_plan(read_scenario_text(path)).safety;
    const double t = hal::max_stop_time(safety);
    EXPECT_LE(t, hal::kMaxStopTime) << path;
    if (t > worst) {
      worst = t;
      worst_path = path;
    }
    ++count;
  }
  EXPECT_GE(count, 27);
  EXPECT_EQ(worst, hal::kMaxStopTime) << worst_path;  // the SITS and RHT defaults: 1 s exactly
  std::printf("worst ramp of a shipped scenario: %.4f s (%s)\n", worst, worst_path.c_str());
}

}  // namespace
}  // namespace hyloop::experiment
