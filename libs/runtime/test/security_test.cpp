// hyloop certs (create_security_dir) and the loaders: modes, chains, SANs, tokens, CURVE keys.
#include "hyloop/runtime/security.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <zmq.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "security_test_support.hpp"

namespace hyloop::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TestSecurityDirs;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;

X509Ptr read_cert(const fs::path& p) {
  FILE* f = std::fopen(p.c_str(), "r");
  EXPECT_NE(f, nullptr) << p;
  if (f == nullptr) return nullptr;
  X509Ptr cert(PEM_read_X509(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  return cert;
}

// X509_verify_cert of `cert` against the single trusted `ca`, as a TLS server certificate.
int verify(X509* cert, X509* ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
  const int ok = X509_verify_cert(ctx);
  const int err = X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok == 1 ? X509_V_OK : (err == X509_V_OK ? -1 : err);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

TEST(Certs, WritesTheContractsFilesWithTheirModes) {
  const fs::path& dir = TestSecurityDirs::get().lab;
  EXPECT_EQ(mode_of(dir), 0700U);
  EXPECT_EQ(mode_of(dir / "tokens"), 0700U);
  EXPECT_EQ(mode_of(dir / "curve"), 0700U);
  EXPECT_EQ(mode_of(dir / "ca.key"), 0600U);
  EXPECT_EQ(mode_of(dir / "ca.crt"), 0644U);
  for (const std::string_view name : kSecurityNames) {
    const std::string n(name);
    EXPECT_EQ(mode_of(dir / (n + ".key")), 0600U) << n;
    EXPECT_EQ(mode_of(dir / (n + ".crt")), 0644U) << n;
    EXPECT_EQ(mode_of(dir / "curve" / (n + ".secret")), 0600U) << n;
    EXPECT_EQ(mode_of(dir / "curve" / (n + ".public")), 0644U) << n;
  }
  for (const Role r : kRoles) EXPECT_EQ(mode_of(token_path(dir, r)), 0600U);
}

TEST(Certs, EveryCertificateVerifiesAgainstItsCaOnlyAndCarriesTheSans) {
  const auto& dirs = TestSecurityDirs::get();
  const X509Ptr ca = read_cert(dirs.lab / "ca.crt");
  const X509Ptr other_ca = read_cert(dirs.other / "ca.crt");
  ASSERT_TRUE(ca && other_ca);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  for (const std::string_view name : kSecurityNames) {
    const std::string n(name);
    const X509Ptr cert = read_cert(dirs.lab / (n + ".crt"));
    ASSERT_TRUE(cert) << n;
    EXPECT_EQ(verify(cert.get(), ca.get()), X509_V_OK) << n;
    EXPECT_NE(verify(cert.get(), other_ca.get()), X509_V_OK) << n;
    EXPECT_EQ(X509_check_host(cert.get(), n.c_str(), n.size(), 0, nullptr), 1) << n;
    EXPECT_EQ(X509_check_host(cert.get(), "localhost", 0, 0, nullptr), 1) << n;
    EXPECT_EQ(X509_check_host(cert.get(), "lab-host.example", 0, 0, nullptr), 1) << n;
    EXPECT_EQ(X509_check_ip_asc(cert.get(), "127.0.0.1", 0), 1) << n;
    EXPECT_EQ(X509_check_ip_asc(cert.get(), "10.77.0.1", 0), 1) << n;
    EXPECT_EQ(X509_check_host(cert.get(), "other.example", 0, 0, nullptr), 0) << n;
    EXPECT_EQ(X509_check_ip_asc(cert.get(), "10.77.0.2", 0), 0) << n;
    // A service certificate cannot sign others.
    EXPECT_EQ(X509_check_ca(cert.get()), 0) << n;
    // The key beside it is its key.
    FILE* f = std::fopen((dirs.lab / (n + ".key")).c_str(), "r");
    ASSERT_NE(f, nullptr);
    EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    std::fclose(f);
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(X509_check_private_key(cert.get(), key), 1) << n;
    EVP_PKEY_free(key);
  }
}

TEST(Certs, TokensAreDistinct64HexDigitsAndCurveKeysArePairs) {
  const auto& dirs = TestSecurityDirs::get();
  std::set<std::string> tokens;
  for (const auto& dir : {dirs.lab, dirs.other}) {
    for (const Role r : kRoles) {
      const std::string t = read_token_file(token_path(dir, r));
      EXPECT_EQ(t.size(), 64U);
      EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos);
      tokens.insert(t);
    }
  }
  EXPECT_EQ(tokens.size(), 6U);
  for (const std::string_view name : kSecurityNames) {
    const std::string n(name);
    std::string pub = slurp(dirs.lab / "curve" / (n + ".public"));
    std::string sec = slurp(dirs.lab / "curve" / (n + ".secret"));
    ASSERT_EQ(pub.size(), 41U);
    ASSERT_EQ(sec.size(), 41U);
    pub.pop_back();
    sec.pop_back();
    char derived[41] = {0};
    ASSERT_EQ(zmq_curve_public(derived, sec.c_str()), 0);
    EXPECT_EQ(std::string(derived), pub) << n;
  }
}

TEST(Certs, RefusesANonEmptyDirectoryWithoutForceAndReplacesWithIt) {
  const fs::path dir = TestSecurityDirs::get().lab.parent_path() / "force";
  CertsOptions o;
  o.out = dir;
  o.names = {"fake"};
  create_security_dir(o);
  const std::string token = read_token_file(token_path(dir, Role::kOperator));
  try {
    create_security_dir(o);
    ADD_FAILURE() << "a non-empty directory was overwritten without --force";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("--force"));
  }
  EXPECT_EQ(read_token_file(token_path(dir, Role::kOperator)), token);
  o.force = true;
  create_security_dir(o);
  EXPECT_NE(read_token_file(token_path(dir, Role::kOperator)), token);
  EXPECT_EQ(mode_of(dir), 0700U);
}

TEST(Certs, RefusesBadOptionsNamingThem) {
  const fs::path dir = TestSecurityDirs::get().lab.parent_path() / "bad";
  auto expect_refused = [&](CertsOptions o, const std::string& what) {
    o.out = dir;
    try {
      create_security_dir(o);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  CertsOptions o;
  o.hosts = {"ok.example", "bad host"};
  expect_refused(o, "'bad host'");
  o.hosts = {"a,DNS:evil.example"};
  expect_refused(o, "'a,DNS:evil.example'");
  o.hosts = {};
  o.days = 0;
  expect_refused(o, "--days = 0");
  o.days = 4000;
  expect_refused(o, "--days = 4000");
  o.days = 10;
  o.names = {"../x"};
  expect_refused(o, "'../x'");
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Certs, LoadersRefuseReadableSecretsAndMalformedTokens) {
  const fs::path dir = TestSecurityDirs::get().lab.parent_path() / "loose";
  CertsOptions o;
  o.out = dir;
  o.names = {"fake"};
  create_security_dir(o);
  EXPECT_NO_THROW((void)load_server_security(dir, "fake"));
  EXPECT_NO_THROW((void)load_client_security(dir, Role::kObserver));
  try {
    (void)load_server_security(dir, "actuator");
    ADD_FAILURE() << "no certificate for actuator";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("'actuator.crt'"));
  }
  ::chmod(token_path(dir, Role::kOperator).c_str(), 0644);
  try {
    (void)load_client_security(dir, Role::kOperator);
    ADD_FAILURE() << "a world-readable token was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("mode 0644"));
  }
  ::chmod((dir / "fake.key").c_str(), 0640);
  EXPECT_THROW((void)load_server_security(dir, "fake"), std::invalid_argument);
  ::chmod((dir / "fake.key").c_str(), 0600);
  ::chmod(token_path(dir, Role::kOperator).c_str(), 0600);
  std::ofstream(token_path(dir, Role::kOperator)) << "abc\n";
  try {
    (void)read_token_file(token_path(dir, Role::kOperator));
    ADD_FAILURE() << "a short token was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("64 hex digits"));
  }
  fs::remove_all(dir);
}

TEST(Certs, AServerWithoutATokenFileGivesThatRoleNoAccess) {
  const fs::path dir = TestSecurityDirs::get().lab.parent_path() / "least";
  CertsOptions o;
  o.out = dir;
  o.names = {"fake"};
  create_security_dir(o);
  fs::remove(token_path(dir, Role::kOperator));
  fs::remove(token_path(dir, Role::kObserver));
  const ServerSecurity s = load_server_security(dir, "fake");
  EXPECT_TRUE(s.tokens[static_cast<std::size_t>(Role::kOperator)].empty());
  EXPECT_TRUE(s.tokens[static_cast<std::size_t>(Role::kObserver)].empty());
  EXPECT_EQ(s.tokens[static_cast<std::size_t>(Role::kCoordinator)].size(), 64U);
  fs::remove(token_path(dir, Role::kCoordinator));
  EXPECT_THROW((void)load_server_security(dir, "fake"), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(Certs, RotatingATokenReplacesThatTokenOnly) {
  const fs::path dir = TestSecurityDirs::get().lab.parent_path() / "rotate";
  CertsOptions o;
  o.out = dir;
  o.names = {"fake"};
  create_security_dir(o);
  const ServerSecurity before = load_server_security(dir, "fake");
  EXPECT_EQ(rotate_token(dir, Role::kOperator), token_path(dir, Role::kOperator));
  const ServerSecurity after = load_server_security(dir, "fake");
  const auto op = static_cast<std::size_t>(Role::kOperator);
  EXPECT_NE(after.tokens[op], before.tokens[op]);
  EXPECT_EQ(after.tokens[op].size(), 64U);
  for (const Role r : {Role::kObserver, Role::kCoordinator}) {
    EXPECT_EQ(after.tokens[static_cast<std::size_t>(r)],
              before.tokens[static_cast<std::size_t>(r)]);
  }
  EXPECT_EQ(after.cert_pem, before.cert_pem);
  EXPECT_EQ(mode_of(token_path(dir, Role::kOperator)), 0600U);
  EXPECT_THROW((void)rotate_token(dir / "nonexistent", Role::kOperator), std::invalid_argument);
  fs::remove_all(dir);
}

TEST(Roles, ParseAndPrint) {
  for (const Role r : kRoles) EXPECT_EQ(parse_role(to_string(r)), r);
  EXPECT_THROW((void)parse_role("admin"), std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::runtime
