#pragma once
// What every experiment kind (SITS, RHT, FCU, …) offers the tool and the run directory: a
// cycle-by-cycle step() that is RT-safe, a table of recorded samples, a summary, the resolved
// scenario. `make_experiment` reads a scenario's `kind` and has that kind (kind.hpp) build its
// runner.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/experiment/data_source.hpp"

namespace hyloop::experiment {

/// Formats a double with 17 significant digits (round-trips exactly); NaN/inf as nan/inf: the
/// numbers of samples.csv and of every table a run writes.
std::string format_number(double v);

/// "x[m]" → {"x", "m"}; a header without "[unit]" has the unit "" (never the case for ours).
struct ColumnHeader {
  std::string name;
  std::string unit;
};
ColumnHeader parse_column_header(std::string_view header);

/// A CSV file written line by line as rows arrive (a streamed recorder's tables): each number
/// as format_number writes it, through a fixed buffer (no allocation after open()). Write
/// errors are latched, never thrown by the writers; finish() reports them.
class CsvStream {
 public:
  CsvStream() = default;
  ~CsvStream();
  CsvStream(const CsvStream&) = delete;
  CsvStream& operator=(const CsvStream&) = delete;

  /// Creates `path` (truncated) and writes `header_line` and a newline. @throws
  /// std::runtime_error naming the file and the cause.
  void open(const std::filesystem::path& path, const std::string& header_line);
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  /// One line: `values` with 17 significant digits, comma separated. Does nothing unless open.
  void write_row(std::span<const double> values) noexcept;
  /// One line: `index`, then `values`.
  void write_row(std::int64_t index, std::span<const double> values) noexcept;
  /// Flushes and closes the file. @throws std::runtime_error on any write error since open().
  void finish();

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
  void put(const char* text, std::size_t n) noexcept;
  void flush() noexcept;

  std::filesystem::path path_;
  int fd_ = -1;
  int error_ = 0;  ///< the first write's errno (0: none)
  std::vector<char> buffer_;
  std::size_t used_ = 0;
};

/// Recorded samples: fixed columns ("name[unit]"), storage reserved at construction, so that
/// append() never allocates. Rows beyond the capacity are counted, not stored.
///
/// A streamed table (the coordinator's recorder) keeps no row: it counts rows as a kept table
/// would and writes each to the CSV stream_to() opened (before it: counted, not written), so
/// that its memory does not depend on the run's length.
class SampleTable {
 public:
  SampleTable(std::vector<std::string> headers, std::size_t max_rows);
  struct Streamed {};
  SampleTable(std::vector<std::string> headers, std::size_t max_rows, Streamed);

  /// A streamed table: its rows from now on go to `path` (created, the header line first).
  /// @throws std::logic_error for a kept table, std::runtime_error when `path` cannot be made.
  void stream_to(const std::filesystem::path& path);
  [[nodiscard]] bool streamed() const noexcept { return streamed_; }

  /// Appends one row (row.size() == columns()). RT-safe (a streamed table writes a file).
  bool append(std::span<const double> row) noexcept;

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t columns() const noexcept { return headers_.size(); }
  [[nodiscard]] std::size_t dropped() const noexcept { return dropped_; }
  /// Row i of a kept table (a streamed one keeps none: i < rows() does not make it valid).
  [[nodiscard]] std::span<const double> row(std::size_t i) const noexcept {
    return {data_.data() + i * columns(), columns()};
  }
  [[nodiscard]] const std::vector<std::string>& headers() const noexcept { return headers_; }

  /// Writes the CSV: the header line, then every row with 17 significant digits. A streamed
  /// table finishes the file it wrote, which must be `path`. @throws std::runtime_error.
  void write_csv(const std::filesystem::path& path) const;

 private:
  std::vector<std::string> headers_;
  std::vector<double> data_;
  std::size_t capacity_;
  std::size_t rows_ = 0;
  std::size_t dropped_ = 0;
  bool streamed_ = false;
  std::unique_ptr<CsvStream> stream_;  ///< a streamed table's file (null: not yet opened)
};

/// The header line of a table's CSV: `headers` comma separated.
std::string csv_header_line(const std::vector<std::string>& headers);
/// A table that keeps its rows, or a streamed one (the kinds' streamed recorders).
SampleTable make_sample_table(std::vector<std::string> headers, std::size_t max_rows,
                              bool streamed);

/// Receives every row an Experiment's recorder takes, in record_columns() order: the row step()
/// computed or the row record_cycle() was given (the run journal, run_journal.hpp).
class RowObserver {
 public:
  virtual ~RowObserver() = default;
  /// Called from step()/record_cycle() once per recorded cycle: step() is as RT-safe as this.
  virtual void on_row(std::span<const double> row) noexcept = 0;
};

/// What a kind's signals mean: each role names one "name[unit]" column the kind records (its
/// samples' and its DynamicsPart's), empty when the kind has none. Declared once, by the kind
/// (Kind::signal_roles); the run's summary.json lists them under "signals", `hyloop report`
/// draws from them (no kind names in its Python) and the dynamics service's tracking gauges read
/// them (a role whose unit is not the gauge's reads NaN).
struct SignalRoles {
  std::string target{};    ///< what the loop asks the rig to reproduce (tracking: desired)
  std::string measured{};  ///< what the rig did (tracking: measured)
  std::string ideal{};     ///< the ideal twin's counterpart of target
  std::string command{};   ///< the command sent to the actuator
  std::string force{};     ///< the force measured at the interface
  std::string velocity{}, velocity_ideal{};  ///< the target's velocity and the twin's
  std::string force_input{}, force_ideal{};  ///< the model's input force and the twin's
  std::string power{}, power_ideal{};
  std::string energy{}, energy_ideal{};
  std::string gain{};             ///< a compensator's gain
  std::string observed_energy{};  ///< the energy a compensator observes
};

/// {"role": "name[unit]", ...} of the roles a kind fills, in declaration order.
nlohmann::ordered_json signal_roles_json(const SignalRoles& roles);

class Experiment {
 public:
  virtual ~Experiment() = default;

  /// Every recorded row also goes to `observer` (nullptr: none). Set it before the run.
  void set_row_observer(RowObserver* observer) noexcept { row_observer_ = observer; }

  /// Runs one cycle; false when the run is over (finished or stopped). RT-safe.
  virtual bool step() noexcept = 0;

  [[nodiscard]] virtual std::int64_t cycle() const noexcept = 0;
  [[nodiscard]] virtual std::int64_t total_steps() const noexcept = 0;
  [[nodiscard]] virtual double step_size() const noexcept = 0;
  [[nodiscard]] virtual const SampleTable& samples() const noexcept = 0;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::string kind() const = 0;
  /// Kind-specific summary fields (the run directory adds steps, times, seed, revision).
  [[nodiscard]] virtual nlohmann::json summary() const = 0;
  /// The fully resolved scenario as YAML.
  [[nodiscard]] virtual std::string resolved_yaml() const = 0;
  /// Extra files of the run directory (e.g. cycles.csv).
  virtual void write_extra_files(const std::filesystem::path& /*dir*/) const {}
  /// A streamed recorder (LoadedScenario::streamed_experiment): from now on its tables
  /// (samples.csv, the extra files it streams) are written into `dir` as rows arrive;
  /// write_csv()/write_extra_files() then finish them. Called once, before the first row. A
  /// recorder that keeps its tables ignores it. @throws std::runtime_error.
  virtual void stream_tables(const std::filesystem::path& /*dir*/) {}
  /// Distributed runs: the "name[unit]" columns of the row record_cycle() takes: samples()'s
  /// columns, then any the summary needs that samples.csv does not hold.
  [[nodiscard]] virtual std::vector<std::string> record_columns() const {
    return samples().headers();
  }
  /// Distributed runs: records the next cycle as computed by the services (the row step() would
  /// have made, in record_columns() order). False when the kind does not support it or the run
  /// is over. RT-safe.
  virtual bool record_cycle(std::span<const double> /*row*/) noexcept { return false; }
  /// The loop stopped early for `reason` (a part's or a service's stop reason). RT-safe: called
  /// from a cycle (LoopChain).
  virtual void record_stop(std::string_view /*reason*/) noexcept {}
  /// Whether progress should be shown ("auto": when stderr is a terminal).
  [[nodiscard]] virtual std::string progress_mode() const { return "auto"; }
  /// outputs.format: "csv", or "hdf5" (run.h5 recorded while the run runs, hdf5_recorder.hpp).
  [[nodiscard]] virtual std::string output_format() const { return "csv"; }

  /// The roles of the kind's signals (make_experiment sets them from the kind).
  void set_signal_roles(const SignalRoles& roles) { signal_roles_ = roles; }
  [[nodiscard]] const SignalRoles& signal_roles() const noexcept { return signal_roles_; }

  /// Runs to the end; `progress(t, duration)` about once a second of wall time.
  void run(const std::function<void(double, double)>& progress = {});
  [[nodiscard]] double wall_time_s() const noexcept { return wall_time_s_; }

 protected:
  /// Each kind calls this with every row its recorder takes.
  void observe_row(std::span<const double> row) const noexcept {
    if (row_observer_ != nullptr) row_observer_->on_row(row);
  }

 private:
  double wall_time_s_ = 0.0;
  RowObserver* row_observer_ = nullptr;
  SignalRoles signal_roles_;
};

/// The `kind` field of a scenario file. @throws ScenarioError when it has none.
std::string scenario_kind(const std::string& path);

/// Builds the runner of the scenario's kind from a file on the command line (its data files
/// under DataSource::local_file). @throws ScenarioError (scenario.hpp), also for an unknown
/// kind (naming it and the known kinds).
std::unique_ptr<Experiment> make_experiment(const std::string& path,
                                            const std::vector<std::string>& overrides);

/// The same from a scenario's text (a service receives the text, not a file); `origin` names the
/// text in messages (at most 200 characters of it are used); data files are names in the
/// server's data directories unless `data` says otherwise. @throws ScenarioError.
std::unique_ptr<Experiment> make_experiment_from_text(
    const std::string& text, const std::string& origin, const std::vector<std::string>& overrides,
    const DataSource& data = DataSource::server());
/// The `kind` field of a scenario's text. @throws ScenarioError when it has none.
std::string scenario_kind_of_text(const std::string& text, const std::string& origin);
/// The warnings `hyloop run` prints about a valid scenario file (Kind::notices).
/// @throws ScenarioError; std::invalid_argument for an unknown kind.
std::vector<std::string> scenario_notices(const std::string& path,
                                          const std::vector<std::string>& overrides);

}  // namespace hyloop::experiment
