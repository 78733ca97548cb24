#pragma once
// A fresh, empty scratch directory for one test: <tmp>/hyloop-<prefix>-<name>-<pid>.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace hyloop::testing {

inline std::filesystem::path scratch_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() /
                     ("hyloop-" + prefix + "-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace hyloop::testing
