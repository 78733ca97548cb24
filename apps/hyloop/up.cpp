#include "up.hpp"

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "actuator/actuator_component.hpp"
#include "coordinator/coordinator_component.hpp"
#include "ctl.hpp"
#include "dynamics/dynamics_component.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/udp_socket.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/runtime/security.hpp"
#include "hyloop/runtime/service_config.hpp"
#include "hyloop/transport/ipc_dir.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "run_output.hpp"
#include "sensor/sensor_component.hpp"
#include "site/site_kind.hpp"

extern char** environ;

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_signal{0};
void on_signal(int s) { g_signal.store(s); }

// After SIGINT/SIGTERM `up` is gone within 2 s: the run gets kStopWait to stop (the
// coordinator writes the run directory), the services kChildStopWait to exit after SIGTERM,
// then SIGKILL.
constexpr auto kStopWait = std::chrono::milliseconds(1000);
constexpr auto kChildStopWait = std::chrono::milliseconds(700);
// GetStatus answers at once during a run; after one it asks the services, and a stopped one
// takes its RPC deadline (1 s) to count as not answering.
constexpr auto kRpcDeadline = std::chrono::milliseconds(2500);
/// Exit code when the coordinator died or stopped under `up`.
constexpr int kCoordinatorLost = 4;

// Children spawned by `up` exit with it, also when it is SIGKILLed: a service that finds
// kParentPidVariable in its environment sets PR_SET_PDEATHSIG (runtime::run_service_main).
constexpr const char* kParentPidVariable = "HYLOOP_PARENT_PID";

struct Child {
  std::string name;
  pid_t pid = -1;
  std::string address;
  std::vector<std::string> lines;  ///< what it printed before its grpc line
};

fs::path bin_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

// Starts build/bin/hyloop-<name> and reads its "hyloop-<name> grpc ADDRESS" line (keeping the
// lines before it).
Child spawn_service(const std::string& name, std::vector<std::string> extra,
                    const std::string& address = "127.0.0.1:0",
                    const std::string& log_level = "warn") {
  const fs::path exe = bin_dir() / ("hyloop-" + name);
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args{exe.string(), "--grpc-address", address};
  if (!log_level.empty()) args.insert(args.end(), {"--log-level", log_level});
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Own process group: a Ctrl-C at the terminal reaches `hyloop up` only, which stops the run
  // through the coordinator and then the services, in order.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  Child c{name, -1, {}, {}};
  std::vector<std::string> env_strings{std::string(kParentPidVariable) + "=" +
                                       std::to_string(getpid())};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kParentPidVariable, std::strlen(kParentPidVariable)) != 0) {
      env_strings.emplace_back(*e);
    }
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&c.pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    throw std::runtime_error("cannot start " + exe.string() + ": " + std::strerror(rc));
  }
  FILE* f = fdopen(out[0], "r");
  char line[512];
  const std::string prefix = "hyloop-" + name + " grpc ";
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::string s(line);
    if (s.rfind(prefix, 0) == 0) {
      c.address = s.substr(prefix.size());
      while (!c.address.empty() && std::isspace(static_cast<unsigned char>(c.address.back()))) {
        c.address.pop_back();
      }
      break;
    }
    c.lines.push_back(s);
  }
  std::fclose(f);
  if (c.address.empty()) {
    kill(c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
    throw std::runtime_error("hyloop-" + name + " did not start (see its messages above)");
  }
  return c;
}

// SIGTERM to every child still there, SIGKILL after kChildStopWait; reaps them all and removes
// the ipc run directories they left.
void stop_children(std::vector<Child>& children) {
  for (Child& c : children) {
    if (c.pid > 0) {
      kill(c.pid, SIGTERM);
      kill(c.pid, SIGCONT);  // a stopped child takes SIGTERM only when it runs
    }
  }
  const auto until = std::chrono::steady_clock::now() + kChildStopWait;
  for (Child& c : children) {
    while (c.pid > 0) {
      if (waitpid(c.pid, nullptr, WNOHANG) == c.pid) {
        c.pid = -1;
      } else if (std::chrono::steady_clock::now() > until) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
        c.pid = -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  // A killed coordinator leaves its run directory (its telemetry socket) in the ipc directory
  // the services share (the default one): it goes with the stack.
  try {
    (void)transport::remove_stale_ipc_run_dirs(transport::prepare_ipc_dir(""));
  } catch (const std::exception&) {
  }
}

// "" while the coordinator process runs; else what happened to it. A coordinator that exited is
// reaped (pid -1); a stopped one (SIGSTOP) counts as lost and is killed, since nothing else
// supervises the loop then.
std::string coordinator_lost(Child& c) {
  if (c.pid <= 0) return "the coordinator is gone";
  int status = 0;
  const pid_t r = waitpid(c.pid, &status, WNOHANG | WUNTRACED);
  if (r != c.pid) return {};
  if (WIFSTOPPED(status)) {
    kill(c.pid, SIGKILL);
    waitpid(c.pid, nullptr, 0);
    c.pid = -1;
    return "the coordinator was stopped (signal " + std::to_string(WSTOPSIG(status)) +
           "): killed it";
  }
  c.pid = -1;
  if (WIFSIGNALED(status)) {
    return "the coordinator was killed (signal " + std::to_string(WTERMSIG(status)) + ")";
  }
  return "the coordinator exited (code " + std::to_string(WEXITSTATUS(status)) + ")";
}

// The local stack's own security directory (runtime/security.hpp) in a private (0700) temporary
// directory, removed when `up` ends: every service gets --security-dir, `up` drives the run with
// the operator token; `--serve` prints where it is for `hyloop ctl --security-dir`.
class LocalSecurityDir {
 public:
  LocalSecurityDir() = default;
  LocalSecurityDir(const LocalSecurityDir&) = delete;
  LocalSecurityDir& operator=(const LocalSecurityDir&) = delete;
  ~LocalSecurityDir() {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  void create() {
    const char* tmp = std::getenv("TMPDIR");
    const fs::path base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    remove_stale(base);
    std::string pattern = (base / ("hyloop-up-" + std::to_string(getpid()) + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a private directory " + pattern + ": " +
                               std::strerror(errno));
    }
    root_ = pattern;
    runtime::CertsOptions certs;
    certs.out = root_ / "security";
    certs.days = 30;
    runtime::create_security_dir(certs);
    // Every certificate of this stack is made now: the CA key is not needed again and does not
    // stay in a temporary directory that a power cut would leave behind.
    if (::unlink((certs.out / "ca.key").c_str()) != 0) {
      throw std::runtime_error("cannot remove " + (certs.out / "ca.key").string() + ": " +
                               std::strerror(errno));
    }
    runtime::check_security_dir(certs.out);
  }
  [[nodiscard]] fs::path dir() const { return root_ / "security"; }

  // Whether process `pid` is the `up` that made a directory last modified at `made`: it runs
  // and started before then (after a power cut the pid may belong to another process).
  static bool made_by_live_process(pid_t pid, const struct stat& made) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return false;
    const long started = process_start_time(pid);
    return started < 0 || started <= made.st_mtim.tv_sec + 1;
  }

  // When `pid` started (seconds since the epoch, from /proc/PID/stat's starttime and
  // /proc/stat's btime), or -1 when unknown.
  static long process_start_time(pid_t pid) {
    std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat_file)), {});
    const auto paren = text.rfind(')');
    if (paren == std::string::npos) return -1;
    std::istringstream fields(text.substr(paren + 1));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i) {
    }
    std::ifstream boot_file("/proc/stat");
    long boot = -1;
    for (std::string key; boot_file >> key;) {
      if (key == "btime" && boot_file >> boot) break;
    }
    const long ticks = sysconf(_SC_CLK_TCK);
    if (boot < 0 || ticks <= 0 || field.empty() || !fields) return -1;
    return boot + std::stol(field) / ticks;
  }

  // The directories of earlier `up`s that were killed (SIGKILL, a power cut leaves them): ours,
  // not a symlink, and their process gone.
  static void remove_stale(const fs::path& base) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("hyloop-up-", 0) != 0) continue;
      const auto dash = name.find('-', 10);
      if (dash == std::string::npos) continue;
      const std::string pid_text = name.substr(10, dash - 10);
      if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos ||
          pid_text.size() > 9) {
        continue;
      }
      struct stat st {};
      if (lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        continue;
      }
      if (made_by_live_process(static_cast<pid_t>(std::stol(pid_text)), st)) continue;
      fs::remove_all(entry.path(), ec);
    }
  }
  [[nodiscard]] std::vector<std::string> args() const { return {"--security-dir", dir()}; }

 private:
  fs::path root_;
};

// The client side of a run, the same for both deployments.
struct Runner {
  std::function<grpc::Status(const v1::LoadScenarioRequest&, v1::LoadScenarioReply*)> load;
  std::function<grpc::Status(const v1::StartRequest&, v1::RunStatus*)> start;
  std::function<void(v1::RunStatus*)> status;
  std::function<void()> stop;
  std::function<grpc::Status(v1::RunSummaryReply*)> summary;
  /// "" while the coordinator runs, else what happened to it (processes: it died or stopped).
  std::function<std::string()> lost = [] { return std::string(); };
};

// "CALL failed: MESSAGE", or the status code when the coordinator sent no message (gRPC's own
// failures: a request or reply that could not be serialized has none).
std::string rpc_failure(const char* call, const grpc::Status& st) {
  static constexpr std::array<const char*, 17> kCodes{"OK",
                                                      "CANCELLED",
                                                      "UNKNOWN",
                                                      "INVALID_ARGUMENT",
                                                      "DEADLINE_EXCEEDED",
                                                      "NOT_FOUND",
                                                      "ALREADY_EXISTS",
                                                      "PERMISSION_DENIED",
                                                      "RESOURCE_EXHAUSTED",
                                                      "FAILED_PRECONDITION",
                                                      "ABORTED",
                                                      "OUT_OF_RANGE",
                                                      "UNIMPLEMENTED",
                                                      "INTERNAL",
                                                      "UNAVAILABLE",
                                                      "DATA_LOSS",
                                                      "UNAUTHENTICATED"};
  if (!st.error_message().empty()) return st.error_message();
  const auto code = static_cast<std::size_t>(st.error_code());
  return std::string(call) + " failed with status " +
         (code < kCodes.size() ? kCodes[code] : std::to_string(code)) +
         " and no message from the coordinator";
}

// Every text of a request must be UTF-8 (protobuf strings): one that is not would reach the
// coordinator as a request it cannot parse. @throws ScenarioError naming it and the byte.
void require_utf8_request(const v1::LoadScenarioRequest& load) {
  const auto check = [](const std::string& text, const std::string& what) {
    const std::size_t at = experiment::invalid_utf8_at(text);
    if (at != std::string::npos) {
      throw experiment::ScenarioError(what + ": not valid UTF-8 (byte " + std::to_string(at) +
                                      "); text in a scenario must be UTF-8");
    }
  };
  check(load.source_name(), "the scenario's file name");
  check(load.scenario_yaml(), load.source_name());
  for (const std::string& o : load.overrides()) check(o, "--set " + o.substr(0, o.find('=')));
}

bool terminal(v1::RunState s) {
  return s == v1::RUN_STATE_FINISHED || s == v1::RUN_STATE_STOPPED || s == v1::RUN_STATE_ESTOPPED ||
         s == v1::RUN_STATE_FAILED;
}

// LoadScenario of the scenario file with the --set overrides: 0, or the exit code after saying
// why not.
int load_scenario(const Runner& r, const UpOptions& o) {
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(experiment::read_scenario_text(o.scenario));
  load.set_source_name(o.scenario);
  for (const std::string& s : o.overrides) load.add_overrides(s);
  try {
    require_utf8_request(load);
  } catch (const experiment::ScenarioError& e) {
    std::cerr << "hyloop up: " << e.what() << "\n";
    return 2;
  }
  v1::LoadScenarioReply loaded;
  const grpc::Status st = r.load(load, &loaded);
  if (!st.ok()) {
    std::cerr << "hyloop up: " << rpc_failure("LoadScenario", st) << "\n";
    return 1;
  }
  return 0;
}

int drive(const Runner& r, const UpOptions& o) {
  if (const int rc = load_scenario(r, o); rc != 0) return rc;
  if (o.force) {
    // Only now that the scenario loaded: a refused scenario leaves the old run in place.
    try {
      replace_out_directory(o.out);
    } catch (const std::exception& e) {
      std::cerr << "hyloop up: " << e.what() << "\n";
      return 1;
    }
  }
  v1::StartRequest start;
  // The coordinator's runs directory is --out's parent: it gets the leaf name.
  start.set_out_dir(fs::path(o.out).filename().string());
  start.set_mode(o.mode == kModeRealTime ? v1::CLOCK_MODE_REAL_TIME : v1::CLOCK_MODE_LOCKSTEP);
  v1::RunStatus status;
  const grpc::Status st = r.start(start, &status);
  if (!st.ok()) {
    std::cerr << "hyloop up: " << rpc_failure("Start", st) << "\n";
    return 1;
  }
  std::cerr << "hyloop up: run " << status.run_id() << " (" << o.mode << ")\n";
  bool stopping = false;
  auto stop_until = std::chrono::steady_clock::time_point::max();
  const bool tty = isatty(STDERR_FILENO) != 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (const std::string lost = r.lost(); !lost.empty()) {
      std::cerr << "\nhyloop up: " << lost << ": stopping the services\n";
      return kCoordinatorLost;
    }
    r.status(&status);
    if (terminal(status.state())) break;
    if (g_signal.load() != 0 && !stopping) {
      std::cerr << "\nhyloop up: interrupted, stopping the run\n";
      r.stop();
      stopping = true;
      stop_until = std::chrono::steady_clock::now() + kStopWait;
    }
    if (std::chrono::steady_clock::now() > stop_until) {
      std::cerr << "hyloop up: the run did not stop within " << kStopWait.count()
                << " ms: stopping the services\n";
      return 128 + g_signal.load();
    }
    if (tty) {
      std::fprintf(stderr, "\r%s: cycle %llu / %llu", status.scenario().c_str(),
                   static_cast<unsigned long long>(status.cycle()),
                   static_cast<unsigned long long>(status.total_cycles()));
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  v1::RunSummaryReply summary;
  const bool have_summary = r.summary(&summary).ok();
  if (have_summary) std::cout << summary.summary_json();
  std::cerr << "hyloop up: "
            << (status.message().empty()
                    ? "the run ended in state " + v1::RunState_Name(status.state())
                    : status.message())
            << "\n";
  if (have_summary) {
    warn_about_outcome(nlohmann::json::parse(summary.summary_json(), nullptr, false), std::cerr);
  }
  // "run directory" only for a complete one (the coordinator runs on this machine).
  if (recording::is_incomplete(o.out) || !fs::exists(fs::path(o.out) / "summary.json")) {
    std::cerr << "hyloop up: the run directory " << o.out
              << " is incomplete; recover what was recorded with: hyloop summary --recover "
              << o.out << "\n";
    return 4;
  }
  std::cerr << "run directory: " << o.out << "\n";
  return status.state() == v1::RUN_STATE_FINISHED ? 0 : 3;
}

// --service-config, read once: the file must be a valid service configuration
// (load_service_config names the field, value and range) that leaves to `up` what `up` owns;
// with --inproc only the input deadline applies. Keeps what `up` itself uses in `o`.
// @throws std::invalid_argument naming the file and the key.
void read_service_config(UpOptions& o) {
  if (o.service_config.empty()) return;
  const runtime::ServiceConfig config = runtime::load_service_config(o.service_config);
  o.input_deadline_periods = config.input_deadline_periods;
  o.input_deadline_floor_ms = config.input_deadline_floor_ms;
  o.rt = config.rt;
  const YAML::Node root = YAML::LoadFile(o.service_config);
  o.service_config_sets_log_level = root["log_level"].IsDefined();
  for (const char* owned : {"name", "grpc_address", "security_dir", "insecure", "ipc_dir"}) {
    if (root[owned].IsDefined()) {
      throw std::invalid_argument(
          "--service-config " + o.service_config + ": " + owned +
          " is `hyloop up`'s to set (each service's address, the stack's own security and ipc "
          "directories); remove it");
    }
  }
  if (!o.inproc) return;
  for (const auto& entry : root) {
    const auto key = entry.first.as<std::string>();
    if (key != "input_deadline_periods" && key != "input_deadline_floor_ms" && key != "rt") {
      throw std::invalid_argument("--service-config " + o.service_config + ": " + key +
                                  " applies to services as processes; with --inproc only "
                                  "input_deadline_periods, input_deadline_floor_ms and rt do");
    }
  }
}

int up_inproc(const UpOptions& o) {
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  services::ActuatorComponent actuator;
  services::DynamicsComponent dynamics;
  services::SensorComponent sensor;
  if (!o.service_config.empty()) {
    for (runtime::LoopComponent* c :
         std::initializer_list<runtime::LoopComponent*>{&rig, &actuator, &dynamics, &sensor}) {
      c->set_input_deadline_periods(o.input_deadline_periods);
      c->set_input_deadline_floor_ms(o.input_deadline_floor_ms);
      c->set_rt_options(o.rt);  // each loop thread of the one process
    }
  }
  auto handles =
      services::make_local_service_handles({&rig, &actuator, &dynamics, &sensor}, context);
  services::CoordinatorOptions options;
  options.endpoint_prefix = "inproc://hyloop";
  options.runs_dir = o.runs_dir;
  services::Coordinator coordinator(std::move(handles), context, options);
  Runner r;
  r.load = [&](const auto& q, auto* a) { return coordinator.load_scenario(q, a); };
  r.start = [&](const auto& q, auto* a) { return coordinator.start(q, a); };
  r.status = [&](auto* a) { coordinator.status(a); };
  r.stop = [&] {
    v1::RunStatus ignored;
    (void)coordinator.stop(&ignored);
  };
  r.summary = [&](auto* a) { return coordinator.run_summary("", a); };
  const int rc = drive(r, o);
  coordinator.shutdown_services();
  return rc;
}

// The loop services, identification and the coordinator (last in `children`, returned), each
// with the stack's security directory and the operator's --service-config.
Child spawn_services(const UpOptions& o, const LocalSecurityDir& security,
                     std::vector<Child>& children) {
  std::vector<std::string> service_args = security.args();
  // The operator's service configuration: its log level replaces up's default (warn).
  const std::string log_level = o.service_config_sets_log_level ? "" : "warn";
  if (!o.service_config.empty()) {
    service_args.insert(service_args.end(), {"--config", o.service_config});
  }
  std::string spec;
  for (const char* name : services::kLoopServices) {
    children.push_back(spawn_service(name, service_args, "127.0.0.1:0", log_level));
    if (!spec.empty()) spec.push_back(',');
    spec.append(name).append("=").append(children.back().address);
  }
  children.push_back(spawn_service("identification", service_args, "127.0.0.1:0", log_level));
  spec.append(",identification=").append(children.back().address);
  std::vector<std::string> coordinator_args{"--services", spec};
  for (const std::string& a : service_args) coordinator_args.push_back(a);
  if (!o.runs_dir.empty()) {
    coordinator_args.push_back("--runs-dir");
    coordinator_args.push_back(o.runs_dir);
  }
  children.push_back(
      spawn_service("coordinator", coordinator_args, o.coordinator_address, log_level));
  return children.back();
}

int up_processes(const UpOptions& o) {
  LocalSecurityDir security;  // removed after the children are stopped
  std::vector<Child> children;
  try {
    security.create();
    const Child coordinator = spawn_services(o, security, children);
    if (o.serve) {
      for (const Child& c : children) {
        std::cout << "hyloop-" << c.name << " pid " << c.pid << "\n";
      }
      std::cout << "hyloop-security-dir " << security.dir().string() << "\n";
      std::cout << "hyloop-coordinator grpc " << coordinator.address << std::endl;
      while (g_signal.load() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (const std::string lost = coordinator_lost(children.back()); !lost.empty()) {
          std::cerr << "hyloop up: " << lost << ": stopping the services\n";
          stop_children(children);
          return kCoordinatorLost;
        }
      }
    } else {
      auto channel = grpc::CreateChannel(coordinator.address,
                                         runtime::channel_credentials(runtime::load_client_security(
                                             security.dir(), runtime::Role::kOperator)));
      auto stub = v1::Experiment::NewStub(channel);
      const auto ctx = [] {
        auto c = std::make_unique<grpc::ClientContext>();
        c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        return c;
      };
      const auto short_ctx = [] {
        auto c = std::make_unique<grpc::ClientContext>();
        c->set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
        return c;
      };
      Runner r;
      r.load = [&](const auto& q, auto* a) { return stub->LoadScenario(ctx().get(), q, a); };
      r.start = [&](const auto& q, auto* a) { return stub->Start(ctx().get(), q, a); };
      r.status = [&](auto* a) { (void)stub->GetStatus(short_ctx().get(), v1::StatusRequest{}, a); };
      r.stop = [&] {
        v1::RunStatus ignored;
        (void)stub->Stop(short_ctx().get(), v1::StopRequest{}, &ignored);
      };
      r.lost = [&children] { return coordinator_lost(children.back()); };
      r.summary = [&](auto* a) {
        return stub->GetRunSummary(ctx().get(), v1::RunSummaryRequest{}, a);
      };
      const int rc = drive(r, o);
      stop_children(children);
      return rc;
    }
    stop_children(children);
    return 0;
  } catch (const std::exception& e) {
    stop_children(children);
    std::cerr << "hyloop up: " << e.what() << "\n";
    return 1;
  }
}

// ---- an opensees_site scenario: the site, served to an OpenSees peer ----

// The first complete run directory in `dir` (summary.json written, INCOMPLETE gone), or "".
fs::path finished_site_run(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "summary.json") &&
        !recording::is_incomplete(e.path())) {
      return e.path();
    }
  }
  return {};
}

// The one session's run directory moved to --out, its summary printed: 0 terminated, 3 other.
int take_site_run(const UpOptions& o, const fs::path& staging) {
  const fs::path run = finished_site_run(staging);
  if (run.empty()) {
    std::cerr << "hyloop up: no OpenSees session ended at the site: no run directory\n";
    fs::remove_all(staging);
    return g_signal.load() != 0 ? 128 + g_signal.load() : 1;
  }
  if (o.force) replace_out_directory(o.out);
  fs::rename(run, o.out);
  fs::remove_all(staging);
  const auto summary = nlohmann::json::parse(std::ifstream(fs::path(o.out) / "summary.json"));
  std::cout << summary.dump(2) << "\n";
  const auto& site = summary.at("site");
  std::cerr << "hyloop up: the site's session " << site.value("end", "?") << ": "
            << site.value("reason", "") << "\nrun directory: " << o.out << "\n";
  return site.value("end", "") == "terminated" ? 0 : 3;
}

// hyloop-site under the stack's security directory, configured from the scenario and serving
// at once: its OpenFresco address on stdout; until one session has ended (its run directory
// becomes --out) or, with --serve, until Ctrl-C (sessions go to --runs-dir).
int up_site(const UpOptions& o) {
  LocalSecurityDir security;
  std::vector<Child> children;
  fs::path staging;
  try {
    security.create();
    if (o.serve) {
      staging = o.runs_dir.empty() ? fs::current_path() : fs::path(o.runs_dir);
    } else {
      std::string pattern =
          (fs::path(o.runs_dir) / ("." + fs::path(o.out).filename().string() + ".site-XXXXXX"))
              .string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
      staging = pattern;
    }
    std::vector<std::string> args = security.args();
    for (const std::string& a : {std::string("--scenario"), o.scenario, std::string("--runs-dir"),
                                 staging.string(), std::string("--serve-at-start")}) {
      args.push_back(a);
    }
    for (const std::string& s : o.overrides) args.insert(args.end(), {"--set", s});
    // Its sessions' lines (accepted, refused with the reason, ended) are info: the operator's
    // only word on a refused set-up, since the peer gets none.
    children.push_back(spawn_service("site", args, "127.0.0.1:0", "info"));
    Child& site = children.back();
    for (const std::string& line : site.lines) std::cout << line;
    if (o.serve) {
      std::cout << "hyloop-site pid " << site.pid << "\nhyloop-security-dir "
                << security.dir().string() << "\nhyloop-site grpc " << site.address << "\n";
    }
    std::cout << std::flush;
    while (g_signal.load() == 0 && (o.serve || finished_site_run(staging).empty())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (waitpid(site.pid, nullptr, WNOHANG) == site.pid) {
        site.pid = -1;
        throw std::runtime_error("hyloop-site exited (see its messages above)");
      }
    }
    stop_children(children);  // a session under way is cut and recorded as such
    return o.serve ? 0 : take_site_run(o, staging);
  } catch (const std::exception& e) {
    stop_children(children);
    if (!o.serve && !staging.empty()) fs::remove_all(staging);
    std::cerr << "hyloop up: " << e.what() << "\n";
    return 1;
  }
}

// A UDP port free on 127.0.0.1 now (the kernel's choice; closed again).
int free_loopback_udp_port() {
  const hal::UdpSocket probe("probe", {"127.0.0.1", 0});
  return probe.port();
}

// The scenario as the stack will read it (`o`'s overrides applied).
std::unique_ptr<experiment::LoadedScenario> load_for_up(const UpOptions& o) {
  return experiment::load_scenario_text(experiment::read_scenario_text(o.scenario), o.scenario,
                                        o.overrides,
                                        experiment::DataSource::local_file(o.scenario));
}

// --emulate-wire: the device rig.driver names, emulated on its socket for the run (nullptr
// without the flag). A driver port left at 0 (a shipped scenario given --set
// rig.driver.type=...) is put on a free loopback port, added to the overrides every part of the
// stack reads; ports the scenario or --set gave stay. @throws ScenarioError /
// std::invalid_argument naming the field.
std::unique_ptr<experiment::WireEmulator> start_wire_emulator(UpOptions& o) {
  if (!o.emulate_wire) return nullptr;
  auto loaded = load_for_up(o);
  const std::string type = experiment::rig_driver_type(*loaded);
  if (!experiment::is_wire_driver(type)) {
    throw experiment::ScenarioError(
        "--emulate-wire: rig.driver.type = " + type +
        ": there is no device on the wire to emulate (--set rig.driver.type=udp ...)");
  }
  const YAML::Node driver = YAML::Load(loaded->describe().resolved_yaml)["rig"]["driver"];
  const std::size_t given = o.overrides.size();
  for (const char* port : {"local_port", "peer_port"}) {
    if (driver[port] && driver[port].as<int>() == 0) {
      o.overrides.push_back("rig.driver." + std::string(port) + "=" +
                            std::to_string(free_loopback_udp_port()));
      std::cerr << "hyloop up: --emulate-wire: " << o.overrides.back() << "\n";
    }
  }
  if (o.overrides.size() != given) loaded = load_for_up(o);
  hal::WireImpairments w;
  w.latency = o.wire_latency_ms * 1e-3;
  w.jitter = o.wire_jitter_ms * 1e-3;
  w.loss = o.wire_loss;
  w.seed = o.wire_seed;
  auto emulator = loaded->make_wire_emulator(w);
  std::cerr << "hyloop up: emulating the rig.driver device (" << type << ") on the wire\n";
  return emulator;
}

// The stack, once the options are checked.
int start_stack(const UpOptions& options) {
  UpOptions o = options;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (!o.scenario.empty() &&
      services::is_site_scenario(experiment::read_scenario_text(o.scenario))) {
    if (o.inproc) {
      std::cerr << "hyloop up: the site of an OpenSees model runs as its own process: no "
                   "--inproc (`hyloop site` serves it in this process)\n";
      return 2;
    }
    return up_site(o);
  }
  std::unique_ptr<experiment::WireEmulator> wire;
  try {
    wire = start_wire_emulator(o);
  } catch (const std::exception& e) {
    std::cerr << "hyloop up: " << e.what() << "\n";
    return 2;
  }
  const int rc = o.inproc ? up_inproc(o) : up_processes(o);
  if (wire) std::cerr << "hyloop up: " << wire->report() << "\n";
  return rc;
}

}  // namespace

CLI::App* add_up_subcommand(CLI::App& app, UpOptions& options) {
  auto* up = app.add_subcommand(
      "up",
      "run a scenario through the services (separate processes, or --inproc) and write "
      "the same run directory as run");
  up->add_option("scenario", options.scenario, "scenario YAML file");
  up->add_option("--out", options.out, "run directory to write");
  up->add_option("--set", options.overrides, "override a field: dotted.path=value");
  add_mode_option(*up, options.mode);
  up->add_flag("--force", options.force,
               "replace an existing run directory (only a run directory: never any other)");
  up->add_flag("--inproc", options.inproc,
               "the services as components in this process (inproc:// endpoints)");
  up->add_flag("--serve", options.serve,
               "start the stack, print the coordinator's address, serve until Ctrl-C");
  up->add_option("--runs-dir", options.runs_dir,
                 "--serve: the coordinator's runs directory (Start.out_dir names a directory in "
                 "it; default: the working directory)");
  up->add_flag("--emulate-wire", options.emulate_wire,
               "start the wire-level emulator of the device the scenario's rig.driver names "
               "(its plant behind a real socket) for the run");
  up->add_option("--wire-latency-ms", options.wire_latency_ms,
                 "--emulate-wire: latency added to every datagram the device sends, ms");
  up->add_option("--wire-jitter-ms", options.wire_jitter_ms,
                 "--emulate-wire: uniform extra delay in [0, jitter], ms");
  up->add_option("--wire-loss", options.wire_loss,
                 "--emulate-wire: probability a datagram is lost, each direction");
  up->add_option("--wire-seed", options.wire_seed, "--emulate-wire: seed of the impairments");
  up->add_option("--service-config", options.service_config,
                 "a service configuration (YAML, docs/services.md) every service is started "
                 "with: input_deadline_periods, input_deadline_floor_ms, rt:, log_level, "
                 "metrics_address; with --inproc only the input deadline");
  up->add_option("--address", options.coordinator_address,
                 "--serve: the coordinator's gRPC address (default 127.0.0.1:0, any free port)");
  return up;
}

int run_up(UpOptions options) {
  if (!options.serve && (options.scenario.empty() || options.out.empty())) {
    std::cerr << "hyloop up: SCENARIO and --out DIR are required (or --serve)\n";
    return 2;
  }
  if (options.serve && options.force) {
    std::cerr << "hyloop up: --force goes with --out (a served coordinator refuses an "
                 "existing run directory)\n";
    return 2;
  }
  if (!options.serve) {
    // The coordinator writes --out as a name in its runs directory, --out's parent.
    const fs::path o = fs::absolute(options.out).lexically_normal();
    const fs::path leaf = o.has_filename() ? o : o.parent_path();
    check_out_directory(leaf, options.force);
    fs::create_directories(leaf.parent_path());
    options.out = leaf.string();
    options.runs_dir = leaf.parent_path().string();
    print_scenario_notices(options.scenario, options.overrides, std::cerr);
  }
  if (!options.service_config.empty()) {
    options.service_config = fs::absolute(options.service_config).lexically_normal().string();
  }
  try {
    read_service_config(options);
  } catch (const std::exception& e) {
    std::cerr << "hyloop up: " << e.what() << "\n";
    return 2;
  }
  return start_stack(options);
}

}  // namespace hyloop::app
