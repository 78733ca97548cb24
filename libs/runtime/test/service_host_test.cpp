#include "hyloop/runtime/service_host.hpp"

#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <hyloop/v1/control.grpc.pb.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "fake_component.hpp"
#include "hyloop/runtime/guard_rpc.hpp"

#if defined(HYLOOP_HAVE_HEALTH_PROTO)
#include <grpc/health/v1/health.grpc.pb.h>
#endif

namespace hyloop::runtime {
namespace {

using testing::FakeComponent;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::shared_ptr<grpc::Channel> channel_to(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

std::unique_ptr<grpc::ClientContext> ctx() {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + 5s);
  return c;
}

class Client {
 public:
  explicit Client(const std::string& address)
      : channel_(channel_to(address)), stub_(v1::Lifecycle::NewStub(channel_)) {}

  v1::LifecycleReply configure(const std::string& run_id) {
    v1::ConfigureRequest req;
    req.set_run_id(run_id);
    v1::LifecycleReply reply;
    check(stub_->Configure(ctx().get(), req, &reply));
    return reply;
  }
  template <typename Method>
  v1::LifecycleReply call(Method method) {
    v1::LifecycleRequest req;
    v1::LifecycleReply reply;
    check(((*stub_).*method)(ctx().get(), req, &reply));
    return reply;
  }
  v1::LifecycleReply emergency_stop(const std::string& reason) {
    v1::EmergencyStopRequest req;
    req.set_reason(reason);
    v1::LifecycleReply reply;
    check(stub_->EmergencyStop(ctx().get(), req, &reply));
    return reply;
  }
#if defined(HYLOOP_HAVE_HEALTH_PROTO)
  // The status the standard health service reports for `service` ("" = the server).
  grpc::health::v1::HealthCheckResponse::ServingStatus health(const std::string& service) {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    check(health->Check(ctx().get(), req, &resp));
    return resp.status();
  }
#endif
  // Raw grpc.reflection.v1alpha ServerReflectionInfo: list_services (field 7, empty string).
  std::string reflection_list_services() {
    grpc::GenericStub stub(channel_);
    grpc::CompletionQueue cq;
    auto context = ctx();
    auto call = stub.PrepareCall(
        context.get(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
    void* tag = nullptr;
    bool ok = false;
    auto step = [&](int id) {
      EXPECT_TRUE(cq.Next(&tag, &ok));
      EXPECT_EQ(tag, reinterpret_cast<void*>(static_cast<std::intptr_t>(id)));
      return ok;
    };
    auto t = [](int id) { return reinterpret_cast<void*>(static_cast<std::intptr_t>(id)); };
    call->StartCall(t(1));
    step(1);
    const std::string request_bytes("\x3a\x00", 2);
    grpc::Slice slice(request_bytes);
    grpc::ByteBuffer request(&slice, 1);
    call->Write(request, t(2));
    step(2);
    call->WritesDone(t(3));
    step(3);
    grpc::ByteBuffer response;
    call->Read(&response, t(4));
    std::string out;
    if (step(4)) {
      std::vector<grpc::Slice> slices;
      EXPECT_TRUE(response.Dump(&slices).ok());
      for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    // Drain to the end of the stream, then finish.
    grpc::ByteBuffer rest;
    call->Read(&rest, t(5));
    step(5);
    grpc::Status status;
    call->Finish(&status, t(6));
    step(6);
    EXPECT_TRUE(status.ok()) << status.error_message();
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return out;
  }

 private:
  static void check(const grpc::Status& s) {
    ASSERT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Lifecycle::Stub> stub_;
};

using S = v1::Lifecycle::Stub;

TEST(ServiceHost, DrivesTheLifecycleOverGrpc) {
  FakeComponent component("sensor");
  ServiceHost host(component);
  host.set_insecure();
  host.start("127.0.0.1:0");
  ASSERT_GT(host.port(), 0);
  EXPECT_EQ(host.address(), "127.0.0.1:" + std::to_string(host.port()));

  Client client(host.address());
  auto r = client.call(&S::GetState);
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  EXPECT_EQ(r.service(), "sensor");
  EXPECT_EQ(client.configure("run-7").state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_EQ(component.last_run_id, "run-7");
  EXPECT_EQ(client.call(&S::Activate).state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(client.emergency_stop("door open").state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(component.estops, 1);
  EXPECT_EQ(client.call(&S::Deactivate).state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_TRUE(host.health_serving());

  // Shutdown: the reply comes back, then the server stops; wait() returns.
  EXPECT_EQ(client.call(&S::Shutdown).state(), v1::LIFECYCLE_STATE_FINALIZED);
  EXPECT_EQ(component.shutdowns, 1);
  EXPECT_TRUE(host.shutdown_requested());
  host.wait();
  EXPECT_FALSE(host.health_serving());
  EXPECT_EQ(component.configures, 1);
  EXPECT_EQ(component.activates, 1);
  EXPECT_EQ(component.deactivates, 1);
}

TEST(ServiceHost, IllegalTransitionIsAnOkRpcWithTheReason) {
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  host.start("127.0.0.1:0");
  Client client(host.address());
  client.configure("r");
  client.call(&S::Activate);
  auto r = client.call(&S::Activate);
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(r.message(), "activate: not allowed in state ACTIVE (allowed from INACTIVE)");
  EXPECT_EQ(component.activates, 1);
}

TEST(ServiceHost, FailedConfigureIsErrorAndNotServing) {
  FakeComponent component;
  component.throw_on_configure = true;
  ServiceHost host(component);
  host.set_insecure();
  host.start("127.0.0.1:0");
  Client client(host.address());
#if defined(HYLOOP_HAVE_HEALTH_PROTO)
  using H = grpc::health::v1::HealthCheckResponse;
  EXPECT_EQ(client.health(""), H::SERVING);
  EXPECT_EQ(client.health("hyloop.v1.Lifecycle"), H::SERVING);
#endif
  auto r = client.configure("r");
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(r.message(), component.configure_error);
  EXPECT_FALSE(host.health_serving());
#if defined(HYLOOP_HAVE_HEALTH_PROTO)
  EXPECT_EQ(client.health(""), H::NOT_SERVING);
  EXPECT_EQ(client.health("hyloop.v1.Lifecycle"), H::NOT_SERVING);
#endif
  // Configure again recovers.
  component.throw_on_configure = false;
  EXPECT_EQ(client.configure("r").state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_TRUE(host.health_serving());
#if defined(HYLOOP_HAVE_HEALTH_PROTO)
  EXPECT_EQ(client.health("hyloop.v1.Lifecycle"), H::SERVING);
#endif
}

TEST(ServiceHost, LoopFailureTurnsHealthNotServing) {
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  host.start("127.0.0.1:0");
  Client client(host.address());
  client.configure("r");
  client.call(&S::Activate);
  std::thread([&] { component.fail_now("actuator watchdog"); }).join();
  // No RPC: the host's monitor notices within its period.
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (host.health_serving() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(host.health_serving());
  auto r = client.call(&S::GetState);
  EXPECT_EQ(r.state(), v1::LIFECYCLE_STATE_ERROR);
  EXPECT_EQ(r.message(), "actuator watchdog");
}

TEST(ServiceHost, ReflectionListsLifecycleAndAddedServicesWhenEnabled) {
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  host.set_reflection(true);
  host.add_service(std::make_unique<v1::Analysis::Service>());
  host.start("127.0.0.1:0");
  EXPECT_THROW(host.add_service(std::make_unique<v1::Identification::Service>()), std::logic_error);
  Client client(host.address());
  const std::string listing = client.reflection_list_services();
  EXPECT_THAT(listing, HasSubstr("hyloop.v1.Lifecycle"));
  EXPECT_THAT(listing, HasSubstr("hyloop.v1.Analysis"));
  EXPECT_THAT(listing, HasSubstr("grpc.health.v1.Health"));
}

TEST(ServiceHost, ReflectionIsOffByDefault) {
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  host.start("127.0.0.1:0");
  grpc::GenericStub stub(channel_to(host.address()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  call->WritesDone(reinterpret_cast<void*>(2));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(3));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << status.error_message();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

TEST(ServiceHost, RefusesToStartWithoutASecurityChoice) {
  FakeComponent component;
  ServiceHost host(component);
  EXPECT_THROW(host.start("127.0.0.1:0"), std::logic_error);
}

TEST(ServiceHost, ServesOnAUnixSocket) {
  const std::string address =
      "unix:/tmp/hyloop_runtime_test_" + std::to_string(::getpid()) + ".sock";
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  host.start(address);
  EXPECT_EQ(host.address(), address);
  EXPECT_EQ(host.port(), 0);
  Client client(host.address());
  EXPECT_EQ(client.call(&S::GetState).state(), v1::LIFECYCLE_STATE_UNCONFIGURED);
  host.shutdown();
  host.wait();
}

TEST(ServiceHost, UnusableAddressThrows) {
  FakeComponent component;
  ServiceHost host(component);
  host.set_insecure();
  EXPECT_THROW(host.start("unix:/nonexistent_dir_hyloop/x.sock"), std::runtime_error);
  host.wait();  // never started: returns at once
}

TEST(ServiceHost, DestructorStopsARunningServer) {
  FakeComponent component;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ServiceHost host(component);
    host.set_insecure();
    host.start("127.0.0.1:0");
    Client client(host.address());
    client.call(&S::GetState);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace hyloop::runtime

namespace {

TEST(GuardRpc, AnExceptionBecomesInternalNamingTheRpcAndTheReason) {
  const grpc::Status thrown = hyloop::runtime::guard_rpc(
      "LoadScenario", []() -> grpc::Status { throw std::runtime_error("bad field x"); });
  EXPECT_EQ(thrown.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(thrown.error_message(), "LoadScenario: bad field x");
  const grpc::Status ok = hyloop::runtime::guard_rpc(
      "Start", [] { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "out_dir"); });
  EXPECT_EQ(ok.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ok.error_message(), "out_dir");
}

}  // namespace
