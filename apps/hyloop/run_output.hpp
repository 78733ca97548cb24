#pragma once
// What `hyloop run` and `hyloop up` say and do around a run's output: the --out directory
// (what --force may replace), the scenario's notices before the run, and warnings after it.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace hyloop::app {

/// Why `dir` is not a hyloop run directory that --force may replace: "" when it is one. A run
/// directory is a real directory (not a symlink) owned by this user, holding summary.json,
/// INCOMPLETE or the journal, and only what hyloop writes there: the run's files and a plots/
/// directory of .png/.md files (`hyloop report`).
std::string not_a_run_directory(const std::filesystem::path& dir);

/// Before a run: `out` is absent or an empty directory, or (with `force`) a run directory.
/// @throws std::runtime_error saying what is there and what to do.
void check_out_directory(const std::filesystem::path& out, bool force);

/// --force: checks `out` again and removes it (a run directory whose recorder is alive is kept).
/// @throws std::runtime_error (recording::RunDirectoryError).
void replace_out_directory(const std::filesystem::path& out);

/// "hyloop: warning: <notice>" for each notice of the scenario (a SITS scenario's gains all 0,
/// a metrics window shortened to the run); nothing for a scenario that does not parse here.
void print_scenario_notices(const std::string& path, const std::vector<std::string>& overrides,
                            std::ostream& out);
/// "hyloop: warning: <notice>" for each of `notices`.
void print_notices(const std::vector<std::string>& notices, std::ostream& out);
/// With HYLOOP_COUNT_PARSES set: "hyloop: scenario YAML parses: N" (the test that holds `hyloop
/// run` and `validate` to one parse reads it).
void report_yaml_parses(std::ostream& out);

/// After a run, from its summary.json: a prominent warning when the loop diverged or stopped on
/// a safety limit before its end. Returns whether it warned.
bool warn_about_outcome(const nlohmann::json& summary, std::ostream& out);

/// --out FILE of identify, analyze and tune: writes `text`, creating the parent directories.
/// @throws std::runtime_error naming the file.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace hyloop::app
