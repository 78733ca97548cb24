// Crash-safe recording (issue 10, findings 4, 5, 9, 10): SIGKILL of `hyloop run` and of the
// coordinator under `hyloop up` at an instant of a run, Start.out_dir outside the runs directory,
// a full disk. The binaries are HYLOOP_BIN_DIR's, or $HYLOOP_TEST_BIN_DIR's (to run these tests
// against another build).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actuator/actuator_component.hpp"
#include "coordinator/coordinator_component.hpp"
#include "dynamics/dynamics_component.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_journal.hpp"
#include "hyloop/testing/scratch_dir.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "sensor/sensor_component.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace hyloop;
using namespace std::chrono_literals;

const fs::path kSource = HYLOOP_SOURCE_DIR;

fs::path bin_dir() {
  const char* env = std::getenv("HYLOOP_TEST_BIN_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path(HYLOOP_BIN_DIR);
}

fs::path temp_dir(const std::string& name) {
  return hyloop::testing::scratch_dir("recording", name);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A process the test started, its stdout and stderr in files.
struct Process {
  pid_t pid = -1;
  int status = 0;
  Process(std::vector<std::string> args, const fs::path& out, const fs::path& err) {
    posix_spawn_file_actions_t a;
    posix_spawn_file_actions_init(&a);
    posix_spawn_file_actions_addopen(&a, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&a, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid, args[0].c_str(), &a, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&a);
  }
  // Waits up to `timeout`; true when it exited (status set).
  bool wait_for(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (pid > 0) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return true;
      }
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }
  void kill_now() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      pid = -1;
    }
  }
  ~Process() { kill_now(); }
};

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

int run_command(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The direct children of `pid` (/proc/PID/task/PID/children).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t c = 0; f >> c;) out.push_back(c);
  return out;
}

std::string comm_of(pid_t pid) {
  std::string s = slurp("/proc/" + std::to_string(pid) + "/comm");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// Rows committed to a run directory's journal so far (0 while it does not exist yet).
std::size_t journal_rows(const fs::path& dir) {
  try {
    return recording::read_journal(dir / recording::kJournalFile).rows;
  } catch (const std::exception&) {
    return 0;
  }
}

// The recovered directory: its samples.csv lines are the uninterrupted run's first lines.
void expect_prefix_of(const fs::path& recovered, const fs::path& reference) {
  const auto got = lines(slurp(recovered / "samples.csv"));
  const auto full = lines(slurp(reference / "samples.csv"));
  ASSERT_GT(got.size(), 1U);
  ASSERT_LE(got.size(), full.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], full[i]) << "samples.csv line " << i;
  }
}

nlohmann::json recover(const fs::path& dir) {
  const std::string cmd = (bin_dir() / "hyloop").string() + " summary --recover " + dir.string() +
                          " > " + (dir.string() + ".recovered.json") + " 2> " +
                          (dir.string() + ".recovered.err");
  EXPECT_EQ(run_command(cmd), 0) << slurp(dir.string() + ".recovered.err");
  try {
    return nlohmann::json::parse(slurp(dir / "summary.json"));
  } catch (const std::exception&) {
    return nlohmann::json::object();
  }
}

// --- finding 10: hyloop run killed at any instant ------------------------------------------

TEST(HyloopRun, KilledAtAnyInstantLeavesACompleteOrARecoverableDirectoryNeverAPartialOne) {
  const fs::path dir = temp_dir("run-kill");
  const std::string scenario = (kSource / "scenarios/sits/table1_scvg.yaml").string();
  const std::vector<std::string> sets = {"--set", "timing.duration_s=300", "--set",
                                         "outputs.decimation=10"};
  std::vector<std::string> args{(bin_dir() / "hyloop").string(), "run", scenario, "--out",
                                (dir / "reference").string()};
  args.insert(args.end(), sets.begin(), sets.end());
  {
    Process reference(args, dir / "reference.out", dir / "reference.err");
    ASSERT_TRUE(reference.wait_for(120s));
    ASSERT_EQ(exit_code(reference.status), 0) << slurp(dir / "reference.err");
  }
  int recovered_with_rows = 0;
  for (const int ms : {30, 150, 400, 700, 1000, 1400, 2000, 2600}) {
    const fs::path out = dir / ("killed_at_" + std::to_string(ms) + "ms");
    args[4] = out.string();
    Process run(args, out.string() + ".out", out.string() + ".err");
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    run.kill_now();
    for (const auto& e : fs::directory_iterator(dir)) {
      EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos)
          << e.path() << " left behind";
    }
    if (!fs::exists(out)) continue;  // killed before the directory was made
    if (!recording::is_incomplete(out)) {
      // It had finished: a complete directory.
      EXPECT_EQ(slurp(out / "samples.csv"), slurp(dir / "reference" / "samples.csv")) << out;
      continue;
    }
    const std::string cmd = (bin_dir() / "hyloop").string() + " summary --recover " + out.string() +
                            " > /dev/null 2> " + out.string() + ".recover.err";
    if (run_command(cmd) != 0) {
      // Killed while creating the directory: recovery refuses and says so.
      const std::string err = slurp(out.string() + ".recover.err");
      EXPECT_NE(err.find("nothing was recorded"), std::string::npos) << err;
      std::cout << "killed at " << ms << " ms: " << err;
      continue;
    }
    const nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
    EXPECT_FALSE(recording::is_incomplete(out));
    EXPECT_EQ(summary.value("incomplete", false), true) << summary.dump(2);
    const auto cycles = summary.value("cycles_recovered", 0);
    std::cout << "killed at " << ms << " ms: " << cycles << " cycles recovered\n";
    if (cycles > 0) {
      ++recovered_with_rows;
      expect_prefix_of(out, dir / "reference");
    }
  }
  EXPECT_GT(recovered_with_rows, 0) << "no kill landed while rows were being recorded";
  fs::remove_all(dir);
}

TEST(HyloopReport, OnAnIncompleteDirectorySaysSoAndRecoversItFirst) {
  const fs::path dir = temp_dir("report");
  const fs::path out = dir / "run";
  Process run({(bin_dir() / "hyloop").string(), "run",
               (kSource / "scenarios/sits/table1_scvg.yaml").string(), "--out", out.string(),
               "--set", "timing.duration_s=600", "--set", "outputs.decimation=10"},
              dir / "run.out", dir / "run.err");
  // Until the journal holds rows, then the kill.
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (journal_rows(out) == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  run.kill_now();
  ASSERT_TRUE(recording::is_incomplete(out));
  const std::string cmd = (bin_dir() / "hyloop").string() + " report " + out.string() +
                          " > /dev/null 2> " + (dir / "report.err").string();
  EXPECT_EQ(run_command(cmd), 0) << slurp(dir / "report.err");
  const std::string err = slurp(dir / "report.err");
  EXPECT_NE(err.find("is incomplete"), std::string::npos) << err;
  EXPECT_FALSE(recording::is_incomplete(out));
  EXPECT_TRUE(fs::exists(out / "plots" / "overview.png"));
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_EQ(summary["incomplete"], true);
  EXPECT_GT(summary["cycles_recovered"].get<std::size_t>(), 0U);
  fs::remove_all(dir);
}

// --- finding 4: the coordinator killed under hyloop up -------------------------------------

// `hyloop up` of the SITS scenario into `out`; SIGKILL of its coordinator once the journal holds
// `min_rows` rows and 0.6 s more have passed; returns the rows committed before those 0.6 s.
std::size_t kill_coordinator_mid_run(const fs::path& out, const std::vector<std::string>& extra,
                                     std::size_t min_rows, const fs::path& log) {
  std::vector<std::string> args{(bin_dir() / "hyloop").string(), "up",
                                (kSource / "scenarios/sits/table1_scvg.yaml").string(), "--out",
                                out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  Process up(args, log.string() + ".out", log);
  std::set<pid_t> services;
  pid_t coordinator = -1;
  std::size_t before = 0;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < until) {
    for (const pid_t c : children_of(up.pid)) {
      services.insert(c);
      if (comm_of(c).rfind("hyloop-coordina", 0) == 0) coordinator = c;
    }
    if (coordinator > 0 && journal_rows(out) >= min_rows) {
      before = journal_rows(out);
      break;
    }
    if (up.wait_for(50ms)) break;
  }
  EXPECT_GT(coordinator, 0) << slurp(log);
  EXPECT_GE(before, min_rows) << "the run did not get far enough: " << slurp(log);
  std::this_thread::sleep_for(600ms);
  if (coordinator > 0) kill(coordinator, SIGKILL);
  // `hyloop up` notices (or not: then it is killed); the services it started are stopped.
  if (!up.wait_for(15s)) up.kill_now();
  for (const pid_t s : services) {
    if (s != coordinator) kill(s, SIGKILL);
  }
  for (const pid_t s : services) waitpid(s, nullptr, WNOHANG);
  return before;
}

TEST(HyloopUp, KillingTheCoordinatorInLockstepLeavesEveryCommittedCycleRecoverable) {
  const fs::path dir = temp_dir("up-lockstep");
  const std::vector<std::string> sets = {"--set", "timing.duration_s=120"};
  std::string ref = (bin_dir() / "hyloop").string() + " run " +
                    (kSource / "scenarios/sits/table1_scvg.yaml").string() + " --out " +
                    (dir / "reference").string() + " --set timing.duration_s=120 > /dev/null 2>&1";
  ASSERT_EQ(run_command(ref), 0);
  const std::size_t before = kill_coordinator_mid_run(dir / "up", sets, 2000, dir / "up.log");
  ASSERT_TRUE(fs::exists(dir / "up")) << "no run directory: " << slurp(dir / "up.log");
  EXPECT_TRUE(recording::is_incomplete(dir / "up"));
  EXPECT_EQ(slurp(dir / "up.log").find("run directory:"), std::string::npos)
      << slurp(dir / "up.log");
  const nlohmann::json summary = recover(dir / "up");
  const std::size_t cycles = summary.value("cycles_recovered", std::size_t{0});
  std::cout << "lockstep: " << before << " cycles committed 0.6 s before the kill, " << cycles
            << " recovered\n";
  EXPECT_GE(cycles, before);
  EXPECT_EQ(summary.value("incomplete", false), true);
  EXPECT_EQ(summary["distributed"]["mode"], "lockstep");
  expect_prefix_of(dir / "up", dir / "reference");
  fs::remove_all(dir);
}

TEST(HyloopUp, KillingTheCoordinatorInRealTimeLeavesEveryCommittedCycleRecoverable) {
  const fs::path dir = temp_dir("up-realtime");
  // 1500 cycles of 2 ms: the kill comes about 3.6 s into a 20 s real-time run.
  const std::size_t before = kill_coordinator_mid_run(
      dir / "up", {"--mode", "realtime", "--set", "timing.duration_s=20"}, 1500, dir / "up.log");
  ASSERT_TRUE(fs::exists(dir / "up")) << "no run directory: " << slurp(dir / "up.log");
  EXPECT_TRUE(recording::is_incomplete(dir / "up"));
  const nlohmann::json summary = recover(dir / "up");
  const std::size_t cycles = summary.value("cycles_recovered", std::size_t{0});
  std::cout << "real time: " << before << " cycles committed 0.6 s before the kill, " << cycles
            << " recovered (" << static_cast<double>(cycles - before) * 2e-3
            << " s of run in the last 0.6 s)\n";
  EXPECT_GE(cycles, before);
  EXPECT_EQ(summary["distributed"]["mode"], "real_time");
  // Every recovered cycle is in samples.csv, in order.
  const auto rows = lines(slurp(dir / "up" / "samples.csv"));
  EXPECT_EQ(rows.size(), cycles + 1);
  fs::remove_all(dir);
}

// --- finding 5: Start.out_dir only under the runs directory --------------------------------

TEST(RunsDirectory, StartRefusesAnOutDirOutsideItAndCreatesNothingThere) {
  const fs::path dir = temp_dir("runs-dir");
  fs::create_directories(dir / "runs");
  fs::create_directories(dir / "outside");
  fs::create_directory_symlink(dir / "outside", dir / "runs" / "link");
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  services::ActuatorComponent actuator;
  services::DynamicsComponent dynamics;
  services::SensorComponent sensor;
  auto handles =
      services::make_local_service_handles({&rig, &actuator, &dynamics, &sensor}, context);
  services::CoordinatorOptions options;
  options.endpoint_prefix = "inproc://recording-test";
  options.runs_dir = dir / "runs";
  services::Coordinator coordinator(std::move(handles), context, options);
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(
      experiment::read_scenario_text((kSource / "scenarios/sits/table1_fgc.yaml").string()));
  load.add_overrides("timing.duration_s=6");
  v1::LoadScenarioReply loaded;
  ASSERT_TRUE(coordinator.load_scenario(load, &loaded).ok());
  const auto start = [&](const std::string& out_dir) {
    v1::StartRequest request;
    request.set_out_dir(out_dir);
    v1::RunStatus status;
    return coordinator.start(request, &status);
  };
  for (const std::string& bad : std::vector<std::string>{
           "../escape", (dir / "absolute").string(), "sub/dir", "..", ".", "", "../outside/x"}) {
    const grpc::Status st = start(bad);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_NE(st.error_message().find("out_dir = \""), std::string::npos) << st.error_message();
  }
  // A name that is a symlink out of the runs directory, or an existing directory: taken.
  EXPECT_EQ(start("link").error_code(), grpc::StatusCode::ALREADY_EXISTS);
  fs::create_directories(dir / "runs" / "taken" / "x");
  EXPECT_EQ(start("taken").error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_FALSE(fs::exists(dir / "escape"));
  EXPECT_FALSE(fs::exists(dir / "absolute"));
  EXPECT_FALSE(fs::exists(dir / "runs" / "sub"));
  EXPECT_TRUE(fs::is_empty(dir / "outside"));
  // A name: the run directory is made in the runs directory, incomplete until the run's end.
  ASSERT_TRUE(start("good").ok());
  EXPECT_TRUE(fs::exists(dir / "runs" / "good" / recording::kJournalFile));
  ASSERT_TRUE(coordinator.wait(2min));
  v1::RunStatus status;
  coordinator.status(&status);
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_EQ(status.out_dir(), (fs::canonical(dir / "runs") / "good").string());
  EXPECT_FALSE(recording::is_incomplete(dir / "runs" / "good"));
  EXPECT_EQ(lines(slurp(dir / "runs" / "good" / "samples.csv")).size(), 3001U);
  coordinator.shutdown_services();
  fs::remove_all(dir);
}

// --- finding 9: a full disk ----------------------------------------------------------------

class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("full");
    fs::create_directories(dir_ / "disk");
    if (mount("tmpfs", (dir_ / "disk").c_str(), "tmpfs", 0, "size=200k") != 0) {
      GTEST_SKIP() << "cannot mount a 200 kB tmpfs (needs root): " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2((dir_ / "disk").c_str(), MNT_DETACH);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(FullDisk, HyloopRunFailsWithTheReasonAndNeverClaimsARunDirectory) {
  const fs::path out = dir_ / "disk" / "run";
  Process run({(bin_dir() / "hyloop").string(), "run",
               (kSource / "scenarios/sits/table1_scvg.yaml").string(), "--out", out.string()},
              dir_ / "run.out", dir_ / "run.err");
  ASSERT_TRUE(run.wait_for(120s));
  const std::string err = slurp(dir_ / "run.err");
  std::cout << err;
  EXPECT_NE(exit_code(run.status), 0);
  EXPECT_TRUE(err.find(std::strerror(ENOSPC)) != std::string::npos ||
              err.find("disk is full") != std::string::npos)
      << err;
  EXPECT_EQ(err.find("run directory:"), std::string::npos) << err;
  // What is there says it is incomplete.
  if (fs::exists(out)) {
    EXPECT_TRUE(recording::is_incomplete(out));
  }
}

TEST_F(FullDisk, HyloopUpFailsWithTheReasonAndNeverClaimsARunDirectory) {
  const fs::path out = dir_ / "disk" / "up";
  Process up({(bin_dir() / "hyloop").string(), "up",
              (kSource / "scenarios/sits/table1_scvg.yaml").string(), "--out", out.string(),
              "--set", "timing.duration_s=20"},
             dir_ / "up.out", dir_ / "up.err");
  ASSERT_TRUE(up.wait_for(120s));
  const std::string err = slurp(dir_ / "up.err");
  std::cout << err;
  EXPECT_NE(exit_code(up.status), 0);
  EXPECT_TRUE(err.find(std::strerror(ENOSPC)) != std::string::npos ||
              err.find("disk is full") != std::string::npos)
      << err;
  EXPECT_EQ(err.find("run directory:"), std::string::npos) << err;
  if (fs::exists(out)) {
    EXPECT_TRUE(recording::is_incomplete(out));
  }
}

}  // namespace
