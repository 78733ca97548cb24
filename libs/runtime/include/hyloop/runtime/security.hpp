#pragma once
// The security directory of a lab (docs/security.md), written by `hyloop certs --out DIR`:
//
//   DIR/                                  0700
//     ca.crt, ca.key                      lab CA, EC P-256, self-signed (ca.key 0600)
//     <name>.crt, <name>.key              TLS certificate (signed by the CA, serverAuth and
//                                         clientAuth) and key (0600) of each name in
//                                         kSecurityNames; SANs: the --hosts, localhost,
//                                         127.0.0.1 and the name itself
//     tokens/{observer,operator,coordinator}   one line: 64 hex digits (32 bytes of CSPRNG), 0600
//     curve/<name>.public, .secret        ZeroMQ CURVE key pair, Z85 (40 characters and a
//                                         newline), .secret 0600
//
// Servers load their certificate and the three tokens (load_server_security); clients the CA
// and one token (load_client_security), sent as `authorization: Bearer <hex>` on every call
// (channel_credentials). Files holding a secret are refused when group or others may read them.
// Nothing here is real-time code.

#include <array>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace grpc {
class ChannelCredentials;
}  // namespace grpc

namespace hyloop::runtime {

/// The services that get a certificate and a CURVE key pair.
inline constexpr std::array<std::string_view, 7> kSecurityNames{
    "coordinator", "rig-emulator", "actuator", "dynamics", "sensor", "identification", "site"};

/// Roles, each with its token (auth.hpp has what each may call).
enum class Role { kObserver, kOperator, kCoordinator };
inline constexpr std::array<Role, 3> kRoles{Role::kObserver, Role::kOperator, Role::kCoordinator};
[[nodiscard]] std::string_view to_string(Role role) noexcept;
/// "observer", "operator" or "coordinator"; throws std::invalid_argument naming the allowed ones.
[[nodiscard]] Role parse_role(std::string_view text);

struct CertsOptions {
  std::filesystem::path out;
  /// Extra subjectAltNames of every certificate: DNS names or IPv4/IPv6 literals.
  std::vector<std::string> hosts;
  int days = 365;  ///< validity, 1..3650
  /// Replace the files of an existing directory (otherwise a non-empty DIR is refused).
  bool force = false;
  /// Names that get a certificate and CURVE keys (tests add their own).
  std::vector<std::string> names{kSecurityNames.begin(), kSecurityNames.end()};
};

/// Writes the whole directory. Throws std::invalid_argument for bad options (naming the option
/// and the value), std::runtime_error for I/O or crypto failures.
void create_security_dir(const CertsOptions& options);

/// Replaces dir/tokens/<role> by a fresh token (the rest of the directory untouched); returns
/// its path. Services read tokens when they start: restart those that hold it.
std::filesystem::path rotate_token(const std::filesystem::path& dir, Role role);

/// The token of `role` under `dir` (dir/tokens/<role>).
[[nodiscard]] std::filesystem::path token_path(const std::filesystem::path& dir, Role role);

/// Reads a token file: one line of exactly 64 hex digits, not readable by group or others.
/// Throws std::invalid_argument naming the file and what is wrong.
[[nodiscard]] std::string read_token_file(const std::filesystem::path& path);

/// Checks a security directory as a service or `hyloop up`/`ctl` starts (docs/security.md,
/// "Start-up checks"): DIR, tokens/ and curve/ are directories that group and others cannot
/// write; every file in them is owned by this user or root and not writable by group or
/// others; a secret (*.key, curve/*.secret, tokens/*) is not readable by group or others.
/// Symbolic links are checked at their target. Throws std::invalid_argument naming the path,
/// its mode or owner, and the fix.
void check_security_dir(const std::filesystem::path& dir);

/// Reads a whole text file (std::invalid_argument if it cannot be read). With `secret`, refuses
/// a file group or others can read.
[[nodiscard]] std::string read_security_file(const std::filesystem::path& path,
                                             bool secret = false);

/// What a gRPC server needs: its certificate chain and key, and the token of every role.
struct ServerSecurity {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
  std::array<std::string, kRoles.size()> tokens;  ///< indexed by Role
};
/// Loads `name`'s certificate and key and the tokens from `dir`. A missing token file leaves
/// that role without access to this server (a host may hold only the tokens it needs); no token
/// at all is an error.
[[nodiscard]] ServerSecurity load_server_security(const std::filesystem::path& dir,
                                                  const std::string& name);

/// What a client needs: the CA to trust and the token it sends. Empty ca_pem: plaintext, no
/// token (a server started with --insecure).
struct ClientSecurity {
  std::string ca_pem;
  std::string token;
  [[nodiscard]] bool insecure() const noexcept { return ca_pem.empty(); }
};
[[nodiscard]] ClientSecurity load_client_security(const std::filesystem::path& ca_file,
                                                  const std::filesystem::path& token_file);
/// dir/ca.crt and dir/tokens/<role>.
[[nodiscard]] ClientSecurity load_client_security(const std::filesystem::path& dir, Role role);

/// TLS trusting ca_pem plus the bearer token on every call; plaintext when insecure().
[[nodiscard]] std::shared_ptr<grpc::ChannelCredentials> channel_credentials(
    const ClientSecurity& security);

}  // namespace hyloop::runtime
