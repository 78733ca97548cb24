#pragma once
// A run directory in the formats labs analyse in (docs/export.md): `hyloop export RUN --format
// hdf5|mat --out FILE`, and the scenario field `outputs.format` (csv | hdf5) that records the
// run to HDF5 while it runs (hdf5_recorder.hpp).
//
// Units: every column of samples.csv and cycles.csv is headed "name[unit]" (DESIGN.md §9);
// parse_column_header() is the one place that splits a header into name and unit.
//
// HDF5 layout ("hyloop-run/1", written with the HDF5 C library):
//   /            attributes format, summary_json (summary.json's text), scenario_yaml (the
//                resolved scenario), run_directory
//   /samples/<name>   float64[rows], attributes unit and header ("x[m]"); one dataset per
//                     column of samples.csv, in its order (attribute columns of /samples lists
//                     the headers in order)
//   /cycles/<name>    the same for cycles.csv (absent when the run has none)
// MAT layout (MATLAB 5 via matio; scipy.io.loadmat reads it):
//   samples, cycles   structs, one field per column (a float64 column vector)
//   samples_units, cycles_units   structs of the same fields holding the unit strings
//   samples_columns, cycles_columns   cell arrays of the "name[unit]" headers, in order
//   summary_json, scenario_yaml   char arrays (jsondecode(summary_json) in MATLAB)
// MATLAB field names must be identifiers of at most 63 characters: a column name that is not
// one is refused (no silent renaming). Values are the doubles of samples.csv bit for bit (its 17
// significant digits read back exactly).

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::recording {

/// The HDF5 file of a run directory recorded with outputs.format: hdf5.
inline constexpr const char* kRunHdf5File = "run.h5";
inline constexpr const char* kRunHdf5Format = "hyloop-run/1";

/// A table of a run directory: "name[unit]" headers and row-major values.
struct RunTable {
  std::vector<std::string> headers;
  std::size_t rows = 0;
  std::vector<double> values;  // rows × headers.size()
  /// Column `c` as a vector.
  [[nodiscard]] std::vector<double> column(std::size_t c) const;
};

/// A "name[unit]" CSV of a run directory (samples.csv, cycles.csv), every value read back
/// exactly. @throws std::runtime_error naming the file, line and column of a bad value.
RunTable read_run_table(const std::filesystem::path& csv);

/// A group of columns of an HDF5 file of the layout above ("samples", "cycles"), in the order
/// of the group's attribute columns. @throws std::runtime_error naming the file and what is wrong.
RunTable read_hdf5_table(const std::filesystem::path& file, const std::string& group);

/// What an export holds.
struct RunData {
  std::filesystem::path dir;
  RunTable samples;
  RunTable cycles;  // empty headers when the run has no cycles.csv
  std::string summary_json;
  std::string scenario_yaml;
};

/// Reads cycles.csv (when present), summary.json and scenario.yaml: everything but the
/// samples; the recorder of run.h5 calls it before INCOMPLETE goes. @throws std::runtime_error.
RunData read_run_metadata(const std::filesystem::path& dir);

/// Reads samples.csv, cycles.csv, summary.json and scenario.yaml; the samples come from run.h5
/// instead when samples.csv holds no rows and run.h5 exists (outputs.samples: false with
/// outputs.format: hdf5). Refuses an incomplete run
/// directory (INCOMPLETE) with the command that recovers it, and a malformed file with its line
/// and column. @throws std::runtime_error.
RunData read_run_data(const std::filesystem::path& dir);

enum class ExportFormat { kHdf5, kMat };
/// "hdf5" | "mat". @throws std::invalid_argument naming the value and the allowed ones.
ExportFormat parse_export_format(const std::string& text);

/// Writes `data` to `file` (created or replaced). @throws std::runtime_error naming the file
/// and the library's reason.
void write_hdf5(const RunData& data, const std::filesystem::path& file);
void write_mat(const RunData& data, const std::filesystem::path& file);

/// `hyloop export`: read_run_data(dir) written as `format` to `out`.
void export_run(const std::filesystem::path& dir, ExportFormat format,
                const std::filesystem::path& out);

}  // namespace hyloop::recording
