#pragma once
// Where ipc:// loop sockets may live (docs/security.md, "Loop plane").
//
// Every service has one ipc directory (--ipc-dir; default $XDG_RUNTIME_DIR/hyloop, else
// /tmp/hyloop-<uid>): created mode 0700, owned by this user, no group/other access. The
// coordinator makes one private run directory in it per run (mode 0700) and derives every
// ipc:// endpoint of the run inside it: ipc://IPC_DIR/RUN/NAME. A service binds or connects an
// ipc:// endpoint only if it has exactly that form under its own ipc directory (canonical path,
// no "." or "..", no symlink, RUN a private directory of ours, NAME a plain file name), and
// binds only where nothing but a stale socket of ours is in the way (libzmq unlinks the path
// before binding). Not for the cycle: these run at configure time and throw.

#include <cstddef>
#include <string>
#include <string_view>

namespace hyloop::transport {

/// $XDG_RUNTIME_DIR/hyloop when XDG_RUNTIME_DIR is an absolute path, else /tmp/hyloop-<uid>.
[[nodiscard]] std::string default_ipc_dir();

/// Creates `dir` (mode 0700; its parent must exist) if it is missing and checks it: a directory
/// (not a symlink), owned by this user, no group or other permission bits. Returns its
/// canonical path. Throws std::invalid_argument saying what is wrong. "" means the default.
[[nodiscard]] std::string prepare_ipc_dir(const std::string& dir);

/// The checks of prepare_ipc_dir on an existing directory, without creating it.
void check_private_dir(const std::string& path);

/// Validates an ipc:// endpoint against `ipc_dir` (canonical, see prepare_ipc_dir) for binding
/// (`bind`) or connecting, as described above; a connecting side accepts a missing socket file
/// (the binder may come later) but nothing other than a socket. Returns the socket's path.
/// Throws std::invalid_argument naming the endpoint and the rule it breaks.
std::string check_ipc_endpoint(std::string_view endpoint, const std::string& ipc_dir, bool bind);

/// A private run directory IPC_DIR/run-<pid>-XXXXXX (mode 0700), removed with everything in it
/// when destroyed (the end of the run).
class IpcRunDir {
 public:
  /// Creates it in `ipc_dir` (prepare_ipc_dir'ed first). Throws std::invalid_argument.
  explicit IpcRunDir(const std::string& ipc_dir);
  ~IpcRunDir();
  IpcRunDir(const IpcRunDir&) = delete;
  IpcRunDir& operator=(const IpcRunDir&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// "ipc://" + path() + "/" + name.
  [[nodiscard]] std::string endpoint(std::string_view name) const;

 private:
  std::string path_;
};

/// Removes the run directories in `ipc_dir` left by processes that no longer exist (a killed
/// coordinator); the directories of live processes are kept. Returns how many were removed.
std::size_t remove_stale_ipc_run_dirs(const std::string& ipc_dir) noexcept;

}  // namespace hyloop::transport
