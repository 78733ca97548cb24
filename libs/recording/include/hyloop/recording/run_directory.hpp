#pragma once
// The run directory (DESIGN.md §9): samples.csv (name[unit] header, 17 significant digits),
// cycles.csv, summary.json, scenario.yaml (the resolved scenario), journal.sqlite (every row the
// recorder received, run_journal.hpp).
//
// Life of a run directory (docs/reliability.md, "Recording"):
//   1. RunRecording creates it at the start of the run with the marker file INCOMPLETE (held
//      under an exclusive flock by the recorder for as long as it lives) and the journal;
//   2. rows go to the journal as they arrive (committed every 0.25 s);
//   3. complete() closes the journal, writes and fsyncs the files and the directory, and removes
//      INCOMPLETE last. Until then the directory says it is incomplete.
// A recorder killed at any instant leaves INCOMPLETE and the journal: recover_run_directory()
// (`hyloop summary --recover DIR`) replays the journal through the same Experiment recorder and
// writes the files with "incomplete": true in summary.json. Every write is checked: a full disk
// or an I/O error throws RunDirectoryError naming the file and the system's message.
// With outputs.format: hdf5 the rows also go to run.h5 as they arrive (hdf5_recorder.hpp);
// complete() and recovery finish it after the other files, before INCOMPLETE goes.

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/recording/hdf5_recorder.hpp"
#include "hyloop/recording/run_journal.hpp"

namespace hyloop::recording {

// The framework's types a recording is made of (experiment.hpp).
using experiment::Experiment;
using experiment::RowObserver;

inline constexpr const char* kIncompleteMarker = "INCOMPLETE";
inline constexpr const char* kJournalFile = "journal.sqlite";
/// The first line of INCOMPLETE after a write of the run directory failed (a full disk):
/// "recording failed: REASON", read back by recovery.
inline constexpr const char* kRecordingFailed = "recording failed: ";

/// A run directory cannot be created, written or recovered. `error_number()` is the errno behind
/// it (ENOSPC for a full disk), 0 when there is none.
class RunDirectoryError : public std::runtime_error {
 public:
  RunDirectoryError(const std::string& message, int error_number)
      : std::runtime_error(message), error_number_(error_number) {}
  [[nodiscard]] int error_number() const noexcept { return error_number_; }

 private:
  int error_number_;
};

/// summary.json: steps, times, the experiment's own summary, the git revision.
nlohmann::json make_summary(const Experiment& experiment);

/// The project's git revision ("unknown" outside a checkout), with "-dirty" for local changes.
std::string git_revision();

/// "<name>-<UTC stamp>-<pid>-<n>": the id of a run.
std::string make_run_id(const std::string& name);

/// A run directory name a client may give (the coordinator's Start.out_dir): one path component
/// of letters, digits and "._-+=@,", not starting with '.' or '-', at most 255 bytes. Throws
/// std::invalid_argument naming `field` and the value (quoted, at most 200 characters).
void check_run_name(const std::string& name, const std::string& field = "out_dir");

/// Whether `dir` holds the INCOMPLETE marker.
bool is_incomplete(const std::filesystem::path& dir);

/// Fails early (before a run) if `out` exists and is not an empty directory (unless
/// `overwrite`); the message says when `out` is an incomplete run directory and how to recover.
void check_output_directory(const std::filesystem::path& out, bool overwrite);

/// `--force`: removes an existing `out` so that a run can write it; refuses a directory whose
/// recorder is still alive (it holds INCOMPLETE's lock).
void remove_output_directory(const std::filesystem::path& out);

/// A run directory being recorded (see the top of this file).
class RunRecording {
 public:
  /// Creates `dir` (an existing empty directory is taken; a symlink never), its parents when
  /// `create_parents`, INCOMPLETE and the journal. @throws RunDirectoryError, JournalError.
  RunRecording(const std::filesystem::path& dir, JournalHeader header, bool create_parents);
  /// Without complete(): closes the journal and leaves the directory marked INCOMPLETE.
  ~RunRecording();
  RunRecording(const RunRecording&) = delete;
  RunRecording& operator=(const RunRecording&) = delete;

  [[nodiscard]] RunJournal& journal() noexcept { return *journal_; }
  /// What the experiment's rows go to (set_row_observer): the journal, and run.h5 when the
  /// header's output_format is "hdf5". RT-safe as the journal's on_row().
  [[nodiscard]] RowObserver& observer() noexcept { return observer_; }
  /// run.h5's recorder (nullptr unless output_format is "hdf5").
  [[nodiscard]] const Hdf5Recorder* hdf5() const noexcept { return hdf5_.get(); }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

  /// Closes the journal (a failed journal write throws here), writes samples.csv, the extra
  /// files, scenario.yaml and summary.json (make_summary merged with `extra`), fsyncs them and
  /// the directory, then removes INCOMPLETE. Returns summary.json's content.
  /// @throws RunDirectoryError (the directory stays marked INCOMPLETE).
  nlohmann::json complete(const Experiment& experiment,
                          const nlohmann::json& extra = nlohmann::json::object());

 private:
  /// Writes kRecordingFailed + why over INCOMPLETE's first bytes (never growing it).
  void note_failure(const std::string& why) noexcept;

  std::filesystem::path dir_;
  int marker_fd_ = -1;
  std::unique_ptr<RunJournal> journal_;
  std::unique_ptr<Hdf5Recorder> hdf5_;
  class Observers final : public RowObserver {
   public:
    void on_row(std::span<const double> row) noexcept override {
      if (journal != nullptr) journal->on_row(row);
      if (hdf5 != nullptr) hdf5->on_row(row);
    }
    RowObserver* journal = nullptr;
    RowObserver* hdf5 = nullptr;
  } observer_;
};

/// Writes a complete run directory `out` in one go, after a run recorded elsewhere (tests,
/// benchmarks): INCOMPLETE first, the files, INCOMPLETE removed last; no journal. Refuses an
/// existing non-empty `out` unless `overwrite`. @throws RunDirectoryError.
void write_run_directory(const Experiment& experiment, const std::filesystem::path& out,
                         bool overwrite = false,
                         const nlohmann::json& extra_summary = nlohmann::json::object());

struct RecoveryResult {
  std::size_t cycles = 0;  // rows replayed from the journal
  std::string reason;      // why the run directory was incomplete
  nlohmann::json summary;  // what summary.json now holds
};

/// `hyloop summary --recover DIR`: replays DIR's journal through the Experiment its scenario
/// makes, writes samples.csv, the extra files, scenario.yaml and summary.json ("incomplete":
/// true, "incomplete_reason", "cycles_recovered") and removes INCOMPLETE. Refuses a complete
/// directory and one whose recorder is alive. @throws RunDirectoryError, JournalError.
RecoveryResult recover_run_directory(const std::filesystem::path& dir);

}  // namespace hyloop::recording
