// `hyloop summary DIR [--recover]`: prints a run directory's summary.json; --recover rebuilds
// samples.csv, cycles.csv and summary.json of an incomplete one from its journal
// (run_directory.hpp recover_run_directory).
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct SummaryOptions {
  std::string dir;
  bool recover = false;
};

// Declares the "summary" subcommand of `app`, writing into `options`.
CLI::App* add_summary_subcommand(CLI::App& app, SummaryOptions& options);

// 0 done; 1 for an incomplete directory without --recover or an unreadable summary.json.
// @throws std::exception when recovery fails.
int run_summary(const SummaryOptions& options);

}  // namespace hyloop::app
