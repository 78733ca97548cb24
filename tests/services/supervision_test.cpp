// Supervision that cannot be lost (issue 10, findings 2, 4 and 8): the e-stop latch and its
// reset, a deactivated or silent actuator failing the run, the loop stopping safely when its
// coordinator is lost, and `hyloop up` taking its services with it whatever happens to it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actuator/actuator_component.hpp"
#include "co_located.hpp"
#include "coordinator/coordinator_component.hpp"
#include "dynamics/dynamics_component.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/loop_component.hpp"
#include "hyloop/runtime/peer_watch.hpp"
#include "hyloop/testing/scratch_dir.hpp"
#include "hyloop/transport/channel.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "sensor/sensor_component.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace hyloop;
using Clock = std::chrono::steady_clock;

const fs::path kSource = HYLOOP_SOURCE_DIR;
const fs::path kBin = HYLOOP_BIN_DIR;
const std::string kScenario = "scenarios/sits/table1_scvg.yaml";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

fs::path temp_dir(const std::string& name) {
  return hyloop::testing::scratch_dir("supervision", name);
}

// The co-located stack (tests/services/stack) on the SITS scenario of these tests.
struct CoLocated : hyloop::testing::CoLocated {
  using hyloop::testing::CoLocated::CoLocated;
  void load(double duration_s) {
    const grpc::Status st =
        load_text(experiment::read_scenario_text((kSource / kScenario).string()),
                  {"timing.duration_s=" + std::to_string(duration_s)});
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
};

// ---- finding 8: an e-stop latches until an operator resets it --------------------------------

TEST(EmergencyStopLatch, AfterAnEstopStartIsRefusedUntilReset) {
  const fs::path dir = temp_dir("latch");
  CoLocated stack("latch", dir);
  stack.load(20.0);
  ASSERT_TRUE(stack.start("run1").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  v1::RunStatus status;
  ASSERT_TRUE(stack.coordinator->emergency_stop("test button", &status).ok());
  status = stack.finish();
  EXPECT_EQ(status.state(), v1::RUN_STATE_ESTOPPED) << status.message();
  EXPECT_EQ(status.emergency_stop(), "test button");

  // The next start is refused, naming the stop and how to reset it; nothing runs.
  grpc::Status refused = stack.start("run2");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("test button"), std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("reset"), std::string::npos) << refused.error_message();
  EXPECT_FALSE(fs::exists(dir / "run2"));
  // The services hold their own latch: the actuator refuses a configure without the reset.
  EXPECT_EQ(stack.actuator.latched_emergency_stop(), "test button");
  v1::ConfigureRequest again;
  again.set_run_id("sneaky");
  again.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
  const v1::LifecycleReply r = stack.actuator.configure(again);
  EXPECT_NE(r.message().find("emergency stop latched"), std::string::npos) << r.message();
  EXPECT_EQ(stack.actuator.activate().state(), stack.actuator.state());  // refused as well

  ASSERT_TRUE(stack.coordinator->reset("checked the rig", &status).ok());
  EXPECT_TRUE(status.emergency_stop().empty());
  ASSERT_TRUE(stack.start("run3").ok());
  status = stack.finish();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_TRUE(stack.actuator.latched_emergency_stop().empty());
  fs::remove_all(dir);
}

TEST(EmergencyStopLatch, AnEstopWhileIdleIsLatchedToo) {
  const fs::path dir = temp_dir("idle");
  CoLocated stack("idle", dir);
  stack.load(6.0);
  v1::RunStatus status;
  ASSERT_TRUE(stack.coordinator->emergency_stop("pressed while idle", &status).ok());
  const grpc::Status refused = stack.start("run");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("pressed while idle"), std::string::npos)
      << refused.error_message();
  ASSERT_TRUE(stack.coordinator->reset("", &status).ok());
  ASSERT_TRUE(stack.start("run").ok());
  EXPECT_EQ(stack.finish().state(), v1::RUN_STATE_FINISHED);
  fs::remove_all(dir);
}

TEST(EmergencyStopLatch, AServiceStoppedDirectlyRefusesStartAndANewerStopSurvivesAReset) {
  const fs::path dir = temp_dir("direct");
  CoLocated stack("direct", dir);
  stack.load(6.0);
  // Straight to the actuator (Lifecycle.EmergencyStop), not through the coordinator.
  (void)stack.actuator.emergency_stop("hardware button");
  // Issue 27 (low): GetStatus showed no latch while Start was refused as latched.
  v1::RunStatus status;
  stack.coordinator->status(&status);  // before any Start saw it
  EXPECT_NE(status.emergency_stop().find("hardware button"), std::string::npos)
      << "GetStatus.emergency_stop = \"" << status.emergency_stop() << "\"";
  grpc::Status refused = stack.start("run");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.error_message().find("actuator"), std::string::npos) << refused.error_message();
  EXPECT_NE(refused.error_message().find("hardware button"), std::string::npos)
      << refused.error_message();
  ASSERT_TRUE(stack.coordinator->reset("operator", &status).ok());
  stack.coordinator->status(&status);
  EXPECT_EQ(status.emergency_stop(), "");
  // A stop after the reset is not covered by it.
  (void)stack.actuator.emergency_stop("pressed again");
  refused = stack.start("run");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << refused.error_message();
  ASSERT_TRUE(stack.coordinator->reset("operator", &status).ok());
  ASSERT_TRUE(stack.start("run").ok());
  EXPECT_EQ(stack.finish().state(), v1::RUN_STATE_FINISHED);
  fs::remove_all(dir);
}

TEST(EmergencyStopLatch, ResetIsRefusedWhileARunIsInProgress) {
  const fs::path dir = temp_dir("busy");
  CoLocated stack("busy", dir);
  stack.load(20.0);
  ASSERT_TRUE(stack.start("run").ok());
  v1::RunStatus status;
  EXPECT_EQ(stack.coordinator->reset("", &status).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(stack.coordinator->stop(&status).ok());
  EXPECT_EQ(stack.finish().state(), v1::RUN_STATE_STOPPED);
  fs::remove_all(dir);
}

// Finding 8 as it was seen: `hyloop ctl estop`, then `hyloop ctl start` ran to the end.
struct Served {
  pid_t pid = -1;
  std::string address;
  std::string security_dir;
  explicit Served(const fs::path& runs_dir) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t a;
    posix_spawn_file_actions_init(&a);
    posix_spawn_file_actions_adddup2(&a, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&a, fds[0]);
    const std::string exe = (kBin / "hyloop").string();
    std::vector<std::string> args{exe, "up", "--serve", "--runs-dir", runs_dir.string()};
    std::vector<char*> argv;
    for (auto& x : args) argv.push_back(x.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid, exe.c_str(), &a, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&a);
    close(fds[1]);
    FILE* out = fdopen(fds[0], "r");
    char line[1024];
    while (std::fgets(line, sizeof line, out) != nullptr) {
      std::istringstream in(line);
      std::string name, what, value;
      in >> name >> what;
      if (name == "hyloop-security-dir") security_dir = what;
      if (name == "hyloop-coordinator" && what == "grpc") {
        in >> address;
        break;
      }
    }
    std::fclose(out);
  }
  ~Served() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
  }
  // `hyloop ctl ADDRESS ARGS` as the operator; its exit code, its output in `output`.
  int ctl(const std::string& args, std::string* output) const {
    const fs::path log = fs::temp_directory_path() / ("hyloop-ctl-" + std::to_string(getpid()));
    const std::string cmd = (kBin / "hyloop").string() + " ctl " + address + " " + args +
                            " --security-dir " + security_dir + " --role operator > " +
                            log.string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    *output = slurp(log);
    fs::remove(log);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
};

TEST(EmergencyStopLatch, CtlEstopThenCtlStartIsRefusedUntilCtlReset) {
  const fs::path dir = temp_dir("ctl");
  Served stack(dir);
  ASSERT_FALSE(stack.address.empty());
  const std::string start =
      "start --scenario " + (kSource / kScenario).string() + " --set timing.duration_s=6 --out ";
  std::string out;
  ASSERT_EQ(stack.ctl("estop --reason 'from ctl'", &out), 0) << out;
  EXPECT_NE(stack.ctl(start + "run1", &out), 0) << out;
  EXPECT_NE(out.find("emergency stop latched (from ctl)"), std::string::npos) << out;
  EXPECT_NE(out.find("reset"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "run1"));
  ASSERT_EQ(stack.ctl("status", &out), 0) << out;
  EXPECT_NE(out.find("EMERGENCY STOP"), std::string::npos) << out;
  ASSERT_EQ(stack.ctl("reset --reason 'rig checked'", &out), 0) << out;
  ASSERT_EQ(stack.ctl(start + "run2", &out), 0) << out;
  const auto until = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < until) {
    ASSERT_EQ(stack.ctl("status", &out), 0) << out;
    if (out.find("FINISHED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(out.find("FINISHED"), std::string::npos) << out;
  fs::remove_all(dir);
}

// ---- a coordinator that ends releases its services and never ends them ----------------------
// Under compose (restart: unless-stopped) a service that exits on its own is restarted, and a
// `docker-compose down` racing that restart kills it after the grace period: CI saw four services
// exit 137 because the coordinator's own shutdown shut them down first.

TEST(CoordinatorShutdown, MidRunItStopsTheRunAndLeavesEveryServiceUnconfiguredAndServing) {
  const fs::path dir = temp_dir("release");
  CoLocated stack("release", dir);
  stack.load(20.0);
  ASSERT_TRUE(stack.start("run1", v1::CLOCK_MODE_REAL_TIME).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  services::CoordinatorComponent component(*stack.coordinator);
  const v1::LifecycleReply r = component.shutdown();
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_FINALIZED) << r.message();
  v1::RunStatus status;
  stack.coordinator->status(&status);
  EXPECT_EQ(status.state(), v1::RUN_STATE_STOPPED) << status.message();
  for (runtime::Component* c : std::initializer_list<runtime::Component*>{
           &stack.rig, &stack.actuator, &stack.dynamics, &stack.sensor}) {
    EXPECT_EQ(c->state(), v1::LIFECYCLE_STATE_UNCONFIGURED) << c->name();
  }
  // The same services run the next coordinator's run.
  services::CoordinatorOptions options;
  options.endpoint_prefix = "inproc://release2";
  options.runs_dir = dir;
  std::vector<std::unique_ptr<services::ServiceHandle>> handles;
  for (runtime::Component* c : std::initializer_list<runtime::Component*>{
           &stack.rig, &stack.actuator, &stack.dynamics, &stack.sensor}) {
    handles.push_back(services::make_local_service_handle(*c));
  }
  services::Coordinator next(std::move(handles), stack.context, options);
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
  load.add_overrides("timing.duration_s=2");
  load.add_overrides("metrics.window_s=1");
  v1::LoadScenarioReply loaded;
  ASSERT_TRUE(next.load_scenario(load, &loaded).ok());
  v1::StartRequest start;
  start.set_out_dir("run2");
  start.set_mode(v1::CLOCK_MODE_LOCKSTEP);
  ASSERT_TRUE(next.start(start, &status).ok()) << status.message();
  ASSERT_TRUE(next.wait(std::chrono::minutes(1)));
  next.status(&status);
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  next.release_services();
  fs::remove_all(dir);
}

// The counters a summary reports are the run's own: a watchdog that tripped in one run is not
// reported again by the next (watchdog_cycles was carried over from run to run).
TEST(CoordinatorShutdown, ASecondRunDoesNotInheritTheFirstRunsWatchdogCycles) {
  const fs::path dir = temp_dir("counters");
  CoLocated stack("counters", dir);
  stack.load(60.0);
  // Lockstep: the dynamics counts as lost after 50 ms without a command.
  stack.actuator.set_watchdog_wall_timeout(std::chrono::milliseconds(50));
  ASSERT_TRUE(stack.start("run1").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The dynamics leaves: no more commands, the actuator's watchdog brings the rig to rest.
  ASSERT_EQ(stack.dynamics.deactivate().state(), v1::LIFECYCLE_STATE_INACTIVE);
  v1::RunStatus status = stack.finish();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FAILED) << status.message();
  const auto first = nlohmann::json::parse(slurp(dir / "run1" / "summary.json"));
  ASSERT_GT(first["distributed"]["watchdog_cycles"].get<int>(), 0) << first["distributed"].dump();
  // The failed run's e-stop fan-out latched every service: an operator resets it.
  ASSERT_TRUE(stack.coordinator->reset("checked the rig", &status).ok());
  stack.load(6.0);
  const grpc::Status started = stack.start("run2");
  ASSERT_TRUE(started.ok()) << started.error_message();
  status = stack.finish();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  const auto second = nlohmann::json::parse(slurp(dir / "run2" / "summary.json"));
  EXPECT_EQ(second["distributed"]["watchdog_cycles"].get<int>(), 0) << second["distributed"].dump();
  fs::remove_all(dir);
}

// ---- finding 2: a deactivated actuator fails the run, with the reason -------------------------

TEST(ActuatorLoss, DeactivatingTheActuatorMidRunFailsTheRunNamingIt) {
  const fs::path dir = temp_dir("deactivate");
  CoLocated stack("deactivate", dir);
  stack.load(8.0);
  ASSERT_TRUE(stack.start("run", v1::CLOCK_MODE_REAL_TIME).ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // What another client did through Lifecycle.Deactivate.
  ASSERT_EQ(stack.actuator.deactivate().state(), v1::LIFECYCLE_STATE_INACTIVE);
  const auto t0 = Clock::now();
  const v1::RunStatus status = stack.finish();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FAILED) << status.message();
  EXPECT_NE(status.message().find("actuator"), std::string::npos) << status.message();
  EXPECT_LT(seconds, 4.0) << "the run went on after the actuator left";  // far from the 8 s
  std::cout << "deactivated actuator: run failed " << seconds << " s later: " << status.message()
            << "\n";
  const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["distributed"]["state"], "failed");
  fs::remove_all(dir);
}

TEST(ActuatorLoss, TheRigHoldsAndReportsASilentActuator) {
  const fs::path dir = temp_dir("silent");
  CoLocated stack("silent", dir);
  stack.load(8.0);
  ASSERT_TRUE(stack.start("run", v1::CLOCK_MODE_REAL_TIME).ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // The actuator's loop stops without a word (as if its process froze): only the rig can tell.
  ASSERT_EQ(stack.actuator.deactivate().state(), v1::LIFECYCLE_STATE_INACTIVE);
  const auto until = Clock::now() + std::chrono::seconds(2);
  while (!stack.rig.actuator_silent() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(stack.rig.actuator_silent());
  EXPECT_EQ(stack.finish().state(), v1::RUN_STATE_FAILED);
  fs::remove_all(dir);
}

// ---- finding 4: a lost coordinator, seen on the telemetry connection --------------------------

// A ZeroMQ PULL peer in another process (python3-zmq): what a coordinator's telemetry end is.
struct PeerProcess {
  pid_t pid = -1;
  explicit PeerProcess(const std::string& endpoint) {
    const std::string code =
        "import zmq, time\nc = zmq.Context()\ns = c.socket(zmq.PULL)\n"
        "s.bind('" +
        endpoint + "')\ntime.sleep(120)\n";
    std::vector<std::string> args{"/usr/bin/python3", "-c", code};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  }
  ~PeerProcess() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      kill(pid, SIGCONT);
      waitpid(pid, nullptr, 0);
    }
  }
};

// Seconds until `watch` reports the loss (or `limit`).
double seconds_to_loss(const runtime::PeerWatch& watch, std::chrono::seconds limit) {
  const auto t0 = Clock::now();
  while (!watch.lost() && Clock::now() - t0 < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(PeerWatch, AStoppedPeerIsLostAfterTheHeartbeatTimeoutAKilledOneAtOnce) {
  const fs::path dir = temp_dir("peer");
  for (const int sig : {SIGSTOP, SIGKILL}) {
    const std::string endpoint = "ipc://" + (dir / ("telemetry-" + std::to_string(sig))).string();
    PeerProcess peer(endpoint);
    zmq::context_t context;
    transport::ChannelConfig config;
    config.endpoint = endpoint;
    config.pattern = transport::Pattern::kPush;
    config.role = transport::Role::kConnect;
    config.heartbeat_ivl_ms = static_cast<int>(runtime::kSupervisionHeartbeat.count());
    config.heartbeat_timeout_ms = static_cast<int>(runtime::kSupervisionTimeout.count());
    transport::Channel channel(context, config);
    std::string why;
    runtime::PeerWatch watch(context, channel.socket(), [&why](const std::string& w) { why = w; });
    const auto until = Clock::now() + std::chrono::seconds(20);
    while (!watch.connected() && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(watch.connected()) << "the peer never answered";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // heartbeats flow meanwhile
    EXPECT_FALSE(watch.lost());
    ASSERT_EQ(kill(peer.pid, sig), 0);
    const double seconds = seconds_to_loss(watch, std::chrono::seconds(10));
    EXPECT_TRUE(watch.lost()) << (sig == SIGSTOP ? "stopped" : "killed") << " peer not noticed";
    EXPECT_NE(why.find(endpoint), std::string::npos) << why;
    // Generous bounds; the measured times go to docs/reliability.md.
    EXPECT_LT(seconds, sig == SIGSTOP ? 5.0 : 2.0);
    std::cout << (sig == SIGSTOP ? "stopped" : "killed") << " peer lost after " << seconds * 1e3
              << " ms\n";
  }
  fs::remove_all(dir);
}

// ---- finding 4: `hyloop up` and its services -------------------------------------------------

// `hyloop up SCENARIO --mode realtime` as a child process, its output in `log`.
struct Up {
  pid_t pid = -1;
  fs::path log;

  Up(const fs::path& dir, double duration_s) : log(dir / "up.log") {
    posix_spawn_file_actions_t a;
    posix_spawn_file_actions_init(&a);
    posix_spawn_file_actions_addopen(&a, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT, 0600);
    posix_spawn_file_actions_adddup2(&a, STDOUT_FILENO, STDERR_FILENO);
    const std::string exe = (kBin / "hyloop").string();
    std::vector<std::string> args{exe,
                                  "up",
                                  (kSource / kScenario).string(),
                                  "--out",
                                  (dir / "run").string(),
                                  "--mode",
                                  "realtime",
                                  "--set",
                                  "timing.duration_s=" + std::to_string(duration_s)};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid, exe.c_str(), &a, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&a);
  }
  ~Up() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Waits up to `timeout` for `up` to exit; its exit code, or -1 (still running) / 128+signal.
  int wait(std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

// name → pid of the processes whose parent is `parent` (from /proc).
std::map<std::string, pid_t> children_of(pid_t parent) {
  std::map<std::string, pid_t> found;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...
    const auto open = line.find('(');
    const auto close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    // argv[0]'s file name (the comm field is cut at 15 characters).
    std::ifstream cmdline(e.path() / "cmdline");
    std::string argv0;
    std::getline(cmdline, argv0, '\0');
    found[fs::path(argv0).filename().string()] = std::stoi(name);
  }
  return found;
}

// Waits until `up` has started its six services; name → pid.
std::map<std::string, pid_t> wait_for_services(pid_t up, std::chrono::seconds timeout) {
  const auto until = Clock::now() + timeout;
  std::map<std::string, pid_t> found;
  while (Clock::now() < until) {
    found = children_of(up);
    if (found.size() >= 6) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return found;
}

bool alive(pid_t pid) {
  // A zombie (exited, not reaped) counts as gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits until none of `pids` is alive; false on timeout.
bool all_gone(const std::map<std::string, pid_t>& pids, std::chrono::milliseconds timeout) {
  const auto until = Clock::now() + timeout;
  for (;;) {
    bool any = false;
    for (const auto& [name, pid] : pids) any = any || alive(pid);
    if (!any) return true;
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void kill_all(const std::map<std::string, pid_t>& pids) {
  for (const auto& [name, pid] : pids) kill(pid, SIGKILL);
}

// Waits until the run is under way (the log names it).
bool wait_for_run(const Up& up, std::chrono::seconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    if (slurp(up.log).find("hyloop up: run ") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Kills the coordinator of a running `up` and checks how the stack ends.
void check_coordinator_kill(Up& up, const std::map<std::string, pid_t>& services) {
  ASSERT_EQ(kill(services.at("hyloop-coordinator"), SIGKILL), 0);
  const auto t0 = Clock::now();
  const int code = up.wait(std::chrono::seconds(10));
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string log = slurp(up.log);
  EXPECT_NE(code, -1) << "`hyloop up` still running 10 s after its coordinator died\n" << log;
  EXPECT_NE(code, 0) << log;
  EXPECT_NE(log.find("coordinator was killed"), std::string::npos) << log;
  // The actuator saw its coordinator go, or `up`, quicker, stopped it, or (a slow machine,
  // commands late) its watchdog tripped first: each ramps the rig to rest through the safety
  // layer.
  const bool lost = log.find("emergency stop (coordinator lost") != std::string::npos;
  const bool sigterm = log.find("actuator: stopped mid-run") != std::string::npos;
  const bool watchdog = log.find("watchdog tripped") != std::string::npos &&
                        log.find("rig at rest") != std::string::npos;
  EXPECT_TRUE(lost || sigterm || watchdog) << log;
  EXPECT_EQ(log.find("NOT at rest"), std::string::npos) << log;
  std::cout << "the actuator stopped on "
            << (lost      ? "losing its coordinator"
                : sigterm ? "up's SIGTERM"
                          : "its watchdog")
            << "\n";
  EXPECT_TRUE(all_gone(services, std::chrono::seconds(3))) << log;
  std::cout << "up exited " << seconds << " s after the coordinator's SIGKILL (code " << code
            << ")\n";
  kill_all(services);
}

// The run must still be running when the coordinator is killed. This VM now and then holds a
// process off the cores past the actuator's input deadline (20 ms, docs/performance.md), and the
// watchdog then ends the run by itself (the safety layer working); such an attempt is not the
// case under test, and up to three are made (each one printed).
TEST(UpSupervision, KillingTheCoordinatorStopsTheRigAndUpExitsNonZero) {
  const fs::path root = temp_dir("kill-coordinator");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const fs::path dir = root / std::to_string(attempt);
    fs::create_directories(dir);
    Up up(dir, 30.0);
    const auto services = wait_for_services(up.pid, std::chrono::seconds(20));
    ASSERT_EQ(services.count("hyloop-coordinator"), 1U) << slurp(up.log);
    ASSERT_TRUE(wait_for_run(up, std::chrono::seconds(20))) << slurp(up.log);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    if (attempt < 3 && slurp(up.log).find("watchdog tripped") != std::string::npos) {
      std::cout << "attempt " << attempt << ": the run ended on a stall before the kill:\n"
                << slurp(up.log) << "\n";
      kill_all(services);
      continue;
    }
    check_coordinator_kill(up, services);
    break;
  }
  fs::remove_all(root);
}

TEST(UpSupervision, KillingUpLeavesNoServiceBehind) {
  const fs::path dir = temp_dir("kill-up");
  Up up(dir, 30.0);
  const auto services = wait_for_services(up.pid, std::chrono::seconds(20));
  ASSERT_EQ(services.size(), 6U) << slurp(up.log);
  ASSERT_TRUE(wait_for_run(up, std::chrono::seconds(20))) << slurp(up.log);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(kill(up.pid, SIGKILL), 0);
  EXPECT_EQ(up.wait(std::chrono::seconds(5)), 128 + SIGKILL);
  const auto t0 = Clock::now();
  EXPECT_TRUE(all_gone(services, std::chrono::seconds(5)))
      << "services orphaned after `hyloop up` was killed";
  std::cout << "services gone " << std::chrono::duration<double>(Clock::now() - t0).count()
            << " s after `hyloop up` was killed\n";
  kill_all(services);
  fs::remove_all(dir);
}

TEST(UpSupervision, SigintStopsUpAndEveryServiceWithinTwoSeconds) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const fs::path dir = temp_dir("sigint");
    Up up(dir, 30.0);
    const auto services = wait_for_services(up.pid, std::chrono::seconds(20));
    ASSERT_EQ(services.size(), 6U) << slurp(up.log);
    ASSERT_TRUE(wait_for_run(up, std::chrono::seconds(20))) << slurp(up.log);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    ASSERT_EQ(kill(up.pid, sig), 0);
    const auto t0 = Clock::now();
    const int code = up.wait(std::chrono::seconds(10));
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_NE(code, -1) << slurp(up.log);
    EXPECT_NE(code, 0) << "an interrupted run is not a finished one\n" << slurp(up.log);
    EXPECT_TRUE(all_gone(services, std::chrono::seconds(1))) << slurp(up.log);
    // Generous bound (shared CI machines); the measured time goes to docs/reliability.md.
    EXPECT_LT(seconds, 4.0) << slurp(up.log);
    std::cout << "signal " << sig << ": up and its services gone after " << seconds << " s\n";
    kill_all(services);
    fs::remove_all(dir);
  }
}

// ---- issue 27, finding 2: control requests honour their caller's deadline ---------------------

// The Experiment service of `stack`'s coordinator on a loopback port (plaintext: the test's).
struct ServedInProcess {
  std::unique_ptr<grpc::Service> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Experiment::Stub> stub;
  explicit ServedInProcess(services::Coordinator& coordinator)
      : service(services::make_experiment_service(coordinator)) {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    stub = v1::Experiment::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                       grpc::InsecureChannelCredentials()));
  }
  grpc::Status load(const std::vector<std::string>& overrides, double timeout_s) {
    v1::LoadScenarioRequest request;
    request.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
    for (const std::string& o : overrides) request.add_overrides(o);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(
                         std::chrono::duration<double>(timeout_s)));
    v1::LoadScenarioReply reply;
    return stub->LoadScenario(&ctx, request, &reply);
  }
};

/// A kind that loads like SITS but takes 1.5 s to do it: a load that is still being read when
/// the next one arrives (reading no longer depends on the run's length: issue 27, finding 3).
class SlowKind final : public experiment::Kind {
 public:
  std::string name() const override { return "slow_sits"; }
  std::unique_ptr<experiment::LoadedScenario> load(
      const YAML::Node& root, const std::string& origin,
      const experiment::DataSource& data) const override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    YAML::Node sits = YAML::Clone(root);
    sits["kind"] = "sits";
    return experiment::find_kind("sits").load(sits, origin, data);
  }
};

/// The overrides that make the SITS scenario load slowly (SlowKind, registered once).
std::vector<std::string> slowly(std::vector<std::string> overrides) {
  static const bool registered = [] {
    experiment::register_kind(std::make_unique<SlowKind>());
    return true;
  }();
  (void)registered;
  overrides.emplace_back("kind=slow_sits");
  return overrides;
}

// As seen: `ctl load … name=A_long --timeout 1` (DEADLINE_EXCEEDED), then `ctl load … name=B_short`
// (OK); seconds later the coordinator held A_long and Start ran it.
TEST(ControlRequests, ALoadWhoseCallerTimedOutNeverLandsAfterANewerOne) {
  const fs::path dir = temp_dir("timedout");
  CoLocated stack("timedout", dir);
  ServedInProcess served(*stack.coordinator);
  // A takes 1.5 s to read (SlowKind), far beyond the 0.3 s deadline.
  const grpc::Status a = served.load(slowly({"timing.duration_s=5000", "name=A_long"}), 0.3);
  EXPECT_EQ(a.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << a.error_message();
  const grpc::Status b = served.load({"timing.duration_s=3", "name=B_short"}, 30.0);
  ASSERT_TRUE(b.ok()) << b.error_message();
  served.server->Shutdown();  // returns once every handler has returned: A's load is over
  v1::RunStatus status;
  stack.coordinator->status(&status);
  EXPECT_EQ(status.scenario(), "B_short");
  EXPECT_EQ(status.total_cycles(), 1500U);
  ASSERT_TRUE(stack.start("run").ok());
  status = stack.finish();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_EQ(status.total_cycles(), 1500U);
  fs::remove_all(dir);
}

// A newer load supersedes one still being read, also when its caller has no deadline.
TEST(ControlRequests, ANewerLoadSupersedesOneInFlight) {
  const fs::path dir = temp_dir("supersede");
  CoLocated stack("supersede", dir);
  grpc::Status a;
  std::thread slow([&] {
    a = stack.load_text(experiment::read_scenario_text((kSource / kScenario).string()),
                        slowly({"timing.duration_s=5000", "name=A_long"}));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // A is being read (1.5 s)
  const grpc::Status b =
      stack.load_text(experiment::read_scenario_text((kSource / kScenario).string()),
                      {"timing.duration_s=3", "name=B_short"});
  ASSERT_TRUE(b.ok()) << b.error_message();
  slow.join();
  EXPECT_EQ(a.error_code(), grpc::StatusCode::ABORTED) << a.error_message();
  EXPECT_NE(a.error_message().find("superseded"), std::string::npos) << a.error_message();
  v1::RunStatus status;
  stack.coordinator->status(&status);
  EXPECT_EQ(status.scenario(), "B_short");
  fs::remove_all(dir);
}

// A retry (the same request id) answers the first request: loaded once, started once.
TEST(ControlRequests, ARetriedLoadOrStartWithTheSameRequestIdTakesEffectOnce) {
  const fs::path dir = temp_dir("retry");
  CoLocated stack("retry", dir);
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
  load.add_overrides("timing.duration_s=4");
  load.set_request_id("load-1");
  v1::LoadScenarioReply first;
  v1::LoadScenarioReply again;
  ASSERT_TRUE(stack.coordinator->load_scenario(load, &first).ok());
  ASSERT_TRUE(stack.coordinator->load_scenario(load, &again).ok());
  EXPECT_EQ(first.SerializeAsString(), again.SerializeAsString());
  v1::StartRequest start;
  start.set_out_dir("run");
  start.set_request_id("start-1");
  v1::RunStatus started;
  v1::RunStatus retried;
  ASSERT_TRUE(stack.coordinator->start(start, &started).ok());
  const grpc::Status retry = stack.coordinator->start(start, &retried);
  EXPECT_TRUE(retry.ok()) << retry.error_message();  // not "a run is in progress"
  EXPECT_EQ(retried.run_id(), started.run_id());
  EXPECT_EQ(stack.finish().state(), v1::RUN_STATE_FINISHED);
  v1::ListRunsReply runs;
  stack.coordinator->list_runs(&runs);
  EXPECT_EQ(runs.runs_size(), 1);
  fs::remove_all(dir);
}

// ---- issue 27, low: enums refused by name ----------------------------------------------------

TEST(ControlRequests, StartRefusesAnUnknownClockModeNamingTheFieldAndTheAllowedValues) {
  const fs::path dir = temp_dir("mode99");
  CoLocated stack("mode99", dir);
  stack.load(4.0);
  const grpc::Status refused = stack.start("run", static_cast<v1::ClockMode>(99));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << refused.error_message();
  EXPECT_NE(refused.error_message().find("mode = 99"), std::string::npos)
      << refused.error_message();
  EXPECT_NE(refused.error_message().find("CLOCK_MODE_REAL_TIME = 2"), std::string::npos)
      << refused.error_message();
  EXPECT_FALSE(fs::exists(dir / "run"));
  v1::RunStatus status;
  stack.coordinator->status(&status);
  EXPECT_NE(status.state(), v1::RUN_STATE_RUNNING);
  fs::remove_all(dir);
}

// ---- issue 27, finding 4: one coordinator at a time (the lease) --------------------------------

// As seen: a second coordinator's failed Start deactivated the services of the first one's run
// ("rig-emulator left the run" at cycle 1031).
TEST(Lease, ASecondCoordinatorIsRefusedByNameAndTheFirstRunFinishes) {
  const fs::path dir = temp_dir("second");
  CoLocated stack("second", dir);
  services::CoordinatorOptions options;
  options.endpoint_prefix = "inproc://second-b";
  options.runs_dir = dir;
  services::Coordinator second(
      services::make_local_service_handles(
          {&stack.rig, &stack.actuator, &stack.dynamics, &stack.sensor}, stack.context),
      stack.context, options);
  stack.load(5.0);
  ASSERT_TRUE(stack.start("first", v1::CLOCK_MODE_REAL_TIME).ok());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
  load.add_overrides("timing.duration_s=2");
  v1::LoadScenarioReply loaded;
  ASSERT_TRUE(second.load_scenario(load, &loaded).ok());
  v1::StartRequest start;
  start.set_out_dir("second");
  v1::RunStatus b;
  if (second.start(start, &b).ok()) {
    ASSERT_TRUE(second.wait(std::chrono::seconds(60)));
    second.status(&b);
  }
  EXPECT_EQ(b.state(), v1::RUN_STATE_FAILED) << b.message();
  EXPECT_NE(b.message().find("leased to coordinator " + stack.coordinator->id()), std::string::npos)
      << b.message();
  const v1::RunStatus a = stack.finish();
  EXPECT_EQ(a.state(), v1::RUN_STATE_FINISHED) << a.message();
  EXPECT_EQ(a.cycle(), a.total_cycles());
  fs::remove_all(dir);
}

// A lease whose owner stops calling lapses after Component::kLeaseTtl; until then every
// transition of another caller is refused naming the owner, an e-stop never is.
struct Bare final : runtime::Component {
  Bare() : Component("bare") {}
  void on_configure(const v1::ConfigureRequest& /*request*/) override {}
  void on_activate() override {}
  void on_deactivate() override {}
  void on_shutdown() override {}
  void on_emergency_stop(std::string_view /*reason*/) noexcept override {}
};

TEST(Lease, ItLapsesAfterTheTtlWithoutItsOwnerAndNeverBlocksAnEstop) {
  Bare bare;
  v1::ConfigureRequest c;
  c.set_run_id("lease-test");
  v1::LifecycleReply r = bare.configure(c, "coordinator-A");
  ASSERT_EQ(r.state(), v1::LIFECYCLE_STATE_INACTIVE) << r.message();
  EXPECT_EQ(r.lease_owner(), "coordinator-A");
  const auto taken = Clock::now();
  for (const v1::LifecycleReply& refused :
       {bare.configure(c, "coordinator-B"), bare.activate("coordinator-B"),
        bare.cleanup("coordinator-B"), bare.shutdown("coordinator-B")}) {
    EXPECT_NE(refused.message().find("leased to coordinator coordinator-A"), std::string::npos)
        << refused.message();
    EXPECT_EQ(refused.state(), v1::LIFECYCLE_STATE_INACTIVE);
  }
  // Renewed by its owner's GetState: still A's after more than one TTL.
  auto silent = Clock::now();
  while (Clock::now() - taken < runtime::Component::kLeaseTtl + std::chrono::milliseconds(500)) {
    silent = Clock::now();
    bare.renew_lease("coordinator-A");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(bare.state_reply().lease_owner(), "coordinator-A");
  // A goes silent (its last call at `silent`): B is refused until the TTL has passed.
  while (bare.cleanup("coordinator-B").state() != v1::LIFECYCLE_STATE_UNCONFIGURED) {
    ASSERT_LT(Clock::now() - silent, std::chrono::seconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double lapsed = std::chrono::duration<double>(Clock::now() - silent).count();
  const double ttl = std::chrono::duration<double>(runtime::Component::kLeaseTtl).count();
  EXPECT_GE(lapsed, 0.95 * ttl);
  EXPECT_LT(lapsed, ttl + 0.5);
  std::cout << "lease lapsed " << lapsed << " s after its owner's last call\n";
  r = bare.configure(c, "coordinator-B");
  EXPECT_EQ(r.lease_owner(), "coordinator-B") << r.message();
  EXPECT_FALSE(bare.emergency_stop("anyone").emergency_stop().empty());  // never refused
  EXPECT_NE(bare.deactivate("coordinator-A").message().find("leased to coordinator coordinator-B"),
            std::string::npos);
}

}  // namespace
