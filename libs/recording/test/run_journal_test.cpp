// The run journal and the run directory's life: rows bit for bit, periodic commits, a killed
// writer, INCOMPLETE until complete(), recovery through the same recorder, checked writes.
#include "hyloop/recording/run_journal.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/testing/scratch_dir.hpp"

namespace hyloop::recording {
using experiment::Experiment;
using experiment::make_experiment;
namespace {

namespace fs = std::filesystem;
const fs::path kSource = HYLOOP_SOURCE_DIR;

fs::path temp_dir(const std::string& name) { return hyloop::testing::scratch_dir("journal", name); }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

JournalHeader test_header(std::size_t columns) {
  JournalHeader h;
  h.run_id = "test-run";
  h.writer = "run_journal_test";
  h.mode = "in_process";
  h.git_revision = "abc";
  h.scenario_yaml = "name: t\n";
  for (std::size_t i = 0; i < columns; ++i) {
    std::string name = "c";
    name.append(std::to_string(i)).append("[-]");
    h.columns.push_back(name);
  }
  h.seeds = {{"rig.seed", 7}};
  return h;
}

TEST(RunJournal, RowsAndEventsComeBackBitForBit) {
  const fs::path dir = temp_dir("bits");
  const double nan_payload = std::bit_cast<double>(std::uint64_t{0xfff8000000012345});
  const std::vector<std::vector<double>> rows = {
      {0.1, -0.0, std::numeric_limits<double>::infinity(), 4.9e-324},
      {nan_payload, -std::numeric_limits<double>::quiet_NaN(), 1e308, -1.0 / 3.0},
      {std::numeric_limits<double>::quiet_NaN(), 2.0, -std::numeric_limits<double>::infinity(),
       0.0}};
  {
    RunJournal j(dir / "j.sqlite", test_header(4));
    j.on_row(rows[0]);
    j.on_row(rows[1]);
    j.event("stop", "not_finite");
    j.on_row(rows[2]);
    j.event("end", "finished");
    j.close();
    EXPECT_EQ(j.rows_committed(), 3U);
  }
  const JournalContents c = read_journal(dir / "j.sqlite");
  ASSERT_EQ(c.rows, 3U);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(std::memcmp(c.row(i).data(), rows[i].data(), 4 * sizeof(double)), 0) << "row " << i;
  }
  ASSERT_EQ(c.events.size(), 2U);
  EXPECT_EQ(c.events[0].after_rows, 2U);
  EXPECT_EQ(c.events[0].kind, "stop");
  EXPECT_EQ(c.events[0].text, "not_finite");
  EXPECT_EQ(c.events[1].after_rows, 3U);
  EXPECT_EQ(c.header.run_id, "test-run");
  EXPECT_EQ(c.header.columns, test_header(4).columns);
  EXPECT_EQ(c.header.seeds["rig.seed"], 7);
  EXPECT_EQ(c.header.scenario_yaml, "name: t\n");
  fs::remove_all(dir);
}

TEST(RunJournal, CommitsWithinHalfASecondWithoutBeingAsked) {
  const fs::path dir = temp_dir("period");
  RunJournal j(dir / "j.sqlite", test_header(2));
  for (int i = 0; i < 100; ++i) j.on_row(std::vector<double>{1.0 * i, 2.0 * i});
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  // Another connection (as `hyloop summary --recover` would) sees every row.
  EXPECT_EQ(read_journal(dir / "j.sqlite").rows, 100U);
  EXPECT_GE(j.commits(), 1U);
  j.close();
  fs::remove_all(dir);
}

TEST(RunJournal, AWriterKilledAtAnInstantLosesAtMostTheLastHalfSecond) {
  const fs::path dir = temp_dir("kill");
  auto* progress = static_cast<std::atomic<std::uint64_t>*>(
      mmap(nullptr, sizeof(std::atomic<std::uint64_t>), PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(progress, MAP_FAILED);
  new (progress) std::atomic<std::uint64_t>(0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RunJournal j(dir / "j.sqlite", test_header(3));
    for (std::uint64_t i = 0;; ++i) {
      j.on_row(std::vector<double>{static_cast<double>(i), 0.5 * static_cast<double>(i), -1.0});
      progress->store(i + 1);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  const std::uint64_t staged_before = progress->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  waitpid(child, nullptr, 0);
  const JournalContents c = read_journal(dir / "j.sqlite");
  std::cout << "rows staged 0.6 s before the kill: " << staged_before
            << ", rows on disk after it: " << c.rows << "\n";
  EXPECT_GT(staged_before, 0U);
  EXPECT_GE(c.rows, staged_before);
  for (std::size_t i = 0; i < c.rows; ++i) {
    ASSERT_EQ(c.row(i)[0], static_cast<double>(i));
    ASSERT_EQ(c.row(i)[1], 0.5 * static_cast<double>(i));
  }
  munmap(progress, sizeof(std::atomic<std::uint64_t>));
  fs::remove_all(dir);
}

TEST(RunJournal, ARowOfTheWrongLengthIsAnErrorNamingBoth) {
  const fs::path dir = temp_dir("length");
  RunJournal j(dir / "j.sqlite", test_header(3));
  j.on_row(std::vector<double>{1.0, 2.0});
  try {
    j.commit();
    FAIL() << "no error";
  } catch (const JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("a row of 2 values, expected 3"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(j.close(), JournalError);
  fs::remove_all(dir);
}

TEST(RunJournal, ReadingChecksEveryRowsLengthAndOrder) {
  const fs::path dir = temp_dir("corrupt");
  {
    RunJournal j(dir / "j.sqlite", test_header(2));
    for (int i = 0; i < 5; ++i) j.on_row(std::vector<double>{1.0, 2.0});
    j.close();
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "j.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE rows SET data = x'00010203040506' WHERE cycle = 3", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)read_journal(dir / "j.sqlite");
    FAIL() << "no error";
  } catch (const JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("row of cycle 3 has 7 bytes, expected 16"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(sqlite3_open((dir / "j.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM rows WHERE cycle = 3", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)read_journal(dir / "j.sqlite");
    FAIL() << "no error";
  } catch (const JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("row of cycle 4 where cycle 3 was expected"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// --- run directory names (Start.out_dir) -------------------------------------------------------

std::string name_error(const std::string& name) {
  try {
    check_run_name(name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RunName, OnlyASingleNameUnderTheRunsDirectoryIsAccepted) {
  for (const char* ok : {"run1", "sits_table1-scvg.2026", "a", "A+b=c@d,e"}) {
    EXPECT_EQ(name_error(ok), "") << ok;
  }
  EXPECT_NE(name_error("../escape").find("out_dir = \"../escape\": must be a single name"),
            std::string::npos)
      << name_error("../escape");
  EXPECT_NE(name_error("/etc/cron.d").find("out_dir = \"/etc/cron.d\": an absolute path"),
            std::string::npos);
  EXPECT_NE(name_error("a/b").find("single name"), std::string::npos);
  EXPECT_NE(name_error("..").find("out_dir = \"..\""), std::string::npos);
  EXPECT_NE(name_error(".").find("out_dir = \".\""), std::string::npos);
  EXPECT_NE(name_error("").find("out_dir = \"\": missing"), std::string::npos);
  EXPECT_NE(name_error(".hidden").find("must not start with '.'"), std::string::npos);
  EXPECT_NE(name_error("-rf").find("must not start with '.' or '-'"), std::string::npos);
  EXPECT_NE(name_error("a\nb").find("\"a\\x0ab\": only letters"), std::string::npos)
      << name_error("a\nb");
  EXPECT_NE(name_error("a b").find("only letters"), std::string::npos);
  // Issue 27: a NUL byte passed (strchr finds the terminator).
  EXPECT_NE(name_error(std::string("run\0x", 5)).find("\"run\\x00x\": only letters"),
            std::string::npos)
      << name_error(std::string("run\0x", 5));
  const std::string huge(100000, 'x');
  const std::string e = name_error(huge);
  EXPECT_NE(e.find("longer than 255 bytes"), std::string::npos);
  EXPECT_LT(e.size(), 300U);  // the value is quoted, cut at 200 characters
}

// --- the run directory's life, for each kind ---------------------------------------------------

struct KindCase {
  const char* scenario;
  std::vector<std::string> overrides;
  std::int64_t kill_after;  // cycles recorded before the "kill"
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.scenario; }

class Recording : public ::testing::TestWithParam<KindCase> {};

std::unique_ptr<Experiment> make(const KindCase& c) {
  return make_experiment((kSource / c.scenario).string(), c.overrides);
}

TEST_P(Recording, IncompleteUntilCompleteThenTheSameBytesAsWriteRunDirectory) {
  const fs::path dir = temp_dir("complete");
  const auto reference = make(GetParam());
  reference->run();
  write_run_directory(*reference, dir / "reference");

  const auto e = make(GetParam());
  RunRecording recording(dir / "run", journal_header(*e, "id", "test", "in_process"), false);
  EXPECT_TRUE(is_incomplete(dir / "run"));
  // The recorder is alive: recovery and --force refuse to touch the directory.
  EXPECT_THROW(recover_run_directory(dir / "run"), RunDirectoryError);
  EXPECT_THROW(remove_output_directory(dir / "run"), RunDirectoryError);
  e->set_row_observer(&recording.journal());
  e->run();
  e->set_row_observer(nullptr);
  recording.complete(*e);
  EXPECT_FALSE(is_incomplete(dir / "run"));
  EXPECT_EQ(slurp(dir / "run" / "samples.csv"), slurp(dir / "reference" / "samples.csv"));
  EXPECT_EQ(read_journal(dir / "run" / kJournalFile).rows, static_cast<std::size_t>(e->cycle()));
  EXPECT_FALSE(fs::exists(dir / "run" / "journal.sqlite-wal"));
  fs::remove_all(dir);
}

TEST_P(Recording, RecoveryReplaysTheJournalToTheRowsOfTheUninterruptedRun) {
  const fs::path dir = temp_dir("recover");
  const auto reference = make(GetParam());
  reference->run();
  write_run_directory(*reference, dir / "reference");

  const auto e = make(GetParam());
  {
    RunRecording recording(dir / "run", journal_header(*e, "id", "test", "in_process"), false);
    e->set_row_observer(&recording.journal());
    for (std::int64_t k = 0; k < GetParam().kill_after; ++k) ASSERT_TRUE(e->step());
    e->set_row_observer(nullptr);
    // Destroyed without complete(): what a killed recorder leaves, less the last commit period.
  }
  ASSERT_TRUE(is_incomplete(dir / "run"));
  EXPECT_THROW(recover_run_directory(dir / "reference"), RunDirectoryError);  // complete
  const RecoveryResult r = recover_run_directory(dir / "run");
  EXPECT_EQ(r.cycles, static_cast<std::size_t>(GetParam().kill_after));
  EXPECT_FALSE(is_incomplete(dir / "run"));
  const auto summary = nlohmann::json::parse(slurp(dir / "run" / "summary.json"));
  EXPECT_EQ(summary["incomplete"], true);
  EXPECT_EQ(summary["cycles_recovered"], GetParam().kill_after);
  EXPECT_EQ(summary["steps"], GetParam().kill_after);
  EXPECT_NE(summary["incomplete_reason"].get<std::string>().find("recorder killed"),
            std::string::npos);
  EXPECT_EQ(summary["run_id"], "id");
  // The recovered rows are the uninterrupted run's rows, byte for byte.
  const auto recovered = lines(slurp(dir / "run" / "samples.csv"));
  const auto full = lines(slurp(dir / "reference" / "samples.csv"));
  ASSERT_GT(recovered.size(), 1U);
  ASSERT_LT(recovered.size(), full.size());
  for (std::size_t i = 0; i < recovered.size(); ++i) {
    ASSERT_EQ(recovered[i], full[i]) << "line " << i;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, Recording,
    ::testing::Values(KindCase{"scenarios/sits/table1_scvg.yaml",
                               {"timing.duration_s=4", "metrics.window_s=2"},
                               1234},
                      KindCase{"scenarios/rht/p4.yaml", {"timing.duration_s=6"}, 345},
                      KindCase{"scenarios/fcu/polynomial.yaml", {"timing.duration_s=3"}, 1500},
                      KindCase{"scenarios/vrths/case1_amb.yaml", {"timing.duration_s=8"}, 20000}),
    [](const auto& p) { return std::string(p.param.scenario).substr(10, 3); });

// A write that fails (here: the file size limit, EFBIG, standing in for a full disk) is an error
// naming the file and the system's message, and the directory stays marked INCOMPLETE.
TEST(Recording, AFailedWriteIsAClearErrorAndTheDirectoryStaysIncomplete) {
  const fs::path dir = temp_dir("efbig");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const auto e = make_experiment((kSource / "scenarios/sits/table1_scvg.yaml").string(),
                                   {"timing.duration_s=4", "metrics.window_s=2"});
    RunRecording recording(dir / "run", journal_header(*e, "id", "test", "in_process"), false);
    e->set_row_observer(&recording.journal());
    e->run();
    e->set_row_observer(nullptr);
    recording.journal().event("end", "finished");
    // Room for the journal (about 0.4 MB), not for samples.csv (about 0.9 MB).
    const rlimit limit{600 * 1024, 600 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      recording.complete(*e);
      _exit(10);
    } catch (const RunDirectoryError& err) {
      const std::string m = err.what();
      std::ofstream(dir / "error.txt") << m;
      _exit(m.find("samples.csv") != std::string::npos &&
                    m.find(std::strerror(EFBIG)) != std::string::npos
                ? 0
                : 11);
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(dir / "error.txt");
  EXPECT_TRUE(is_incomplete(dir / "run"));
  EXPECT_FALSE(fs::exists(dir / "run" / "summary.json"));
  // Everything recorded is still there.
  const RecoveryResult r = recover_run_directory(dir / "run");
  EXPECT_EQ(r.cycles, 2000U);
  EXPECT_NE(r.reason.find("the run ended"), std::string::npos) << r.reason;
  // Issue 27: and why it did not complete.
  EXPECT_NE(r.reason.find("a write failed: test could not write the run directory (writing " +
                          (dir / "run" / "samples.csv").string() +
                          " failed: " + std::strerror(EFBIG) + ")"),
            std::string::npos)
      << r.reason;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hyloop::recording

namespace hyloop::recording {
namespace {

// Measured, not asserted (docs/reliability.md): the producer's cost per row and how fast the
// committer drains rows of the SITS width (21 values) into the journal.
TEST(RunJournal, CostPerRowIsMeasured) {
  const fs::path dir = temp_dir("cost");
  constexpr std::size_t kRows = 200000;
  RunJournal j(dir / "j.sqlite", test_header(21));
  std::vector<double> row(21, 0.25);
  // The first half grows the staging buffers; the second half is timed (a steady run reuses
  // them from one commit period to the next).
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kRows / 2; ++i) {
    row[0] = static_cast<double>(i);
    j.on_row(row);
  }
  j.commit();
  const auto t1 = std::chrono::steady_clock::now();
  for (std::size_t i = kRows / 2; i < kRows; ++i) {
    row[0] = static_cast<double>(i);
    j.on_row(row);
  }
  const auto t2 = std::chrono::steady_clock::now();
  j.close();
  const auto t3 = std::chrono::steady_clock::now();
  const double produce = std::chrono::duration<double>(t2 - t1).count();
  const double total = std::chrono::duration<double>(t3 - t0).count();
  std::cout << "on_row: " << produce / (kRows / 2) * 1e9 << " ns per row; " << kRows
            << " rows committed and checkpointed in " << total << " s ("
            << static_cast<double>(kRows) / total << " rows/s); longest commit "
            << j.longest_commit_s() * 1e3 << " ms over " << j.commits() << " commits\n";
  EXPECT_EQ(read_journal(dir / "j.sqlite").rows, kRows);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hyloop::recording
