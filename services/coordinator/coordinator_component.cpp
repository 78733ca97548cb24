#include "coordinator/coordinator_component.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <random>
#include <sstream>

#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/runtime/guard_rpc.hpp"
#include "hyloop/runtime/logging.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;
namespace rec = hyloop::recording;

namespace {

bool terminal(v1::RunState s) {
  return s == v1::RUN_STATE_FINISHED || s == v1::RUN_STATE_STOPPED || s == v1::RUN_STATE_ESTOPPED ||
         s == v1::RUN_STATE_FAILED;
}

const char* state_name(v1::RunState s) {
  switch (s) {
    case v1::RUN_STATE_IDLE:
      return "idle";
    case v1::RUN_STATE_LOADED:
      return "loaded";
    case v1::RUN_STATE_RUNNING:
      return "running";
    case v1::RUN_STATE_FINISHED:
      return "finished";
    case v1::RUN_STATE_STOPPED:
      return "stopped";
    case v1::RUN_STATE_ESTOPPED:
      return "estopped";
    case v1::RUN_STATE_FAILED:
      return "failed";
    default:
      return "unspecified";
  }
}

/// "coordinator-HOST-PID-RANDOM": unique per coordinator process and instance.
std::string make_coordinator_id() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::random_device random;
  std::ostringstream id;
  id << "coordinator-" << (host[0] != '\0' ? host.data() : "localhost") << "-" << getpid() << "-"
     << std::hex << random();
  return id.str();
}

}  // namespace

Coordinator::Coordinator(std::vector<std::unique_ptr<ServiceHandle>> services,
                         zmq::context_t& context, CoordinatorOptions options)
    : id_(make_coordinator_id()),
      services_(std::move(services)),
      context_(context),
      options_(std::move(options)) {
  for (const auto& s : services_) s->set_caller(id_);
  {
    std::error_code ec;
    runs_dir_ = options_.runs_dir.empty() ? std::filesystem::current_path() : options_.runs_dir;
    std::filesystem::create_directories(runs_dir_, ec);
    runs_dir_ = std::filesystem::canonical(runs_dir_, ec);
    if (ec || !std::filesystem::is_directory(runs_dir_)) {
      throw std::runtime_error("--runs-dir " + options_.runs_dir.string() +
                               ": not a usable directory" + (ec ? ": " + ec.message() : ""));
    }
  }
  // An empty prefix: ipc:// in a private run directory per run (endpoints_for).
  for (std::size_t v = 1; v < tp::kVerdictCount; ++v) {
    telemetry_rejected_total_[v] =
        metrics_->counter("hyloop_rejected_messages_total",
                          "Loop messages dropped by the receiver's validator, by reason.",
                          {{"service", "coordinator"},
                           {"reason", std::string(tp::to_string(static_cast<tp::Verdict>(v)))}});
  }
  for (const v1::RunState s :
       {v1::RUN_STATE_IDLE, v1::RUN_STATE_LOADED, v1::RUN_STATE_RUNNING, v1::RUN_STATE_FINISHED,
        v1::RUN_STATE_STOPPED, v1::RUN_STATE_ESTOPPED, v1::RUN_STATE_FAILED}) {
    state_gauges_[s] =
        metrics_->gauge("hyloop_run_state", "1 for the current run state, 0 for every other state.",
                        {{"state", state_name(s)}});
  }
  cycles_recorded_ = metrics_->counter("hyloop_run_cycles_recorded_total",
                                       "Cycles that the coordinator wrote to run directories.");
  cycles_received_ = metrics_->counter(
      "hyloop_cycles_total", "Cycles of the current run whose telemetry the coordinator received.",
      {{"service", "coordinator"}});
  telemetry_depth_ = metrics_->gauge("hyloop_queue_depth",
                                     "Messages found waiting in a loop channel's receive queue: "
                                     "the largest backlog since the previous scrape.",
                                     {{"service", "coordinator"}, {"channel", "telemetry"}},
                                     runtime::GaugeKind::kPeak);
  const std::lock_guard<std::mutex> lock(mutex_);
  set_state_locked(v1::RUN_STATE_IDLE);
}

void Coordinator::set_state_locked(v1::RunState state) {
  status_.set_state(state);
  for (const auto& [s, gauge] : state_gauges_) {
    gauge.set(s == state ? 1.0 : 0.0);
  }
}

Coordinator::~Coordinator() {
  stop_.store(true);
  if (run_thread_.joinable()) {
    run_thread_.join();
  }
}

tp::LoopPlaneOptions Coordinator::loop_plane() const {
  if (options_.loop_plane) return *options_.loop_plane;
  const runtime::ServiceConfig& config = runtime::service_config();
  return {
      .ipc_dir = config.ipc_dir, .security_dir = config.security_dir, .insecure = config.insecure};
}

v1::LoopEndpoints Coordinator::endpoints_for(const std::string& run_id,
                                             std::unique_ptr<tp::IpcRunDir>& run_dir) const {
  const v1::LoopEndpoints& given = options_.endpoints;
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"rig_to_sensor", &given.rig_to_sensor()},
        {"sensor_to_dynamics", &given.sensor_to_dynamics()},
        {"dynamics_to_actuator", &given.dynamics_to_actuator()},
        {"actuator_to_rig", &given.actuator_to_rig()},
        {"telemetry", &given.telemetry()}}) {
    if (!value->empty() && !tp::is_tcp(*value)) {
      throw std::invalid_argument(
          std::string("--endpoints ") + name + "=" + value->substr(0, 200) +
          ": only tcp:// endpoints may be given (ipc:// ones are derived in --ipc-dir)");
    }
  }
  const bool inproc = options_.endpoint_prefix.rfind("inproc://", 0) == 0;
  if (!inproc && !options_.endpoint_prefix.empty()) {
    throw std::invalid_argument("endpoint prefix '" + options_.endpoint_prefix.substr(0, 200) +
                                "': only inproc://NAME (ipc:// endpoints are derived in a "
                                "private run directory of --ipc-dir)");
  }
  std::string base;
  const auto derived = [&](const char* name) {
    if (inproc) {
      if (base.empty()) {
        base = options_.endpoint_prefix + "-" +
               std::to_string(std::hash<std::string>{}(run_id) % 1000000) + "-";
      }
      return base + name;
    }
    if (!run_dir) {
      // Run directories left by a coordinator that was killed go first.
      const std::string ipc_dir = tp::prepare_ipc_dir(loop_plane().ipc_dir);
      (void)tp::remove_stale_ipc_run_dirs(ipc_dir);
      run_dir = std::make_unique<tp::IpcRunDir>(ipc_dir);
    }
    return run_dir->endpoint(name);
  };
  const auto pick = [&](const std::string& value, const char* name) {
    return value.empty() ? derived(name) : value;
  };
  v1::LoopEndpoints e;
  e.set_rig_to_sensor(pick(given.rig_to_sensor(), "rig_to_sensor"));
  e.set_sensor_to_dynamics(pick(given.sensor_to_dynamics(), "sensor_to_dynamics"));
  e.set_dynamics_to_actuator(pick(given.dynamics_to_actuator(), "dynamics_to_actuator"));
  e.set_actuator_to_rig(pick(given.actuator_to_rig(), "actuator_to_rig"));
  e.set_telemetry(pick(given.telemetry(), "telemetry"));
  return e;
}

bool Coordinator::accept_telemetry(const tp::Received& got, const std::string& run_id,
                                   v2::Telemetry& t) noexcept {
  tp::Verdict verdict = tp::Verdict::kAccepted;
  try {
    if (got.truncated()) {
      verdict = tp::Verdict::kOversized;
    } else if (!t.ParseFromArray(got.bytes.data(), static_cast<int>(got.bytes.size())) ||
               !t.has_header() || t.header().run_id().empty()) {
      verdict = tp::Verdict::kMalformed;
    } else if (t.header().run_id() != run_id) {
      verdict = tp::Verdict::kWrongRun;
    } else if (t.header().sender() < 1 || t.header().sender() > kLoopServices.size()) {
      verdict = tp::Verdict::kMalformed;
    }
  } catch (...) {
    verdict = tp::Verdict::kMalformed;
  }
  if (verdict == tp::Verdict::kAccepted) return true;
  telemetry_rejected_.fetch_add(1, std::memory_order_relaxed);
  telemetry_rejected_total_[static_cast<std::size_t>(verdict)].add();
  return false;
}

grpc::Status Coordinator::load_scenario(const v1::LoadScenarioRequest& request,
                                        v1::LoadScenarioReply* reply, const CallerGone& gone) {
  std::uint64_t ticket = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!request.request_id().empty() && request.request_id() == load_request_id_) {
      *reply = load_reply_;  // a retry of the load that landed: its reply, loaded once
      return grpc::Status::OK;
    }
    ticket = ++load_tickets_;
  }
  // One parse, and no runner: a scenario is described, not built (its recorder would reserve
  // memory for every cycle of the run).
  std::unique_ptr<ex::LoadedScenario> loaded;
  const std::string origin = request.source_name().empty() ? "scenario" : request.source_name();
  try {
    const std::vector<std::string> overrides(request.overrides().begin(),
                                             request.overrides().end());
    loaded = ex::load_scenario_text(request.scenario_yaml(), origin, overrides);
  } catch (const std::exception& err) {
    return {grpc::StatusCode::INVALID_ARGUMENT, err.what()};
  }
  std::string rig_driver;
  try {
    rig_driver = loaded->loop_plan().rig_driver;  // refused by a kind without a distributed form
  } catch (const ex::ScenarioError& err) {
    return {grpc::StatusCode::INVALID_ARGUMENT, err.what()};  // e.g. a data file it names
  } catch (const std::exception& err) {
    return {grpc::StatusCode::FAILED_PRECONDITION, origin + ": " + err.what()};
  }
  const ex::LoadedScenario::Description d = loaded->describe();
  const std::lock_guard<std::mutex> lock(mutex_);
  // It lands only for a caller still waiting, and only if no newer load arrived meanwhile.
  if (gone && gone()) {
    runtime::logger()->warn("LoadScenario of {} dropped: its caller gave up (deadline or cancel)",
                            d.name);
    return {grpc::StatusCode::CANCELLED,
            "LoadScenario: the caller gave up (deadline passed or cancelled) before " + origin +
                " was read: nothing was loaded"};
  }
  if (ticket != load_tickets_) {
    return {grpc::StatusCode::ABORTED, "LoadScenario of " + origin +
                                           ": superseded by a newer LoadScenario that arrived "
                                           "while this one was read: nothing was loaded"};
  }
  if (status_.state() == v1::RUN_STATE_RUNNING) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "a run is in progress: stop it first"};
  }
  scenario_text_ = d.resolved_yaml;
  scenario_name_ = d.name;
  rig_driver_ = rig_driver;
  reply->set_name(d.name);
  reply->set_kind(loaded->kind().name());
  reply->set_resolved_yaml(scenario_text_);
  reply->set_total_cycles(static_cast<std::uint64_t>(d.total_steps));
  reply->set_step_s(d.step);
  load_request_id_ = request.request_id();
  load_reply_ = *reply;
  set_state_locked(v1::RUN_STATE_LOADED);
  status_.set_scenario(scenario_name_);
  status_.set_total_cycles(static_cast<std::uint64_t>(d.total_steps));
  status_.set_cycle(0);
  status_.set_message("loaded");
  return grpc::Status::OK;
}

grpc::Status Coordinator::start(const v1::StartRequest& request, v1::RunStatus* reply,
                                const CallerGone& gone) {
  if (grpc::Status bad = runtime::check_enum(*v1::ClockMode_descriptor(), request.mode(), "mode");
      !bad.ok()) {
    return bad;
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!request.request_id().empty() && request.request_id() == start_request_id_) {
      *reply = status_;  // a retry of the Start that began this run: its status, started once
      return grpc::Status::OK;
    }
  }
  if (grpc::Status latched = check_not_latched(); !latched.ok()) return latched;
  std::unique_lock<std::mutex> lock(mutex_);
  if (scenario_text_.empty()) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "no scenario loaded (LoadScenario first)"};
  }
  if (status_.state() == v1::RUN_STATE_RUNNING) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "a run is in progress"};
  }
  if (request.mode() != v1::CLOCK_MODE_REAL_TIME && ex::is_clocked_device(rig_driver_)) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            scenario_name_ + ": " + ex::wire_refusal(rig_driver_, "lockstep")};
  }
  try {
    rec::check_run_name(request.out_dir(), "out_dir");
  } catch (const std::invalid_argument& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            std::string(e.what()) + " (runs directory " + runs_dir_.string() + ")"};
  }
  if (run_thread_.joinable()) {
    lock.unlock();
    run_thread_.join();
    lock.lock();
  }
  mode_ = request.mode() == v1::CLOCK_MODE_REAL_TIME ? v1::CLOCK_MODE_REAL_TIME
                                                     : v1::CLOCK_MODE_LOCKSTEP;
  try {
    // Streamed: samples.csv and the kind's tables go to the run directory as rows arrive
    // (open_recording_locked), so Start's memory does not grow with the run's length.
    recorder_ = ex::load_scenario_text(scenario_text_, "scenario", {})->streamed_experiment();
    record_columns_ = recorder_->record_columns();
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  const std::string run_id = rec::make_run_id(scenario_name_);
  const std::filesystem::path out_dir = runs_dir_ / request.out_dir();
  if (gone && gone()) {
    return {grpc::StatusCode::CANCELLED,
            "Start: the caller gave up (deadline passed or cancelled): nothing was started"};
  }
  if (grpc::Status opened = open_recording_locked(request.out_dir(), run_id, out_dir);
      !opened.ok()) {
    return opened;
  }
  status_.Clear();
  set_state_locked(v1::RUN_STATE_RUNNING);
  status_.set_run_id(run_id);
  status_.set_scenario(scenario_name_);
  status_.set_total_cycles(static_cast<std::uint64_t>(recorder_->total_steps()));
  status_.set_out_dir(out_dir.string());
  status_.set_message("starting");
  reset_run_state_locked();
  runs_.push_back({});
  runs_.back().set_run_id(run_id);
  runs_.back().set_scenario(scenario_name_);
  runs_.back().set_out_dir(out_dir.string());
  runs_.back().set_state(v1::RUN_STATE_RUNNING);
  start_request_id_ = request.request_id();
  *reply = status_;
  run_thread_ = std::thread([this, out = out_dir.string()] { run(out); });
  return grpc::Status::OK;
}

grpc::Status Coordinator::open_recording_locked(const std::string& out_name,
                                                const std::string& run_id,
                                                const std::filesystem::path& out_dir) {
  try {
    recording_ = std::make_unique<rec::RunRecording>(
        out_dir,
        rec::journal_header(*recorder_, run_id, "hyloop-coordinator",
                            mode_ == v1::CLOCK_MODE_REAL_TIME ? "real_time" : "lockstep"),
        false);
    recorder_->set_row_observer(&recording_->observer());
    recording_failed_ = false;
    recorder_->stream_tables(out_dir);
  } catch (const rec::RunDirectoryError& e) {
    const int err = e.error_number();
    return {err == EEXIST                    ? grpc::StatusCode::ALREADY_EXISTS
            : err == ENOSPC || err == EDQUOT ? grpc::StatusCode::RESOURCE_EXHAUSTED
                                             : grpc::StatusCode::INTERNAL,
            "out_dir = \"" + out_name + "\": " + e.what()};
  } catch (const std::exception& e) {
    recorder_->set_row_observer(nullptr);
    recording_.reset();  // INCOMPLETE stays: a run that never started, recoverable as such
    return {grpc::StatusCode::INTERNAL, "out_dir = \"" + out_name + "\": " + e.what()};
  }
  return grpc::Status::OK;
}

void Coordinator::reset_run_state_locked() {
  stop_ = false;
  estop_ = false;
  stop_reason_.clear();
  health_.clear();
  pending_.clear();
  columns_.clear();
  names_.clear();
  next_record_ = 0;
  std::fill(recent_cycles_.begin(), recent_cycles_.end(), kNoRow);
  skipped_cycles_ = 0;
  rig_last_cycle_ = 0;
  // Latencies arrive in real-time runs only: room for as many as LatencyStats keeps exactly.
  latencies_.reset(mode_ == v1::CLOCK_MODE_REAL_TIME
                       ? static_cast<std::size_t>(recorder_->total_steps()) + 16
                       : 0);
  estop_latency_ns_ = 0;
  bare_ticks_ = 0;
  bare_misses_ = 0;
  misses_.clear();
  rejected_.clear();
  realtime_.clear();
  late_commands_ = 0;
  late_by_minute_.clear();
  late_by_minute_.reserve(64);
  loop_event_ = v2::LOOP_EVENT_NONE;
  loop_event_detail_.clear();
  watchdog_cycles_ = 0;
  stop_cycle_.reset();
  stop_event_.clear();
  stop_recorded_ = false;
  stop_seen_at_ = {};
}

grpc::Status Coordinator::stop(v1::RunStatus* reply) {
  stop_.store(true);
  status(reply);
  return grpc::Status::OK;
}

grpc::Status Coordinator::emergency_stop(const std::string& reason, v1::RunStatus* reply) {
  // Fan out at once, the actuator first (the last stop before hardware), then the others.
  for (const char* name : {"actuator", "dynamics", "sensor", "rig-emulator"}) {
    if (ServiceHandle* s = find_service(name)) {
      (void)s->emergency_stop(reason.empty() ? "emergency stop" : reason);
    }
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_reason_ = reason.empty() ? "emergency stop" : reason;
    if (estop_latched_.empty()) estop_latched_ = stop_reason_;
  }
  estop_.store(true);
  runtime::logger()->warn("emergency stop latched: {}", reason);
  status(reply);
  return grpc::Status::OK;
}

grpc::Status Coordinator::reset(const std::string& reason, v1::RunStatus* reply) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (status_.state() == v1::RUN_STATE_RUNNING) {
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "reset: a run is in progress (state RUNNING): wait until it has ended (or stop "
              "it), then reset"};
    }
  }
  // The services' latches as they are now: the next Configure clears exactly these.
  std::map<std::string, std::uint64_t> counts;
  std::string found;
  for (auto& s : services_) {
    const auto st = s->state();
    if (st && !st->emergency_stop().empty()) {
      counts[s->name()] = st->emergency_stop_count();
      found += (found.empty() ? "" : ", ") + s->name() + " (" + st->emergency_stop() + ")";
    }
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::string was = estop_latched_;
    estop_latched_.clear();
    reset_counts_ = std::move(counts);
    status_.set_message(
        "emergency stop reset" + (reason.empty() ? "" : " (" + reason + ")") + ": was " +
        (was.empty() ? "none" : was) +
        (found.empty() ? "" : "; services latched: " + found + " (cleared by the next Start)"));
    runtime::logger()->warn("{}", status_.message());
  }
  status(reply);
  return grpc::Status::OK;
}

grpc::Status Coordinator::check_not_latched() {
  std::string latched;
  std::map<std::string, std::uint64_t> resets;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    latched = estop_latched_;
    resets = reset_counts_;
  }
  for (std::size_t i = 0; latched.empty() && i < services_.size(); ++i) {
    latched = service_latch(*services_[i], services_[i]->state(), resets);
    if (latched.empty()) continue;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (estop_latched_.empty()) estop_latched_ = latched;
  }
  if (latched.empty()) return grpc::Status::OK;
  return {grpc::StatusCode::FAILED_PRECONDITION,
          "emergency stop latched (" + latched +
              "): an operator must reset it first (Experiment.Reset: `hyloop ctl ADDRESS reset`)"};
}

std::string Coordinator::service_latch(const ServiceHandle& s,
                                       const std::optional<v1::LifecycleReply>& st,
                                       const std::map<std::string, std::uint64_t>& resets) {
  if (!st || st->emergency_stop().empty()) return {};
  const auto it = resets.find(s.name());
  if (it != resets.end() && it->second == st->emergency_stop_count()) return {};
  return "at the " + s.name() + ": " + st->emergency_stop();
}

v1::ServiceStatus Coordinator::service_status(const ServiceHandle& s,
                                              const std::optional<v1::LifecycleReply>& st) {
  v1::ServiceStatus ss;
  ss.set_name(s.name());
  ss.set_address(s.address());
  ss.set_healthy(st.has_value() && st->state() != v1::LIFECYCLE_STATE_ERROR);
  ss.set_state(st ? st->state() : v1::LIFECYCLE_STATE_UNSPECIFIED);
  ss.set_message(st ? st->message() : "unreachable");
  return ss;
}

void Coordinator::status(v1::RunStatus* reply) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    *reply = status_;
    reply->set_emergency_stop(estop_latched_);
    reply->clear_services();
    if (status_.state() == v1::RUN_STATE_RUNNING && !health_.empty()) {
      for (const v1::ServiceStatus& ss : health_) *reply->add_services() = ss;
      return;
    }
  }
  // Asked all at once: a stopped service costs one RPC deadline, not one per service.
  std::vector<std::future<std::optional<v1::LifecycleReply>>> states;
  for (auto& s : services_) {
    states.push_back(std::async(std::launch::async, [&s] { return s->state(); }));
  }
  std::map<std::string, std::uint64_t> resets;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    resets = reset_counts_;
  }
  for (std::size_t i = 0; i < services_.size(); ++i) {
    const std::optional<v1::LifecycleReply> st = states[i].get();
    *reply->add_services() = service_status(*services_[i], st);
    // The same latch Start refuses on (check_not_latched): a service's own stop counts too.
    if (reply->emergency_stop().empty()) {
      reply->set_emergency_stop(service_latch(*services_[i], st, resets));
    }
  }
}

grpc::Status Coordinator::run_summary(const std::string& run_id, v1::RunSummaryReply* reply) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string id = run_id;
  if (id.empty()) {
    for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
      if (summaries_.count(it->run_id()) != 0U) {
        id = it->run_id();
        break;
      }
    }
  }
  const auto it = summaries_.find(id);
  if (it == summaries_.end()) {
    return {grpc::StatusCode::NOT_FOUND,
            run_id.empty() ? "no finished run yet" : "run_id " + run_id + ": no such finished run"};
  }
  reply->set_run_id(id);
  reply->set_summary_json(it->second);
  for (const auto& r : runs_) {
    if (r.run_id() == id) reply->set_out_dir(r.out_dir());
  }
  return grpc::Status::OK;
}

void Coordinator::list_runs(v1::ListRunsReply* reply) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& r : runs_) {
    *reply->add_runs() = r;
  }
}

bool Coordinator::next_frame(std::uint64_t after_cycle, std::uint32_t decimation,
                             v1::TelemetryFrame* frame, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  const std::uint64_t n = std::max<std::uint32_t>(1, decimation);
  const bool first = after_cycle == std::numeric_limits<std::uint64_t>::max();
  // The rows recorded so far are cycles below status_.cycle(); the oldest kept is
  // status_.cycle() − kRecentRows. A real-time run skips cycles: a grid cycle without a row is
  // passed over (the next grid cycle that has one is sent), never shown from a stale slot.
  const auto kept = [&](std::uint64_t c) { return recent_cycles_[c % kRecentRows] == c; };
  const auto due = [&]() -> std::optional<std::uint64_t> {
    const std::uint64_t recorded = status_.cycle();
    if (recorded == 0) return std::nullopt;
    const std::uint64_t newest = (recorded - 1) / n * n;
    const std::uint64_t oldest = recorded > kRecentRows ? recorded - kRecentRows : 0;
    std::uint64_t c = first ? newest : after_cycle + n;
    if (!first && c >= recorded) return std::nullopt;
    if (first || c < oldest) {  // the newest grid row that exists (a late reader skips ahead)
      c = newest;
      while (!kept(c) && c >= oldest + n) c -= n;
      return kept(c) ? std::optional<std::uint64_t>(c) : std::nullopt;
    }
    while (c < recorded && !kept(c)) c += n;
    return c < recorded ? std::optional<std::uint64_t>(c) : std::nullopt;
  };
  changed_.wait_for(lock, timeout,
                    [&] { return status_.state() != v1::RUN_STATE_RUNNING || due().has_value(); });
  frame->Clear();
  frame->set_state(status_.state());
  const std::optional<std::uint64_t> cycle = due();
  if (!cycle) return status_.state() == v1::RUN_STATE_RUNNING;
  const std::vector<double>& row = recent_rows_[*cycle % kRecentRows];
  frame->set_cycle(*cycle);
  frame->set_virtual_time_s(row.front());
  if (first && recorder_) {
    for (const std::string& h : recorder_->samples().headers()) frame->add_names(h);
  }
  const std::size_t shown =
      recorder_ ? std::min(row.size(), recorder_->samples().columns()) : row.size();
  for (std::size_t i = 0; i < shown; ++i) frame->add_values(row[i]);
  return true;
}

bool Coordinator::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [this] { return terminal(status_.state()); });
}

void Coordinator::shutdown_services() {
  stop_.store(true);
  if (run_thread_.joinable()) {
    run_thread_.join();
  }
  for (auto it = services_.rbegin(); it != services_.rend(); ++it) {
    (void)(*it)->shutdown();
  }
}

void Coordinator::release_services() {
  stop_.store(true);
  if (run_thread_.joinable()) {
    run_thread_.join();
  }
  for (auto it = services_.rbegin(); it != services_.rend(); ++it) {
    const auto st = (*it)->state();
    if (!st) continue;
    if (st->state() == v1::LIFECYCLE_STATE_ACTIVE) (void)(*it)->deactivate();
    if (const auto now = (*it)->state(); now && (now->state() == v1::LIFECYCLE_STATE_INACTIVE ||
                                                 now->state() == v1::LIFECYCLE_STATE_ERROR)) {
      (void)(*it)->cleanup();
    }
  }
}

namespace {

// Counts per minute from the cumulative counts at the end of each minute.
nlohmann::json per_minute(const std::vector<std::uint64_t>& cumulative) {
  nlohmann::json out = nlohmann::json::array();
  std::uint64_t before = 0;
  for (const std::uint64_t c : cumulative) {
    out.push_back(c >= before ? c - before : 0);
    before = std::max(before, c);
  }
  return out;
}

}  // namespace

nlohmann::json Coordinator::realtime_block() const {
  nlohmann::json block;
  for (std::size_t i = 0; i < kLoopServices.size(); ++i) {
    const auto it = realtime_.find(static_cast<std::uint32_t>(i + 1));
    const std::uint32_t f = it == realtime_.end() ? 0 : it->second;
    block[kLoopServices[i]] = {{"asked", (f & 1U) != 0},
                               {"sched_fifo", (f & 2U) != 0},
                               {"memory_locked", (f & 4U) != 0},
                               {"pinned", (f & 8U) != 0},
                               {"timer_slack", (f & 16U) != 0}};
  }
  return block;
}

nlohmann::json Coordinator::distributed_summary(v1::RunState state,
                                                const std::string& message) const {
  nlohmann::json d;
  d["run_id"] = status_.run_id();
  d["mode"] = mode_ == v1::CLOCK_MODE_REAL_TIME ? "real_time" : "lockstep";
  d["state"] = state_name(state);
  d["message"] = message;
  nlohmann::json services = nlohmann::json::array();
  for (const auto& s : services_) {
    services.push_back({{"name", s->name()}, {"address", s->address()}});
  }
  d["services"] = services;
  nlohmann::json misses;
  nlohmann::json rejected;
  std::uint64_t rejected_total = 0;
  for (std::size_t i = 0; i < kLoopServices.size(); ++i) {
    const auto id = static_cast<std::uint32_t>(i + 1);
    const auto m = misses_.find(id);
    const auto r = rejected_.find(id);
    misses[kLoopServices[i]] = m == misses_.end() ? 0 : m->second;
    rejected[kLoopServices[i]] = r == rejected_.end() ? 0 : r->second;
    rejected_total += r == rejected_.end() ? 0 : r->second;
  }
  const std::uint64_t refused_telemetry = telemetry_rejected_.load();  // by the coordinator
  rejected["coordinator"] = refused_telemetry;
  rejected_total += refused_telemetry;
  d["deadline_misses"] = misses;
  d["rejected_messages"] = rejected;
  d["rejected_messages_total"] = rejected_total;
  d["skipped_cycles"] = skipped_cycles_;
  d["loop_event"] = stop_rules::describe(loop_event_, loop_event_detail_);
  d["watchdog_cycles"] = watchdog_cycles_;
  if (estop_latency_ns_ > 0) {
    d["estop_latency_us"] = static_cast<double>(estop_latency_ns_) * 1e-3;
  }
  if (mode_ == v1::CLOCK_MODE_REAL_TIME) {
    d["latency_sample_to_command"] = latencies_.percentiles();
    const std::uint64_t rig_misses = misses_.count(kRigSender) ? misses_.at(kRigSender) : 0;
    const double ticks = static_cast<double>(std::max<std::uint64_t>(1, next_record_));
    d["loop_misses"] = {{"late_commands", late_commands_},
                        {"rig_timer_misses", rig_misses},
                        {"rate", static_cast<double>(late_commands_ + rig_misses) / ticks},
                        {"late_commands_per_minute", per_minute(late_by_minute_)}};
    d["realtime"] = realtime_block();
    d["bare_timer"] = {{"ticks", bare_ticks_},
                       {"misses", bare_misses_},
                       {"rate", bare_ticks_ > 0 ? static_cast<double>(bare_misses_) /
                                                      static_cast<double>(bare_ticks_)
                                                : 0.0}};
  }
  return nlohmann::json{{"distributed", d}};
}

void Coordinator::finish(v1::RunState state, const std::string& message) {
  const std::lock_guard<std::mutex> lock(mutex_);
  set_state_locked(state);
  status_.set_message(message);
  for (auto& r : runs_) {
    if (r.run_id() == status_.run_id()) r.set_state(state);
  }
}

void Coordinator::complete_recording(const std::string& run_id, v1::RunState state,
                                     const std::string& message, double wall_time_s) {
  nlohmann::json extra = distributed_summary(state, message);
  // The recorder never ran the loop itself: the wall time and rate are the services' (the
  // in-process run's are its own loop's), and a run ended from outside the model says why.
  extra["wall_time_s"] = wall_time_s;
  extra["steps_per_second"] =
      wall_time_s > 0.0 ? static_cast<double>(recorder_->cycle()) / wall_time_s : 0.0;
  // An e-stop, an operator's stop or a service's fault ended the run from outside: that is its
  // stop reason, even where the model stopped too meanwhile (a guard seeing the rig no longer
  // follow; that stop stays in the journal).
  if (const nlohmann::json kind = recorder_->summary();
      state != v1::RUN_STATE_FINISHED && kind.contains("stop_reason")) {
    extra["stop_reason"] = state == v1::RUN_STATE_ESTOPPED  ? "emergency_stop"
                           : state == v1::RUN_STATE_STOPPED ? "operator_stop"
                                                            : "service_fault";
  }
  recording_->journal().event("end", std::string(state_name(state)) + ": " + message);
  const nlohmann::json summary = recording_->complete(*recorder_, extra);
  recorder_->set_row_observer(nullptr);
  recording_.reset();
  const std::lock_guard<std::mutex> lock(mutex_);
  summaries_[run_id] = summary.dump(2) + "\n";
}

ServiceHandle* Coordinator::find_service(const std::string& name) const {
  for (const auto& s : services_) {
    if (s->name() == name) return s.get();
  }
  return nullptr;
}

std::unique_ptr<tp::Channel> Coordinator::bind_telemetry(const v1::LoopEndpoints& endpoints) {
  tp::ChannelConfig tc;
  tc.endpoint = endpoints.telemetry();
  tc.field = "endpoints.telemetry";
  tc.security = tp::loop_channel_security(loop_plane(), "telemetry", "coordinator", tp::Role::kBind,
                                          endpoints.telemetry());
  tc.pattern = tp::Pattern::kPull;
  tc.role = tp::Role::kBind;
  tc.recv_hwm = 200000;
  return std::make_unique<tp::Channel>(context_, tc);
}

std::string Coordinator::start_loop(const std::string& run_id, const std::string& scenario_yaml,
                                    const v1::LoopEndpoints& endpoints, v1::ClockMode mode,
                                    const char* command_source) {
  v1::ConfigureRequest request;
  request.set_run_id(run_id);
  request.set_coordinator_id(id_);  // the lease (docs/reliability.md)
  request.set_scenario_yaml(scenario_yaml);
  *request.mutable_endpoints() = endpoints;
  request.set_mode(mode);
  // Loop contract v2: the layouts of the coordinator's reading, checked by every service.
  const ex::LoopPlan plan = ex::loop_plan(scenario_yaml);
  tp::add_loop_layouts(plan.measurement, plan.command, *request.mutable_layouts());
  // dynamics and identification take turns in the dynamics' slot and bind the same
  // dynamics_to_actuator endpoint: the one not running now must not hold it (a configuration left
  // by an aborted start, by a failed Configure or by another coordinator).
  const std::string other =
      command_source == std::string("dynamics") ? "identification" : "dynamics";
  if (ServiceHandle* s = find_service(other)) {
    if (const auto st = s->state(); st && (st->state() == v1::LIFECYCLE_STATE_INACTIVE ||
                                           st->state() == v1::LIFECYCLE_STATE_ERROR)) {
      (void)s->cleanup();
    }
  }
  // An aborted start releases what it configured: no service keeps a loop port bound while idle.
  std::vector<ServiceHandle*> configured;
  const auto abort = [&configured](std::string why) {
    for (ServiceHandle* s : configured) {
      if (const auto st = s->state(); st && st->state() != v1::LIFECYCLE_STATE_ACTIVE) {
        (void)s->cleanup();
      }
    }
    return why;
  };
  // Binding order first, sender ids = kLoopServices slots; the command source takes the
  // dynamics' slot.
  for (std::size_t i = 0; i < kLoopServices.size(); ++i) {
    const std::string name =
        kLoopServices[i] == std::string("dynamics") ? command_source : kLoopServices[i];
    ServiceHandle* s = find_service(name);
    if (s == nullptr) return abort("service " + name + ": not known to the coordinator");
    request.set_sender_id(static_cast<std::uint32_t>(i + 1));
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto it = reset_counts_.find(name);
      request.set_reset_emergency_stop_count(it == reset_counts_.end() ? 0 : it->second);
    }
    configured.push_back(s);
    const v1::LifecycleReply r = s->configure(request);
    if (r.state() != v1::LIFECYCLE_STATE_INACTIVE || !r.emergency_stop().empty()) {
      return abort(name + ": configure failed: " + r.message());
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      reset_counts_.erase(name);  // used
    }
  }
  // The actuator last: its bumpless first command starts the rig.
  for (const char* name : {"rig-emulator", "sensor", command_source, "actuator"}) {
    const v1::LifecycleReply r = find_service(name)->activate();
    if (r.state() != v1::LIFECYCLE_STATE_ACTIVE) {
      return abort(std::string(name) + ": activate failed: " + r.message());
    }
  }
  return {};
}

namespace {

/// The scenario of RunIdentification: the sweep as `hyloop identify` runs it (its kind's
/// Identification: a new command every step, the sweep's samples as cycles). A kind without
/// identification is refused by name.
grpc::Status identification_scenario(const v1::RunIdentificationRequest& request,
                                     std::unique_ptr<ex::SweepIdentification>& sweep) {
  try {
    sweep = ex::kind_identification(request.scenario_yaml())
                .sweep_run(request.scenario_yaml(), "scenario",
                           std::vector<std::string>(request.overrides().begin(),
                                                    request.overrides().end()));
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
  return grpc::Status::OK;
}

/// The identification report of a complete sweep into `reply`.
grpc::Status identification_reply(const ex::SweepIdentification& sweep, const ex::SweepData& data,
                                  const std::string& run_id, v1::RunIdentificationReply* reply) {
  nlohmann::json report;
  try {
    report = sweep.identify(data);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::FAILED_PRECONDITION, e.what()};
  }
  report["through"] = "services: actuator → rig emulator → sensor (lockstep)";
  report["run_id"] = run_id;
  reply->set_report_json(report.dump(2));
  v1::ArxModelMessage* m = reply->mutable_model();
  for (double a : report["discrete_model"]["den"]) m->add_a(a);
  for (double b : report["discrete_model"]["num"]) m->add_b(b);
  m->set_sample_time_s(sweep.step_s());
  return grpc::Status::OK;
}

}  // namespace

std::string Coordinator::collect_sweep(const std::string& run_id, tp::Channel& telemetry,
                                       ServiceHandle& ident, ex::SweepData& data,
                                       std::size_t samples) {
  data.command.reserve(samples);
  data.position.reserve(samples);
  std::vector<std::byte> buffer(1 << 16);
  v2::Telemetry t;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  auto renew_at = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) return "identification run timed out";
    if (now >= renew_at) {  // the loop services' leases, as the run's health check renews them
      renew_at = now + options_.health_period;
      for (const char* name : {"rig-emulator", "actuator", "sensor"}) {
        if (ServiceHandle* s = find_service(name)) (void)s->state();
      }
    }
    const auto got = telemetry.receive(buffer, std::chrono::milliseconds(200));
    if (!got) {
      const auto st = ident.state();
      if (!st || st->state() == v1::LIFECYCLE_STATE_ERROR) {
        return "identification service failed: " + (st ? st->message() : "not answering");
      }
      continue;
    }
    // The identification service sends from the dynamics' slot.
    if (!accept_telemetry(*got, run_id, t) || t.header().sender() != kDynamicsSender) {
      continue;
    }
    if (t.event() == v2::LOOP_EVENT_IDENTIFIED) return {};
    if (t.event() == v2::LOOP_EVENT_FAULT) return t.event_detail();
    if (t.values_size() >= 2 && data.command.size() < samples) {
      data.command.push_back(t.values(0));
      data.position.push_back(t.values(1));
    }
  }
}

grpc::Status Coordinator::run_identification(const v1::RunIdentificationRequest& request,
                                             v1::RunIdentificationReply* reply) {
  ServiceHandle* ident = find_service("identification");
  if (ident == nullptr) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            "no identification service is known to the coordinator (--services "
            "identification=ADDRESS)"};
  }
  std::unique_ptr<ex::SweepIdentification> sweep;
  if (grpc::Status parsed = identification_scenario(request, sweep); !parsed.ok()) return parsed;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (status_.state() == v1::RUN_STATE_RUNNING) {
      return {grpc::StatusCode::FAILED_PRECONDITION, "a run is in progress"};
    }
  }
  if (grpc::Status latched = check_not_latched(); !latched.ok()) return latched;
  const std::string run_id = rec::make_run_id(sweep->name() + "-identify");
  std::unique_ptr<tp::IpcRunDir> ipc_run_dir;  // removed when this call returns
  v1::LoopEndpoints endpoints;
  std::unique_ptr<tp::Channel> telemetry_channel;
  try {
    endpoints = endpoints_for(run_id, ipc_run_dir);
    endpoints.set_command_source("identification");
    telemetry_channel = bind_telemetry(endpoints);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::FAILED_PRECONDITION, std::string("loop plane: ") + e.what()};
  }
  // The identification service in the dynamics' slot.
  std::string error = start_loop(run_id, sweep->scenario_yaml(), endpoints, v1::CLOCK_MODE_LOCKSTEP,
                                 "identification");
  ex::SweepData data;
  const std::size_t n = sweep->samples();
  if (error.empty()) error = collect_sweep(run_id, *telemetry_channel, *ident, data, n);
  for (const char* name : {"actuator", "identification", "sensor", "rig-emulator"}) {
    (void)find_service(name)->deactivate();
  }
  if (!error.empty()) {
    return {grpc::StatusCode::ABORTED, error};
  }
  if (data.command.size() != n) {
    return {grpc::StatusCode::ABORTED, "identification: " + std::to_string(data.command.size()) +
                                           " of " + std::to_string(n) + " samples arrived"};
  }
  return identification_reply(*sweep, data, run_id, reply);
}

void CoordinatorComponent::on_shutdown() { coordinator_.release_services(); }

void CoordinatorComponent::on_emergency_stop(std::string_view reason) noexcept {
  try {
    v1::RunStatus ignored;
    (void)coordinator_.emergency_stop(std::string(reason), &ignored);
  } catch (...) {
  }
}

}  // namespace hyloop::services
