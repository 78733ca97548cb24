#include "report.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_file.hpp"
#include "report_script.hpp"

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

// An incomplete directory: says so and recovers it first (a directory whose recorder is still
// alive is refused); a recovered one: says what is missing.
bool prepare_report(const fs::path& dir) {
  if (rec::is_incomplete(dir)) {
    std::cerr << "hyloop report: " << dir.string()
              << " is incomplete (INCOMPLETE): recovering it from its journal first\n";
    const rec::RecoveryResult r = rec::recover_run_directory(dir);
    std::cerr << "hyloop report: recovered " << r.cycles << " cycles (" << r.reason << ")\n";
    return true;
  }
  if (rec::has_run_entry(dir, "summary.json")) {
    try {
      const nlohmann::json s = nlohmann::json::parse(rec::read_run_file(dir, "summary.json"));
      if (s.value("incomplete", false)) {
        std::cerr << "hyloop report: " << dir.string() << " holds an incomplete run ("
                  << s.value("incomplete_reason", std::string("no reason recorded"))
                  << "): " << s.value("cycles_recovered", 0) << " cycles recovered\n";
      }
    } catch (const std::exception&) {
      // report.py says what is wrong with summary.json (or that it refuses it).
    }
  }
  return true;
}

}  // namespace

CLI::App* add_report_subcommand(CLI::App& app, ReportOptions& options) {
  auto* cmd = app.add_subcommand("report", "PNG plots of a run directory");
  cmd->add_option("dir", options.dir, "run directory")->required();
  cmd->add_option("--out", options.out, "directory for the plots (default DIR/plots)");
  return cmd;
}

int run_report(const ReportOptions& options, const char* argv0) {
  if (!prepare_report(options.dir)) return 1;
  std::vector<std::string> args{options.dir};
  if (!options.out.empty()) {
    args.push_back("--out");
    args.push_back(options.out);
  }
  return run_report_script(argv0, args);
}

}  // namespace hyloop::app
