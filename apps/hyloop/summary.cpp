#include "summary.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_file.hpp"

namespace hyloop::app {
namespace {
namespace fs = std::filesystem;
}  // namespace

CLI::App* add_summary_subcommand(CLI::App& app, SummaryOptions& options) {
  auto* cmd = app.add_subcommand(
      "summary", "print a run directory's summary.json; --recover rebuilds an incomplete one");
  cmd->add_option("dir", options.dir, "run directory")->required();
  cmd->add_flag("--recover", options.recover,
                "rebuild samples.csv, cycles.csv and summary.json of an incomplete run "
                "directory (INCOMPLETE) from its journal");
  return cmd;
}

int run_summary(const SummaryOptions& options) {
  const fs::path dir = options.dir;
  if (options.recover) {
    const recording::RecoveryResult r = recording::recover_run_directory(dir);
    std::cout << r.summary.dump(2) << "\n";
    std::cerr << "hyloop summary: recovered " << r.cycles << " cycles (" << r.reason
              << ")\nrun directory: " << dir.string() << "\n";
    return 0;
  }
  if (recording::is_incomplete(dir)) {
    std::cerr << "hyloop summary: " << dir.string()
              << " is incomplete (INCOMPLETE): its recorder is running or ended before "
                 "completing it; `hyloop summary --recover "
              << dir.string() << "` rebuilds it from its journal\n";
    return 1;
  }
  try {
    std::cout << recording::read_run_file(dir, "summary.json");
  } catch (const recording::RunDirectoryError& e) {
    std::cerr << "hyloop summary: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace hyloop::app
