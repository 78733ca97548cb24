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

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/hal/openfresco.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/recording/run_journal.hpp"
#include "hyloop/testing/openfresco_peer.hpp"
#include "site/site_component.hpp"
#include "site/site_kind.hpp"

extern char** environ;

namespace hyloop::services {
namespace {

namespace fs = std::filesystem;
namespace of = hal::openfresco;
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
  EXPECT_EQ(r.failed_step, 0) << "no reply at step " << r.failed_step << " (errno "
                              << r.failed_errno << ")";
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
  [[nodiscard]] virtual of::SiteTransport transport() const { return of::SiteTransport::kTcp; }
  void SetUp() override {
    runs_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto o = default_site_options();
    o.server.transport = transport();
    o.server.udp_timeout = 300ms;
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

// ---- the site's run kind (site_kind.hpp) ----

TEST(SiteKind, ScenarioReadsBackWhatTheSiteWrote) {
  auto o = default_site_options();
  o.server.transport = of::SiteTransport::kUdp;
  o.server.udp_timeout = 1234ms;
  o.server.allowed_peers = {"10.0.0.2", "::1"};
  o.rig.servo.noise_std = 1e-4;
  o.rig.steps_per_trial = 4;
  o.max_rows = 777;
  const std::string yaml = site_yaml(o);
  const SiteOptions back = site_options_from_yaml(yaml, "scenario.yaml");
  EXPECT_EQ(site_yaml(back), yaml);
  EXPECT_EQ(back.server.transport, of::SiteTransport::kUdp);
  EXPECT_EQ(back.max_rows, 777U);
  EXPECT_TRUE(std::isinf(back.rig.safety.rate_limit));
  const SiteOptions changed = site_options_from_yaml(yaml, "s.yaml", {"rig.servo.omega=44"});
  EXPECT_EQ(changed.rig.servo.omega, 44.0);
}

TEST(SiteKind, ScenarioErrorsNameTheField) {
  const std::string yaml = site_yaml(default_site_options());
  const auto error = [&](const std::vector<std::string>& overrides) {
    try {
      (void)site_options_from_yaml(yaml, "s.yaml", overrides);
    } catch (const experiment::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error({"rig.servo.omgea=3"}),
            "s.yaml: rig.servo.omgea: unknown field of an opensees_site scenario");
  EXPECT_EQ(error({"site.transport=sctp"}),
            "s.yaml: site.transport: site.transport = 'sctp': must be tcp or udp");
  EXPECT_EQ(error({"rig.servo.step=fast"}),
            "s.yaml: rig.servo.step: 'fast' is not of the expected type");
  EXPECT_EQ(error({"kind=sits"}), "s.yaml: kind: must be opensees_site");
  EXPECT_NE(error({"rig.servo.step=-1"}).find("s.yaml: "), std::string::npos);
  EXPECT_NE(error({"rig.servo.step=-1"}), "(accepted)");
}

// ---- over UDP ----

class SiteServiceUdp : public SiteService {
 protected:
  [[nodiscard]] of::SiteTransport transport() const override { return of::SiteTransport::kUdp; }
};

TEST_F(SiteServiceUdp, RecordedSamplesEqualWhatThePeerReceived) {
  constexpr int kSteps = 200;
  const Received got = testing::run_generic_udp(site_->port(), kSteps, trial_disp);
  ASSERT_EQ(got.failed_step, 0);
  const SiteRunRecord run = wait_run(1);
  EXPECT_EQ(run.report.end, of::SessionEnd::kTerminated) << run.report.reason;
  const Csv csv = read_csv(run.dir / "samples.csv");
  ASSERT_EQ(csv.rows.size(), static_cast<std::size_t>(kSteps));
  for (std::size_t k = 0; k < csv.rows.size(); ++k) {
    EXPECT_EQ(csv.rows[k][csv.column("d_measured[m]")], got.disp[k]) << k;  // bit for bit
    EXPECT_EQ(csv.rows[k][csv.column("f_measured[N]")], got.force[k]) << k;
  }
  const auto summary = read_summary(run.dir);
  EXPECT_EQ(summary["site"]["end"], "terminated");
  EXPECT_EQ(summary["site"]["wrong_size_datagrams"], 0);
  EXPECT_EQ(summary["site"]["foreign_datagrams"], 0);
}

// The peer goes silent (killed) between steps: after udp_timeout (300 ms) the run is recorded
// as cut with the rig at rest, and the site serves the next peer.
TEST_F(SiteServiceUdp, SilentPeerIsRecordedAsCutWithTheRigAtRest) {
  std::chrono::steady_clock::time_point silent;
  {
    testing::OpenFrescoUdpPeer peer(site_->port());
    ASSERT_TRUE(peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256}));
    std::vector<double> reply(256, 0.0);
    for (int k = 1; k <= 40; ++k) ASSERT_TRUE(peer.step(trial_disp(k), reply));
    ASSERT_TRUE(peer.send_datagram(std::vector<std::byte>(100)));  // a stray piece: dropped
    silent = std::chrono::steady_clock::now();
  }
  const SiteRunRecord cut = wait_run(1);
  const double rest_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - silent).count();
  EXPECT_EQ(cut.report.end, of::SessionEnd::kCut);
  EXPECT_EQ(cut.report.reason, "no datagram from the peer for 300 ms");
  EXPECT_TRUE(cut.rig_at_rest);
  EXPECT_GE(rest_ms, 300.0);
  const auto summary = read_summary(cut.dir);
  EXPECT_EQ(summary["stop_reason"], "cut");
  EXPECT_EQ(summary["steps"], 40);
  EXPECT_EQ(summary["site"]["wrong_size_datagrams"], 1);
  EXPECT_TRUE(summary["site"]["rig_at_rest"].get<bool>());
  EXPECT_TRUE(logged("udp client 127.0.0.1:"));
  const Received next = testing::run_generic_udp(site_->port(), 20, trial_disp);
  EXPECT_EQ(next.failed_step, 0);
  EXPECT_EQ(wait_run(2).report.end, of::SessionEnd::kTerminated);
}

// ---- the binary ----

// A site process (hyloop-site or `hyloop site`) with its stdout on a pipe, and the OpenSees port
// it printed ("hyloop-site openfresco 127.0.0.1:PORT").
struct SiteProcess {
  pid_t pid = -1;
  FILE* out = nullptr;  // kept open to the end: later stdout lines must not meet a closed pipe
  std::uint16_t port = 0;

  explicit SiteProcess(std::vector<std::string> args,
                       const std::string& prefix = "hyloop-site openfresco 127.0.0.1:") {
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

// `hyloop ARGS...`: its exit status and stdout.
std::pair<int, std::string> hyloop_tool(const std::string& args) {
  const std::string command = std::string(HYLOOP_TOOL_BINARY) + " " + args + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = pipe != nullptr ? ::pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A site run cut by the peer (it closed mid-run) is a complete run directory that `hyloop
// validate` and `hyloop summary` read by its kind.
TEST(SiteBinary, CutSiteRunValidatesAndSummarises) {
  const fs::path runs = fresh_dir("cut_run");
  SiteProcess site({HYLOOP_TOOL_BINARY, "site", "--site-port", "0", "--runs-dir", runs.string(),
                    "--sessions", "1"});
  ASSERT_NE(site.port, 0);
  {
    OpenSeesPeer peer(site.port);
    ASSERT_TRUE(peer.send_generic_tcp_setup());
    std::vector<double> reply(256, 0.0);
    for (int k = 1; k <= 60; ++k) ASSERT_TRUE(peer.step(trial_disp(k), reply));
  }                           // killed: closes without terminate
  EXPECT_EQ(site.wait(), 3);  // the session ended other than by terminate
  std::vector<fs::path> dirs(fs::directory_iterator(runs), fs::directory_iterator{});
  ASSERT_EQ(dirs.size(), 1U);
  const auto [valid, valid_out] = hyloop_tool("validate " + (dirs[0] / "scenario.yaml").string());
  EXPECT_EQ(valid, 0);
  EXPECT_NE(valid_out.find("valid opensees_site scenario"), std::string::npos) << valid_out;
  const auto [rc, out] = hyloop_tool("summary " + dirs[0].string());
  ASSERT_EQ(rc, 0);
  const auto summary = nlohmann::json::parse(out);
  EXPECT_EQ(summary["stop_reason"], "cut");
  EXPECT_EQ(summary["steps"], 60);
  fs::remove_all(runs);
}

// The site itself killed mid-run (SIGKILL, between two steps): its run directory is left
// INCOMPLETE and `hyloop summary --recover` rebuilds it from the journal, every trial in it.
TEST(SiteBinary, KilledSiteRunIsRecoveredBySummaryRecover) {
  const fs::path runs = fresh_dir("killed_site");
  SiteProcess site({HYLOOP_TOOL_BINARY, "site", "--site-port", "0", "--runs-dir", runs.string()});
  ASSERT_NE(site.port, 0);
  OpenSeesPeer peer(site.port);
  ASSERT_TRUE(peer.send_generic_tcp_setup());
  std::vector<double> reply(256, 0.0);
  std::vector<double> disp;
  for (int k = 1; k <= 120; ++k) {
    ASSERT_TRUE(peer.step(trial_disp(k), reply));
    disp.push_back(reply[0]);
  }
  std::this_thread::sleep_for(1s);  // the journal commits every 0.25 s
  ::kill(site.pid, SIGKILL);
  EXPECT_EQ(site.wait(), -1);
  std::vector<fs::path> dirs(fs::directory_iterator(runs), fs::directory_iterator{});
  ASSERT_EQ(dirs.size(), 1U);
  ASSERT_TRUE(recording::is_incomplete(dirs[0]));
  const auto [rc, out] = hyloop_tool("summary --recover " + dirs[0].string());
  ASSERT_EQ(rc, 0) << out;
  EXPECT_FALSE(recording::is_incomplete(dirs[0]));
  const auto summary = read_summary(dirs[0]);
  EXPECT_EQ(summary["kind"], "opensees_site");
  EXPECT_TRUE(summary["incomplete"].get<bool>());
  EXPECT_EQ(summary["cycles_recovered"], 120);
  EXPECT_EQ(summary["steps"], 120);
  EXPECT_EQ(summary["signals"]["target"], "d_trial[m]");
  EXPECT_EQ(summary["site"]["end"], "unknown");
  EXPECT_EQ(summary["site"]["trials"], 120);
  EXPECT_NE(summary["incomplete_reason"].get<std::string>().find("recorder killed"),
            std::string::npos);
  const Csv csv = read_csv(dirs[0] / "samples.csv");
  ASSERT_EQ(csv.rows.size(), 120U);
  for (std::size_t k = 0; k < disp.size(); ++k) {
    EXPECT_EQ(csv.rows[k][csv.column("d_measured[m]")], disp[k]) << k;  // what the peer got
  }
  fs::remove_all(runs);
}

// `hyloop up` on a site's scenario starts hyloop-site (its own security directory, configured
// from the scenario) and writes the one session's run directory to --out.
TEST(SiteBinary, UpServesASiteScenarioAndWritesTheSessionToOut) {
  const fs::path dir = fresh_dir("up");
  auto o = default_site_options();
  o.server.port = 0;
  o.rig.steps_per_trial = 2;
  const fs::path scenario = dir / "site.yaml";
  std::ofstream(scenario) << site_yaml(o);
  SiteProcess up({HYLOOP_TOOL_BINARY, "up", scenario.string(), "--out", (dir / "run").string()});
  ASSERT_NE(up.port, 0) << "hyloop up did not print the site's address";
  EXPECT_EQ(run_opensees(up.port, 50).disp.size(), 50U);
  EXPECT_EQ(up.wait(), 0);
  EXPECT_FALSE(recording::is_incomplete(dir / "run"));
  EXPECT_EQ(read_csv(dir / "run" / "samples.csv").rows.size(), 50U);
  const auto summary = read_summary(dir / "run");
  EXPECT_EQ(summary["site"]["end"], "terminated");
  EXPECT_EQ(summary["step_s"], 0.02);  // the scenario's 2 rig steps per trial
  std::vector<fs::path> left(fs::directory_iterator(dir), fs::directory_iterator{});
  EXPECT_EQ(left.size(), 2U);  // site.yaml and run: the staging directory is gone
  fs::remove_all(dir);
}

// Over UDP (--set), a peer that goes silent: the session is cut after the scenario's timeout,
// `up` exits 3 and --out holds the cut run with the rig at rest.
TEST(SiteBinary, UpOverUdpRecordsASilentPeerAsCut) {
  const fs::path dir = fresh_dir("up_udp");
  auto o = default_site_options();
  o.server.port = 0;
  const fs::path scenario = dir / "site.yaml";
  std::ofstream(scenario) << site_yaml(o);
  SiteProcess up({HYLOOP_TOOL_BINARY, "up", scenario.string(), "--out", (dir / "run").string(),
                  "--set", "site.transport=udp", "--set", "site.udp_timeout_ms=250"},
                 "hyloop-site openfresco-udp 127.0.0.1:");
  ASSERT_NE(up.port, 0);
  {
    testing::OpenFrescoUdpPeer peer(up.port);
    ASSERT_TRUE(peer.send_setup({{1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, 256}));
    std::vector<double> reply(256, 0.0);
    for (int k = 1; k <= 30; ++k) ASSERT_TRUE(peer.step(trial_disp(k), reply));
  }
  EXPECT_EQ(up.wait(), 3);
  const auto summary = read_summary(dir / "run");
  EXPECT_EQ(summary["stop_reason"], "cut");
  EXPECT_EQ(summary["site"]["reason"], "no datagram from the peer for 250 ms");
  EXPECT_TRUE(summary["site"]["rig_at_rest"].get<bool>());
  EXPECT_EQ(summary["steps"], 30);
  fs::remove_all(dir);
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
