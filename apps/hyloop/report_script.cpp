#include "report_script.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

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

int run_python(const fs::path& script, const std::vector<std::string>& args) {
  std::string cmd = "/usr/bin/python3 '" + script.string() + "'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  const int rc = std::system(cmd.c_str());
  return rc == 0 ? 0 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 1);
}

}  // namespace

int run_report_script(const char* argv0, const std::vector<std::string>& args) {
  return run_python(share_dir(argv0) / "report.py", args);
}

}  // namespace hyloop::app
