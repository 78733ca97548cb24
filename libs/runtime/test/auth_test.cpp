// The role table and its check on a TLS ServiceHost: every RPC of control.proto (enumerated from
// the descriptors, so a new RPC cannot be forgotten) without a token, with an unknown token and
// with each role's token; TLS refusals (plaintext client, client trusting another CA).
#include "hyloop/runtime/auth.hpp"

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <hyloop/v1/control.grpc.pb.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "fake_component.hpp"
#include "hyloop/runtime/service_host.hpp"
#include "security_test_support.hpp"

#if defined(HYLOOP_HAVE_HEALTH_PROTO)
#include <grpc/health/v1/health.grpc.pb.h>
#endif

namespace hyloop::runtime {
namespace {

using testing::FakeComponent;
using ::testing::HasSubstr;
using testing::TestSecurityDirs;
using namespace std::chrono_literals;

// "/hyloop.v1.Experiment/Start", ... for every method of every service in control.proto.
std::vector<std::string> control_proto_methods() {
  std::vector<std::string> methods;
  const google::protobuf::FileDescriptor* file = v1::LifecycleReply::descriptor()->file();
  for (int s = 0; s < file->service_count(); ++s) {
    const google::protobuf::ServiceDescriptor* service = file->service(s);
    for (int m = 0; m < service->method_count(); ++m) {
      methods.push_back("/" + service->full_name() + "/" + service->method(m)->name());
    }
  }
  return methods;
}

RoleTokens fixed_tokens() {
  return {std::string(64, 'a'), std::string(64, 'b'), std::string(64, 'c')};
}

TEST(RoleTable, CoversEveryRpcOfControlProto) {
  const auto methods = control_proto_methods();
  ASSERT_GE(methods.size(), 20U);
  for (const std::string& m : methods) {
    const auto roles = rpc_roles(m);
    ASSERT_TRUE(roles.has_value()) << m << " is missing from the role table";
    EXPECT_EQ(*roles & kPublicRpc, 0U) << m << " must need a token";
    EXPECT_NE(*roles & kEveryRole, 0U) << m << " is allowed to no role";
  }
  EXPECT_EQ(rpc_roles("/grpc.health.v1.Health/Check"), kPublicRpc);
  EXPECT_FALSE(rpc_roles("/hyloop.v1.Experiment/Nonexistent").has_value());
  // And no rule for an RPC that does not exist (a misspelt rule would leave the real one
  // refused to everyone).
  for (const RpcRule& rule : rpc_rules()) {
    if (rule.method.rfind("/hyloop.", 0) != 0) continue;
    EXPECT_NE(std::find(methods.begin(), methods.end(), rule.method), methods.end())
        << rule.method << " is in the role table but not in control.proto";
  }
}

TEST(RoleTable, GivesEachRoleWhatTheContractSays) {
  auto allowed = [](const char* m, Role r) { return (*rpc_roles(m) & role_bit(r)) != 0; };
  for (const Role r : kRoles) {
    EXPECT_TRUE(allowed("/hyloop.v1.Experiment/EmergencyStop", r));
    EXPECT_TRUE(allowed("/hyloop.v1.Lifecycle/EmergencyStop", r));
    EXPECT_TRUE(allowed("/hyloop.v1.Lifecycle/GetState", r));
  }
  for (const char* m : {"/hyloop.v1.Experiment/LoadScenario", "/hyloop.v1.Experiment/Start",
                        "/hyloop.v1.Experiment/Stop", "/hyloop.v1.Experiment/Reset",
                        "/hyloop.v1.Identification/RunIdentification"}) {
    EXPECT_TRUE(allowed(m, Role::kOperator)) << m;
    EXPECT_FALSE(allowed(m, Role::kObserver)) << m;
    EXPECT_FALSE(allowed(m, Role::kCoordinator)) << m;
  }
  for (const char* m : {"/hyloop.v1.Lifecycle/Configure", "/hyloop.v1.Lifecycle/Activate",
                        "/hyloop.v1.Lifecycle/Deactivate", "/hyloop.v1.Lifecycle/Shutdown"}) {
    EXPECT_TRUE(allowed(m, Role::kCoordinator)) << m;
    EXPECT_FALSE(allowed(m, Role::kOperator)) << m;
    EXPECT_FALSE(allowed(m, Role::kObserver)) << m;
  }
  for (const char* m :
       {"/hyloop.v1.Experiment/GetStatus", "/hyloop.v1.Experiment/ListRuns",
        "/hyloop.v1.Experiment/StreamTelemetry", "/hyloop.v1.Experiment/GetRunSummary",
        "/hyloop.v1.Analysis/Routh", "/hyloop.v1.Identification/GetModel"}) {
    EXPECT_TRUE(allowed(m, Role::kObserver)) << m;
    EXPECT_TRUE(allowed(m, Role::kOperator)) << m;
  }
}

TEST(AuthorizeCall, NamesTheRpcAndTheRoleItNeeds) {
  const RoleTokens tokens = fixed_tokens();
  const std::string observer = "Bearer " + tokens[0];
  const std::string op = "Bearer " + tokens[1];
  const std::string coordinator = "Bearer " + tokens[2];
  auto check = [&](const char* method, std::optional<std::string_view> auth, grpc::StatusCode code,
                   const std::string& message) {
    const grpc::Status s = authorize_call(method, auth, tokens);
    EXPECT_EQ(s.error_code(), code) << method << ": " << s.error_message();
    EXPECT_EQ(s.error_message(), message);
  };
  check("/hyloop.v1.Experiment/Start", op, grpc::StatusCode::OK, "");
  check("/hyloop.v1.Experiment/Start", std::nullopt, grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Start: no token (metadata 'authorization: Bearer <token>'); it needs the "
        "operator role");
  check("/hyloop.v1.Experiment/Start", "Bearer " + std::string(64, 'd'),
        grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Start: unknown token; it needs the operator role");
  check("/hyloop.v1.Experiment/Start", tokens[1], grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Start: the authorization metadata is not 'Bearer <token>'; it needs the "
        "operator role");
  check("/hyloop.v1.Experiment/Start", observer, grpc::StatusCode::PERMISSION_DENIED,
        "Experiment.Start needs the operator role; this token is the observer's");
  check("/hyloop.v1.Lifecycle/Deactivate", op, grpc::StatusCode::PERMISSION_DENIED,
        "Lifecycle.Deactivate needs the coordinator role; this token is the operator's");
  check("/hyloop.v1.Lifecycle/Deactivate", coordinator, grpc::StatusCode::OK, "");
  check("/hyloop.v1.Experiment/Nonexistent", op, grpc::StatusCode::PERMISSION_DENIED,
        "Experiment.Nonexistent is not in the role table: denied to every role");
  check("/hyloop.v1.Experiment/Nonexistent", std::nullopt, grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Nonexistent: no token (metadata 'authorization: Bearer <token>')");
  check("/grpc.health.v1.Health/Check", std::nullopt, grpc::StatusCode::OK, "");
  // A prefix or an extension of a token is not the token.
  check("/hyloop.v1.Experiment/Start", "Bearer " + tokens[1].substr(0, 63),
        grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Start: unknown token; it needs the operator role");
  check("/hyloop.v1.Experiment/Start", "Bearer " + tokens[1] + "0",
        grpc::StatusCode::UNAUTHENTICATED,
        "Experiment.Start: unknown token; it needs the operator role");
}

TEST(AuthorizeCall, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

// --- over TLS -------------------------------------------------------------------------------

// A TLS ServiceHost with FakeComponent's Lifecycle and the unimplemented Experiment,
// Identification and Analysis services: a call that passes the check gets the handler's
// answer (UNIMPLEMENTED for those three), one that does not gets the check's.
class TlsHost : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.set_security(load_server_security(TestSecurityDirs::get().lab, "fake"));
    host_.add_service(std::make_unique<v1::Experiment::Service>());
    host_.add_service(std::make_unique<v1::Identification::Service>());
    host_.add_service(std::make_unique<v1::Analysis::Service>());
    host_.start("127.0.0.1:0");
  }

  static std::shared_ptr<grpc::Channel> channel(const ClientSecurity& security,
                                                const std::string& address) {
    return grpc::CreateChannel(address, channel_credentials(security));
  }
  std::shared_ptr<grpc::Channel> channel(const ClientSecurity& security) const {
    return channel(security, host_.address());
  }
  std::shared_ptr<grpc::Channel> channel_as(Role role) const {
    return channel(load_client_security(TestSecurityDirs::get().lab, role));
  }
  std::shared_ptr<grpc::Channel> channel_without_token() const {
    ClientSecurity s = load_client_security(TestSecurityDirs::get().lab, Role::kOperator);
    s.token.clear();
    return channel(s);
  }

  // One unary call of `method` with an empty request message.
  static grpc::Status call(const std::shared_ptr<grpc::Channel>& ch, const std::string& method) {
    grpc::GenericStub stub(ch);
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

  FakeComponent component_;
  ServiceHost host_{component_};
};

TEST_F(TlsHost, EveryRpcWithoutATokenOrWithAnUnknownOneIsUnauthenticated) {
  const auto no_token = channel_without_token();
  ClientSecurity foreign = load_client_security(TestSecurityDirs::get().lab, Role::kOperator);
  foreign.token = load_client_security(TestSecurityDirs::get().other, Role::kOperator).token;
  const auto unknown_token = channel(foreign);
  for (const std::string& m : control_proto_methods()) {
    const grpc::Status a = call(no_token, m);
    EXPECT_EQ(a.error_code(), grpc::StatusCode::UNAUTHENTICATED) << m << ": " << a.error_message();
    EXPECT_THAT(a.error_message(), HasSubstr("no token")) << m;
    const grpc::Status b = call(unknown_token, m);
    EXPECT_EQ(b.error_code(), grpc::StatusCode::UNAUTHENTICATED) << m << ": " << b.error_message();
    EXPECT_THAT(b.error_message(), HasSubstr("unknown token")) << m;
  }
  EXPECT_EQ(component_.configures + component_.activates + component_.deactivates +
                component_.shutdowns + component_.estops,
            0);
}

TEST_F(TlsHost, EachRoleGetsExactlyTheRpcsTheTableGivesIt) {
  for (const Role role : kRoles) {
    const auto ch = channel_as(role);
    for (const std::string& m : control_proto_methods()) {
      if (m == "/hyloop.v1.Lifecycle/Shutdown") continue;  // would end the host: below
      const grpc::Status s = call(ch, m);
      const bool allowed = (*rpc_roles(m) & role_bit(role)) != 0;
      if (allowed) {
        EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << m << " " << to_string(role);
        EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << m << " " << to_string(role) << ": " << s.error_message();
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << m << " " << to_string(role) << ": " << s.error_message();
        EXPECT_THAT(s.error_message(), HasSubstr(std::string(to_string(role)) + "'s"));
      }
    }
  }
  // Every role's e-stop reached the component.
  EXPECT_EQ(component_.estops, 3);
  for (const Role role : {Role::kObserver, Role::kOperator}) {
    EXPECT_EQ(call(channel_as(role), "/hyloop.v1.Lifecycle/Shutdown").error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_FALSE(host_.shutdown_requested());
  EXPECT_TRUE(call(channel_as(Role::kCoordinator), "/hyloop.v1.Lifecycle/Shutdown").ok());
  EXPECT_TRUE(host_.shutdown_requested());
}

// Issue 10, finding 2: Lifecycle.Deactivate of the actuator from anyone but its coordinator.
TEST_F(TlsHost, OnlyTheCoordinatorTokenDrivesTheLifecycle) {
  auto coordinator = v1::Lifecycle::NewStub(channel_as(Role::kCoordinator));
  grpc::ClientContext c1;
  v1::ConfigureRequest configure;
  v1::LifecycleReply reply;
  ASSERT_TRUE(coordinator->Configure(&c1, configure, &reply).ok());
  grpc::ClientContext c2;
  ASSERT_TRUE(coordinator->Activate(&c2, v1::LifecycleRequest{}, &reply).ok());
  ASSERT_EQ(component_.state(), v1::LIFECYCLE_STATE_ACTIVE);

  for (const auto& ch :
       {channel_as(Role::kOperator), channel_as(Role::kObserver), channel_without_token()}) {
    auto attacker = v1::Lifecycle::NewStub(ch);
    grpc::ClientContext ctx;
    const grpc::Status s = attacker->Deactivate(&ctx, v1::LifecycleRequest{}, &reply);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.error_message(), HasSubstr("Lifecycle.Deactivate"));
  }
  EXPECT_EQ(component_.deactivates, 0);
  EXPECT_EQ(component_.state(), v1::LIFECYCLE_STATE_ACTIVE);

  auto op = v1::Lifecycle::NewStub(channel_as(Role::kOperator));
  grpc::ClientContext c3;
  const grpc::Status denied = op->Deactivate(&c3, v1::LifecycleRequest{}, &reply);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(denied.error_message(),
            "Lifecycle.Deactivate needs the coordinator role; this token is the operator's");
}

TEST_F(TlsHost, AnyRoleMayEmergencyStop) {
  for (const Role role : kRoles) {
    auto stub = v1::Lifecycle::NewStub(channel_as(role));
    grpc::ClientContext ctx;
    v1::EmergencyStopRequest request;
    request.set_reason(std::string(to_string(role)) + " pressed the button");
    v1::LifecycleReply reply;
    const grpc::Status s = stub->EmergencyStop(&ctx, request, &reply);
    EXPECT_TRUE(s.ok()) << to_string(role) << ": " << s.error_message();
  }
  EXPECT_EQ(component_.estops, 3);
}

TEST_F(TlsHost, APlaintextClientIsRefused) {
  auto stub = v1::Lifecycle::NewStub(
      grpc::CreateChannel(host_.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::EmergencyStopRequest request;
  v1::LifecycleReply reply;
  const grpc::Status s = stub->EmergencyStop(&ctx, request, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(component_.estops, 0);
}

TEST_F(TlsHost, AClientTrustingAnotherCaIsRefused) {
  // The other lab's CA with this lab's (valid) token: the TLS handshake fails, the token never
  // leaves the client.
  ClientSecurity s = load_client_security(TestSecurityDirs::get().other, Role::kCoordinator);
  s.token = load_client_security(TestSecurityDirs::get().lab, Role::kCoordinator).token;
  auto stub = v1::Lifecycle::NewStub(channel(s));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::LifecycleReply reply;
  const grpc::Status status = stub->Configure(&ctx, v1::ConfigureRequest{}, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(component_.configures, 0);
}

TEST_F(TlsHost, AServerWhoseNameIsNotInItsCertificateIsRefused) {
  // "localhost" is in every certificate; "127.0.0.2" is not (a DNS/IP SAN mismatch).
  const std::string other_ip = "127.0.0.2:" + std::to_string(host_.port());
  auto stub = v1::Lifecycle::NewStub(
      channel(load_client_security(TestSecurityDirs::get().lab, Role::kObserver), other_ip));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::LifecycleReply reply;
  const grpc::Status s = stub->GetState(&ctx, v1::LifecycleRequest{}, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

#if defined(HYLOOP_HAVE_HEALTH_PROTO)
TEST_F(TlsHost, HealthNeedsNoToken) {
  auto health = grpc::health::v1::Health::NewStub(channel_without_token());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status s = health->Check(&ctx, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}
#endif

TEST_F(TlsHost, ReflectionIsOff) {
  const grpc::Status s = call(channel_as(Role::kOperator),
                              "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED) << s.error_message();
}

}  // namespace
}  // namespace hyloop::runtime
