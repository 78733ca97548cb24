// `hyloop compare RUN_DIR RUN_DIR... --out DIR`: sets 2 to 16 runs' metrics side by side, with
// plots (report.py --compare).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

inline constexpr int kMaxCompared = 16;  // runs `hyloop compare` overlays

struct CompareOptions {
  std::vector<std::string> dirs;
  std::string out;
};

// Declares the "compare" subcommand of `app`, writing into `options`.
CLI::App* add_compare_subcommand(CLI::App& app, CompareOptions& options);

// report.py's exit status (`argv0` locates it, report_script.hpp); 2 for more than kMaxCompared
// run directories.
int run_compare(const CompareOptions& options, const char* argv0);

}  // namespace hyloop::app
