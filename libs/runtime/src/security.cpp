#include "hyloop/runtime/security.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/security/credentials.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "hyloop/core/path_trust.hpp"

namespace hyloop::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kTokenBytes = 32;
constexpr std::size_t kTokenHexChars = 2 * kTokenBytes;
constexpr int kMaxDays = 3650;
constexpr std::size_t kMaxHostLength = 253;
constexpr long kNotBeforeSkewSeconds = -3600;  // tolerate clocks an hour apart across the lab

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

[[noreturn]] void crypto_error(const std::string& what) {
  char buf[256] = {0};
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  throw std::runtime_error("hyloop certs: " + what + ": " + buf);
}

bool is_ip(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool is_dns_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxHostLength || s.front() == '-' || s.front() == '.') return false;
  for (const char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string san_entry(const std::string& host) { return (is_ip(host) ? "IP:" : "DNS:") + host; }

PkeyPtr new_key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) crypto_error("cannot generate an EC P-256 key");
  return key;
}

void add_name(X509_NAME* name, const char* field, const std::string& value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                 0) != 1) {
    crypto_error("cannot set " + std::string(field) + "=" + value);
  }
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509V3_set_ctx_nodb(&ctx);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) crypto_error("cannot build the extension '" + value + "'");
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) crypto_error("cannot add the extension '" + value + "'");
}

// A certificate for `key`, signed by issuer_key (self-signed when issuer is null).
X509Ptr make_cert(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key,
                  const std::string& san, int days) {
  X509Ptr cert(X509_new());
  if (!cert) crypto_error("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  BnPtr serial(BN_new());
  if (!serial || BN_rand(serial.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    crypto_error("cannot make a serial number");
  }
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), kNotBeforeSkewSeconds) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, nullptr) == nullptr) {
    crypto_error("cannot set the validity");
  }
  X509_NAME* subject = X509_get_subject_name(cert.get());
  add_name(subject, "O", "hyloop lab");
  add_name(subject, "CN", common_name);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  if (X509_set_pubkey(cert.get(), key) != 1) crypto_error("cannot set the public key");
  X509* ext_issuer = issuer != nullptr ? issuer : cert.get();
  add_ext(cert.get(), ext_issuer, NID_subject_key_identifier, "hash");
  add_ext(cert.get(), ext_issuer, NID_authority_key_identifier, "keyid:always");
  if (issuer == nullptr) {
    add_ext(cert.get(), ext_issuer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_ext(cert.get(), ext_issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_ext(cert.get(), ext_issuer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), ext_issuer, NID_key_usage, "critical,digitalSignature,keyAgreement");
    add_ext(cert.get(), ext_issuer, NID_ext_key_usage, "serverAuth,clientAuth");
    add_ext(cert.get(), ext_issuer, NID_subject_alt_name, san);
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) crypto_error("cannot sign");
  return cert;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return {data, static_cast<std::size_t>(n)};
}

std::string cert_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) crypto_error("cannot encode a cert");
  return bio_text(bio.get());
}

std::string key_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    crypto_error("cannot encode a key");
  }
  return bio_text(bio.get());
}

std::string random_token() {
  unsigned char bytes[kTokenBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) crypto_error("no random bytes for a token");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char b : bytes) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 0xf]);
  }
  OPENSSL_cleanse(bytes, sizeof bytes);
  return hex;
}

// Writes `text` to `path` with exactly `mode` (no symlink followed).
void write_file(const fs::path& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    throw std::runtime_error("hyloop certs: cannot write " + path.string() + ": " +
                             std::strerror(errno));
  }
  bool ok = ::fchmod(fd, mode) == 0;
  std::size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ::fsync(fd) == 0 && ok;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    throw std::runtime_error("hyloop certs: cannot write " + path.string() + ": " +
                             std::strerror(saved));
  }
}

void make_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error("hyloop certs: cannot create " + dir.string() + ": " +
                             std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::invalid_argument("hyloop certs: " + dir.string() + " is not a directory");
  }
  if (const core::TrustCheck owner =
          core::check_trust(dir.string(), st, {.root_may_own = false, .closed_bits = 0});
      owner.breach != core::TrustBreach::kNone) {
    throw std::invalid_argument("hyloop certs: " + owner.why);
  }
  if (::chmod(dir.c_str(), 0700) != 0) {
    throw std::runtime_error("hyloop certs: cannot chmod 700 " + dir.string());
  }
}

void validate(const CertsOptions& o) {
  if (o.out.empty()) throw std::invalid_argument("hyloop certs: --out is empty");
  if (o.days < 1 || o.days > kMaxDays) {
    throw std::invalid_argument("hyloop certs: --days = " + std::to_string(o.days) +
                                " is out of range (allowed: 1.." + std::to_string(kMaxDays) + ")");
  }
  for (const std::string& h : o.hosts) {
    if (!is_ip(h) && !is_dns_name(h)) {
      throw std::invalid_argument("hyloop certs: --hosts entry '" + h.substr(0, 200) +
                                  "' is neither an IP address nor a DNS name "
                                  "(letters, digits, '-' and '.', at most 253 characters)");
    }
  }
  if (o.names.empty()) throw std::invalid_argument("hyloop certs: no service names");
  for (const std::string& n : o.names) {
    if (!is_dns_name(n) || n.find('.') != std::string::npos) {
      throw std::invalid_argument("hyloop certs: service name '" + n.substr(0, 200) +
                                  "' must be letters, digits and '-'");
    }
  }
}

// The owner and write permissions of one entry of a security directory; the read permissions
// of a secret.
void check_security_entry(const fs::path& path, const struct stat& st, bool secret) {
  const core::TrustCheck check = core::check_trust(
      path.string(), st, {.root_may_own = true, .closed_bits = secret ? mode_t{077} : mode_t{022}});
  switch (check.breach) {
    case core::TrustBreach::kNone:
      return;
    case core::TrustBreach::kOwner:
      throw std::invalid_argument(check.why + ": refused (chown it)");
    case core::TrustBreach::kWritable:
      throw std::invalid_argument(check.why + " (chmod go-w)");
    case core::TrustBreach::kReadable:
      throw std::invalid_argument(check.why + " (a secret: chmod 600)");
  }
}

bool is_secret_file(const fs::path& path, bool in_tokens) {
  const std::string ext = path.extension().string();
  return in_tokens || ext == ".key" || ext == ".secret";
}

// A directory of the security directory and the files in it (not its subdirectories).
void check_security_level(const fs::path& dir, bool in_tokens) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw std::invalid_argument("security dir " + dir.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw std::invalid_argument("security dir " + dir.string() + ": not a directory");
  }
  check_security_entry(dir, st, false);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    struct stat f {};
    if (::stat(e.path().c_str(), &f) != 0 || S_ISDIR(f.st_mode)) continue;
    check_security_entry(e.path(), f, is_secret_file(e.path(), in_tokens));
  }
  if (ec) throw std::invalid_argument("security dir " + dir.string() + ": " + ec.message());
}

std::string trim_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::string_view to_string(Role role) noexcept {
  switch (role) {
    case Role::kObserver:
      return "observer";
    case Role::kOperator:
      return "operator";
    case Role::kCoordinator:
      return "coordinator";
  }
  return "unknown";
}

Role parse_role(std::string_view text) {
  for (const Role r : kRoles) {
    if (to_string(r) == text) return r;
  }
  throw std::invalid_argument("unknown role '" + std::string(text.substr(0, 200)) +
                              "' (allowed: observer, operator, coordinator)");
}

void create_security_dir(const CertsOptions& o) {
  validate(o);
  std::error_code ec;
  if (fs::exists(o.out, ec) && !o.force && !fs::is_empty(o.out, ec)) {
    throw std::invalid_argument("hyloop certs: " + o.out.string() +
                                " exists and is not empty (--force replaces its files)");
  }
  if (!o.out.parent_path().empty()) fs::create_directories(o.out.parent_path());
  make_private_dir(o.out);
  make_private_dir(o.out / "tokens");
  make_private_dir(o.out / "curve");

  const PkeyPtr ca_key = new_key();
  const X509Ptr ca = make_cert(ca_key.get(), "hyloop lab CA", nullptr, ca_key.get(), "", o.days);
  write_file(o.out / "ca.key", key_pem(ca_key.get()), 0600);
  write_file(o.out / "ca.crt", cert_pem(ca.get()), 0644);

  for (const std::string& name : o.names) {
    std::string san = "DNS:localhost,IP:127.0.0.1,DNS:" + name;
    for (const std::string& h : o.hosts) san.append(",").append(san_entry(h));
    const PkeyPtr key = new_key();
    const X509Ptr cert = make_cert(key.get(), name, ca.get(), ca_key.get(), san, o.days);
    write_file(o.out / (name + ".key"), key_pem(key.get()), 0600);
    write_file(o.out / (name + ".crt"), cert_pem(cert.get()), 0644);

    char public_key[41] = {0};
    char secret_key[41] = {0};
    if (zmq_curve_keypair(public_key, secret_key) != 0) {
      throw std::runtime_error(std::string("hyloop certs: no ZeroMQ CURVE key pair: ") +
                               zmq_strerror(zmq_errno()));
    }
    write_file(o.out / "curve" / (name + ".secret"), std::string(secret_key) + "\n", 0600);
    write_file(o.out / "curve" / (name + ".public"), std::string(public_key) + "\n", 0644);
    OPENSSL_cleanse(secret_key, sizeof secret_key);
  }
  for (const Role r : kRoles) write_file(token_path(o.out, r), random_token() + "\n", 0600);
}

fs::path rotate_token(const fs::path& dir, Role role) {
  if (!fs::is_directory(dir / "tokens")) {
    throw std::invalid_argument("hyloop certs: " + dir.string() +
                                " has no tokens/ directory (not a security directory?)");
  }
  // A new file renamed over the old one: a reader sees the old token or the new one.
  const fs::path path = token_path(dir, role);
  const fs::path next = path.string() + ".new";
  write_file(next, random_token() + "\n", 0600);
  fs::rename(next, path);
  return path;
}

void check_security_dir(const fs::path& dir) {
  check_security_level(dir, false);
  for (const char* sub : {"tokens", "curve"}) {
    std::error_code ec;
    if (fs::exists(dir / sub, ec)) check_security_level(dir / sub, std::string(sub) == "tokens");
  }
}

fs::path token_path(const fs::path& dir, Role role) {
  return dir / "tokens" / std::string(to_string(role));
}

std::string read_security_file(const fs::path& path, bool secret) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument(path.string() + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw std::invalid_argument(path.string() + ": not a regular file");
  if (secret) check_security_entry(path, st, true);
  constexpr off_t kMaxSize = 1 << 20;
  if (st.st_size > kMaxSize) throw std::invalid_argument(path.string() + ": larger than 1 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path.string() + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string read_token_file(const fs::path& path) {
  const std::string token = trim_line(read_security_file(path, true));
  const bool hex = token.size() == kTokenHexChars &&
                   token.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
  if (!hex) {
    throw std::invalid_argument(path.string() + ": a token is one line of " +
                                std::to_string(kTokenHexChars) + " hex digits (hyloop certs " +
                                "writes them)");
  }
  return token;
}

ServerSecurity load_server_security(const fs::path& dir, const std::string& name) {
  ServerSecurity s;
  if (!fs::exists(dir / (name + ".crt"))) {
    throw std::invalid_argument("security dir " + dir.string() + " has no certificate '" + name +
                                ".crt' (hyloop certs --out DIR writes one per service)");
  }
  s.ca_pem = read_security_file(dir / "ca.crt");
  s.cert_pem = read_security_file(dir / (name + ".crt"));
  s.key_pem = read_security_file(dir / (name + ".key"), true);
  // A role whose token file is absent cannot call this server (least privilege: a service host
  // may hold only tokens/coordinator); at least one token must be there.
  bool any = false;
  for (const Role r : kRoles) {
    const fs::path path = token_path(dir, r);
    if (!fs::exists(path)) continue;
    s.tokens[static_cast<std::size_t>(r)] = read_token_file(path);
    any = true;
  }
  if (!any) {
    throw std::invalid_argument("security dir " + dir.string() +
                                " has no token in tokens/ (observer, operator, coordinator)");
  }
  return s;
}

ClientSecurity load_client_security(const fs::path& ca_file, const fs::path& token_file) {
  ClientSecurity s;
  s.ca_pem = read_security_file(ca_file);
  if (s.ca_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    throw std::invalid_argument(ca_file.string() + ": not a PEM certificate");
  }
  s.token = read_token_file(token_file);
  return s;
}

ClientSecurity load_client_security(const fs::path& dir, Role role) {
  return load_client_security(dir / "ca.crt", token_path(dir, role));
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials(const ClientSecurity& security) {
  if (security.insecure()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = security.ca_pem;
  auto tls = grpc::SslCredentials(options);
  if (security.token.empty()) return tls;
  return grpc::CompositeChannelCredentials(tls, grpc::AccessTokenCredentials(security.token));
}

}  // namespace hyloop::runtime
