// The control plane of the real service binaries (issue 10, finding 2): each refuses to start
// without a security directory or --insecure; with one it serves TLS on exactly one listener,
// every RPC of control.proto without a token is UNAUTHENTICATED, a wrong role is
// PERMISSION_DENIED, a plaintext client is refused, reflection is off.
#include <fcntl.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <hyloop/v1/control.grpc.pb.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/runtime/security.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace hyloop;
using namespace std::chrono_literals;

const fs::path kBin = HYLOOP_BIN_DIR;

// The coordinator needs its services' addresses; nothing is dialled until a run.
const std::vector<std::string> kCoordinatorArgs{
    "--services",
    "rig-emulator=127.0.0.1:9,actuator=127.0.0.1:9,dynamics=127.0.0.1:9,sensor=127.0.0.1:9"};

class SecurityDir {
 public:
  SecurityDir() {
    char pattern[] = "/tmp/hyloop_cp_security_XXXXXX";
    root_ = ::mkdtemp(pattern);
    runtime::CertsOptions o;
    o.out = root_ / "lab";
    runtime::create_security_dir(o);
  }
  ~SecurityDir() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  SecurityDir(const SecurityDir&) = delete;
  SecurityDir& operator=(const SecurityDir&) = delete;
  [[nodiscard]] fs::path dir() const { return root_ / "lab"; }

 private:
  fs::path root_;
};

struct Process {
  pid_t pid = -1;
  std::string address;  // from the "hyloop-<name> grpc ADDRESS" line; empty if it never came
  std::string output;   // stdout and stderr up to that line (or to the exit)

  ~Process() { stop(); }
  int stop() {
    if (pid <= 0) return -1;
    ::kill(pid, SIGTERM);
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  int exit_code = -1;  // when it exited before serving
};

std::unique_ptr<Process> spawn(const std::string& name, std::vector<std::string> extra) {
  const std::string exe = (kBin / ("hyloop-" + name)).string();
  std::vector<std::string> args{exe, "--grpc-address", "127.0.0.1:0", "--log-level", "warn"};
  if (name == "coordinator")
    args.insert(args.end(), kCoordinatorArgs.begin(), kCoordinatorArgs.end());
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // stderr to a file: the pipe is closed after the address line, and a later log line would
  // meet SIGPIPE.
  const std::string err_path =
      "/tmp/hyloop_cp_security_" + std::to_string(::getpid()) + "_" + name + ".stderr";
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  auto p = std::make_unique<Process>();
  EXPECT_EQ(posix_spawn(&p->pid, exe.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  FILE* f = ::fdopen(fds[0], "r");
  char line[4096];
  const std::string prefix = "hyloop-" + name + " grpc ";
  while (std::fgets(line, sizeof line, f) != nullptr) {
    const std::string s(line);
    p->output += s;
    if (s.rfind(prefix, 0) == 0) {
      p->address = s.substr(prefix.size(), s.size() - prefix.size() - 1);
      break;
    }
  }
  std::fclose(f);
  if (p->address.empty()) {
    int status = 0;
    ::waitpid(p->pid, &status, 0);
    p->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    p->pid = -1;
  }
  std::ifstream err(err_path);
  p->output += std::string(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  std::remove(err_path.c_str());
  return p;
}

// TCP sockets in LISTEN state that process `pid` holds.
int listening_tcp_sockets(pid_t pid) {
  std::set<std::string> listening;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/net/" + table);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string f[10];
      for (auto& x : f) fields >> x;
      if (f[3] == "0A") listening.insert(f[9]);
    }
  }
  int count = 0;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0 &&
        listening.count(target.substr(8, target.size() - 9)) != 0) {
      ++count;
    }
  }
  return count;
}

std::vector<std::string> control_proto_methods() {
  std::vector<std::string> methods;
  const auto* file = v1::LifecycleReply::descriptor()->file();
  for (int s = 0; s < file->service_count(); ++s) {
    for (int m = 0; m < file->service(s)->method_count(); ++m) {
      methods.push_back("/" + file->service(s)->full_name() + "/" +
                        file->service(s)->method(m)->name());
    }
  }
  return methods;
}

grpc::Status call(const std::shared_ptr<grpc::Channel>& channel, const std::string& method) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  grpc::CompletionQueue cq;
  grpc::Slice empty("");
  const grpc::ByteBuffer request(&empty, 1);
  auto rpc = stub.PrepareUnaryCall(&ctx, method, request, &cq);
  rpc->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  rpc->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

std::shared_ptr<grpc::Channel> channel(const std::string& address,
                                       const runtime::ClientSecurity& security) {
  return grpc::CreateChannel(address, runtime::channel_credentials(security));
}

TEST(ServiceBinaries, RefuseToStartWithoutASecurityDirectoryOrInsecure) {
  for (const std::string_view n : runtime::kSecurityNames) {
    const std::string name(n);
    auto p = spawn(name, {});
    EXPECT_TRUE(p->address.empty()) << name << " started without TLS: " << p->address;
    if (!p->address.empty()) continue;
    EXPECT_EQ(p->exit_code, 1) << name;
    EXPECT_NE(p->output.find("refusing to start without TLS and tokens"), std::string::npos)
        << name << ": " << p->output;
  }
}

TEST(ServiceBinaries, ServeTlsOnOneListenerAndCheckATokenOnEveryRpc) {
  const SecurityDir lab;
  const SecurityDir other;
  const auto observer = runtime::load_client_security(lab.dir(), runtime::Role::kObserver);
  const auto op = runtime::load_client_security(lab.dir(), runtime::Role::kOperator);
  runtime::ClientSecurity no_token = op;
  no_token.token.clear();
  runtime::ClientSecurity other_ca = op;
  other_ca.ca_pem = runtime::load_client_security(other.dir(), runtime::Role::kOperator).ca_pem;
  const auto methods = control_proto_methods();
  for (const std::string_view n : runtime::kSecurityNames) {
    const std::string name(n);
    auto p = spawn(name, {"--security-dir", lab.dir().string()});
    ASSERT_FALSE(p->address.empty()) << name << ": " << p->output;
    EXPECT_EQ(listening_tcp_sockets(p->pid), 1) << name;

    const auto anonymous = channel(p->address, no_token);
    for (const std::string& m : methods) {
      const grpc::Status s = call(anonymous, m);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << name << " " << m << ": " << s.error_message();
    }
    EXPECT_TRUE(call(channel(p->address, observer), "/hyloop.v1.Lifecycle/GetState").ok()) << name;
    const grpc::Status deactivate =
        call(channel(p->address, op), "/hyloop.v1.Lifecycle/Deactivate");
    EXPECT_EQ(deactivate.error_code(), grpc::StatusCode::PERMISSION_DENIED) << name;
    EXPECT_EQ(deactivate.error_message(),
              "Lifecycle.Deactivate needs the coordinator role; this token is the operator's");
    const grpc::Status plaintext =
        call(grpc::CreateChannel(p->address, grpc::InsecureChannelCredentials()),
             "/hyloop.v1.Lifecycle/EmergencyStop");
    EXPECT_EQ(plaintext.error_code(), grpc::StatusCode::UNAVAILABLE) << name;
    EXPECT_EQ(call(channel(p->address, other_ca), "/hyloop.v1.Lifecycle/GetState").error_code(),
              grpc::StatusCode::UNAVAILABLE)
        << name;
    EXPECT_EQ(call(channel(p->address, op),
                   "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
                  .error_code(),
              grpc::StatusCode::UNIMPLEMENTED)
        << name << ": reflection must be off by default";
    EXPECT_EQ(p->stop(), 0) << name;
  }
}

TEST(ServiceBinaries, ReflectionOnlyWithTheFlag) {
  const SecurityDir lab;
  auto p = spawn("actuator", {"--security-dir", lab.dir().string(), "--reflection"});
  ASSERT_FALSE(p->address.empty()) << p->output;
  const auto op = runtime::load_client_security(lab.dir(), runtime::Role::kOperator);
  // A reflection stream answers only after a request: a unary call with no message gets
  // another code than UNIMPLEMENTED once the service is there.
  const grpc::Status s = call(channel(p->address, op),
                              "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
  EXPECT_NE(s.error_code(), grpc::StatusCode::UNIMPLEMENTED) << s.error_message();
  EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
}

}  // namespace
