#include "hyloop/transport/ipc_dir.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "hyloop/core/path_trust.hpp"

namespace hyloop::transport {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kIpc = "ipc://";
constexpr std::size_t kMaxName = 64;

bool safe_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxName || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string default_ipc_dir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/hyloop";
  return "/tmp/hyloop-" + std::to_string(::geteuid());
}

void check_private_dir(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    throw std::invalid_argument(path + ": " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) throw std::invalid_argument(path + ": is a symbolic link");
  if (!S_ISDIR(st.st_mode)) throw std::invalid_argument(path + ": is not a directory");
  if (const core::TrustCheck check =
          core::check_trust(path, st, {.root_may_own = false, .closed_bits = 077});
      check.breach != core::TrustBreach::kNone) {
    throw std::invalid_argument(check.why + " (must be this user's, mode 0700)");
  }
}

std::string prepare_ipc_dir(const std::string& dir) {
  const std::string d = dir.empty() ? default_ipc_dir() : dir;
  if (d.front() != '/') {
    throw std::invalid_argument("ipc_dir '" + d + "': must be an absolute path");
  }
  if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::invalid_argument("ipc_dir " + d + ": cannot create: " + std::strerror(errno));
  }
  try {
    check_private_dir(d);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("ipc_dir ") + e.what());
  }
  std::error_code ec;
  const fs::path canonical = fs::canonical(d, ec);
  if (ec) throw std::invalid_argument("ipc_dir " + d + ": " + ec.message());
  return canonical.string();
}

std::string check_ipc_endpoint(std::string_view endpoint, const std::string& ipc_dir, bool bind) {
  const std::string ep(endpoint);
  const auto fail = [&ep](const std::string& why) -> void {
    throw std::invalid_argument("'" + ep.substr(0, 200) + "': " + why);
  };
  if (endpoint.substr(0, kIpc.size()) != kIpc) fail("not an ipc:// endpoint");
  const std::string path(endpoint.substr(kIpc.size()));
  const std::string inside = "must be ipc://" + ipc_dir + "/RUN/NAME, in this service's ipc_dir";
  if (path.empty() || path.front() != '/') fail("not an absolute path (" + inside + ")");
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    fail("path longer than " + std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes");
  }
  // Split into components; refuse "", ".", "..".
  std::vector<std::string> parts;
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = path.find('/', start);
    const std::string part =
        path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part == "." || part == "..") fail("'.', '..' or '//' in the path");
    parts.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.size() < 3) fail(inside);
  const std::string& name = parts.back();
  const std::string& run = parts[parts.size() - 2];
  std::string parent_of_run;
  for (std::size_t i = 0; i + 2 < parts.size(); ++i) parent_of_run += "/" + parts[i];
  if (parent_of_run != ipc_dir) fail(inside);
  if (!safe_name(name) || !safe_name(run)) {
    fail("RUN and NAME must be 1-64 of [A-Za-z0-9_.-], not starting with '.'");
  }
  const std::string run_dir = ipc_dir + "/" + run;
  try {
    check_private_dir(run_dir);
  } catch (const std::invalid_argument& e) {
    fail(std::string("run directory ") + e.what());
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path;
    fail(std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
    fail(std::string("something other than a socket of this user is at that path: refusing to ") +
         (bind ? "replace" : "connect to") + " it");
  }
  return path;
}

IpcRunDir::IpcRunDir(const std::string& ipc_dir) {
  const std::string dir = prepare_ipc_dir(ipc_dir);
  std::string templ = dir + "/run-" + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {  // mode 0700
    throw std::invalid_argument("ipc_dir " + dir +
                                ": cannot create a run directory: " + std::strerror(errno));
  }
  path_ = templ;
  check_private_dir(path_);
}

IpcRunDir::~IpcRunDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string IpcRunDir::endpoint(std::string_view name) const {
  return std::string(kIpc) + path_ + "/" + std::string(name);
}

std::size_t remove_stale_ipc_run_dirs(const std::string& ipc_dir) noexcept {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ipc_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("run-", 0) != 0 || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const std::size_t dash = name.find('-', 4);
    if (dash == std::string::npos) continue;
    const long pid = std::strtol(name.substr(4, dash - 4).c_str(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code rm;
      fs::remove_all(entry.path(), rm);
      if (!rm) ++removed;
    }
  }
  return removed;
}

}  // namespace hyloop::transport
