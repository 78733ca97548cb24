#include "report_script.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;

fs::path share_dir(const char* argv0) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) exe = fs::absolute(argv0);
  const fs::path installed = exe.parent_path().parent_path() / "share" / "hyloop";
  if (fs::exists(installed / "report.py")) return installed;
  return fs::path(HYLOOP_SOURCE_DIR) / "tools";
}

// The script with `args` as its own arguments, no shell between: a run directory's name reaches
// it as it is, whatever characters it holds.
int run_python(const fs::path& script, const std::vector<std::string>& args) {
  std::vector<std::string> words{"/usr/bin/python3", script.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int run_report_script(const char* argv0, const std::vector<std::string>& args) {
  return run_python(share_dir(argv0) / "report.py", args);
}

}  // namespace hyloop::app
