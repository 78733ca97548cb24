#include "site/site_recorder.hpp"

#include <exception>

namespace hyloop::services {

namespace of = hal::openfresco;

std::vector<std::string> site_run_columns() {
  return {"trial[-]",     "step[-]",       "time[s]",         "d_trial[m]",    "v_trial[m/s]",
          "d_command[m]", "d_measured[m]", "v_measured[m/s]", "f_measured[N]", "safety_event[-]"};
}

experiment::SignalRoles site_signal_roles() {
  // The trial OpenSees sent is what the actuator reproduces (summary.json "signals", the report).
  return {.target = "d_trial[m]",
          .measured = "d_measured[m]",
          .command = "d_command[m]",
          .force = "f_measured[N]"};
}

SiteRun::SiteRun(std::string name, std::string resolved_yaml, double trial_time,
                 std::size_t max_rows)
    : name_(std::move(name)),
      yaml_(std::move(resolved_yaml)),
      trial_time_(trial_time),
      samples_(site_run_columns(), max_rows) {
  set_signal_roles(site_signal_roles());
}

bool SiteRun::record_cycle(std::span<const double> row) noexcept {
  (void)samples_.append(row);
  observe_row(row);
  ++cycles_;
  if (row.size() > 1) last_step_ = row[1];
  return true;
}

void SiteRun::record_stop(std::string_view reason) noexcept {
  const std::size_t n = std::min(reason.size(), stop_.size() - 1);
  std::copy_n(reason.data(), n, stop_.data());
  stop_[n] = '\0';
}

nlohmann::json SiteRun::summary() const {
  if (summary_set_) return summary_;
  // Recovered from the journal: what the rows say; how the session ended is not known.
  const std::string stop(stop_.data());
  nlohmann::json out = {{"site",
                         {{"end", "unknown"},
                          {"reason",
                           "recovered from the journal: the site ended without "
                           "completing the run directory"},
                          {"trials", cycles_},
                          {"commits", static_cast<std::int64_t>(last_step_)}}}};
  if (!stop.empty()) {
    out["stop_reason"] = stop.substr(0, stop.find(':'));
    out["site"]["reason"] = stop;
  }
  return out;
}

namespace {

std::string stop_reason(of::SessionEnd end) {
  switch (end) {
    case of::SessionEnd::kCut:
      return "cut";
    case of::SessionEnd::kProtocolError:
      return "protocol_error";
    case of::SessionEnd::kRigFault:
      return "rig_fault";
    default:
      return "";
  }
}

}  // namespace

SiteRecorder::SiteRecorder(of::ServoRig& rig, SiteRecorderConfig config)
    : rig_(rig), config_(std::move(config)) {}

SiteRecorder::~SiteRecorder() = default;

void SiteRecorder::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

void SiteRecorder::begin_session(const of::SetupId& setup) {
  // The rig is armed first: a recording that cannot start refuses the session (it throws, the
  // session ends as cut and end_session brings the rig to rest).
  rig_.begin_session(setup);
  commits_ = 0;
  started_ = std::chrono::steady_clock::now();
  const std::string run_id = recording::make_run_id(config_.name);
  const double trial_time = rig_.config().servo.step * rig_.config().steps_per_trial;
  run_ =
      std::make_unique<SiteRun>(config_.name, config_.resolved_yaml, trial_time, config_.max_rows);
  try {
    recording_ = std::make_unique<recording::RunRecording>(
        config_.runs_dir / run_id,
        recording::journal_header(*run_, run_id, "hyloop-site", "lockstep"), true);
  } catch (const std::exception& e) {
    log(std::string("cannot record the session: ") + e.what());
    throw;
  }
  run_->set_row_observer(&recording_->observer());
  log("recording " + recording_->dir().string());
}

hal::DriverStatus SiteRecorder::trial(const of::TrialView& trial) noexcept {
  const auto status = rig_.trial(trial);
  if (!run_) return status;
  const of::TrialRecord& r = rig_.last_trial();
  row_ = {static_cast<double>(r.trial), static_cast<double>(commits_),
          r.measurement.time,           r.command,
          r.command_velocity,           r.output,
          r.measurement.displacement,   r.measurement.velocity,
          r.measurement.force,          static_cast<double>(r.event)};
  (void)run_->record_cycle(row_);
  return status;
}

void SiteRecorder::measure(const of::DaqView& daq) noexcept { rig_.measure(daq); }

void SiteRecorder::commit() noexcept {
  ++commits_;
  rig_.commit();
}

nlohmann::json SiteRecorder::site_summary(const of::SessionReport& report, bool at_rest) const {
  const auto& s = report.setup;
  return {{"end", std::string(of::to_string(report.end))},
          {"reason", report.reason},
          {"setup_id",
           {s.ctrl[0], s.ctrl[1], s.ctrl[2], s.ctrl[3], s.ctrl[4], s.daq[0], s.daq[1], s.daq[2],
            s.daq[3], s.daq[4], s.data_size}},
          {"trials", report.trials},
          {"commits", report.commits},
          {"daq_replies", report.daq_replies},
          {"matrix_replies", report.matrix_replies},
          {"rejected_trials", report.rejected_trials},
          {"bytes_received", report.bytes_received},
          {"wrong_size_datagrams", report.wrong_size_datagrams},
          {"foreign_datagrams", report.foreign_datagrams},
          {"last_safety_event", static_cast<int>(rig_.last_trial().event)},
          {"rig_at_rest", at_rest},
          {"rest_position_m", rig_.measurement().displacement}};
}

void SiteRecorder::finish_recording(const of::SessionReport& report, SiteRunRecord& out) {
  std::string estop;
  {
    const std::lock_guard lock(mutex_);
    estop = estop_reason_;
  }
  nlohmann::json extra = nlohmann::json::object();
  std::string stop = stop_reason(report.end);
  if (!estop.empty() && report.end != of::SessionEnd::kTerminated) stop = "emergency_stop";
  if (!stop.empty()) {
    extra["stop_reason"] = stop;
    recording_->journal().event("stop", stop + ": " + (estop.empty() ? report.reason : estop));
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  extra["wall_time_s"] = wall;
  extra["steps_per_second"] = wall > 0.0 ? static_cast<double>(run_->cycle()) / wall : 0.0;
  run_->set_summary({{"site", site_summary(report, out.rig_at_rest)}});
  recording_->journal().event("end", std::string(of::to_string(report.end)) + ": " + report.reason);
  out.dir = recording_->dir();
  (void)recording_->complete(*run_, extra);
}

void SiteRecorder::end_session(const of::SessionReport& report) {
  rig_.end_session(report);  // at rest first, whatever the recording does
  SiteRunRecord out;
  out.report = report;
  out.rig_at_rest = rig_.at_rest();
  if (recording_) {
    try {
      finish_recording(report, out);
    } catch (const std::exception& e) {
      out.error = e.what();
      log("the run directory " + recording_->dir().string() + " is incomplete: " + e.what());
    }
    run_->set_row_observer(nullptr);
    recording_.reset();
    run_.reset();
  }
  log("session " + std::string(of::to_string(report.end)) + ": " + report.reason +
      (out.dir.empty() ? std::string() : " (run directory " + out.dir.string() + ")") +
      (out.rig_at_rest ? "; the rig is at rest" : "; the rig is NOT at rest"));
  if (config_.ended) config_.ended(out);
  const std::lock_guard lock(mutex_);
  runs_.push_back(std::move(out));
  ended_.notify_all();
}

void SiteRecorder::note_emergency_stop(const std::string& reason) {
  const std::lock_guard lock(mutex_);
  estop_reason_ = reason;
}

std::vector<SiteRunRecord> SiteRecorder::runs() const {
  const std::lock_guard lock(mutex_);
  return runs_;
}

bool SiteRecorder::wait_for_runs(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return ended_.wait_for(lock, timeout, [&] { return runs_.size() >= count; });
}

}  // namespace hyloop::services
