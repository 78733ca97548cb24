#include "export.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/recording/run_export.hpp"

namespace hyloop::app {

CLI::App* add_export_subcommand(CLI::App& app, ExportOptions& options) {
  auto* cmd = app.add_subcommand(
      "export", "write a run directory as HDF5 or MATLAB (.mat), units and metadata included");
  cmd->add_option("dir", options.dir, "run directory")->required();
  cmd->add_option("--format", options.format, "hdf5 or mat")->required();
  cmd->add_option("--out", options.out, "file to write (replaced if it exists)")->required();
  return cmd;
}

int run_export(const ExportOptions& options) {
  recording::export_run(options.dir, recording::parse_export_format(options.format), options.out);
  std::cerr << "hyloop export: " << options.out << " (" << options.format << ")\n";
  return 0;
}

}  // namespace hyloop::app
