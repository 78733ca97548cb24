#pragma once
// HDF5 C API helpers shared by the exporter and the HDF5 recorder (private to the library).
#include <hdf5.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hyloop::recording {
struct RunData;
}

namespace hyloop::recording::h5 {

/// An HDF5 identifier closed by its destructor (H5Oclose closes groups, datasets, …; types,
/// spaces and property lists have their own close functions).
class Id {
 public:
  using Closer = herr_t (*)(hid_t);
  Id() = default;
  Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Id() { reset(); }
  Id(Id&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      closer_ = o.closer_;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }
  /// Closes now; returns the closer's status (0 when there was nothing to close).
  herr_t reset() noexcept {
    herr_t rc = 0;
    if (id_ >= 0 && closer_ != nullptr) rc = closer_(id_);
    id_ = H5I_INVALID_HID;
    return rc;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// The messages of HDF5's error stack (innermost last), "" when empty; also silences HDF5's
/// printing to stderr (call once before using the library).
std::string error_stack();
void silence_errors();

/// Throws std::runtime_error("FILE: WHAT: <HDF5's messages>") when `status` < 0.
void check(herr_t status, const std::filesystem::path& file, const std::string& what);
/// The same for an identifier; returns it wrapped with `closer`.
Id checked(hid_t id, Id::Closer closer, const std::filesystem::path& file, const std::string& what);

/// Creates (replacing) a file with the attribute format = "hyloop-run/1".
Id create_file(const std::filesystem::path& file);
Id create_group(const Id& parent, const std::string& name, const std::filesystem::path& file);
/// A variable-length UTF-8 string attribute (h5py reads it as str).
void write_string_attribute(const Id& object, const std::string& name, const std::string& value,
                            const std::filesystem::path& file);
/// A 1-D array attribute of variable-length UTF-8 strings.
void write_strings_attribute(const Id& object, const std::string& name,
                             const std::vector<std::string>& values,
                             const std::filesystem::path& file);
/// A float64 dataset `name` in `group` with attributes unit and header. Fixed-size (`rows`) or,
/// when `extendible`, chunked (`chunk_rows`) and extendible without limit, starting empty.
Id create_column(const Id& group, const std::string& name, const std::string& header,
                 const std::string& unit, std::size_t rows, bool extendible, std::size_t chunk_rows,
                 const std::filesystem::path& file);
/// Appends `n` values to an extendible column that holds `at` values.
void append_column(const Id& dataset, std::size_t at, const double* values, std::size_t n,
                   const std::filesystem::path& file);

/// Writes a whole table as a group of columns (create_column for each, then the values).
struct Table {
  const std::vector<std::string>* headers;
  std::size_t rows;
  const double* values;  // row-major
};
void write_table(const Id& parent, const std::string& group, const Table& table,
                 const std::filesystem::path& file);

/// A group written by write_table or the recorder, read back (the order of its attribute
/// columns).
void read_table(const std::filesystem::path& file, const std::string& group,
                std::vector<std::string>& headers, std::size_t& rows, std::vector<double>& values);

/// The root attributes summary_json, scenario_yaml, run_directory and the group cycles (when
/// the run has cycles) of `data`.
void write_metadata(const Id& file_id, const RunData& data, const std::filesystem::path& file);

}  // namespace hyloop::recording::h5
