#pragma once
// Who may call what on the control plane: the one role table (docs/security.md) and the check
// every TLS gRPC server of hyloop runs on every call, before any handler.
//
// A call carries its token as gRPC metadata `authorization: Bearer <64 hex digits>`. Order:
//   1. an RPC marked public (the standard health service) passes without a token;
//   2. no token, or a token that is none of the server's three → UNAUTHENTICATED;
//   3. an RPC missing from the table → PERMISSION_DENIED (deny by default);
//   4. a role the table does not give the RPC → PERMISSION_DENIED.
// Messages name the RPC and the role(s) it needs. Tokens are compared in constant time
// (every token compared, no early exit). A server started with --insecure runs no check.

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hyloop/runtime/security.hpp"

namespace grpc {
class AuthMetadataProcessor;
class Status;
}  // namespace grpc

namespace hyloop::runtime {

/// Bit set of roles allowed to call an RPC.
enum RoleMask : unsigned {
  kNoRole = 0,
  kObserverRole = 1U << 0,
  kOperatorRole = 1U << 1,
  kCoordinatorRole = 1U << 2,
  kEveryRole = kObserverRole | kOperatorRole | kCoordinatorRole,
  kPublicRpc = 1U << 3,  ///< no token needed
};
[[nodiscard]] constexpr unsigned role_bit(Role r) noexcept {
  return 1U << static_cast<unsigned>(r);
}

struct RpcRule {
  std::string_view method;  ///< gRPC path, "/hyloop.v1.Experiment/Start"
  unsigned roles;           ///< RoleMask bits
};

/// The table, every RPC a hyloop server serves.
[[nodiscard]] std::span<const RpcRule> rpc_rules() noexcept;
/// The rule for `method` (a gRPC path); nullopt when it is not in the table.
[[nodiscard]] std::optional<unsigned> rpc_roles(std::string_view method) noexcept;

/// Tokens of the three roles, indexed by Role.
using RoleTokens = std::array<std::string, kRoles.size()>;

/// Equality of two strings in time that depends only on their lengths.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

/// The decision for one call: `authorization` is the metadata value ("Bearer <hex>") or
/// nullopt when absent. OK, UNAUTHENTICATED or PERMISSION_DENIED with the message.
[[nodiscard]] grpc::Status authorize_call(std::string_view method,
                                          std::optional<std::string_view> authorization,
                                          const RoleTokens& tokens);

/// The processor a TLS server installs (grpc::ServerCredentials::SetAuthMetadataProcessor).
[[nodiscard]] std::shared_ptr<grpc::AuthMetadataProcessor> make_token_auth_processor(
    RoleTokens tokens);

}  // namespace hyloop::runtime
