#include "hyloop/recording/run_export.hpp"

#include <fcntl.h>
#include <matio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>
#include <stdexcept>

#include "hdf5_io.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_file.hpp"

namespace hyloop::recording {
using experiment::ColumnHeader;
using experiment::excerpt;
using experiment::format_number;
using experiment::parse_column_header;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

}  // namespace

RunTable read_run_table(const fs::path& path) {
  RunFile f(path.parent_path(), path.filename().string(), kMaxRunTableBytes);
  RunTable t;
  std::string line;
  if (!f.getline(line) || line.empty()) {
    throw std::runtime_error(path.string() + ": empty (expected a header of name[unit] columns)");
  }
  t.headers = split(line);
  const std::size_t columns = t.headers.size();
  std::size_t line_no = 1;
  while (f.getline(line)) {
    ++line_no;
    if (line.empty()) continue;
    const char* p = line.data();
    const char* end = p + line.size();
    for (std::size_t c = 0; c < columns; ++c) {
      double v = 0.0;
      const char* cell_end = std::find(p, end, ',');
      // from_chars does not take a leading '+'; format_number never writes one.
      const auto r = std::from_chars(p, cell_end, v);
      if (r.ec != std::errc() || r.ptr != cell_end) {
        throw std::runtime_error(path.string() + ": line " + std::to_string(line_no) + ", column " +
                                 std::to_string(c + 1) + " (" + t.headers[c] + "): \"" +
                                 excerpt(std::string(p, cell_end)) + "\" is not a number");
      }
      t.values.push_back(v);
      p = cell_end;
      if (c + 1 < columns) {
        if (p == end) {
          throw std::runtime_error(path.string() + ": line " + std::to_string(line_no) + ": " +
                                   std::to_string(c + 1) + " values, expected " +
                                   std::to_string(columns));
        }
        ++p;
      }
    }
    if (p != end) {
      throw std::runtime_error(path.string() + ": line " + std::to_string(line_no) +
                               ": more than " + std::to_string(columns) + " values");
    }
    ++t.rows;
  }
  return t;
}

namespace {

bool is_matlab_name(const std::string& name) {
  if (name.empty() || name.size() > 63 || std::isalpha(static_cast<unsigned char>(name[0])) == 0)
    return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

/// The column names of a table, checked: present, unique, usable as an HDF5 link name and,
/// when `matlab`, a MATLAB identifier.
std::vector<ColumnHeader> checked_columns(const RunTable& table, const std::string& what,
                                          bool matlab) {
  std::vector<ColumnHeader> out;
  std::set<std::string> seen;
  for (const std::string& header : table.headers) {
    ColumnHeader h = parse_column_header(header);
    const auto bad = [&](const std::string& why) {
      throw std::runtime_error(what + ": column \"" + excerpt(header) + "\": " + why);
    };
    if (h.name.empty()) bad("no name");
    if (h.name.find('/') != std::string::npos || h.name == ".") bad("not a valid HDF5 name");
    if (matlab && !is_matlab_name(h.name)) {
      bad("not a MATLAB field name (a letter, then letters, digits or _, at most 63)");
    }
    if (!seen.insert(h.name).second) bad("appears twice");
    out.push_back(std::move(h));
  }
  return out;
}

// --- MAT (matio) ---

struct MatVar {
  matvar_t* var = nullptr;
  explicit MatVar(matvar_t* v) : var(v) {}
  ~MatVar() {
    if (var != nullptr) Mat_VarFree(var);
  }
  MatVar(const MatVar&) = delete;
  MatVar& operator=(const MatVar&) = delete;
  matvar_t* release() { return std::exchange(var, nullptr); }
};

matvar_t* mat_string(const char* name, const std::string& text) {
  std::size_t dims[2] = {1, text.size()};
  // MAT_T_UTF8 keeps non-ASCII text (units, the scenario's names) as written. matio copies the
  // data rounded up to 4 bytes (ASan: a read of 1708 bytes from a 1705-byte string): pad it.
  std::string padded = text;
  padded.append(8, '\0');
  return Mat_VarCreate(name, MAT_C_CHAR, MAT_T_UTF8, 2, dims, padded.data(), 0);
}

matvar_t* mat_column(const char* name, std::vector<double>& values) {
  std::size_t dims[2] = {values.size(), 1};
  return Mat_VarCreate(name, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, values.data(), 0);
}

void mat_write(mat_t* mat, MatVar& var, const fs::path& file, const std::string& name) {
  if (var.var == nullptr)
    throw std::runtime_error(file.string() + ": creating " + name + " failed");
  if (Mat_VarWrite(mat, var.var, MAT_COMPRESSION_NONE) != 0) {
    throw std::runtime_error(file.string() + ": writing " + name + " failed" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  }
}

/// A struct `name` with one field per column (values) and `name_units` with the unit strings,
/// and `name_columns`, a cell array of the headers.
void mat_table(mat_t* mat, const std::string& name, const RunTable& table,
               const std::vector<ColumnHeader>& columns, const fs::path& file) {
  std::vector<const char*> fields;
  for (const ColumnHeader& c : columns) fields.push_back(c.name.c_str());
  std::size_t one[2] = {1, 1};
  MatVar values(Mat_VarCreateStruct(name.c_str(), 2, one, fields.data(),
                                    static_cast<unsigned>(fields.size())));
  const std::string units_name = name + "_units";
  MatVar units(Mat_VarCreateStruct(units_name.c_str(), 2, one, fields.data(),
                                   static_cast<unsigned>(fields.size())));
  if (values.var == nullptr || units.var == nullptr) {
    throw std::runtime_error(file.string() + ": creating " + name + " failed");
  }
  std::vector<std::vector<double>> data(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    data[c] = table.column(c);
    matvar_t* column = mat_column(columns[c].name.c_str(), data[c]);
    matvar_t* unit = mat_string(columns[c].name.c_str(), columns[c].unit);
    if (column == nullptr || unit == nullptr) {
      if (column != nullptr) Mat_VarFree(column);
      if (unit != nullptr) Mat_VarFree(unit);
      throw std::runtime_error(file.string() + ": creating " + name + "." + columns[c].name +
                               " failed");
    }
    Mat_VarSetStructFieldByName(values.var, columns[c].name.c_str(), 0, column);
    Mat_VarSetStructFieldByName(units.var, columns[c].name.c_str(), 0, unit);
  }
  mat_write(mat, values, file, name);
  mat_write(mat, units, file, units_name);

  const std::string cells_name = name + "_columns";
  std::size_t cell_dims[2] = {1, table.headers.size()};
  MatVar cells(Mat_VarCreate(cells_name.c_str(), MAT_C_CELL, MAT_T_CELL, 2, cell_dims, nullptr, 0));
  if (cells.var == nullptr) throw std::runtime_error(file.string() + ": creating " + cells_name);
  for (std::size_t c = 0; c < table.headers.size(); ++c) {
    matvar_t* text = mat_string("", table.headers[c]);
    if (text == nullptr) throw std::runtime_error(file.string() + ": creating " + cells_name);
    Mat_VarSetCell(cells.var, static_cast<int>(c), text);
  }
  mat_write(mat, cells, file, cells_name);
}

void fsync_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(file.string() + ": fsync failed: " + std::strerror(e));
  }
  ::close(fd);
}

}  // namespace

std::vector<double> RunTable::column(std::size_t c) const {
  std::vector<double> out(rows);
  const std::size_t n = headers.size();
  for (std::size_t r = 0; r < rows; ++r) out[r] = values[r * n + c];
  return out;
}

RunData read_run_data(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir.string() + ": no such directory");
  if (is_incomplete(dir)) {
    throw std::runtime_error(dir.string() +
                             ": an incomplete run directory (INCOMPLETE): its recorder is running "
                             "or ended before completing it; recover it first with `hyloop "
                             "summary --recover " +
                             dir.string() + "`");
  }
  RunData d = read_run_metadata(dir);
  d.samples = read_run_table(dir / "samples.csv");
  if (d.samples.rows == 0 && has_run_entry(dir, kRunHdf5File)) {
    d.samples = read_hdf5_table(dir / kRunHdf5File, "samples");
  }
  return d;
}

RunTable read_hdf5_table(const fs::path& file, const std::string& group) {
  check_run_file(file.parent_path(), file.filename().string(), kMaxRunTableBytes);
  RunTable t;
  h5::read_table(file, group, t.headers, t.rows, t.values);
  return t;
}

RunData read_run_metadata(const fs::path& dir) {
  RunData d;
  d.dir = dir;
  if (has_run_entry(dir, "cycles.csv")) d.cycles = read_run_table(dir / "cycles.csv");
  d.summary_json = read_run_file(dir, "summary.json");
  d.scenario_yaml = read_run_file(dir, "scenario.yaml");
  return d;
}

ExportFormat parse_export_format(const std::string& text) {
  if (text == "hdf5") return ExportFormat::kHdf5;
  if (text == "mat") return ExportFormat::kMat;
  throw std::invalid_argument("--format = \"" + excerpt(text) + "\": must be hdf5 or mat");
}

void write_hdf5(const RunData& data, const fs::path& file) {
  checked_columns(data.samples, (data.dir / "samples.csv").string(), false);
  checked_columns(data.cycles, (data.dir / "cycles.csv").string(), false);
  h5::Id f = h5::create_file(file);
  h5::write_table(f, "samples",
                  {&data.samples.headers, data.samples.rows, data.samples.values.data()}, file);
  h5::write_metadata(f, data, file);
  h5::check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), file, "flushing");
  h5::check(f.reset(), file, "closing");
  fsync_file(file);
}

void write_mat(const RunData& data, const fs::path& file) {
  const auto samples = checked_columns(data.samples, (data.dir / "samples.csv").string(), true);
  const auto cycles = checked_columns(data.cycles, (data.dir / "cycles.csv").string(), true);
  std::error_code ec;
  fs::remove(file, ec);
  const std::string header = "hyloop run " + fs::absolute(data.dir).string();
  mat_t* mat = Mat_CreateVer(file.c_str(), header.c_str(), MAT_FT_MAT5);
  if (mat == nullptr) {
    throw std::runtime_error(file.string() + ": cannot be created" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  }
  try {
    mat_table(mat, "samples", data.samples, samples, file);
    if (!data.cycles.headers.empty()) mat_table(mat, "cycles", data.cycles, cycles, file);
    MatVar summary(mat_string("summary_json", data.summary_json));
    mat_write(mat, summary, file, "summary_json");
    MatVar scenario(mat_string("scenario_yaml", data.scenario_yaml));
    mat_write(mat, scenario, file, "scenario_yaml");
    MatVar format(mat_string("format", kRunHdf5Format));
    mat_write(mat, format, file, "format");
  } catch (...) {
    Mat_Close(mat);
    throw;
  }
  if (Mat_Close(mat) != 0) throw std::runtime_error(file.string() + ": closing failed");
  fsync_file(file);
}

void export_run(const fs::path& dir, ExportFormat format, const fs::path& out) {
  const RunData data = read_run_data(dir);
  if (format == ExportFormat::kHdf5) {
    write_hdf5(data, out);
  } else {
    write_mat(data, out);
  }
}

}  // namespace hyloop::recording
