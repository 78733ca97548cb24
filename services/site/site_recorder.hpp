#pragma once
// The recording of an OpenSees/OpenFresco site session as a hyloop run (DESIGN.md §9): one run
// directory per accepted session, written by the shared recording code (run_directory.hpp:
// INCOMPLETE marker, journal.sqlite as rows arrive, samples.csv, summary.json, scenario.yaml).
//
// The recorded cycle is the OpenSees step as the rig sees it: one row per trial (code 3), taken
// when the trial's rig steps are done, i.e. exactly what the next getDaq returns:
//   trial[-]          1-based trial of the session
//   step[-]           commits (code 5) before this trial: the OpenSees step it belongs to
//                     (GenericTCP sends no commit: 0 throughout)
//   time[s]            the rig's time at the end of the trial
//   d_trial[m], v_trial[m/s]   the trial as received (v 0 when the set-up sends none)
//   d_command[m]      what the safety layer let through to the actuator
//   d_measured[m], v_measured[m/s], f_measured[N]   the daq reply's values
//   safety_event[-]   hal::SafetyEvent of the trial's last rig step (0: none)
// A session that ends other than by terminate (99) is a stopped run: the journal gets a "stop"
// event with the reason, summary.json "stop_reason": "cut" | "protocol_error" | "rig_fault" |
// "emergency_stop" and "site": {end, reason, trials, commits, daq and matrix replies, the rig
// at rest and where}. A refused set-up makes no run directory (no trial happened): it is logged.
//
// Threads: every SiteRig call comes from the site server's thread. trial() is as RT-safe as the
// journal's on_row() (a copy under a mutex, no I/O); begin/end_session do the file work.

#include <array>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/hal/openfresco_servo_site.hpp"
#include "hyloop/recording/run_directory.hpp"

namespace hyloop::services {

/// The columns of a site run (above).
[[nodiscard]] std::vector<std::string> site_run_columns();
/// What they mean: target d_trial, measured d_measured, command d_command, force f_measured.
[[nodiscard]] experiment::SignalRoles site_signal_roles();

/// One session's samples and summary, as the run directory code wants an experiment. Its summary
/// is the recorder's (set_summary) or, for a run recovered from its journal (no summary set),
/// what the rows and the journal's stop event say: the site's end is then "unknown".
class SiteRun final : public experiment::Experiment {
 public:
  /// `resolved_yaml`: the site's configuration (scenario.yaml); `trial_time`: rig time per
  /// trial (s); `max_rows`: samples kept in memory (the journal keeps every row).
  SiteRun(std::string name, std::string resolved_yaml, double trial_time, std::size_t max_rows);

  bool step() noexcept override { return false; }
  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycles_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return cycles_; }
  [[nodiscard]] double step_size() const noexcept override { return trial_time_; }
  [[nodiscard]] const experiment::SampleTable& samples() const noexcept override {
    return samples_;
  }
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::string kind() const override { return "opensees_site"; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return yaml_; }
  bool record_cycle(std::span<const double> row) noexcept override;
  /// The journal's stop event, "<stop_reason>: <why>" (recovery replays it).
  void record_stop(std::string_view reason) noexcept override;

  /// The kind's part of summary.json, set once the session ended.
  void set_summary(nlohmann::json summary) {
    summary_ = std::move(summary);
    summary_set_ = true;
  }

 private:
  std::string name_;
  std::string yaml_;
  double trial_time_;
  experiment::SampleTable samples_;
  std::int64_t cycles_ = 0;
  double last_step_ = 0.0;  ///< step[-] of the last row
  std::array<char, 256> stop_{};
  nlohmann::json summary_ = nlohmann::json::object();
  bool summary_set_ = false;
};

/// What a finished session left: its run directory ("" for a refused set-up) and its end.
struct SiteRunRecord {
  std::filesystem::path dir;
  hal::openfresco::SessionReport report;
  bool rig_at_rest = false;
  std::string error;  ///< the run directory could not be written: why
};

struct SiteRecorderConfig {
  std::filesystem::path runs_dir;  ///< where run directories are made
  std::string name = "opensees-site";
  std::string resolved_yaml;
  std::size_t max_rows = 100000;
  /// Log lines (begin, refusal, end, recording errors).
  std::function<void(std::string_view)> log;
  /// Called when a session has ended and its run directory is written (metrics).
  std::function<void(const SiteRunRecord&)> ended;
};

/// A ServoRig that records every session it serves.
class SiteRecorder final : public hal::openfresco::SiteRig {
 public:
  SiteRecorder(hal::openfresco::ServoRig& rig, SiteRecorderConfig config);
  ~SiteRecorder() override;

  void begin_session(const hal::openfresco::SetupId& setup) override;
  hal::DriverStatus trial(const hal::openfresco::TrialView& trial) noexcept override;
  void measure(const hal::openfresco::DaqView& daq) noexcept override;
  void commit() noexcept override;
  void end_session(const hal::openfresco::SessionReport& report) override;

  /// The e-stop's reason, recorded as the stop of the session it ends. Any thread.
  void note_emergency_stop(const std::string& reason);
  /// The sessions ended so far (copies). Any thread.
  [[nodiscard]] std::vector<SiteRunRecord> runs() const;
  /// Waits until `count` sessions have ended; false on timeout. Any thread.
  bool wait_for_runs(std::size_t count, std::chrono::milliseconds timeout) const;

 private:
  void log(const std::string& line) const;
  nlohmann::json site_summary(const hal::openfresco::SessionReport& report, bool at_rest) const;
  void finish_recording(const hal::openfresco::SessionReport& report, SiteRunRecord& out);

  hal::openfresco::ServoRig& rig_;
  SiteRecorderConfig config_;
  std::unique_ptr<SiteRun> run_;
  std::unique_ptr<recording::RunRecording> recording_;
  std::chrono::steady_clock::time_point started_;
  std::uint64_t commits_ = 0;
  std::array<double, 10> row_{};
  mutable std::mutex mutex_;  ///< runs_, estop_reason_
  mutable std::condition_variable ended_;
  std::vector<SiteRunRecord> runs_;
  std::string estop_reason_;
};

}  // namespace hyloop::services
