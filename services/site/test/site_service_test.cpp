// The site service end to end: a peer playing OpenSees (raw sockets, Nagle on, as OpenFresco's
// TCP_Socket) drives the SiteComponent and the hyloop-site binary; each session is checked in
// its run directory (samples.csv, journal.sqlite, summary.json).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_journal.hpp"
#include "hyloop/testing/openfresco_peer.hpp"
#include "hyloop/transport/openfresco.hpp"
#include "site/site_component.hpp"

extern char** environ;

namespace hyloop::services {
namespace {

namespace fs = std::filesystem;
namespace of = transport::openfresco;
using namespace std::chrono_literals;

fs::path fresh_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("hyloop_site_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

using OpenSeesPeer = testing::OpenFrescoPeer;

using Received = testing::GenericTcpRun;

double trial_disp(int k) { return 0.02 * std::sin(2.0 * std::numbers::pi * 0.5 * 0.01 * k); }

// ECGenericTCP's exchange (openfresco_peer.hpp); every reply came and the site closed after
// terminate.
Received run_opensees(std::uint16_t port, int steps) {
  Received r = testing::run_generic_tcp(port, steps, trial_disp);
  EXPECT_EQ(r.failed_step, 0) << "no reply at step " << r.failed_step;
  EXPECT_TRUE(r.closed);
  return r;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  [[nodiscard]] std::size_t column(const std::string& name) const {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  }
};

Csv read_csv(const fs::path& file) {
  Csv csv;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  for (std::stringstream h(line); std::getline(h, line, ',');) csv.header.push_back(line);
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (std::stringstream s(line); std::getline(s, line, ',');) {
      row.push_back(std::strtod(line.c_str(), nullptr));
    }
    csv.rows.push_back(row);
  }
  return csv;
}

nlohmann::json read_summary(const fs::path& dir) {
  std::ifstream in(dir / "summary.json");
  return nlohmann::json::parse(in);
}

class SiteService : public ::testing::Test {
 protected:
  void SetUp() override {
    runs_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto o = default_site_options();
    o.server.port = 0;
    o.server.poll_timeout = 50ms;
    o.runs_dir = runs_;
    o.server.log = [this](std::string_view line) {
      const std::lock_guard lock(mutex_);
      log_.emplace_back(line);
    };
    site_ = std::make_unique<SiteComponent>(o);
    ASSERT_EQ(site_->configure({}).state(), v1::LIFECYCLE_STATE_INACTIVE);
    ASSERT_EQ(site_->activate().state(), v1::LIFECYCLE_STATE_ACTIVE);
  }
  void TearDown() override {
    site_->shutdown();
    fs::remove_all(runs_);
  }
  [[nodiscard]] bool logged(const std::string& text) {
    const std::lock_guard lock(mutex_);
    return std::any_of(log_.begin(), log_.end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
  SiteRunRecord wait_run(std::size_t n) {
    EXPECT_TRUE(site_->recorder()->wait_for_runs(n, 10s));
    return site_->recorder()->runs().at(n - 1);
  }

  fs::path runs_;
  std::unique_ptr<SiteComponent> site_;
  std::mutex mutex_;
  std::vector<std::string> log_;
};

TEST_F(SiteService, RecordedSamplesEqualWhatThePeerReceived) {
  constexpr int kSteps = 400;
  const Received got = run_opensees(site_->port(), kSteps);
  const SiteRunRecord run = wait_run(1);
  EXPECT_EQ(run.report.end, of::SessionEnd::kTerminated) << run.report.reason;
  ASSERT_FALSE(run.dir.empty()) << run.error;
  EXPECT_FALSE(recording::is_incomplete(run.dir));
  const Csv csv = read_csv(run.dir / "samples.csv");
  ASSERT_EQ(csv.header, site_run_columns());
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(kSteps));
  ASSERT_EQ(got.disp.size(), csv.rows.size());
  const auto journal = recording::read_journal(run.dir / recording::kJournalFile);
  ASSERT_EQ(journal.rows, csv.rows.size());
  double peak = 0.0;
  for (std::size_t k = 0; k < csv.rows.size(); ++k) {
    const auto& row = csv.rows[k];
    EXPECT_EQ(row[csv.column("trial[-]")], static_cast<double>(k + 1));
    EXPECT_EQ(row[csv.column("step[-]")], static_cast<double>(k));  // commits before it
    EXPECT_EQ(row[csv.column("d_trial[m]")], trial_disp(static_cast<int>(k) + 1));
    EXPECT_EQ(row[csv.column("d_measured[m]")], got.disp[k]) << k;  // bit for bit
    EXPECT_EQ(row[csv.column("f_measured[N]")], got.force[k]) << k;
    EXPECT_EQ(journal.row(k)[csv.column("d_measured[m]")], got.disp[k]) << k;
    EXPECT_EQ(journal.row(k)[csv.column("f_measured[N]")], got.force[k]) << k;
    peak = std::max(peak, std::abs(got.disp[k]));
  }
  EXPECT_GT(peak, 0.01);
  const auto summary = read_summary(run.dir);
  EXPECT_EQ(summary["kind"], "opensees_site");
  EXPECT_EQ(summary["signals"]["target"], "d_trial[m]");  // hyloop report's tracking.png
  EXPECT_EQ(summary["signals"]["measured"], "d_measured[m]");
  EXPECT_EQ(summary["steps"], kSteps);
  EXPECT_FALSE(summary.contains("stop_reason"));
  EXPECT_EQ(summary["site"]["end"], "terminated");
  EXPECT_EQ(summary["site"]["commits"], kSteps);
  EXPECT_EQ(summary["site"]["setup_id"], nlohmann::json({1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 256}));
  EXPECT_TRUE(summary["site"]["rig_at_rest"].get<bool>());
  EXPECT_TRUE(fs::exists(run.dir / "scenario.yaml"));
}

TEST_F(SiteService, PeerDyingMidMessageIsRecordedAsCutWithTheRigAtRest) {
  {
    OpenSeesPeer peer(site_->port());
    ASSERT_TRUE(peer.connected());
    peer.send_generic_tcp_setup();
    std::vector<double> reply(256, 0.0);
    for (int k = 1; k <= 50; ++k) ASSERT_TRUE(peer.step(trial_disp(k), reply));
    ASSERT_TRUE(peer.send(std::vector<std::byte>(1000)));  // half a trial, then it dies
  }
  const SiteRunRecord cut = wait_run(1);
  EXPECT_EQ(cut.report.end, of::SessionEnd::kCut);
  EXPECT_EQ(cut.report.reason, "the peer closed mid-message, after 1000 of 2048 bytes");
  EXPECT_TRUE(cut.rig_at_rest);
  const auto summary = read_summary(cut.dir);
  EXPECT_EQ(summary["stop_reason"], "cut");
  EXPECT_EQ(summary["site"]["end"], "cut");
  EXPECT_TRUE(summary["site"]["rig_at_rest"].get<bool>());
  EXPECT_EQ(summary["steps"], 50);
  const auto journal = recording::read_journal(cut.dir / recording::kJournalFile);
  ASSERT_GE(journal.events.size(), 2U);
  EXPECT_EQ(journal.events[0].kind, "stop");
  EXPECT_EQ(journal.events[0].after_rows, 50U);
  EXPECT_NE(journal.events[0].text.find("mid-message"), std::string::npos);
  // The site stays up: the next client gets a full run.
  EXPECT_EQ(site_->state(), v1::LIFECYCLE_STATE_ACTIVE);
  const Received next = run_opensees(site_->port(), 20);
  EXPECT_EQ(next.disp.size(), 20U);
  EXPECT_EQ(wait_run(2).report.end, of::SessionEnd::kTerminated);
}

TEST_F(SiteService, SetupMismatchIsRefusedBeforeTheFirstTrialAndLogged) {
  OpenSeesPeer peer(site_->port());
  (void)peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 1, 1, 0}, 256});  // daq accel: not measured
  std::vector<double> msg(256, 0.0);
  msg[0] = 3.0;
  msg[1] = 0.01;
  peer.send_doubles(msg);
  EXPECT_TRUE(peer.sees_eof());  // no protocol error: the connection closes
  const SiteRunRecord refused = wait_run(1);
  EXPECT_EQ(refused.report.end, of::SessionEnd::kRefused);
  EXPECT_EQ(refused.report.trials, 0U);
  EXPECT_TRUE(refused.dir.empty());
  EXPECT_TRUE(fs::is_empty(runs_));  // no trial, no run
  EXPECT_TRUE(
      logged("set-up ID slot 7 (daq accel size) = 1: must be 0 (the rig measures disp, "
             "vel, force, time)"));
}

TEST_F(SiteService, EmergencyStopCutsTheSessionAndLatches) {
  OpenSeesPeer peer(site_->port());
  peer.send_generic_tcp_setup();
  std::vector<double> msg(256, 0.0), reply(256, 0.0);
  for (int k = 1; k <= 30; ++k) ASSERT_TRUE(peer.step(trial_disp(k), reply));
  (void)site_->emergency_stop("operator pressed the button");
  EXPECT_TRUE(peer.sees_eof());
  const SiteRunRecord stopped = wait_run(1);
  EXPECT_EQ(stopped.report.end, of::SessionEnd::kCut);
  EXPECT_TRUE(stopped.rig_at_rest);
  const auto summary = read_summary(stopped.dir);
  EXPECT_EQ(summary["stop_reason"], "emergency_stop");
  // Still latched: the next client's first trial faults the rig and ends its session.
  OpenSeesPeer next(site_->port());
  next.send_generic_tcp_setup();
  msg[0] = 3.0;
  next.send_doubles(msg);
  EXPECT_TRUE(next.sees_eof());
  EXPECT_EQ(wait_run(2).report.end, of::SessionEnd::kRigFault);
  // Configure is refused until the latch is reset; then the site serves again.
  ASSERT_EQ(site_->deactivate().state(), v1::LIFECYCLE_STATE_INACTIVE);
  const auto refused = site_->configure({});
  EXPECT_EQ(refused.state(), v1::LIFECYCLE_STATE_INACTIVE);
  EXPECT_EQ(refused.emergency_stop(), "operator pressed the button");
  v1::ConfigureRequest reset;
  reset.set_reset_emergency_stop_count(refused.emergency_stop_count());
  ASSERT_EQ(site_->configure(reset).state(), v1::LIFECYCLE_STATE_INACTIVE);
  ASSERT_EQ(site_->activate().state(), v1::LIFECYCLE_STATE_ACTIVE);
  EXPECT_EQ(run_opensees(site_->port(), 10).disp.size(), 10U);
  EXPECT_EQ(wait_run(1).report.end, of::SessionEnd::kTerminated);  // the new recorder's first
}

// ---- the binary ----

// A site process (hyloop-site or `hyloop site`) with its stdout on a pipe, and the OpenSees port
// it printed ("hyloop-site openfresco 127.0.0.1:PORT").
struct SiteProcess {
  pid_t pid = -1;
  FILE* out = nullptr;  // kept open to the end: later stdout lines must not meet a closed pipe
  std::uint16_t port = 0;

  explicit SiteProcess(std::vector<std::string> args) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out = ::fdopen(fds[0], "r");
    if (rc != 0) return;
    char line[256];
    const std::string prefix = "hyloop-site openfresco 127.0.0.1:";
    while (port == 0 && std::fgets(line, sizeof line, out) != nullptr) {
      const std::string text(line);
      if (text.rfind(prefix, 0) == 0) {
        port = static_cast<std::uint16_t>(std::stoi(text.substr(prefix.size())));
      }
    }
  }
  ~SiteProcess() {
    if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out != nullptr) std::fclose(out);
  }
  SiteProcess(const SiteProcess&) = delete;
  SiteProcess& operator=(const SiteProcess&) = delete;
  // The exit status, or -1 when it did not exit normally.
  int wait() {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1;
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

// The one run directory in `runs`, complete, with `trials` rows, terminated.
void expect_one_terminated_run(const fs::path& runs, std::size_t trials) {
  std::vector<fs::path> dirs(fs::directory_iterator(runs), fs::directory_iterator{});
  ASSERT_EQ(dirs.size(), 1U);
  EXPECT_FALSE(recording::is_incomplete(dirs[0]));
  EXPECT_EQ(read_csv(dirs[0] / "samples.csv").rows.size(), trials);
  EXPECT_EQ(read_summary(dirs[0])["site"]["end"], "terminated");
}

TEST(SiteBinary, ServesAtStartRecordsAndStopsOnSigterm) {
  const fs::path runs = fresh_dir("binary");
  SiteProcess site({HYLOOP_SITE_BINARY, "--insecure", "--grpc-address", "127.0.0.1:0",
                    "--site-port", "0", "--runs-dir", runs.string(), "--serve-at-start",
                    "--log-level", "warn"});
  ASSERT_NE(site.port, 0) << "hyloop-site did not print its openfresco address";
  EXPECT_EQ(run_opensees(site.port, 100).disp.size(), 100U);
  ::kill(site.pid, SIGTERM);
  EXPECT_EQ(site.wait(), 0);
  expect_one_terminated_run(runs, 100);
  fs::remove_all(runs);
}

TEST(SiteBinary, HyloopSiteSubcommandServesTheGivenSessionsAndExits) {
  const fs::path runs = fresh_dir("subcommand");
  SiteProcess site({HYLOOP_TOOL_BINARY, "site", "--site-port", "0", "--runs-dir", runs.string(),
                    "--sessions", "1"});
  ASSERT_NE(site.port, 0) << "hyloop site did not print its openfresco address";
  EXPECT_EQ(run_opensees(site.port, 50).disp.size(), 50U);
  EXPECT_EQ(site.wait(), 0);  // exits by itself after the one session
  expect_one_terminated_run(runs, 50);
  fs::remove_all(runs);
}

}  // namespace
}  // namespace hyloop::services
