#include "hyloop/core/path_trust.hpp"

#include <unistd.h>

#include <cstdio>

namespace hyloop::core {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

TrustCheck check_trust(const std::string& path, const struct stat& st, const PathTrust& rule) {
  const uid_t me = ::geteuid();
  if (st.st_uid != me && !(rule.root_may_own && st.st_uid == 0)) {
    return {TrustBreach::kOwner, path + " is owned by uid " + std::to_string(st.st_uid) +
                                     ", not by this user (uid " + std::to_string(me) + ")" +
                                     (rule.root_may_own ? " or root" : "")};
  }
  const mode_t open = st.st_mode & rule.closed_bits;
  const bool sticky_directory = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  const mode_t writable = open & 022;
  if (writable != 0 && !(rule.sticky_directory_open && sticky_directory)) {
    return {TrustBreach::kWritable, path + " has mode " + octal_mode(st.st_mode) +
                                        ": writable by " +
                                        ((writable & S_IWOTH) != 0 ? "anyone" : "its group")};
  }
  if ((open & 055) != 0) {
    return {TrustBreach::kReadable, path + " has mode " + octal_mode(st.st_mode) + ": " +
                                        ((open & 044) != 0 ? "readable by" : "open to") +
                                        " group or others"};
  }
  return {};
}

}  // namespace hyloop::core
