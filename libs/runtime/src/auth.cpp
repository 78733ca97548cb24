#include "hyloop/runtime/auth.hpp"

#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/support/status.h>
#include <openssl/crypto.h>

#include <utility>

#include "hyloop/runtime/logging.hpp"

namespace hyloop::runtime {
namespace {

constexpr unsigned kReaders = kObserverRole | kOperatorRole;
constexpr unsigned kAllRoles = kEveryRole;

// Every RPC of control.proto, the health service and reflection. A new RPC is refused until it
// is added here (runtime_test checks the table against the proto descriptors).
constexpr std::array<RpcRule, 29> kRules{{
    {"/grpc.health.v1.Health/Check", kPublicRpc},
    {"/grpc.health.v1.Health/Watch", kPublicRpc},
    // Only served with --reflection.
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", kReaders},

    {"/hyloop.v1.Lifecycle/Configure", kCoordinatorRole},
    {"/hyloop.v1.Lifecycle/Activate", kCoordinatorRole},
    {"/hyloop.v1.Lifecycle/Deactivate", kCoordinatorRole},
    {"/hyloop.v1.Lifecycle/Shutdown", kCoordinatorRole},
    {"/hyloop.v1.Lifecycle/Cleanup", kCoordinatorRole},
    {"/hyloop.v1.Lifecycle/GetState", kAllRoles},
    {"/hyloop.v1.Lifecycle/EmergencyStop", kAllRoles},

    {"/hyloop.v1.Experiment/LoadScenario", kOperatorRole},
    {"/hyloop.v1.Experiment/Start", kOperatorRole},
    {"/hyloop.v1.Experiment/Stop", kOperatorRole},
    {"/hyloop.v1.Experiment/Reset", kOperatorRole},
    {"/hyloop.v1.Experiment/EmergencyStop", kAllRoles},
    {"/hyloop.v1.Experiment/GetStatus", kReaders},
    {"/hyloop.v1.Experiment/StreamTelemetry", kReaders},
    {"/hyloop.v1.Experiment/ListRuns", kReaders},
    {"/hyloop.v1.Experiment/GetRunSummary", kReaders},

    {"/hyloop.v1.Identification/RunIdentification", kOperatorRole},
    {"/hyloop.v1.Identification/FitArx", kOperatorRole},
    {"/hyloop.v1.Identification/GetModel", kReaders},
    {"/hyloop.v1.Identification/SetModel", kOperatorRole},
    {"/hyloop.v1.Identification/StartOnlineRls", kOperatorRole},
    {"/hyloop.v1.Identification/StopOnlineRls", kOperatorRole},

    {"/hyloop.v1.Analysis/CharacteristicPolynomial", kReaders},
    {"/hyloop.v1.Analysis/Routh", kReaders},
    {"/hyloop.v1.Analysis/Roots", kReaders},
    {"/hyloop.v1.Analysis/StableGainIntervals", kReaders},
}};

constexpr std::string_view kBearer = "Bearer ";

// "/hyloop.v1.Experiment/Start" → "Experiment.Start".
std::string rpc_name(std::string_view method) {
  std::string name(method.substr(0, 200));
  if (!name.empty() && name.front() == '/') name.erase(0, 1);
  const auto slash = name.find('/');
  if (slash != std::string::npos) name[slash] = '.';
  const auto service_start = name.rfind('.', slash == std::string::npos ? 0 : slash - 1);
  if (slash != std::string::npos && service_start != std::string::npos) {
    name.erase(0, service_start + 1);
  }
  return name;
}

std::string roles_text(unsigned roles) {
  std::string text;
  for (const Role r : kRoles) {
    if ((roles & role_bit(r)) == 0) continue;
    if (!text.empty()) text += " or ";
    text += to_string(r);
  }
  return text.empty() ? "no role" : text;
}

class TokenAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenAuthProcessor(RoleTokens tokens) : tokens_(std::move(tokens)) {}

  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext* /*context*/,
                       OutputMetadata* consumed, OutputMetadata* /*response*/) override {
    std::string_view method;
    std::optional<std::string_view> authorization;
    int authorizations = 0;
    for (const auto& [key, value] : metadata) {
      const std::string_view k(key.data(), key.size());
      const std::string_view v(value.data(), value.size());
      if (k == ":path") method = v;
      if (k == "authorization") {
        authorization = v;
        ++authorizations;
      }
    }
    grpc::Status status =
        authorizations > 1 ? grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                          rpc_name(method) + ": more than one authorization header")
                           : authorize_call(method, authorization, tokens_);
    if (!status.ok()) {
      logger()->warn("refused {}", status.error_message());
    } else if (authorization) {
      // The handlers never see the token.
      consumed->emplace("authorization", std::string(*authorization));
    }
    return status;
  }

 private:
  RoleTokens tokens_;
};

}  // namespace

std::span<const RpcRule> rpc_rules() noexcept { return kRules; }

std::optional<unsigned> rpc_roles(std::string_view method) noexcept {
  for (const RpcRule& rule : kRules) {
    if (rule.method == method) return rule.roles;
  }
  return std::nullopt;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

grpc::Status authorize_call(std::string_view method, std::optional<std::string_view> authorization,
                            const RoleTokens& tokens) {
  const std::optional<unsigned> allowed = rpc_roles(method);
  if (allowed && (*allowed & kPublicRpc) != 0) return grpc::Status::OK;
  const std::string rpc = rpc_name(method);
  const std::string needs =
      allowed ? "; it needs the " + roles_text(*allowed) + " role" : std::string();
  if (!authorization) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            rpc + ": no token (metadata 'authorization: Bearer <token>')" + needs};
  }
  std::string_view presented = *authorization;
  if (presented.substr(0, kBearer.size()) != kBearer) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            rpc + ": the authorization metadata is not 'Bearer <token>'" + needs};
  }
  presented.remove_prefix(kBearer.size());
  unsigned role = kNoRole;
  for (const Role r : kRoles) {
    const std::string& token = tokens[static_cast<std::size_t>(r)];
    // Every token is compared: the time does not tell which one matched.
    if (!token.empty() && constant_time_equal(presented, token)) role |= role_bit(r);
  }
  if (role == kNoRole) {
    return {grpc::StatusCode::UNAUTHENTICATED, rpc + ": unknown token" + needs};
  }
  if (!allowed) {
    return {grpc::StatusCode::PERMISSION_DENIED,
            rpc + " is not in the role table: denied to every role"};
  }
  if ((*allowed & role) == 0) {
    return {grpc::StatusCode::PERMISSION_DENIED, rpc + " needs the " + roles_text(*allowed) +
                                                     " role; this token is the " +
                                                     roles_text(role) + "'s"};
  }
  return grpc::Status::OK;
}

std::shared_ptr<grpc::AuthMetadataProcessor> make_token_auth_processor(RoleTokens tokens) {
  return std::make_shared<TokenAuthProcessor>(std::move(tokens));
}

}  // namespace hyloop::runtime
