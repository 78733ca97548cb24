#pragma once
// The HDF5 recorder (scenario `outputs.format: hdf5`, docs/export.md): every row the run's
// recorder takes (Experiment::record_columns(), every cycle) goes to run.h5 while the run runs,
// for runs too long for samples.csv. The file has the layout of run_export.hpp; /samples holds
// one chunked, extendible float64 dataset per record column (unit and header as attributes).
//
// Threading: on_row() is called by the loop (RT-safe: no allocation, no lock, no system call):
// it copies the row into a single-producer/single-consumer ring of kRingRows rows allocated by
// the constructor and publishes it with a release store. A writer thread drains the ring every
// kFlushPeriod (or as soon as kFlushRows rows wait), appends the rows to the datasets and
// flushes the file (H5Fflush). Recorded streams are lossless: when the ring is full, on_row()
// waits for the writer (yielding; counted in stalls()), which only happens when the writer is
// slower than the loop (docs/performance.md, "HDF5 recording": it is ~40× faster at 1 kHz and 30
// columns) or when the loop runs faster than real time (in-process, lockstep).
//
// Crash safety: the run journal (run_journal.hpp) stays the durable record. run.h5 is flushed
// every kFlushPeriod, but HDF5 1.10 does not promise a readable file after its writer was killed;
// `hyloop summary --recover` rewrites run.h5 from the journal (recover_run_directory).
// Errors of the HDF5 library (disk full, I/O) are latched: the writer stops, rows are counted as
// lost and finish() throws naming the file.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/experiment/experiment.hpp"

namespace hyloop::recording {

// The framework's types a recording is made of (experiment.hpp).
using experiment::Experiment;
using experiment::RowObserver;

class Hdf5Recorder final : public RowObserver {
 public:
  static constexpr std::size_t kRingRows = 1u << 16;  // 65.5 s at 1 kHz
  static constexpr std::size_t kFlushRows = 1u << 13;
  static constexpr std::chrono::milliseconds kFlushPeriod{250};
  static constexpr std::size_t kChunkRows = 1u << 13;

  /// Creates `file` (replacing it) with one dataset per column ("name[unit]") and starts the
  /// writer. @throws std::runtime_error naming the file and the library's reason.
  Hdf5Recorder(const std::filesystem::path& file, const std::vector<std::string>& columns);
  /// Stops the writer and closes the file (errors dropped: call finish() first).
  ~Hdf5Recorder() override;
  Hdf5Recorder(const Hdf5Recorder&) = delete;
  Hdf5Recorder& operator=(const Hdf5Recorder&) = delete;

  /// Queues one row (columns().size() values; another length is counted as lost). RT-safe
  /// unless the ring is full (then it waits for the writer).
  void on_row(std::span<const double> row) noexcept override;

  /// Drains the ring, writes the run directory's metadata (summary.json, scenario.yaml,
  /// cycles.csv of `run_dir`, as export does), fsyncs and closes the file.
  /// @throws std::runtime_error (the first error of the writer, or of this).
  void finish(const std::filesystem::path& run_dir);

  [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }
  [[nodiscard]] std::uint64_t rows_written() const noexcept { return rows_written_.load(); }
  /// Times on_row() found the ring full and waited.
  [[nodiscard]] std::uint64_t stalls() const noexcept { return stalls_.load(); }
  /// Rows lost to an error (wrong length, a failed write).
  [[nodiscard]] std::uint64_t rows_lost() const noexcept { return rows_lost_.load(); }
  /// The writer's busy time (s) in total and in its longest flush, and the flushes.
  [[nodiscard]] double writer_seconds() const;
  [[nodiscard]] double longest_flush_s() const;
  [[nodiscard]] std::uint64_t flushes() const;
  /// The first error ("" while none).
  [[nodiscard]] std::string error() const;

 private:
  struct File;  // the HDF5 handles
  void writer() noexcept;
  /// Writes what the ring holds now (writer thread, or finish() after it stopped).
  void drain();
  void fail(const std::string& message) noexcept;

  std::filesystem::path file_;
  std::size_t columns_;
  std::unique_ptr<File> h5_;
  std::vector<double> ring_;        // kRingRows × columns_
  std::vector<double> column_buf_;  // kRingRows values, the writer's transposition buffer
  alignas(64) std::atomic<std::uint64_t> head_{0};  // rows published by on_row()
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // rows taken by the writer
  std::atomic<std::uint64_t> rows_written_{0};
  std::atomic<std::uint64_t> stalls_{0};
  std::atomic<std::uint64_t> rows_lost_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> stopping_{false};

  mutable std::mutex stats_mutex_;  // writer statistics and the error (never on_row())
  double writer_seconds_ = 0.0;
  double longest_flush_s_ = 0.0;
  std::uint64_t flushes_ = 0;
  std::string error_;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace hyloop::recording
