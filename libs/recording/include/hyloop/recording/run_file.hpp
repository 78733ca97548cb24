#pragma once
// The one way a run directory's files are opened for reading (export, summary, report,
// compare, recovery, the HDF5 recorder's metadata; docs/security.md, "Run directories"):
//   - `name` is one path component directly inside the directory (no '/', not "." or "..");
//   - the entry is a regular file: a symbolic link is refused (never followed, O_NOFOLLOW), and
//     so are FIFOs, devices, sockets and directories (checked with lstat before opening, so a
//     FIFO cannot block and a device is never opened, and with fstat on the descriptor opened);
//   - it holds at most the limit of its kind (kMaxRunTextBytes, kMaxRunTableBytes), checked
//     before reading and again while reading (a file that grows is cut off with an error), and
//     getline() refuses a line longer than kMaxRunLineBytes.
// Errors are RunDirectoryError naming the file, what it is and the limit.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::recording {

/// summary.json, scenario.yaml, INCOMPLETE, montecarlo.json: 16 MiB.
inline constexpr std::uint64_t kMaxRunTextBytes = std::uint64_t{16} << 20;
/// samples.csv, cycles.csv, run.h5, journal.sqlite: 64 GiB, above what the longest accepted
/// run writes (5e7 steps of 23 SITS columns at 18.1 bytes a value: 21 GB of samples.csv; its
/// journal 9.9 GB).
inline constexpr std::uint64_t kMaxRunTableBytes = std::uint64_t{64} << 30;
/// A line of a table: 1 MiB (a SITS row is about 420 bytes), so that a file without newlines
/// is refused after 1 MiB instead of being read whole into one line.
inline constexpr std::size_t kMaxRunLineBytes = std::size_t{1} << 20;

/// A regular file of a run directory, open for reading (see the top of this file).
class RunFile {
 public:
  /// @throws RunDirectoryError (errno ENOENT when there is no such entry).
  RunFile(const std::filesystem::path& dir, std::string_view name, std::uint64_t max_bytes);
  ~RunFile();
  RunFile(const RunFile&) = delete;
  RunFile& operator=(const RunFile&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  /// The next line without its "\n" (and "\r"); false at the end of the file.
  bool getline(std::string& line);
  /// The rest of the file.
  std::string read_all();

 private:
  bool fill();

  std::filesystem::path path_;
  std::uint64_t max_bytes_;
  std::uint64_t size_ = 0;
  std::uint64_t read_ = 0;
  int fd_ = -1;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
};

/// Whether `dir` has an entry `name` of any type (a symlink counts: opening it is then refused).
bool has_run_entry(const std::filesystem::path& dir, std::string_view name);

/// The whole of `dir/name` through RunFile.
std::string read_run_file(const std::filesystem::path& dir, std::string_view name,
                          std::uint64_t max_bytes = kMaxRunTextBytes);

/// Checks `dir/name` as RunFile does (a regular file, not a link, at most `max_bytes`) for a
/// reader that opens by path (SQLite, HDF5). @throws RunDirectoryError.
void check_run_file(const std::filesystem::path& dir, std::string_view name,
                    std::uint64_t max_bytes);

/// Refuses a run directory holding anything but regular files and directories (a symlink, FIFO,
/// device or socket), naming the first: recovery writes into the directory by name.
/// @throws RunDirectoryError.
void refuse_special_entries(const std::filesystem::path& dir);

}  // namespace hyloop::recording
