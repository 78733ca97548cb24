#pragma once
// The run directory (DESIGN.md §9): samples.csv (name[unit] header, 17 significant digits),
// cycles.csv, summary.json, scenario.yaml (the resolved scenario). It is written into a
// temporary sibling directory and renamed into place at the end, so a failed run never leaves a
// half-written directory under the requested name.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "hyloop/experiment/experiment.hpp"

namespace hyloop::experiment {

/// summary.json: steps, times, the experiment's own summary, the git revision.
nlohmann::json make_summary(const Experiment& experiment);

/// The project's git revision ("unknown" outside a checkout), with "-dirty" for local changes.
std::string git_revision();

/// Writes the run directory `out`. Refuses (std::runtime_error) an existing non-empty `out`
/// unless `overwrite`. `extra_summary` (an object) is merged into summary.json (distributed runs
/// add their run id, transport counters and timing there).
void write_run_directory(const Experiment& experiment, const std::filesystem::path& out,
                         bool overwrite = false,
                         const nlohmann::json& extra_summary = nlohmann::json::object());

/// Fails early (before a run) if `out` exists and is not an empty directory.
void check_output_directory(const std::filesystem::path& out, bool overwrite);

/// Formats a double with 17 significant digits (round-trips exactly); NaN/inf as nan/inf.
std::string format_number(double v);

}  // namespace hyloop::experiment
