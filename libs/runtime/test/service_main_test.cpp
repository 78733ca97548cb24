#include "hyloop/runtime/service_main.hpp"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <hyloop/v1/control.grpc.pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_component.hpp"
#include "hyloop/runtime/security.hpp"
#include "security_test_support.hpp"

namespace hyloop::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using namespace std::chrono_literals;

std::string temp_path(const std::string& tag) {
  return "/tmp/hyloop_runtime_main_test_" + std::to_string(::getpid()) + "_" + tag;
}

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run_service_main(static_cast<int>(argv.size()), argv.data(), "fake",
                          [] { return std::make_unique<testing::FakeComponent>(); });
}

// TCP sockets in LISTEN state that process `pid` holds (its fds matched against /proc/net/tcp*).
int listening_tcp_sockets(pid_t pid) {
  std::set<std::string> listening;
  for (const char* table : {"tcp", "tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/net/" + table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string f[10];
      for (auto& x : f) fields >> x;
      if (f[3] == "0A") listening.insert(f[9]);  // st == LISTEN; inode
    }
  }
  int count = 0;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0 &&
        listening.count(target.substr(8, target.size() - 9)) != 0) {
      ++count;
    }
  }
  return count;
}

v1::LifecycleReply call_shutdown(const std::string& address) {
  // The server may not be up yet: wait for it, retrying the connection every 50 ms.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 50);
  auto stub = v1::Lifecycle::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  ctx.set_wait_for_ready(true);
  v1::LifecycleReply reply;
  EXPECT_TRUE(stub->Shutdown(&ctx, v1::LifecycleRequest{}, &reply).ok());
  return reply;
}

TEST(ServiceMain, ConfigurationErrorReturnsOne) {
  const std::string path = temp_path("bad.yaml");
  std::ofstream(path) << "rt: {priority: 120}\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"fake", "--config", path}), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("rt.priority"));
  EXPECT_THAT(err, HasSubstr(path));
  std::remove(path.c_str());
  EXPECT_EQ(run({"fake", "--insecure", "--log-level", "loud"}), 1);
  EXPECT_EQ(run({"fake", "--config", temp_path("missing.yaml")}), 1);
}

TEST(ServiceMain, RefusesToStartWithoutASecurityDirOrInsecure) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"fake"}), 1);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("refusing to start without TLS and tokens"));
  EXPECT_THAT(err, HasSubstr("--security-dir DIR"));
  EXPECT_THAT(err, HasSubstr("--insecure"));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(
      run({"fake", "--insecure", "--security-dir", testing::TestSecurityDirs::get().lab.string()}),
      1);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("not both"));
  // A directory without this service's certificate.
  const std::string empty = temp_path("empty-security");
  std::filesystem::create_directory(empty);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"fake", "--security-dir", empty}), 1);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("'fake.crt'"));
  std::filesystem::remove(empty);
}

TEST(ServiceMain, PrintsTheAddressLineAndStopsOnShutdownRpc) {
  const std::string address = "unix:" + temp_path("main.sock");
  const std::string config = temp_path("ok.yaml");
  std::ofstream(config)
      << "name: fake-1\nlog_level: warn\ngrpc_address: 127.0.0.1:0\ninsecure: true\n";
  ::testing::internal::CaptureStdout();
  int rc = -1;
  std::thread service([&] { rc = run({"fake", "--config", config, "--grpc-address", address}); });
  const auto reply = call_shutdown(address);
  service.join();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(reply.state(), v1::LIFECYCLE_STATE_FINALIZED);
  EXPECT_EQ(out, "hyloop-fake grpc " + address + "\n");
  EXPECT_EQ(service_config().name, "fake-1");
  EXPECT_EQ(service_config().log_level, "warn");
  std::remove(config.c_str());
}

#if defined(HYLOOP_FAKE_SERVICE)
// The real binary: the parent reads the port from the one stdout line, SIGTERM ends it cleanly.
TEST(ServiceMain, BinaryReportsItsPortServesTlsOnOneListenerAndExitsCleanlyOnSigterm) {
  const std::string lab = testing::TestSecurityDirs::get().lab.string();
  std::array<int, 2> out{};
  ASSERT_EQ(::pipe(out.data()), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(HYLOOP_FAKE_SERVICE, HYLOOP_FAKE_SERVICE, "--log-level", "warn", "--security-dir",
            lab.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char ch = 0;
  while (::read(out[0], &ch, 1) == 1 && ch != '\n') line.push_back(ch);
  EXPECT_THAT(line, MatchesRegex("hyloop-fake grpc 127\\.0\\.0\\.1:[0-9]+"));
  const std::string address = line.substr(line.rfind(' ') + 1);

  EXPECT_EQ(listening_tcp_sockets(pid), 1);
  auto stub = v1::Lifecycle::NewStub(grpc::CreateChannel(
      address, channel_credentials(load_client_security(lab, Role::kObserver))));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::LifecycleReply reply;
  EXPECT_TRUE(stub->GetState(&ctx, v1::LifecycleRequest{}, &reply).ok());
  EXPECT_EQ(reply.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(reply.service(), "fake");

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  const auto until = std::chrono::steady_clock::now() + 10s;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "the service did not exit on SIGTERM";
  }
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ::close(out[0]);
}
#endif

}  // namespace
}  // namespace hyloop::runtime
