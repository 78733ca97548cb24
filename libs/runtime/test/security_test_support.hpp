#pragma once
// A security directory made once per test binary (names: the six services and "fake"), and
// a second one with another CA; removed at exit.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "hyloop/runtime/security.hpp"

namespace hyloop::runtime::testing {

class TestSecurityDirs {
 public:
  static const TestSecurityDirs& get() {
    static const TestSecurityDirs dirs;
    return dirs;
  }
  std::filesystem::path lab;    ///< the lab the servers trust
  std::filesystem::path other;  ///< another CA and other tokens

 private:
  TestSecurityDirs() {
    char pattern[] = "/tmp/hyloop_security_test_XXXXXX";
    root_ = ::mkdtemp(pattern);
    lab = root_ / "lab";
    other = root_ / "other";
    for (const auto& dir : {lab, other}) {
      CertsOptions o;
      o.out = dir;
      o.days = 2;
      o.hosts = {"lab-host.example", "10.77.0.1"};
      o.names.push_back("fake");
      create_security_dir(o);
    }
  }
  ~TestSecurityDirs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  std::filesystem::path root_;
};

}  // namespace hyloop::runtime::testing
