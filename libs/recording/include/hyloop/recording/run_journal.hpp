#pragma once
// The run journal: every row a run's recorder receives goes to an SQLite database in the run
// directory (journal.sqlite) as it arrives, so that a recorder killed at any instant leaves
// every row up to the last commit on disk (docs/reliability.md, "Recording").
//
// Format (SQLite 3, WAL, synchronous=FULL; "hyloop-journal/1"):
//   meta(key TEXT PRIMARY KEY, value TEXT)   format, run_id, writer, mode, git_revision,
//                                            created_utc, scenario_yaml (resolved), columns (JSON
//                                            array of "name[unit]"), seeds (JSON object),
//                                            value_encoding = "float64-le"
//   rows(cycle INTEGER PRIMARY KEY, data BLOB) one row per recorded cycle, cycle = 0, 1, 2, …;
//                                            data = the row's doubles, IEEE-754 binary64 little
//                                            endian, exactly 8·len(columns) bytes (NaN payloads
//                                            and signs kept: the row as received, bit for bit)
//   events(id INTEGER PRIMARY KEY, after_rows INTEGER, kind TEXT, text TEXT)
//                                            "stop" (the loop stopped early: its reason, replayed
//                                            through Experiment::record_stop) and "end" (the run
//                                            ended: state and message), after `after_rows` rows
//
// Threading: on_row() and event() only copy into a staging buffer under a mutex (no SQLite
// call, no I/O); a committer thread writes the staged rows in one transaction every
// kCommitPeriod, or as soon as kCommitRows are staged (so a commit is never more than
// 2·kCommitPeriod = 0.5 s apart while rows arrive at up to the committer's rate). Not RT-safe (the
// staging buffer grows), but cheap: see docs/reliability.md. Errors (disk full, I/O) are latched;
// commit()/close() throw JournalError naming the file and the SQLite message, and rows after an
// error are dropped (counted).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hyloop/experiment/experiment.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace hyloop::recording {

// The framework's types a recording is made of (experiment.hpp).
using experiment::Experiment;
using experiment::RowObserver;

/// A journal cannot be written or read: the message names the file and the cause.
class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a journal says about its run, written once at its creation.
struct JournalHeader {
  std::string run_id;
  std::string writer;  // "hyloop run", "hyloop-coordinator"
  std::string mode;    // "in_process", "lockstep", "real_time"
  std::string git_revision;
  std::string scenario_yaml;         // the resolved scenario (make_experiment_from_text reads it)
  std::vector<std::string> columns;  // Experiment::record_columns()
  nlohmann::json seeds = nlohmann::json::object();  // every `seed` field of the scenario, by path
  std::string created_utc;                          // filled by the journal
  std::string output_format = "csv";  // Experiment::output_format() (not stored in the journal)
};

/// The header of `experiment` (columns, resolved scenario, seeds, the git revision).
JournalHeader journal_header(const Experiment& experiment, std::string run_id, std::string writer,
                             std::string mode);

struct JournalEvent {
  std::uint64_t after_rows = 0;
  std::string kind;
  std::string text;
};

class RunJournal final : public RowObserver {
 public:
  static constexpr std::chrono::milliseconds kCommitPeriod{250};
  /// A commit also starts as soon as this many rows are staged (a run faster than real time).
  static constexpr std::size_t kCommitRows = 8192;

  /// Creates `file` (which must not exist) and commits the header. @throws JournalError.
  RunJournal(const std::filesystem::path& file, JournalHeader header);
  /// Stops the committer and commits what is staged (errors are dropped: call close() first).
  ~RunJournal() override;
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  /// Stages one row (header().columns.size() values). Never throws; a row of the wrong length
  /// or a failed allocation latches an error.
  void on_row(std::span<const double> row) noexcept override;
  /// Stages an event after the rows staged so far.
  void event(std::string_view kind, std::string_view text) noexcept;
  /// Commits what is staged now. @throws JournalError (the first error since the start).
  void commit();
  /// Commits, checkpoints the WAL into the database and closes it. @throws JournalError.
  void close();

  [[nodiscard]] const JournalHeader& header() const noexcept { return header_; }
  [[nodiscard]] const std::filesystem::path& file() const noexcept { return file_; }
  /// Rows staged, rows committed, commits, and the longest commit (s).
  [[nodiscard]] std::uint64_t rows_staged() const;
  [[nodiscard]] std::uint64_t rows_committed() const;
  [[nodiscard]] std::uint64_t commits() const;
  [[nodiscard]] double longest_commit_s() const;
  /// The first error ("" while none).
  [[nodiscard]] std::string error() const;

 private:
  void committer() noexcept;
  /// Writes what is staged (holding db_mutex_, not mutex_).
  void write_staged();
  void fail(const std::string& message) noexcept;

  std::filesystem::path file_;
  JournalHeader header_;
  std::size_t columns_ = 0;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_row_ = nullptr;
  sqlite3_stmt* insert_event_ = nullptr;

  mutable std::mutex mutex_;  // staging, counters, error
  std::condition_variable wake_;
  std::vector<double> staged_;
  std::vector<JournalEvent> staged_events_;
  std::uint64_t rows_staged_ = 0;
  std::uint64_t rows_committed_ = 0;
  std::uint64_t rows_dropped_ = 0;
  std::uint64_t commits_ = 0;
  double longest_commit_s_ = 0.0;
  std::string error_;
  bool stopping_ = false;

  std::mutex db_mutex_;  // the connection (committer thread, commit(), close())
  static constexpr std::size_t kInitialRows = 4096;
  std::vector<double> writing_;  // the rows being written (under db_mutex_)
  bool closed_ = false;
  std::thread thread_;
};

/// Everything a journal holds. Rows are checked: cycles 0…n−1 in order, each exactly
/// 8·columns bytes.
struct JournalContents {
  JournalHeader header;
  std::size_t rows = 0;
  std::vector<double> values;  // rows × header.columns.size()
  std::vector<JournalEvent> events;
  [[nodiscard]] std::span<const double> row(std::size_t i) const noexcept {
    return {values.data() + i * header.columns.size(), header.columns.size()};
  }
};

/// Reads a journal (also while its writer is alive, or after it was killed: SQLite recovers the
/// WAL). @throws JournalError naming the file and what is wrong.
JournalContents read_journal(const std::filesystem::path& file);

}  // namespace hyloop::recording
