// One ownership/mode rule for every path hyloop trusts (path_trust.hpp), on real files.
#include "hyloop/core/path_trust.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hyloop::core {
namespace {

namespace fs = std::filesystem;

struct Entry {
  fs::path path;
  struct stat st {};
};

class PathTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hyloop_path_trust_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Entry file(mode_t mode) const {
    Entry e{dir_ / "f", {}};
    std::ofstream(e.path) << "x";
    ::chmod(e.path.c_str(), mode);
    ::lstat(e.path.c_str(), &e.st);
    return e;
  }
  Entry directory(mode_t mode) const {
    Entry e{dir_ / "d", {}};
    fs::create_directory(e.path);
    ::chmod(e.path.c_str(), mode);
    ::lstat(e.path.c_str(), &e.st);
    return e;
  }

  fs::path dir_;
};

constexpr PathTrust kNobodyElseWrites{.root_may_own = true, .closed_bits = 022};
constexpr PathTrust kPrivate{.root_may_own = false, .closed_bits = 077};

TEST_F(PathTrustTest, ModesNamePathModeAndWho) {
  EXPECT_EQ(check_trust("P", file(0644).st, kNobodyElseWrites).breach, TrustBreach::kNone);
  const TrustCheck anyone = check_trust("P", file(0666).st, kNobodyElseWrites);
  EXPECT_EQ(anyone.breach, TrustBreach::kWritable);
  EXPECT_EQ(anyone.why, "P has mode 0666: writable by anyone");
  EXPECT_EQ(check_trust("P", file(0664).st, kNobodyElseWrites).why,
            "P has mode 0664: writable by its group");
  EXPECT_EQ(check_trust("P", file(0600).st, kPrivate).breach, TrustBreach::kNone);
  const TrustCheck readable = check_trust("P", file(0640).st, kPrivate);
  EXPECT_EQ(readable.breach, TrustBreach::kReadable);
  EXPECT_EQ(readable.why, "P has mode 0640: readable by group or others");
  EXPECT_EQ(check_trust("P", directory(0711).st, kPrivate).why,
            "P has mode 0711: open to group or others");
  // Write is named before read.
  EXPECT_EQ(check_trust("P", file(0606).st, kPrivate).breach, TrustBreach::kWritable);
}

TEST_F(PathTrustTest, AStickyDirectoryIsOpenOnlyWhereTheRuleSaysSo) {
  const Entry tmp = directory(01777);
  EXPECT_EQ(check_trust("T", tmp.st, kNobodyElseWrites).breach, TrustBreach::kWritable);
  PathTrust above = kNobodyElseWrites;
  above.sticky_directory_open = true;
  EXPECT_EQ(check_trust("T", tmp.st, above).breach, TrustBreach::kNone);
  // Not a sticky directory: still refused under the same rule.
  EXPECT_EQ(check_trust("T", directory(0777).st, above).breach, TrustBreach::kWritable);
}

TEST_F(PathTrustTest, OwnerIsThisUserOrRootWhereAllowed) {
  struct stat st = file(0600).st;
  st.st_uid = ::geteuid() + 4242;
  const TrustCheck other = check_trust("P", st, kNobodyElseWrites);
  EXPECT_EQ(other.breach, TrustBreach::kOwner);
  EXPECT_EQ(other.why, "P is owned by uid " + std::to_string(st.st_uid) +
                           ", not by this user (uid " + std::to_string(::geteuid()) + ") or root");
  st.st_uid = 0;
  EXPECT_EQ(check_trust("P", st, kNobodyElseWrites).breach, TrustBreach::kNone);
  if (::geteuid() != 0) {
    const TrustCheck root = check_trust("P", st, kPrivate);
    EXPECT_EQ(root.breach, TrustBreach::kOwner);
    EXPECT_EQ(root.why.find(" or root"), std::string::npos);
  }
  // The owner is judged before the mode.
  st.st_uid = ::geteuid() + 4242;
  st.st_mode |= 0666;
  EXPECT_EQ(check_trust("P", st, kPrivate).breach, TrustBreach::kOwner);
}

}  // namespace
}  // namespace hyloop::core
