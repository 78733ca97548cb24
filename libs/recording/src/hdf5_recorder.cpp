#include "hyloop/recording/hdf5_recorder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "hdf5_io.hpp"
#include "hyloop/recording/run_export.hpp"

namespace hyloop::recording {
using experiment::ColumnHeader;
using experiment::parse_column_header;
namespace fs = std::filesystem;

struct Hdf5Recorder::File {
  h5::Id file;
  h5::Id samples;
  std::vector<h5::Id> columns;
};

Hdf5Recorder::Hdf5Recorder(const fs::path& file, const std::vector<std::string>& columns)
    : file_(file), columns_(columns.size()), h5_(std::make_unique<File>()) {
  if (columns_ == 0) throw std::runtime_error(file.string() + ": no columns");
  std::set<std::string> seen;
  h5_->file = h5::create_file(file);
  h5_->samples = h5::create_group(h5_->file, "samples", file);
  h5::write_strings_attribute(h5_->samples, "columns", columns, file);
  for (const std::string& header : columns) {
    const ColumnHeader h = parse_column_header(header);
    if (h.name.empty() || h.name.find('/') != std::string::npos || !seen.insert(h.name).second) {
      throw std::runtime_error(file.string() + ": column \"" + header +
                               "\": empty, not a valid HDF5 name, or twice");
    }
    h5_->columns.push_back(
        h5::create_column(h5_->samples, h.name, header, h.unit, 0, true, kChunkRows, file));
  }
  h5::check(H5Fflush(h5_->file.get(), H5F_SCOPE_GLOBAL), file, "flushing");
  ring_.assign(kRingRows * columns_, 0.0);
  column_buf_.assign(kRingRows, 0.0);
  thread_ = std::thread([this] { writer(); });
}

Hdf5Recorder::~Hdf5Recorder() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Hdf5Recorder::fail(const std::string& message) noexcept {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  if (error_.empty()) error_ = message;
  failed_.store(true);
}

void Hdf5Recorder::on_row(std::span<const double> row) noexcept {
  if (row.size() != columns_ || failed_.load(std::memory_order_relaxed)) {
    rows_lost_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  if (head - tail_.load(std::memory_order_acquire) >= kRingRows) {
    stalls_.fetch_add(1, std::memory_order_relaxed);
    while (head - tail_.load(std::memory_order_acquire) >= kRingRows) {
      if (failed_.load(std::memory_order_relaxed) || stopping_.load(std::memory_order_relaxed)) {
        rows_lost_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      std::this_thread::yield();
    }
  }
  std::copy(row.begin(), row.end(),
            ring_.begin() + static_cast<std::ptrdiff_t>((head % kRingRows) * columns_));
  head_.store(head + 1, std::memory_order_release);
}

void Hdf5Recorder::drain() {
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  const std::uint64_t head = head_.load(std::memory_order_acquire);
  if (head == tail) return;
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t at = rows_written_.load(std::memory_order_relaxed);
  // The ring's rows [tail, head) in at most two contiguous pieces.
  const std::size_t first = static_cast<std::size_t>(tail % kRingRows);
  const std::size_t n = static_cast<std::size_t>(head - tail);
  for (std::size_t c = 0; c < columns_; ++c) {
    for (std::size_t i = 0; i < n; ++i) {
      column_buf_[i] = ring_[((first + i) % kRingRows) * columns_ + c];
    }
    h5::append_column(h5_->columns[c], static_cast<std::size_t>(at), column_buf_.data(), n, file_);
  }
  tail_.store(head, std::memory_order_release);
  h5::check(H5Fflush(h5_->file.get(), H5F_SCOPE_LOCAL), file_, "flushing");
  rows_written_.store(at + n, std::memory_order_relaxed);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  writer_seconds_ += took;
  longest_flush_s_ = std::max(longest_flush_s_, took);
  ++flushes_;
}

void Hdf5Recorder::writer() noexcept {
  auto last = std::chrono::steady_clock::now();
  constexpr auto kPoll = std::chrono::milliseconds(5);
  while (!stopping_.load() && !failed_.load()) {
    std::this_thread::sleep_for(kPoll);
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t waiting =
        head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_relaxed);
    if (waiting < kFlushRows && now - last < kFlushPeriod) continue;
    last = now;
    try {
      drain();
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }
}

void Hdf5Recorder::finish(const fs::path& run_dir) {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  {
    const std::lock_guard<std::mutex> lock(stats_mutex_);
    if (finished_) throw std::runtime_error(file_.string() + ": finished already");
    finished_ = true;
  }
  const auto raise = [&](const std::string& message) {
    fail(message);
    h5_.reset();
    throw std::runtime_error(error());
  };
  if (failed_.load()) raise(error());
  try {
    drain();
    const std::uint64_t lost = rows_lost_.load();
    if (lost > 0) {
      raise(file_.string() + ": " + std::to_string(lost) +
            " rows were not written (a row of the wrong length); the journal holds them");
    }
    // The metadata export writes: the summary, the resolved scenario, cycles.csv.
    h5::write_metadata(h5_->file, read_run_metadata(run_dir), file_);
    h5::check(H5Fflush(h5_->file.get(), H5F_SCOPE_GLOBAL), file_, "flushing");
    h5_->columns.clear();
    h5_->samples.reset();
    h5::check(h5_->file.reset(), file_, "closing");
    h5_.reset();
  } catch (const std::exception& e) {
    raise(e.what());
  }
  const int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    raise(file_.string() + ": fsync failed: " + std::strerror(e));
  }
  ::close(fd);
}

double Hdf5Recorder::writer_seconds() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return writer_seconds_;
}
double Hdf5Recorder::longest_flush_s() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return longest_flush_s_;
}
std::uint64_t Hdf5Recorder::flushes() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return flushes_;
}
std::string Hdf5Recorder::error() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return error_;
}

}  // namespace hyloop::recording
