#pragma once
// Where the data files a scenario names (ground_motion.file) come from: the one policy (issue 10,
// docs/scenarios.md "Data files").
//
//   local   `hyloop run|validate|… FILE` on the command line, the user's own files: a reference
//           is an absolute path, or relative: to the project root (the shipped scenarios' spelling
//           data/ground_motion/…), else to the scenario file's folder, else a name in the data
//           directories.
//   server  a scenario that arrives as text (gRPC LoadScenario, RunIdentification, a service's
//           Configure): a reference is a NAME in one of the server's data directories, never a
//           path of the client's choosing:
//             1..8 components separated by '/', each of [A-Za-z0-9_.-], not starting with '.',
//             at most 255 characters in all (so no absolute path, no "..", no "\");
//             a leading "data/" is the project-relative spelling of the same name and is dropped;
//             the data directories are searched in order; each component is opened relative to
//             the directory with O_NOFOLLOW (a symbolic link below a data directory is refused).
//   both    the file is opened with O_NONBLOCK (a FIFO cannot block the call), must be a regular
//           file (fstat S_ISREG: not /dev/zero, not a FIFO) of at most kMaxDataFileBytes, and is
//           read up to that size; errors name the reference and say what is wrong without
//           quoting file content.
//
// The server's data directories: set_server_data_directories() (services' `--data-dir DIR`,
// repeatable, see take_data_dir_options), else HYLOOP_DATA_DIRS (':'-separated), else the
// project's data/ when it exists.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "hyloop/core/ground_motion.hpp"

namespace hyloop::experiment {

inline constexpr std::size_t kMaxDataFileBytes = 64u * 1024u * 1024u;
inline constexpr std::size_t kMaxDataNameChars = 255;
inline constexpr int kMaxDataNameComponents = 8;

struct DataSource {
  enum class Policy { kServer, kLocal };
  Policy policy = Policy::kServer;
  std::filesystem::path scenario_dir;  ///< local: the scenario file's folder

  /// A scenario that arrived as text: names in the server's data directories only.
  static DataSource server() { return {}; }
  /// A scenario file on the command line.
  static DataSource local_file(const std::string& scenario_path);
};

/// A data file's text and where it was found (for the run's summary).
struct DataFile {
  std::string text;
  std::string found_at;
};

/// Reads the file `reference` names under `source`'s policy. @throws ScenarioError
/// "FIELD = \"REFERENCE\": what is wrong" (the reference quoted at most 200 characters).
DataFile read_data_file(const std::string& reference, const DataSource& source,
                        const std::string& field);

/// The record a scenario's ground_motion block names (`file`, `format`, `unit`), read under
/// `source`'s policy and parsed (m/s²; the kinds scale and resample it). @throws ScenarioError
/// "ORIGIN: ground_motion.file = ..." when it cannot be read, "ORIGIN: ground_motion: ..." when
/// it does not parse.
core::GroundMotion read_ground_motion_record(const std::string& file, const std::string& format,
                                             const std::string& unit, const DataSource& source,
                                             const std::string& origin);

/// Where a relative data path (data/...) is looked up first: an installed hyloop's
/// <prefix>/share/hyloop (beside the binary, when it holds data/), else the source tree.
std::filesystem::path project_root();
/// The server's data directories, in search order (see the header comment).
std::vector<std::filesystem::path> server_data_directories();
/// Replaces them (each must be an existing directory whose path has no ':') and exports them as
/// HYLOOP_DATA_DIRS, which a kind plug-in's own copy of this code reads. @throws ScenarioError
/// naming it.
void set_server_data_directories(const std::vector<std::filesystem::path>& dirs);

/// Removes every "--data-dir DIR" pair from argv and, when there was one, sets the server's data
/// directories to them. Returns an error message, empty on success.
std::string take_data_dir_options(int& argc, char** argv);

}  // namespace hyloop::experiment
