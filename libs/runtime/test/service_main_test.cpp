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
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_component.hpp"

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
  EXPECT_EQ(run({"fake", "--log-level", "loud"}), 1);
  EXPECT_EQ(run({"fake", "--config", temp_path("missing.yaml")}), 1);
}

TEST(ServiceMain, PrintsTheAddressLineAndStopsOnShutdownRpc) {
  const std::string address = "unix:" + temp_path("main.sock");
  const std::string config = temp_path("ok.yaml");
  std::ofstream(config) << "name: fake-1\nlog_level: warn\ngrpc_address: 127.0.0.1:0\n";
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
TEST(ServiceMain, BinaryReportsItsPortAndExitsCleanlyOnSigterm) {
  std::array<int, 2> out{};
  ASSERT_EQ(::pipe(out.data()), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(HYLOOP_FAKE_SERVICE, HYLOOP_FAKE_SERVICE, "--log-level", "warn",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char ch = 0;
  while (::read(out[0], &ch, 1) == 1 && ch != '\n') line.push_back(ch);
  EXPECT_THAT(line, MatchesRegex("hyloop-fake grpc 127\\.0\\.0\\.1:[0-9]+"));
  const std::string address = line.substr(line.rfind(' ') + 1);

  auto stub =
      v1::Lifecycle::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
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
