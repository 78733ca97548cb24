#include "compare.hpp"

#include <CLI/CLI.hpp>
#include <cstddef>
#include <iostream>

#include "report_script.hpp"

namespace hyloop::app {

CLI::App* add_compare_subcommand(CLI::App& app, CompareOptions& options) {
  auto* cmd = app.add_subcommand("compare", "set runs' metrics side by side, with plots");
  // Any count >= 2 parses (the usage line reads "RUN_DIR..."); run_compare refuses more than 16.
  cmd->add_option("RUN_DIR", options.dirs, "two or more run directories (at most 16)")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size)
      ->option_text("RUN_DIR [RUN_DIR ...] (2 to 16) REQUIRED");
  cmd->add_option("--out", options.out, "directory for the comparison")->required();
  return cmd;
}

int run_compare(const CompareOptions& options, const char* argv0) {
  if (options.dirs.size() > static_cast<std::size_t>(kMaxCompared)) {
    std::cerr << "hyloop compare: " << options.dirs.size() << " run directories: at most "
              << kMaxCompared << "\n";
    return 2;
  }
  std::vector<std::string> args{"--compare"};
  args.insert(args.end(), options.dirs.begin(), options.dirs.end());
  args.push_back("--out");
  args.push_back(options.out);
  return run_report_script(argv0, args);
}

}  // namespace hyloop::app
