// `hyloop report DIR [--out PLOTS]`: PNG plots of a run directory (report.py). An incomplete
// directory is recovered from its journal first (saying so); of a recovered one it says what is
// missing.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct ReportOptions {
  std::string dir;
  std::string out;  ///< directory for the plots ("" : DIR/plots)
};

// Declares the "report" subcommand of `app`, writing into `options`.
CLI::App* add_report_subcommand(CLI::App& app, ReportOptions& options);

// report.py's exit status (`argv0` locates it, report_script.hpp). @throws std::exception when
// recovering an incomplete directory fails.
int run_report(const ReportOptions& options, const char* argv0);

}  // namespace hyloop::app
