#include "hdf5_io.hpp"

#include <mutex>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/recording/run_export.hpp"

namespace hyloop::recording::h5 {
using experiment::ColumnHeader;
using experiment::parse_column_header;
namespace fs = std::filesystem;

namespace {

herr_t collect(unsigned n, const H5E_error2_t* e, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (e->desc != nullptr && e->desc[0] != '\0') {
    if (!out->empty()) *out += "; ";
    *out += e->desc;
  }
  (void)n;
  return 0;
}

herr_t close_type(hid_t id) { return H5Tclose(id); }
herr_t close_space(hid_t id) { return H5Sclose(id); }
herr_t close_plist(hid_t id) { return H5Pclose(id); }
herr_t close_attribute(hid_t id) { return H5Aclose(id); }

Id string_type(const fs::path& file) {
  Id t = checked(H5Tcopy(H5T_C_S1), close_type, file, "string type");
  check(H5Tset_size(t.get(), H5T_VARIABLE), file, "string type");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), file, "string type");
  return t;
}

}  // namespace

void silence_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string error_stack() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &text);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void check(herr_t status, const fs::path& file, const std::string& what) {
  if (status >= 0) return;
  const std::string stack = error_stack();
  throw std::runtime_error(file.string() + ": " + what + " failed" +
                           (stack.empty() ? "" : ": " + stack));
}

Id checked(hid_t id, Id::Closer closer, const fs::path& file, const std::string& what) {
  if (id < 0) check(-1, file, what);
  return Id(id, closer);
}

Id create_file(const fs::path& file) {
  silence_errors();
  Id f = checked(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, file,
                 "creating the file");
  write_string_attribute(f, "format", kRunHdf5Format, file);
  return f;
}

Id create_group(const Id& parent, const std::string& name, const fs::path& file) {
  return checked(H5Gcreate2(parent.get(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Gclose, file, "creating group " + name);
}

void write_string_attribute(const Id& object, const std::string& name, const std::string& value,
                            const fs::path& file) {
  const Id type = string_type(file);
  const Id space = checked(H5Screate(H5S_SCALAR), close_space, file, "attribute " + name);
  const Id attr = checked(
      H5Acreate2(object.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      close_attribute, file, "creating attribute " + name);
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), file, "writing attribute " + name);
}

void write_strings_attribute(const Id& object, const std::string& name,
                             const std::vector<std::string>& values, const fs::path& file) {
  const Id type = string_type(file);
  const hsize_t n = values.size();
  const Id space =
      checked(H5Screate_simple(1, &n, nullptr), close_space, file, "attribute " + name);
  const Id attr = checked(
      H5Acreate2(object.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      close_attribute, file, "creating attribute " + name);
  std::vector<const char*> texts;
  texts.reserve(values.size());
  for (const std::string& v : values) texts.push_back(v.c_str());
  check(H5Awrite(attr.get(), type.get(), texts.data()), file, "writing attribute " + name);
}

Id create_column(const Id& group, const std::string& name, const std::string& header,
                 const std::string& unit, std::size_t rows, bool extendible, std::size_t chunk_rows,
                 const fs::path& file) {
  const hsize_t size = extendible ? 0 : rows;
  const hsize_t max = extendible ? H5S_UNLIMITED : rows;
  const Id space =
      checked(H5Screate_simple(1, &size, &max), close_space, file, "dataspace of " + name);
  const Id plist =
      checked(H5Pcreate(H5P_DATASET_CREATE), close_plist, file, "properties of " + name);
  if (extendible) {
    const hsize_t chunk = chunk_rows;
    check(H5Pset_chunk(plist.get(), 1, &chunk), file, "chunking " + name);
  }
  Id dataset = checked(H5Dcreate2(group.get(), name.c_str(), H5T_IEEE_F64LE, space.get(),
                                  H5P_DEFAULT, plist.get(), H5P_DEFAULT),
                       H5Dclose, file, "creating dataset " + name);
  write_string_attribute(dataset, "unit", unit, file);
  write_string_attribute(dataset, "header", header, file);
  return dataset;
}

void append_column(const Id& dataset, std::size_t at, const double* values, std::size_t n,
                   const fs::path& file) {
  const hsize_t new_size = at + n;
  check(H5Dset_extent(dataset.get(), &new_size), file, "extending a dataset");
  const Id space = checked(H5Dget_space(dataset.get()), close_space, file, "a dataset's space");
  const hsize_t start = at;
  const hsize_t count = n;
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr), file,
        "selecting rows");
  const Id memory =
      checked(H5Screate_simple(1, &count, nullptr), close_space, file, "a memory space");
  check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, values),
        file, "writing rows");
}

void write_table(const Id& parent, const std::string& group_name, const Table& table,
                 const fs::path& file) {
  const Id group = create_group(parent, group_name, file);
  write_strings_attribute(group, "columns", *table.headers, file);
  const std::size_t columns = table.headers->size();
  std::vector<double> column(table.rows);
  for (std::size_t c = 0; c < columns; ++c) {
    const std::string& header = (*table.headers)[c];
    const ColumnHeader h = parse_column_header(header);
    const Id dataset = create_column(group, h.name, header, h.unit, table.rows, false, 0, file);
    for (std::size_t r = 0; r < table.rows; ++r) column[r] = table.values[r * columns + c];
    if (table.rows > 0) {
      check(
          H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column.data()),
          file, "writing " + group_name + "/" + h.name);
    }
  }
}

void read_table(const fs::path& file, const std::string& group_name,
                std::vector<std::string>& headers, std::size_t& rows, std::vector<double>& values) {
  silence_errors();
  const Id f = checked(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file,
                       "opening the file");
  const Id group = checked(H5Gopen2(f.get(), group_name.c_str(), H5P_DEFAULT), H5Gclose, file,
                           "opening group " + group_name);
  {
    const Id attr = checked(H5Aopen(group.get(), "columns", H5P_DEFAULT), close_attribute, file,
                            group_name + ": attribute columns");
    const Id space = checked(H5Aget_space(attr.get()), close_space, file, "columns' space");
    hsize_t n = 0;
    if (H5Sget_simple_extent_ndims(space.get()) != 1) {
      throw std::runtime_error(file.string() + ": " + group_name + ".columns: not a list");
    }
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    const Id type = string_type(file);
    std::vector<char*> texts(n, nullptr);
    check(H5Aread(attr.get(), type.get(), texts.data()), file, "reading columns");
    headers.clear();
    for (char* t : texts) headers.emplace_back(t != nullptr ? t : "");
    check(H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, texts.data()), file,
          "reading columns");
  }
  rows = 0;
  std::vector<double> column;
  for (std::size_t c = 0; c < headers.size(); ++c) {
    const std::string name = parse_column_header(headers[c]).name;
    const Id dataset = checked(H5Dopen2(group.get(), name.c_str(), H5P_DEFAULT), H5Dclose, file,
                               "opening " + group_name + "/" + name);
    const Id space = checked(H5Dget_space(dataset.get()), close_space, file, "a dataset's space");
    hsize_t n = 0;
    if (H5Sget_simple_extent_ndims(space.get()) != 1) {
      throw std::runtime_error(file.string() + ": " + group_name + "/" + name + ": not 1-D");
    }
    H5Sget_simple_extent_dims(space.get(), &n, nullptr);
    if (c == 0) {
      rows = n;
      values.assign(rows * headers.size(), 0.0);
    } else if (n != rows) {
      throw std::runtime_error(file.string() + ": " + group_name + "/" + name + ": " +
                               std::to_string(n) + " rows, expected " + std::to_string(rows));
    }
    column.resize(rows);
    if (rows > 0) {
      check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column.data()),
            file, "reading " + group_name + "/" + name);
    }
    for (std::size_t r = 0; r < rows; ++r) values[r * headers.size() + c] = column[r];
  }
}

void write_metadata(const Id& file_id, const RunData& data, const fs::path& file) {
  write_string_attribute(file_id, "summary_json", data.summary_json, file);
  write_string_attribute(file_id, "scenario_yaml", data.scenario_yaml, file);
  write_string_attribute(file_id, "run_directory", fs::absolute(data.dir).string(), file);
  if (!data.cycles.headers.empty()) {
    write_table(file_id, "cycles",
                {&data.cycles.headers, data.cycles.rows, data.cycles.values.data()}, file);
  }
}

}  // namespace hyloop::recording::h5
