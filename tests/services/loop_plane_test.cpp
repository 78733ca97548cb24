// The closed loop plane through the services (issue 10, findings 1 and 6; docs/security.md,
// "Loop plane"): endpoints only where the coordinator derives them, exact binds, private ipc
// run directories removed at the end, CURVE on tcp, garbage telemetry counted.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
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
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/testing/scratch_dir.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/curve.hpp"
#include "hyloop/transport/ipc_dir.hpp"
#include "hyloop/transport/layout.hpp"
#include "identification/identification_component.hpp"
#include "rig_emulator/rig_emulator_component.hpp"
#include "sensor/sensor_component.hpp"

namespace {

namespace fs = std::filesystem;
namespace tp = hyloop::transport;
using namespace hyloop;
using namespace std::chrono_literals;

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
  const fs::path d = hyloop::testing::scratch_dir("lp", name);
  fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace);
  return d;
}

int run_command(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0U;
}

bool is_socket_file(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

int tcp_connect(const char* ip, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// `n` distinct ports free right now on 127.0.0.1: each socket stays bound until all are drawn
// (ports drawn one at a time can repeat: the kernel may hand a just-closed port out again).
std::vector<int> free_ports(int n) {
  std::vector<int> fds, ports;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    fds.push_back(fd);
    ports.push_back(ntohs(a.sin_port));
  }
  for (const int fd : fds) ::close(fd);
  return ports;
}

int free_port() { return free_ports(1).front(); }

const std::vector<std::string> kOverrides = {"timing.duration_s=10", "metrics.window_s=5"};

// `hyloop run` of the scenario: the reference samples.
const std::string& reference_samples() {
  static const std::string samples = [] {
    const fs::path dir = temp_dir("reference");
    std::string cmd = (kBin / "hyloop").string() + " run " + (kSource / kScenario).string() +
                      " --out " + (dir / "run").string();
    for (const std::string& o : kOverrides) cmd += " --set " + o;
    EXPECT_EQ(run_command(cmd + " > /dev/null 2>&1"), 0);
    std::string s = slurp(dir / "run" / "samples.csv");
    fs::remove_all(dir);
    return s;
  }();
  return samples;
}

// Start.out_dir: a name under the coordinator's runs directory where it has one (CoordinatorOptions
// ::runs_dir), else the absolute path.
constexpr bool kHasRunsDir = requires(services::CoordinatorOptions o) { o.runs_dir; };

// The loop services as components in this process, behind one coordinator writing run
// directories in the parent of the `out` given to start().
class Stack {
 public:
  Stack(services::CoordinatorOptions options, const tp::LoopPlaneOptions& plane,
        const fs::path& runs_dir) {
    if constexpr (kHasRunsDir) options.runs_dir = runs_dir;
    std::vector<std::unique_ptr<services::ServiceHandle>> handles;
    // On the heap: the components are too large for a test's stack together.
    for (runtime::LoopComponent* c : std::initializer_list<runtime::LoopComponent*>{
             rig_.get(), actuator_.get(), dynamics_.get(), sensor_.get(), identification_.get()}) {
      c->set_context(&context_);
      c->set_loop_plane(plane);
      handles.push_back(services::make_local_service_handle(*c));
    }
    options.loop_plane = plane;
    coordinator_ =
        std::make_unique<services::Coordinator>(std::move(handles), context_, std::move(options));
  }
  ~Stack() { coordinator_->shutdown_services(); }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  // Loads the scenario and starts a run (lockstep unless `mode` says otherwise) into `out`; the
  // run id.
  std::string start(const fs::path& out, v1::ClockMode mode = v1::CLOCK_MODE_LOCKSTEP) {
    v1::LoadScenarioRequest load;
    load.set_scenario_yaml(experiment::read_scenario_text((kSource / kScenario).string()));
    for (const std::string& o : kOverrides) load.add_overrides(o);
    v1::LoadScenarioReply loaded;
    const grpc::Status ls = coordinator_->load_scenario(load, &loaded);
    EXPECT_TRUE(ls.ok()) << ls.error_message();
    v1::StartRequest start;
    start.set_out_dir(kHasRunsDir ? out.filename().string() : out.string());
    start.set_mode(mode);
    v1::RunStatus status;
    const grpc::Status st = coordinator_->start(start, &status);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return status.run_id();
  }
  v1::RunStatus wait() {
    EXPECT_TRUE(coordinator_->wait(std::chrono::minutes(3)));
    v1::RunStatus status;
    coordinator_->status(&status);
    return status;
  }
  services::Coordinator& coordinator() { return *coordinator_; }
  zmq::context_t& context() { return context_; }
  runtime::LoopComponent& actuator() { return *actuator_; }

 private:
  zmq::context_t context_;
  std::unique_ptr<services::RigEmulatorComponent> rig_ =
      std::make_unique<services::RigEmulatorComponent>();
  std::unique_ptr<services::ActuatorComponent> actuator_ =
      std::make_unique<services::ActuatorComponent>();
  std::unique_ptr<services::DynamicsComponent> dynamics_ =
      std::make_unique<services::DynamicsComponent>();
  std::unique_ptr<services::SensorComponent> sensor_ =
      std::make_unique<services::SensorComponent>();
  std::unique_ptr<services::IdentificationComponent> identification_ =
      std::make_unique<services::IdentificationComponent>();
  std::unique_ptr<services::Coordinator> coordinator_;
};

v1::ConfigureRequest rig_request() {
  v1::ConfigureRequest c;
  c.set_run_id("run-1");
  c.set_mode(v1::CLOCK_MODE_LOCKSTEP);
  c.set_sender_id(1);
  c.set_scenario_yaml(experiment::to_yaml(experiment::load_scenario(
      (kSource / kScenario).string(), {"timing.duration_s=1", "metrics.window_s=1"})));
  const experiment::LoopPlan plan = experiment::loop_plan(c.scenario_yaml());
  transport::add_loop_layouts(plan.measurement, plan.command, *c.mutable_layouts());
  c.mutable_endpoints()->set_telemetry("inproc://telemetry");
  return c;
}

// Finding 1: Lifecycle.Configure to the rig emulator with rig_to_sensor naming a file replaced
// the file by a socket. Now the endpoint is refused (it is not in the service's ipc directory),
// naming the field, and the file is intact.
TEST(LoopPlane, ConfigureWithAnEndpointOnAFileIsRefusedAndTheFileKept) {
  const fs::path dir = temp_dir("finding1");
  const fs::path victim = dir / "precious.txt";
  std::ofstream(victim) << "calibration data\n";
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  rig.set_context(&context);
  rig.set_loop_plane({.ipc_dir = (dir / "ipc").string()});
  v1::ConfigureRequest c = rig_request();
  c.mutable_endpoints()->set_rig_to_sensor("ipc://" + victim.string());
  c.mutable_endpoints()->set_actuator_to_rig("inproc://rig");
  const v1::LifecycleReply r = rig.configure(c);
  EXPECT_NE(r.state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_NE(r.message().find("endpoints.rig_to_sensor"), std::string::npos) << r.message();
  EXPECT_EQ(slurp(victim), "calibration data\n");
  EXPECT_TRUE(fs::is_regular_file(victim));
  rig.shutdown();
  fs::remove_all(dir);
}

// Finding 6: a channel bound on 127.0.0.1 listened on every interface.
TEST(LoopPlane, TcpBoundOnLoopbackIsNotReachableAtAnotherLocalAddress) {
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  rig.set_context(&context);
  rig.set_loop_plane({.insecure = true});
  const std::vector<int> ports = free_ports(2);
  const int port = ports[0];
  v1::ConfigureRequest c = rig_request();
  c.mutable_endpoints()->set_rig_to_sensor("tcp://127.0.0.1:" + std::to_string(port));
  c.mutable_endpoints()->set_actuator_to_rig("tcp://127.0.0.1:" + std::to_string(ports[1]));
  const v1::LifecycleReply r = rig.configure(c);
  ASSERT_EQ(r.state(), v1::LIFECYCLE_STATE_INACTIVE) << r.message();
  EXPECT_EQ(tcp_connect("127.0.0.1", port), 0);
  EXPECT_EQ(tcp_connect("127.0.0.2", port), ECONNREFUSED);  // same host, other address
  rig.shutdown();
  EXPECT_EQ(tcp_connect("127.0.0.1", port), ECONNREFUSED);  // released
}

TEST(LoopPlane, PlainTcpIsRefusedWithoutKeysUnlessInsecure) {
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  rig.set_context(&context);
  rig.set_loop_plane({});
  v1::ConfigureRequest c = rig_request();
  c.mutable_endpoints()->set_rig_to_sensor("tcp://127.0.0.1:" + std::to_string(free_port()));
  c.mutable_endpoints()->set_actuator_to_rig("inproc://rig");
  const v1::LifecycleReply r = rig.configure(c);
  EXPECT_NE(r.state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_NE(r.message().find("endpoints.rig_to_sensor"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("--security-dir"), std::string::npos) << r.message();
  rig.shutdown();
}

// Issue 27: an endpoint libzmq refuses (a port that is not a number) is named by its field.
TEST(LoopPlane, AnEndpointLibzmqRefusesIsNamedByItsField) {
  zmq::context_t context;
  services::RigEmulatorComponent rig;
  rig.set_context(&context);
  rig.set_loop_plane({.insecure = true});
  v1::ConfigureRequest c = rig_request();
  c.mutable_endpoints()->set_rig_to_sensor("tcp://127.0.0.1:not-a-port");
  c.mutable_endpoints()->set_actuator_to_rig("inproc://rig");
  const v1::LifecycleReply r = rig.configure(c);
  EXPECT_NE(r.state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_NE(r.message().find("endpoints.rig_to_sensor = 'tcp://127.0.0.1:not-a-port': cannot "
                             "bind: "),
            std::string::npos)
      << r.message();
  rig.shutdown();
}

// The coordinator derives ipc endpoints in a private run directory of the ipc directory; the
// sockets live only there, the directory is 0700, and nothing is left after the run.
TEST(LoopPlane, IpcRunDirectoryIsPrivateAndGoneAfterTheRun) {
  const fs::path dir = temp_dir("ipcrun");
  const fs::path ipc = dir / "ipc";
  Stack stack({}, {.ipc_dir = ipc.string()}, dir);
  std::atomic<bool> done{false};
  std::set<unsigned> run_dir_modes;
  std::set<std::string> sockets;
  std::thread watch([&] {
    while (!done.load()) {
      std::error_code ec;
      for (const auto& run : fs::directory_iterator(ipc, ec)) {
        run_dir_modes.insert(mode_of(run.path()));
        for (const auto& f : fs::directory_iterator(run.path(), ec)) {
          if (is_socket_file(f.path())) sockets.insert(f.path().filename().string());
        }
      }
      std::this_thread::sleep_for(5ms);
    }
  });
  stack.start(dir / "run");
  const v1::RunStatus status = stack.wait();
  done = true;
  watch.join();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_EQ(mode_of(ipc), 0700U);
  EXPECT_EQ(run_dir_modes, std::set<unsigned>{0700U});
  EXPECT_EQ(sockets,
            (std::set<std::string>{"rig_to_sensor", "sensor_to_dynamics", "dynamics_to_actuator",
                                   "actuator_to_rig", "telemetry"}));
  EXPECT_TRUE(fs::is_empty(ipc));  // every socket and the run directory removed
  EXPECT_EQ(slurp(dir / "run" / "samples.csv"), reference_samples());
  fs::remove_all(dir);
}

// 1 000 garbage frames on the coordinator's telemetry (from a process of the same user that
// found the socket) are counted as rejected and change nothing in the recording.
TEST(LoopPlane, GarbageTelemetryIsCountedAsRejectedAndDisturbsNothing) {
  const fs::path dir = temp_dir("garbage");
  const fs::path ipc = dir / "ipc";
  Stack stack({}, {.ipc_dir = ipc.string()}, dir);
  const std::string run_id = stack.start(dir / "run");
  fs::path telemetry;
  for (int i = 0; i < 2000 && telemetry.empty(); ++i) {
    std::error_code ec;
    for (const auto& run : fs::directory_iterator(ipc, ec)) {
      if (is_socket_file(run.path() / "telemetry")) telemetry = run.path() / "telemetry";
    }
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_FALSE(telemetry.empty());
  zmq::context_t rogue_ctx;
  zmq::socket_t push(rogue_ctx, zmq::socket_type::push);
  push.set(zmq::sockopt::sndhwm, 0);
  push.connect("ipc://" + telemetry.string());
  v2::Telemetry other_run;
  other_run.mutable_header()->set_run_id(run_id + "-not");
  other_run.mutable_header()->set_sender(1);
  other_run.add_values(1.0);
  v2::Telemetry no_sender;
  no_sender.mutable_header()->set_run_id(run_id);
  no_sender.mutable_header()->set_sender(99);
  no_sender.add_values(1e300);
  const std::string kinds[] = {std::string("\xff\xfe garbage \x01", 12),
                               other_run.SerializeAsString(), no_sender.SerializeAsString(),
                               std::string()};
  constexpr int kGarbage = 1000;
  for (int i = 0; i < kGarbage; ++i) {
    const std::string& m = kinds[i % 4];
    ASSERT_TRUE(push.send(zmq::buffer(m), zmq::send_flags::none).has_value());
  }
  const v1::RunStatus status = stack.wait();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["distributed"]["rejected_messages"]["coordinator"], kGarbage);
  EXPECT_EQ(summary["distributed"]["rejected_messages_total"], kGarbage);
  EXPECT_EQ(slurp(dir / "run" / "samples.csv"), reference_samples());
  const std::string metrics = stack.coordinator().metrics()->text();
  std::uint64_t counted = 0;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("hyloop_rejected_messages_total{", 0) == 0 &&
        line.find("service=\"coordinator\"") != std::string::npos) {
      counted += static_cast<std::uint64_t>(std::stod(line.substr(line.rfind(' ') + 1)));
    }
  }
  EXPECT_EQ(counted, static_cast<std::uint64_t>(kGarbage));
  push.close();
  fs::remove_all(dir);
}

// A security directory with every service's CURVE key pair, as `hyloop certs` writes it.
fs::path make_keys(const fs::path& dir) {
  const fs::path keys = dir / "security";
  fs::create_directories(keys);
  for (const char* name :
       {"coordinator", "rig-emulator", "actuator", "dynamics", "sensor", "identification"}) {
    tp::write_curve_key_pair(keys.string(), name, tp::make_curve_key_pair());
  }
  return keys;
}

// Every loop channel on its own tcp port of 127.0.0.1.
services::CoordinatorOptions tcp_options() {
  services::CoordinatorOptions options;
  const std::vector<int> ports = free_ports(5);  // one port per endpoint, never one twice
  std::size_t next = 0;
  const auto ep = [&] { return "tcp://127.0.0.1:" + std::to_string(ports[next++]); };
  options.endpoints.set_rig_to_sensor(ep());
  options.endpoints.set_sensor_to_dynamics(ep());
  options.endpoints.set_dynamics_to_actuator(ep());
  options.endpoints.set_actuator_to_rig(ep());
  options.endpoints.set_telemetry(ep());
  return options;
}

// Identification runs put the identification service in the dynamics' slot: the actuator must
// then expect the identification's CURVE key on dynamics_to_actuator (LoopEndpoints.
// command_source), and the sensor accepts it on sensor_to_dynamics.
TEST(LoopPlane, IdentificationRunsOverCurveWithTheCommandSourcesKey) {
  const fs::path dir = temp_dir("ident");
  const fs::path keys = make_keys(dir);
  Stack stack(tcp_options(), {.ipc_dir = (dir / "ipc").string(), .security_dir = keys.string()},
              dir);
  v1::RunIdentificationRequest request;
  request.set_scenario_yaml(
      experiment::read_scenario_text((kSource / "scenarios/sits/identify.yaml").string()));
  v1::RunIdentificationReply reply;
  const grpc::Status st = stack.coordinator().run_identification(request, &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_GT(reply.model().a_size(), 0);
  fs::remove_all(dir);
}

// A rogue ZeroMQ PULL on the dynamics' command port (finding 6: it took 210 commands and made
// the run fail). With CURVE it is never a peer: it gets nothing, and the run gives the samples
// of the in-process run.
TEST(LoopPlane, RoguePullOnTheCommandPortGetsNothingAndMovesNothing) {
  const fs::path dir = temp_dir("rogue");
  const fs::path keys = make_keys(dir);
  const services::CoordinatorOptions options = tcp_options();
  const std::string commands = options.endpoints.dynamics_to_actuator();
  Stack stack(options, {.ipc_dir = (dir / "ipc").string(), .security_dir = keys.string()}, dir);
  // Connected before the run (ZeroMQ reconnects until the port is bound), one without CURVE and
  // one with the server's public key but a key pair of its own.
  zmq::context_t rogue_ctx;
  zmq::socket_t plain(rogue_ctx, zmq::socket_type::pull);
  plain.set(zmq::sockopt::reconnect_ivl, 5);
  plain.connect(commands);
  zmq::socket_t stranger(rogue_ctx, zmq::socket_type::pull);
  const auto [pub, sec] = tp::make_curve_key_pair();
  stranger.set(zmq::sockopt::curve_serverkey, tp::load_curve_public_key(keys.string(), "dynamics"));
  stranger.set(zmq::sockopt::curve_publickey, pub);
  stranger.set(zmq::sockopt::curve_secretkey, sec);
  stranger.set(zmq::sockopt::reconnect_ivl, 5);
  stranger.connect(commands);
  stack.start(dir / "run");
  std::uint64_t taken = 0;
  std::atomic<bool> done{false};
  std::thread rogue([&] {
    zmq::message_t m;
    while (!done.load()) {
      zmq::pollitem_t items[] = {{plain.handle(), 0, ZMQ_POLLIN, 0},
                                 {stranger.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, 10ms);
      if (plain.recv(m, zmq::recv_flags::dontwait)) ++taken;
      if (stranger.recv(m, zmq::recv_flags::dontwait)) ++taken;
    }
  });
  const v1::RunStatus status = stack.wait();
  done = true;
  rogue.join();
  EXPECT_EQ(taken, 0U);
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_EQ(slurp(dir / "run" / "samples.csv"), reference_samples());
  fs::remove_all(dir);
}

// Issue 27, finding 5: the actuator given another lab's dynamics key ran a real-time run to
// FINISHED with 2 999 of 3 000 commands late, x_cmd stuck at 0 and no CURVE error logged. Now its
// failed handshake fails the run, naming the channel and its endpoint, and is counted.
TEST(LoopPlane, ACurveKeyMismatchFailsTheRunNamingTheChannelAndIsCounted) {
  const fs::path dir = temp_dir("mismatch");
  const fs::path keys = make_keys(dir);
  // The actuator's security directory: the same keys, but another lab's dynamics key.
  const fs::path other = dir / "other-lab";
  fs::create_directories(other / "curve");
  fs::permissions(other / "curve", fs::perms::owner_all, fs::perm_options::replace);
  for (const auto& f : fs::directory_iterator(keys / "curve")) {
    if (f.path().stem() != "dynamics")
      fs::copy_file(f.path(), other / "curve" / f.path().filename());
  }
  tp::write_curve_key_pair(other.string(), "dynamics", tp::make_curve_key_pair());
  const services::CoordinatorOptions options = tcp_options();
  const std::string commands = options.endpoints.dynamics_to_actuator();
  Stack stack(options, {.ipc_dir = (dir / "ipc").string(), .security_dir = keys.string()}, dir);
  stack.actuator().set_loop_plane(
      {.ipc_dir = (dir / "ipc").string(), .security_dir = other.string()});
  const auto t0 = std::chrono::steady_clock::now();
  stack.start(dir / "run", v1::CLOCK_MODE_REAL_TIME);
  const v1::RunStatus status = stack.wait();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FAILED) << status.message();
  EXPECT_NE(status.message().find("CURVE handshake"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("endpoints.dynamics_to_actuator"), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find(commands), std::string::npos) << status.message();
  EXPECT_LT(seconds, 5.0) << "the 10 s run went on";
  std::cout << "CURVE mismatch: run failed after " << seconds << " s, " << status.cycle()
            << " cycles recorded: " << status.message() << "\n";
  const std::string metrics = stack.actuator().metrics().text();
  EXPECT_NE(metrics.find("hyloop_curve_handshake_failures_total{channel=\"dynamics_to_actuator\","
                         "service=\"actuator\"}"),
            std::string::npos)
      << metrics.substr(0, 2000);
  fs::remove_all(dir);
}

// Through `hyloop up` (the services as processes, default ipc directory): the run directory of
// the sockets is private while the run lasts and nothing is left behind, there or in /tmp.
TEST(LoopPlane, HyloopUpLeavesNoSocketBehind) {
  const fs::path dir = temp_dir("up");
  const fs::path runtime_dir = dir / "xdg";
  fs::create_directories(runtime_dir);
  fs::permissions(runtime_dir, fs::perms::owner_all, fs::perm_options::replace);
  const auto tmp_sockets = [] {
    std::set<std::string> s;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/tmp", ec)) {
      if (e.path().filename().string().rfind("hyloop-", 0) == 0 && is_socket_file(e.path())) {
        s.insert(e.path().string());
      }
    }
    return s;
  };
  const std::set<std::string> before = tmp_sockets();
  std::string cmd = "XDG_RUNTIME_DIR=" + runtime_dir.string() + " " + (kBin / "hyloop").string() +
                    " up " + (kSource / kScenario).string() + " --out " + (dir / "run").string();
  for (const std::string& o : kOverrides) cmd += " --set " + o;
  ASSERT_EQ(run_command(cmd + " > " + (dir / "up.log").string() + " 2>&1"), 0)
      << slurp(dir / "up.log");
  EXPECT_EQ(slurp(dir / "run" / "samples.csv"), reference_samples());
  const fs::path ipc = runtime_dir / "hyloop";
  EXPECT_EQ(mode_of(ipc), 0700U);
  EXPECT_TRUE(fs::is_empty(ipc)) << fs::directory_iterator(ipc)->path();
  std::set<std::string> left;
  for (const std::string& s : tmp_sockets()) {
    if (before.count(s) == 0) left.insert(s);
  }
  EXPECT_TRUE(left.empty()) << *left.begin();
  fs::remove_all(dir);
}

// The port of "tcp://127.0.0.1:PORT".
int port_of(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// A plain TCP listener on 127.0.0.1:port while it lives: another program holding the port.
class Squatter {
 public:
  explicit Squatter(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bound_ =
        ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 1) == 0;
  }
  ~Squatter() { ::close(fd_); }
  Squatter(const Squatter&) = delete;
  Squatter& operator=(const Squatter&) = delete;
  [[nodiscard]] bool bound() const { return bound_; }

 private:
  int fd_;
  bool bound_ = false;
};

// Issue 15, defect 1 (the three-machine lab broke itself): dynamics and identification take
// turns binding dynamics_to_actuator. A start that aborts after the dynamics was configured (here
// another program holds the sensor's port) left the dynamics bound while idle, and the next
// RunIdentification failed "Address already in use". Now an aborted start releases what it
// configured, and run → identification → run → run all go through.
TEST(LoopPlane, AnAbortedStartHoldsNoPortAndTheLabSequenceRuns) {
  const fs::path dir = temp_dir("lab");
  const fs::path keys = make_keys(dir);
  const services::CoordinatorOptions options = tcp_options();
  const int command_port = port_of(options.endpoints.dynamics_to_actuator());
  Stack stack(options, {.ipc_dir = (dir / "ipc").string(), .security_dir = keys.string()}, dir);
  {
    Squatter squatter(port_of(options.endpoints.sensor_to_dynamics()));
    ASSERT_TRUE(squatter.bound());
    stack.start(dir / "aborted");
    const v1::RunStatus status = stack.wait();
    EXPECT_EQ(status.state(), v1::RUN_STATE_FAILED);
    EXPECT_NE(status.message().find("sensor: configure failed"), std::string::npos)
        << status.message();
  }
  EXPECT_TRUE(Squatter(command_port).bound())
      << "dynamics_to_actuator is still bound after the aborted start";
  v1::RunIdentificationRequest request;
  request.set_scenario_yaml(
      experiment::read_scenario_text((kSource / "scenarios/sits/identify.yaml").string()));
  v1::RunIdentificationReply reply;
  const grpc::Status st = stack.coordinator().run_identification(request, &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(Squatter(command_port).bound()) << "bound after the identification run";
  for (const char* name : {"run_1", "run_2"}) {
    stack.start(dir / name);
    const v1::RunStatus status = stack.wait();
    EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << name << ": " << status.message();
    EXPECT_TRUE(slurp(dir / name / "samples.csv") == reference_samples()) << name;
  }
  EXPECT_TRUE(Squatter(command_port).bound()) << "bound while idle after the runs";
  fs::remove_all(dir);
}

// A service whose Configure failed (its port held by another program) holds nothing in ERROR
// and is configured again by the next start, without a restart.
TEST(LoopPlane, AFailedConfigureRecoversWithoutARestart) {
  const fs::path dir = temp_dir("recover");
  const fs::path keys = make_keys(dir);
  const services::CoordinatorOptions options = tcp_options();
  Stack stack(options, {.ipc_dir = (dir / "ipc").string(), .security_dir = keys.string()}, dir);
  {
    Squatter squatter(port_of(options.endpoints.dynamics_to_actuator()));
    ASSERT_TRUE(squatter.bound());
    stack.start(dir / "failed");
    const v1::RunStatus status = stack.wait();
    EXPECT_EQ(status.state(), v1::RUN_STATE_FAILED);
    EXPECT_NE(status.message().find("dynamics: configure failed"), std::string::npos)
        << status.message();
  }
  // Nothing of that configuration is left bound (the rig's and the actuator's ports neither).
  for (const std::string& e :
       {options.endpoints.rig_to_sensor(), options.endpoints.actuator_to_rig()}) {
    EXPECT_TRUE(Squatter(port_of(e)).bound()) << e << " still bound after the aborted start";
  }
  stack.start(dir / "again");
  const v1::RunStatus status = stack.wait();
  EXPECT_EQ(status.state(), v1::RUN_STATE_FINISHED) << status.message();
  EXPECT_TRUE(slurp(dir / "again" / "samples.csv") == reference_samples());
  fs::remove_all(dir);
}

}  // namespace
