#include "hyloop/recording/run_journal.hpp"

#include <sqlite3.h>
#include <yaml-cpp/yaml.h>

#include <bit>
#include <cstring>
#include <ctime>
#include <map>

#include "hyloop/recording/run_directory.hpp"

namespace hyloop::recording {
namespace fs = std::filesystem;

static_assert(std::endian::native == std::endian::little,
              "the journal stores float64-le: add a byte swap for this platform");

namespace {

constexpr const char* kFormat = "hyloop-journal/1";

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return stamp;
}

void find_seeds(const YAML::Node& node, const std::string& path, nlohmann::json& out) {
  if (!node.IsMap()) return;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>("");
    const std::string at = path.empty() ? key : path + "." + key;
    if (key == "seed" && kv.second.IsScalar()) {
      const std::string v = kv.second.Scalar();
      try {
        out[at] = std::stoull(v);
      } catch (const std::exception&) {
        out[at] = v;
      }
    } else {
      find_seeds(kv.second, at, out);
    }
  }
}

class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const fs::path& file) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw JournalError(file.string() + ": " + sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// SQLite's message, with the system error behind it ("database or disk is full (No space left
// on device)").
std::string sqlite_error(sqlite3* db) {
  std::string m = sqlite3_errmsg(db);
  const int e = sqlite3_system_errno(db);
  if (e != 0) m += std::string(" (") + std::strerror(e) + ")";
  return m;
}

void exec(sqlite3* db, const char* sql, const fs::path& file) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errmsg(db);
    const int e = sqlite3_system_errno(db);
    if (e != 0) text += std::string(" (") + std::strerror(e) + ")";
    sqlite3_free(message);
    throw JournalError(file.string() + ": " + text);
  }
}

std::string column_text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t != nullptr ? std::string(reinterpret_cast<const char*>(t),
                                    static_cast<std::size_t>(sqlite3_column_bytes(s, i)))
                      : std::string();
}

}  // namespace

JournalHeader journal_header(const Experiment& experiment, std::string run_id, std::string writer,
                             std::string mode) {
  JournalHeader h;
  h.run_id = std::move(run_id);
  h.writer = std::move(writer);
  h.mode = std::move(mode);
  h.git_revision = git_revision();
  h.scenario_yaml = experiment.resolved_yaml();
  h.columns = experiment.record_columns();
  h.output_format = experiment.output_format();
  try {
    find_seeds(YAML::Load(h.scenario_yaml), "", h.seeds);
  } catch (const YAML::Exception&) {
    // The resolved scenario is our own output; without seeds the journal is still complete.
  }
  return h;
}

RunJournal::RunJournal(const fs::path& file, JournalHeader header)
    : file_(file), header_(std::move(header)), columns_(header_.columns.size()) {
  if (columns_ == 0) throw JournalError(file.string() + ": no columns");
  if (fs::exists(file)) throw JournalError(file.string() + ": exists already");
  header_.created_utc = utc_now();
  const int rc =
      sqlite3_open_v2(file.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE, nullptr);
  try {
    if (rc != SQLITE_OK) {
      throw JournalError(file.string() + ": " +
                         (db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
    }
    exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", file_);
    exec(db_,
         "BEGIN;"
         "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
         "CREATE TABLE rows(cycle INTEGER PRIMARY KEY, data BLOB NOT NULL);"
         "CREATE TABLE events(id INTEGER PRIMARY KEY, after_rows INTEGER NOT NULL,"
         " kind TEXT NOT NULL, text TEXT NOT NULL);",
         file_);
    {
      const Statement meta(db_, "INSERT INTO meta(key, value) VALUES(?, ?)", file_);
      const std::vector<std::pair<std::string, std::string>> fields = {
          {"format", kFormat},
          {"run_id", header_.run_id},
          {"writer", header_.writer},
          {"mode", header_.mode},
          {"git_revision", header_.git_revision},
          {"created_utc", header_.created_utc},
          {"scenario_yaml", header_.scenario_yaml},
          {"columns", nlohmann::json(header_.columns).dump()},
          {"seeds", header_.seeds.dump()},
          {"value_encoding", "float64-le"}};
      for (const auto& [key, value] : fields) {
        sqlite3_bind_text(meta.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(meta.get(), 2, value.c_str(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT);
        if (sqlite3_step(meta.get()) != SQLITE_DONE) {
          throw JournalError(file_.string() + ": " + sqlite_error(db_));
        }
        sqlite3_reset(meta.get());
      }
    }
    exec(db_, "COMMIT;", file_);
    if (sqlite3_prepare_v2(db_, "INSERT INTO rows(cycle, data) VALUES(?, ?)", -1, &insert_row_,
                           nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db_, "INSERT INTO events(after_rows, kind, text) VALUES(?, ?, ?)", -1,
                           &insert_event_, nullptr) != SQLITE_OK) {
      throw JournalError(file_.string() + ": " + sqlite_error(db_));
    }
  } catch (...) {
    sqlite3_finalize(insert_row_);
    sqlite3_finalize(insert_event_);
    sqlite3_close(db_);
    throw;
  }
  staged_.reserve(kInitialRows * columns_);
  writing_.reserve(kInitialRows * columns_);
  thread_ = std::thread([this] { committer(); });
}

RunJournal::~RunJournal() {
  try {
    close();
  } catch (...) {
    // The error was latched; the destructor of a failed recording must not throw.
  }
}

void RunJournal::fail(const std::string& message) noexcept {
  // Called holding mutex_.
  if (error_.empty()) error_ = message;
}

void RunJournal::on_row(std::span<const double> row) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) {
    ++rows_dropped_;
    return;
  }
  if (row.size() != columns_) {
    fail(file_.string() + ": a row of " + std::to_string(row.size()) + " values, expected " +
         std::to_string(columns_));
    return;
  }
  try {
    staged_.insert(staged_.end(), row.begin(), row.end());
    ++rows_staged_;
    if (staged_.size() == kCommitRows * columns_) wake_.notify_one();
  } catch (...) {
    fail(file_.string() + ": out of memory staging a row");
  }
}

void RunJournal::event(std::string_view kind, std::string_view text) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  try {
    staged_events_.push_back({rows_staged_, std::string(kind), std::string(text)});
  } catch (...) {
    fail(file_.string() + ": out of memory staging an event");
  }
}

void RunJournal::committer() noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kCommitPeriod,
                   [this] { return stopping_ || staged_.size() >= kCommitRows * columns_; });
    if (stopping_) break;
    lock.unlock();
    {
      const std::lock_guard<std::mutex> db(db_mutex_);
      if (!closed_) write_staged();
    }
    lock.lock();
  }
}

void RunJournal::write_staged() {
  // writing_ keeps its capacity from one commit to the next: on_row() stops allocating once the
  // rows of a commit period fit.
  std::vector<double>& values = writing_;
  values.clear();
  std::vector<JournalEvent> events;
  std::uint64_t first = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) {
      staged_.clear();
      staged_events_.clear();
      return;
    }
    values.swap(staged_);
    events.swap(staged_events_);
    first = rows_committed_;
  }
  if (values.empty() && events.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  const auto check = [&](int rc, int expected) {
    if (rc != expected && error.empty()) error = file_.string() + ": " + sqlite_error(db_);
    return error.empty();
  };
  const std::size_t n = values.size() / columns_;
  if (check(sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK)) {
    for (std::size_t i = 0; i < n && error.empty(); ++i) {
      sqlite3_bind_int64(insert_row_, 1, static_cast<sqlite3_int64>(first + i));
      sqlite3_bind_blob(insert_row_, 2, values.data() + i * columns_,
                        static_cast<int>(columns_ * sizeof(double)), SQLITE_STATIC);
      check(sqlite3_step(insert_row_), SQLITE_DONE);
      sqlite3_reset(insert_row_);
    }
    for (const JournalEvent& e : events) {
      if (!error.empty()) break;
      sqlite3_bind_int64(insert_event_, 1, static_cast<sqlite3_int64>(e.after_rows));
      sqlite3_bind_text(insert_event_, 2, e.kind.c_str(), -1, SQLITE_STATIC);
      sqlite3_bind_text(insert_event_, 3, e.text.c_str(), static_cast<int>(e.text.size()),
                        SQLITE_STATIC);
      check(sqlite3_step(insert_event_), SQLITE_DONE);
      sqlite3_reset(insert_event_);
    }
    if (error.empty()) {
      check(sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    }
    if (!error.empty() && sqlite3_get_autocommit(db_) == 0) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!error.empty()) {
    fail(error);
    rows_dropped_ += n;
    return;
  }
  rows_committed_ += n;
  ++commits_;
  longest_commit_s_ = std::max(longest_commit_s_, took);
}

void RunJournal::commit() {
  {
    const std::lock_guard<std::mutex> db(db_mutex_);
    if (!closed_) write_staged();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) throw JournalError(error_);
}

void RunJournal::close() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    const std::lock_guard<std::mutex> db(db_mutex_);
    if (!closed_) {
      write_staged();
      sqlite3_finalize(insert_row_);
      sqlite3_finalize(insert_event_);
      insert_row_ = nullptr;
      insert_event_ = nullptr;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (error_.empty() && sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE,
                                                        nullptr, nullptr) != SQLITE_OK) {
          fail(file_.string() + ": checkpoint: " + sqlite_error(db_));
        }
      }
      if (sqlite3_close(db_) != SQLITE_OK) {
        const std::lock_guard<std::mutex> lock(mutex_);
        fail(file_.string() + ": close: " + sqlite_error(db_));
      }
      db_ = nullptr;
      closed_ = true;
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) throw JournalError(error_);
}

std::uint64_t RunJournal::rows_staged() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return rows_staged_;
}
std::uint64_t RunJournal::rows_committed() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return rows_committed_;
}
std::uint64_t RunJournal::commits() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return commits_;
}
double RunJournal::longest_commit_s() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return longest_commit_s_;
}
std::string RunJournal::error() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

namespace {

// The journal's header (its meta table). @throws JournalError for a journal without one, of
// another format or value encoding, with a key missing or no columns.
JournalHeader read_journal_header(sqlite3* db, const fs::path& file) {
  std::map<std::string, std::string> meta;
  {
    const Statement s(
        db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", file);
    if (sqlite3_step(s.get()) != SQLITE_ROW || sqlite3_column_int(s.get(), 0) == 0) {
      throw JournalError(file.string() +
                         ": no header (its writer was killed while creating it): nothing was "
                         "recorded");
    }
  }
  {
    const Statement s(db, "SELECT key, value FROM meta", file);
    int step = 0;
    while ((step = sqlite3_step(s.get())) == SQLITE_ROW) {
      meta[column_text(s.get(), 0)] = column_text(s.get(), 1);
    }
    if (step != SQLITE_DONE) throw JournalError(file.string() + ": " + sqlite3_errmsg(db));
  }
  const auto get = [&](const char* key) {
    const auto it = meta.find(key);
    if (it == meta.end()) throw JournalError(file.string() + ": meta." + key + " missing");
    return it->second;
  };
  if (get("format") != kFormat) {
    throw JournalError(file.string() + ": format \"" + get("format") + "\", expected " + kFormat);
  }
  if (get("value_encoding") != "float64-le") {
    throw JournalError(file.string() + ": value_encoding \"" + get("value_encoding") +
                       "\", expected float64-le");
  }
  JournalHeader h;
  h.run_id = get("run_id");
  h.writer = get("writer");
  h.mode = get("mode");
  h.git_revision = get("git_revision");
  h.created_utc = get("created_utc");
  h.scenario_yaml = get("scenario_yaml");
  try {
    h.columns = nlohmann::json::parse(get("columns")).get<std::vector<std::string>>();
    h.seeds = nlohmann::json::parse(get("seeds"));
  } catch (const nlohmann::json::exception& e) {
    throw JournalError(file.string() + ": meta.columns/seeds: " + e.what());
  }
  if (h.columns.empty()) throw JournalError(file.string() + ": no columns");
  return h;
}

// The rows, in cycle order, into `c` (c.header.columns values each). @throws JournalError for a
// gap in the cycles or a row of the wrong size.
void read_journal_rows(sqlite3* db, const fs::path& file, JournalContents& c) {
  const std::size_t columns = c.header.columns.size();
  const Statement s(db, "SELECT cycle, data FROM rows ORDER BY cycle", file);
  int step = 0;
  while ((step = sqlite3_step(s.get())) == SQLITE_ROW) {
    const auto cycle = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0));
    if (cycle != c.rows) {
      throw JournalError(file.string() + ": row of cycle " + std::to_string(cycle) +
                         " where cycle " + std::to_string(c.rows) + " was expected");
    }
    const int bytes = sqlite3_column_bytes(s.get(), 1);
    if (static_cast<std::size_t>(bytes) != columns * sizeof(double)) {
      throw JournalError(file.string() + ": row of cycle " + std::to_string(cycle) + " has " +
                         std::to_string(bytes) + " bytes, expected " +
                         std::to_string(columns * sizeof(double)));
    }
    const std::size_t at = c.values.size();
    c.values.resize(at + columns);
    std::memcpy(c.values.data() + at, sqlite3_column_blob(s.get(), 1),
                static_cast<std::size_t>(bytes));
    ++c.rows;
  }
  if (step != SQLITE_DONE) throw JournalError(file.string() + ": " + sqlite3_errmsg(db));
}

// The events, in the order they were written, into `c`.
void read_journal_events(sqlite3* db, const fs::path& file, JournalContents& c) {
  const Statement s(db, "SELECT after_rows, kind, text FROM events ORDER BY id", file);
  int step = 0;
  while ((step = sqlite3_step(s.get())) == SQLITE_ROW) {
    c.events.push_back({static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0)),
                        column_text(s.get(), 1), column_text(s.get(), 2)});
  }
  if (step != SQLITE_DONE) throw JournalError(file.string() + ": " + sqlite3_errmsg(db));
}

}  // namespace

JournalContents read_journal(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec))) {
    throw JournalError(file.string() + ": no such journal (a regular file, not a link)");
  }
  sqlite3* db = nullptr;
  // Read-write: opening a journal whose writer was killed replays its WAL.
  const int rc =
      sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  struct Closer {
    sqlite3* db;
    ~Closer() { sqlite3_close(db); }
  } closer{db};
  if (rc != SQLITE_OK) {
    throw JournalError(file.string() + ": " +
                       (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(db, 2000);
  JournalContents c;
  c.header = read_journal_header(db, file);
  read_journal_rows(db, file, c);
  read_journal_events(db, file, c);
  return c;
}

}  // namespace hyloop::recording
