#pragma once
// Who may own, and who may write or read, a path hyloop trusts: a kind plug-in and the
// directories above it, a security directory and its secrets, the private ipc directory. One
// rule, checked on the lstat of the path (a final symlink is judged itself, never followed):
//
//   owner  this user (effective uid), or also root where root may have installed it;
//   mode   none of `closed_bits` set: 022 = nobody else may write it, 077 = nobody else may
//          read, write or enter it; where allowed, a sticky directory (/tmp) may stay writable
//          by others, since nobody else can replace what is in it.
//
// The reason names the path, the uid or the mode, and what is allowed; callers add the fix.

#include <sys/stat.h>

#include <string>

namespace hyloop::core {

struct PathTrust {
  bool root_may_own = true;
  mode_t closed_bits = 022;
  bool sticky_directory_open = false;
};

enum class TrustBreach { kNone, kOwner, kWritable, kReadable };

struct TrustCheck {
  TrustBreach breach = TrustBreach::kNone;
  std::string why;  ///< empty when breach is kNone
};

/// How `st`, the lstat of `path`, breaks `rule` (the owner first, then write, then read), or
/// kNone.
[[nodiscard]] TrustCheck check_trust(const std::string& path, const struct stat& st,
                                     const PathTrust& rule);

/// The permission bits as four octal digits: "0755".
[[nodiscard]] std::string octal_mode(mode_t mode);

}  // namespace hyloop::core
