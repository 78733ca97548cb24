#include "hyloop/recording/run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "hyloop/recording/run_export.hpp"
#include "hyloop/recording/run_file.hpp"

namespace hyloop::recording {
using experiment::make_experiment_from_text;
using experiment::signal_roles_json;
namespace fs = std::filesystem;

namespace {

std::string run_command(const std::string& command) {
  std::array<char, 256> buffer{};
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
    out += buffer.data();
  if (pclose(pipe) != 0) return {};
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

[[noreturn]] void fail(const std::string& what, int error_number) {
  throw RunDirectoryError(what + ": " + std::strerror(error_number), error_number);
}

/// Writes `text` to `path` (created or truncated), fsyncs and closes it; every call checked.
void write_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) fail("creating " + path.string(), errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      fail("writing " + path.string(), e);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    fail("writing " + path.string() + " (fsync)", e);
  }
  if (::close(fd) != 0) fail("writing " + path.string() + " (close)", errno);
}

/// fsync of a file or directory written by someone else.
void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("opening " + path.string() + " to sync it", errno);
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    fail("syncing " + path.string(), e);
  }
  ::close(fd);
}

/// Runs a writer that reports failure by an exception without the system's reason (the
/// experiment's std::ofstream writers) and adds errno's message to it.
template <class F>
void write_with(F&& writer) {
  errno = 0;
  try {
    writer();
  } catch (const RunDirectoryError&) {
    throw;
  } catch (const std::exception& e) {
    const int err = errno;
    if (err != 0) throw RunDirectoryError(std::string(e.what()) + ": " + std::strerror(err), err);
    throw RunDirectoryError(e.what(), 0);
  }
}

/// samples.csv, the extra files, scenario.yaml, then summary.json, each synced; returns the
/// summary.
nlohmann::json write_files(const Experiment& experiment, const fs::path& dir,
                           const nlohmann::json& extra) {
  const fs::path samples = dir / "samples.csv";
  write_with([&] { experiment.samples().write_csv(samples); });
  sync_path(samples);
  write_with([&] { experiment.write_extra_files(dir); });
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name != kJournalFile && name != kIncompleteMarker &&
        name.rfind(kJournalFile, 0) != 0) {
      sync_path(e.path());
    }
  }
  write_file(dir / "scenario.yaml", experiment.resolved_yaml());
  nlohmann::json summary = make_summary(experiment);
  if (extra.is_object()) summary.update(extra);
  write_file(dir / "summary.json", summary.dump(2) + "\n");
  sync_path(dir);
  return summary;
}

/// Finishes run.h5 (outputs.format: hdf5) after the other files of `dir` were written.
void finish_hdf5(Hdf5Recorder& hdf5, const fs::path& dir) {
  try {
    hdf5.finish(dir);
  } catch (const std::exception& e) {
    throw RunDirectoryError(std::string("recording ") + kRunHdf5File + " failed: " + e.what(), 0);
  }
  sync_path(dir);
}

/// Removes INCOMPLETE and makes that durable.
void remove_marker(const fs::path& dir) {
  const fs::path marker = dir / kIncompleteMarker;
  if (::unlink(marker.c_str()) != 0) fail("removing " + marker.string(), errno);
  sync_path(dir);
}

/// Opens INCOMPLETE and takes its lock without waiting; -1 when a live recorder holds it.
int lock_marker(const fs::path& marker) {
  const int fd = ::open(marker.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) fail("opening " + marker.string(), errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return -1;
    fail("locking " + marker.string(), e);
  }
  return fd;
}

// The marker's text (INCOMPLETE, read as any file of a run directory is), newlines as ';'.
std::string marker_text(const fs::path& dir, std::size_t max_chars) {
  std::string text;
  try {
    text = read_run_file(dir, kIncompleteMarker).substr(0, max_chars);
  } catch (const RunDirectoryError&) {
    return text;
  }
  for (char& c : text) {
    if (c == '\n') c = ';';
  }
  return text;
}

std::string quoted(const std::string& value) {
  constexpr std::size_t kMax = 200;
  std::string v = value.size() > kMax ? value.substr(0, kMax) + "…" : value;
  std::string out = "\"";
  for (const char c : v) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string git_revision() {
  const std::string dir = HYLOOP_SOURCE_DIR;
  std::string rev = run_command("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (rev.empty()) return "unknown";
  if (!run_command("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null")
           .empty()) {
    rev += "-dirty";
  }
  return rev;
}

std::string make_run_id(const std::string& name) {
  static std::atomic<int> counter{0};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return name + "-" + stamp + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

nlohmann::json make_summary(const Experiment& experiment) {
  nlohmann::json j;
  j["scenario"] = experiment.name();
  j["kind"] = experiment.kind();
  if (nlohmann::ordered_json roles = signal_roles_json(experiment.signal_roles()); !roles.empty()) {
    j["signals"] = roles;
  }
  j["steps"] = experiment.cycle();
  j["planned_steps"] = experiment.total_steps();
  j["step_s"] = experiment.step_size();
  j["duration_s"] = static_cast<double>(experiment.cycle()) * experiment.step_size();
  j["wall_time_s"] = experiment.wall_time_s();
  j["steps_per_second"] = experiment.wall_time_s() > 0.0
                              ? static_cast<double>(experiment.cycle()) / experiment.wall_time_s()
                              : 0.0;
  j["samples_recorded"] = experiment.samples().rows();
  j["samples_dropped"] = experiment.samples().dropped();
  j.update(experiment.summary());
  j["git_revision"] = git_revision();
  return j;
}

void check_run_name(const std::string& name, const std::string& field) {
  const auto bad = [&](const std::string& why) {
    throw std::invalid_argument(field + " = " + quoted(name) + ": " + why);
  };
  if (name.empty()) bad("missing (the name of the run directory to write)");
  if (name.size() > 255) bad("longer than 255 bytes");
  if (name.find('/') != std::string::npos) {
    bad(name.front() == '/' ? "an absolute path; give a name under the coordinator's runs directory"
                            : "must be a single name under the coordinator's runs directory "
                              "(no '/')");
  }
  if (name == "." || name == "..") bad("must name a directory under the runs directory");
  if (name.front() == '.' || name.front() == '-') bad("must not start with '.' or '-'");
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    // (strchr finds the terminator: a NUL byte would pass it)
    if (!(std::isalnum(u) != 0 || (c != '\0' && std::strchr("._-+=@,", c) != nullptr)) ||
        u >= 0x80) {
      bad("only letters, digits and ._-+=@, are allowed");
    }
  }
}

bool is_incomplete(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(dir / kIncompleteMarker, ec));
}

void check_output_directory(const fs::path& out, bool overwrite) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec)) || overwrite) return;
  if (fs::is_directory(fs::symlink_status(out, ec)) && fs::is_empty(out, ec)) return;
  if (is_incomplete(out)) {
    throw std::runtime_error("--out " + out.string() +
                             ": an incomplete run directory (INCOMPLETE): recover it with "
                             "`hyloop summary --recover " +
                             out.string() + "` or replace it with --force");
  }
  throw std::runtime_error("--out " + out.string() +
                           ": exists and is not an empty directory (use --force to replace it)");
}

void remove_output_directory(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec))) return;
  if (fs::is_directory(fs::symlink_status(out, ec)) && is_incomplete(out)) {
    const fs::path marker = out / kIncompleteMarker;
    const int fd = lock_marker(marker);
    if (fd < 0) {
      throw RunDirectoryError("--out " + out.string() + ": a run is still being recorded there (" +
                                  marker_text(out, 300) + "); not removed",
                              EBUSY);
    }
    ::close(fd);
  }
  fs::remove_all(out, ec);
  if (ec) throw RunDirectoryError("removing " + out.string() + ": " + ec.message(), ec.value());
}

RunRecording::RunRecording(const fs::path& dir, JournalHeader header, bool create_parents)
    : dir_(dir) {
  if (create_parents && dir.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(dir.parent_path(), ec);
    if (ec) {
      throw RunDirectoryError("creating " + dir.parent_path().string() + ": " + ec.message(),
                              ec.value());
    }
  }
  bool created = false;
  if (::mkdir(dir.c_str(), 0755) == 0) {
    created = true;
  } else if (errno == EEXIST) {
    struct stat st {};
    std::error_code ec;
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !fs::is_empty(dir, ec)) {
      throw RunDirectoryError(dir.string() + ": exists already", EEXIST);
    }
  } else {
    fail("creating " + dir.string(), errno);
  }
  const fs::path marker = dir / kIncompleteMarker;
  try {
    marker_fd_ = ::open(marker.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (marker_fd_ < 0) fail("creating " + marker.string(), errno);
    if (::flock(marker_fd_, LOCK_EX | LOCK_NB) != 0) fail("locking " + marker.string(), errno);
    char host[256] = {};
    (void)gethostname(host, sizeof host - 1);
    const std::string text =
        "This run directory is being recorded, or its recorder ended before completing it.\n"
        "run_id: " +
        header.run_id + "\nwriter: " + header.writer + " (pid " + std::to_string(getpid()) +
        " on " + host +
        ")\nWhile the writer lives it holds an exclusive flock on this file. Otherwise recover "
        "what was recorded with: hyloop summary --recover " +
        dir.string() + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(marker_fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("writing " + marker.string(), n < 0 ? errno : EIO);
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(marker_fd_) != 0) fail("writing " + marker.string() + " (fsync)", errno);
    const bool hdf5 = header.output_format == "hdf5";
    const std::vector<std::string> columns = header.columns;
    journal_ = std::make_unique<RunJournal>(dir / kJournalFile, std::move(header));
    if (hdf5) {
      try {
        hdf5_ = std::make_unique<Hdf5Recorder>(dir / kRunHdf5File, columns);
      } catch (const std::runtime_error& e) {
        throw RunDirectoryError(e.what(), 0);
      }
    }
    observer_.journal = journal_.get();
    observer_.hdf5 = hdf5_.get();
    sync_path(dir);
    if (created) sync_path(dir.has_parent_path() ? dir.parent_path() : fs::path("."));
  } catch (...) {
    hdf5_.reset();
    journal_.reset();
    if (marker_fd_ >= 0) ::close(marker_fd_);
    marker_fd_ = -1;
    std::error_code ec;
    for (const char* name : {kIncompleteMarker, kJournalFile}) fs::remove(dir / name, ec);
    fs::remove(dir / (std::string(kJournalFile) + "-wal"), ec);
    fs::remove(dir / (std::string(kJournalFile) + "-shm"), ec);
    fs::remove(dir / kRunHdf5File, ec);
    if (created) fs::remove(dir, ec);
    throw;
  }
}

RunRecording::~RunRecording() {
  if (marker_fd_ >= 0 && journal_ && !journal_->error().empty()) note_failure(journal_->error());
  hdf5_.reset();
  journal_.reset();
  if (marker_fd_ >= 0) ::close(marker_fd_);
}

void RunRecording::note_failure(const std::string& why) noexcept {
  // Written over the marker's first bytes, never beyond its size: on a full disk this needs no
  // new block. Recovery reads it back (kRecordingFailed).
  struct stat st {};
  if (marker_fd_ < 0 || ::fstat(marker_fd_, &st) != 0 || st.st_size < 2) return;
  try {
    const auto size = static_cast<std::size_t>(st.st_size);
    std::string old(size, '\0');
    if (::pread(marker_fd_, old.data(), size, 0) != static_cast<ssize_t>(size)) return;
    std::string line = std::string(kRecordingFailed) + why;
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    line = line.substr(0, size - 1) + "\n";
    const std::string text = (line + old).substr(0, size);
    if (::pwrite(marker_fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
      (void)::fdatasync(marker_fd_);
    }
  } catch (const std::exception&) {
    // (no memory): recovery then says the recorder ended without completing
  }
}

nlohmann::json RunRecording::complete(const Experiment& experiment, const nlohmann::json& extra) {
  if (marker_fd_ < 0) throw RunDirectoryError(dir_.string() + ": completed already", 0);
  try {
    try {
      journal_->close();
    } catch (const JournalError& e) {
      throw RunDirectoryError(std::string("recording the journal failed: ") + e.what(), 0);
    }
    nlohmann::json summary = write_files(experiment, dir_, extra);
    if (hdf5_) finish_hdf5(*hdf5_, dir_);
    remove_marker(dir_);
    ::close(marker_fd_);
    marker_fd_ = -1;
    return summary;
  } catch (const RunDirectoryError& e) {
    note_failure(e.what());
    throw;
  }
}

void write_run_directory(const Experiment& experiment, const fs::path& out, bool overwrite,
                         const nlohmann::json& extra_summary) {
  check_output_directory(out, overwrite);
  if (overwrite) remove_output_directory(out);
  std::error_code ec;
  if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
  if (::mkdir(out.c_str(), 0755) != 0 && errno != EEXIST) fail("creating " + out.string(), errno);
  write_file(out / kIncompleteMarker,
             "written by write_run_directory (pid " + std::to_string(getpid()) + ")\n");
  write_files(experiment, out, extra_summary);
  remove_marker(out);
}

namespace {

// Refuses a directory that is not an incomplete run directory with a journal, or whose recorder
// still holds its INCOMPLETE marker; else returns the marker's file descriptor, locked.
int lock_for_recovery(const fs::path& dir) {
  const fs::path marker = dir / kIncompleteMarker;
  const fs::path journal_file = dir / kJournalFile;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw RunDirectoryError(dir.string() + ": no such directory", 0);
  if (!is_incomplete(dir)) {
    throw RunDirectoryError(dir.string() + ": complete (no INCOMPLETE marker): nothing to recover",
                            0);
  }
  refuse_special_entries(dir);  // recovery writes files into it by name
  if (!has_run_entry(dir, kJournalFile)) {
    throw RunDirectoryError(dir.string() + ": no " + kJournalFile +
                                ": nothing was recorded (the recorder was killed while creating "
                                "the directory); remove it, or replace it with --force",
                            0);
  }
  check_run_file(dir, kJournalFile, kMaxRunTableBytes);
  const int fd = lock_marker(marker);
  if (fd < 0) {
    throw RunDirectoryError(dir.string() + ": still being recorded (" + marker_text(dir, 300) +
                                "): recover it only after its recorder has ended",
                            EBUSY);
  }
  return fd;
}

// Feeds the journal's rows to `experiment` with its events (a stop before the row it came after;
// `end` gets the end event's text). Returns the rows it took.
std::size_t replay_journal(Experiment& experiment, const JournalContents& journal,
                           std::string& end) {
  std::size_t next_event = 0;
  std::size_t replayed = 0;
  const auto apply_events = [&](std::size_t rows) {
    for (; next_event < journal.events.size() && journal.events[next_event].after_rows <= rows;
         ++next_event) {
      const JournalEvent& e = journal.events[next_event];
      if (e.kind == "stop") experiment.record_stop(e.text);
      if (e.kind == "end") end = e.text;
    }
  };
  for (std::size_t i = 0; i < journal.rows; ++i) {
    apply_events(i);
    if (!experiment.record_cycle(journal.row(i))) break;
    ++replayed;
  }
  apply_events(journal.rows);
  return replayed;
}

// What a recovered summary adds: incomplete, why, what was recovered from which journal.
nlohmann::json recovery_summary(const JournalContents& journal, const RecoveryResult& result) {
  const JournalHeader& h = journal.header;
  nlohmann::json extra = {{"incomplete", true},
                          {"incomplete_reason", result.reason},
                          {"cycles_recovered", result.cycles},
                          {"run_id", h.run_id},
                          {"git_revision", h.git_revision},
                          {"recovered_by_revision", git_revision()},
                          {"journal",
                           {{"writer", h.writer},
                            {"mode", h.mode},
                            {"created_utc", h.created_utc},
                            {"rows", journal.rows},
                            {"seeds", h.seeds}}}};
  if (h.mode == "lockstep" || h.mode == "real_time") {
    extra["distributed"] = {{"run_id", h.run_id},
                            {"mode", h.mode},
                            {"state", "incomplete"},
                            {"message", result.reason}};
  }
  return extra;
}

// Why the directory was left incomplete: the write error its recorder noted in INCOMPLETE (a
// full disk said so), the end of the run it journalled, or neither (it was killed).
std::string recovery_reason(const fs::path& dir, const std::string& writer, const std::string& end,
                            std::size_t rows) {
  const std::string held = "; the journal holds " + std::to_string(rows) + " cycles";
  std::string marker;
  try {
    marker = read_run_file(dir, kIncompleteMarker);
  } catch (const RunDirectoryError&) {
  }
  std::string failure;
  if (marker.rfind(kRecordingFailed, 0) == 0) {
    const std::string why = marker.substr(std::strlen(kRecordingFailed),
                                          marker.find('\n') - std::strlen(kRecordingFailed));
    const bool full = why.find(std::strerror(ENOSPC)) != std::string::npos ||
                      why.find("disk is full") != std::string::npos ||
                      why.find(std::strerror(EDQUOT)) != std::string::npos;
    failure = std::string(full ? "the disk was full: " : "a write failed: ") + writer +
              " could not write the run directory (" + why + ")";
  }
  if (!end.empty()) {
    return "the run ended (" + end + ") but writing its run directory did not complete" +
           (failure.empty() ? "" : ": " + failure);
  }
  if (!failure.empty()) return failure + held;
  return "recorder killed: " + writer + " ended without completing the run directory" + held;
}

}  // namespace

RecoveryResult recover_run_directory(const fs::path& dir) {
  const fs::path journal_file = dir / kJournalFile;
  const int fd = lock_for_recovery(dir);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);
    }
  } unlock{fd};
  JournalContents journal;
  try {
    journal = read_journal(journal_file);
  } catch (const JournalError& e) {
    throw RunDirectoryError(std::string("cannot recover ") + dir.string() + ": " + e.what() +
                                " (remove the directory, or replace it with --force)",
                            0);
  }
  const JournalHeader& h = journal.header;
  std::unique_ptr<Experiment> experiment =
      make_experiment_from_text(h.scenario_yaml, journal_file.string(), {});
  if (experiment->record_columns() != h.columns) {
    throw RunDirectoryError(journal_file.string() + ": its columns differ from those of a " +
                                experiment->kind() + " run of this hyloop (" + git_revision() +
                                "); it was written by " + h.git_revision,
                            0);
  }
  // outputs.format: hdf5: run.h5 is rewritten from the journal through the same recorder (the
  // file a killed writer left may not be readable).
  std::unique_ptr<Hdf5Recorder> hdf5;
  if (experiment->output_format() == "hdf5") {
    try {
      hdf5 = std::make_unique<Hdf5Recorder>(dir / kRunHdf5File, h.columns);
    } catch (const std::runtime_error& e) {
      throw RunDirectoryError(e.what(), 0);
    }
    experiment->set_row_observer(hdf5.get());
  }
  std::string end;
  const std::size_t replayed = replay_journal(*experiment, journal, end);
  experiment->set_row_observer(nullptr);
  RecoveryResult result;
  result.cycles = replayed;
  result.reason = recovery_reason(dir, h.writer, end, journal.rows);
  result.summary = write_files(*experiment, dir, recovery_summary(journal, result));
  if (hdf5) finish_hdf5(*hdf5, dir);
  remove_marker(dir);
  return result;
}

}  // namespace hyloop::recording
