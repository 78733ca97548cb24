// `hyloop export DIR --format hdf5|mat --out FILE`: writes a run directory as HDF5 or MATLAB
// (.mat), units and metadata included (experiment/run_export.hpp).
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct ExportOptions {
  std::string dir;
  std::string format;  ///< hdf5 | mat
  std::string out;     ///< the file to write (replaced if it exists)
};

// Declares the "export" subcommand of `app`, writing into `options`.
CLI::App* add_export_subcommand(CLI::App& app, ExportOptions& options);

// 0 done. @throws std::exception for an unknown format, an unreadable run or an unwritable file.
int run_export(const ExportOptions& options);

}  // namespace hyloop::app
