#pragma once
// The coordinator: the single control entry point of a distributed run (DESIGN.md §1). It
// validates a scenario, configures the loop services in binding order, activates them
// (the actuator last: it sends the bumpless first command), records the run from their
// telemetry into the same Experiment object `hyloop run` uses (so the run directory has the
// same format, and in lockstep the same bytes), watches their health, fans out an emergency
// stop, and writes the run directory when the run ends — also after a failure, with every
// sample recorded up to the fault.
//
// Real-time runs also measure, beside the loop, a bare periodic timer at the loop's period
// (its miss rate is the floor these shared machines give) and report in summary.json the loop
// latency (rig sample → command at the actuator) p50/p99/p99.9/max, deadline misses of every
// service and the late commands the rig saw.
//
// Metrics (docs/metrics.md), in metrics() (the CoordinatorComponent shares the registry):
// hyloop_run_state{state}, hyloop_run_cycles_recorded_total, hyloop_cycles_total{service=
// "coordinator"} (the rig's telemetry messages of the current run it received) and
// hyloop_queue_depth{service="coordinator", channel="telemetry"}.

#include <hyloop/v1/control.grpc.pb.h>
#include <hyloop/v2/loop.pb.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/latency_stats.hpp"
#include "coordinator/service_handle.hpp"
#include "coordinator/stop_rules.hpp"
#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/metrics.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"
#include "hyloop/transport/ipc_dir.hpp"
#include "hyloop/transport/loop_plane.hpp"

namespace hyloop::services {

/// The loop services, in configuration order, with their sender ids.
/// Minutes of late-command counts a run's summary keeps (a day).
inline constexpr std::size_t kLateMinutes = 1440;
inline constexpr std::array<const char*, 4> kLoopServices = {"rig-emulator", "actuator", "dynamics",
                                                             "sensor"};
/// Telemetry sender ids: the kLoopServices index + 1 (the command source takes the dynamics').
inline constexpr std::uint32_t kRigSender = 1;
inline constexpr std::uint32_t kActuatorSender = 2;
inline constexpr std::uint32_t kDynamicsSender = 3;

struct CoordinatorOptions {
  /// Where run directories are created (--runs-dir): Start.out_dir names one directory in it
  /// (recording::check_run_name). "": the working directory when the coordinator is made.
  std::filesystem::path runs_dir;
  /// Where the loop channels the coordinator derives live: "" (default) ipc:// sockets in a
  /// private run directory (0700) that the coordinator creates in the ipc directory for each run
  /// and removes at its end; "inproc://NAME" for co-located components (one ZeroMQ context).
  /// Nothing else (an ipc:// prefix is refused: see loop_plane.ipc_dir).
  std::string endpoint_prefix;
  /// Explicit endpoints (multi-host; --endpoints): tcp:// only, each naming the binder's own
  /// address (it binds exactly that). Overrides the derived endpoint where set.
  v1::LoopEndpoints endpoints;
  /// The coordinator's loop plane settings (its telemetry socket, the ipc directory it derives
  /// endpoints in); unset: the service binary's --ipc-dir, --security-dir and --insecure.
  std::optional<transport::LoopPlaneOptions> loop_plane;
  /// Health polling period.
  std::chrono::milliseconds health_period{200};
};

class Coordinator {
 public:
  Coordinator(std::vector<std::unique_ptr<ServiceHandle>> services, zmq::context_t& context,
              CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  /// Whether the caller of a request has gone (its deadline passed or it cancelled): a request
  /// whose caller is gone changes nothing (ServerContext::IsCancelled and deadline()).
  using CallerGone = std::function<bool()>;

  /// Experiment API. Each returns a gRPC status; errors name the field. LoadScenario and Start
  /// honour LoadScenarioRequest/StartRequest.request_id (a retry answers the request it names)
  /// and `gone`; a load lands only if no newer LoadScenario arrived while it was being read.
  grpc::Status load_scenario(const v1::LoadScenarioRequest& request, v1::LoadScenarioReply* reply,
                             const CallerGone& gone = {});
  grpc::Status start(const v1::StartRequest& request, v1::RunStatus* reply,
                     const CallerGone& gone = {});
  /// This coordinator's id: it holds its services' leases under it (docs/reliability.md).
  [[nodiscard]] const std::string& id() const noexcept { return id_; }
  grpc::Status stop(v1::RunStatus* reply);
  /// Latches the emergency stop (also while idle) and fans it out, the actuator first.
  grpc::Status emergency_stop(const std::string& reason, v1::RunStatus* reply);
  /// Experiment.Reset: clears the latched emergency stop (an operator's act). The services'
  /// latches it found are cleared by the next Configure (reset_emergency_stop_count).
  /// FAILED_PRECONDITION while a run is in progress.
  grpc::Status reset(const std::string& reason, v1::RunStatus* reply);
  void status(v1::RunStatus* reply);
  grpc::Status run_summary(const std::string& run_id, v1::RunSummaryReply* reply);
  void list_runs(v1::ListRunsReply* reply);
  /// The next telemetry frame of the current run on the decimation grid: the recorded row of
  /// cycle k with k % decimation == 0 (0 or 1: every cycle). `after_cycle`: the cycle of the
  /// previous frame (UINT64_MAX: none yet; the first is the newest grid row). Waits up to
  /// `timeout` for row after_cycle + decimation; a reader more than kRecentRows cycles behind
  /// skips ahead to the newest grid row. A frame without values (only the state) when none is
  /// due. Returns false once the run is no longer running.
  bool next_frame(std::uint64_t after_cycle, std::uint32_t decimation, v1::TelemetryFrame* frame,
                  std::chrono::milliseconds timeout);
  /// Identification through the stack: the scenario's sine sweep goes out through the actuator
  /// service to the rig, positions come back through the sensor service, and the
  /// identification service takes the dynamics' place; the report is `hyloop identify`'s.
  grpc::Status run_identification(const v1::RunIdentificationRequest& request,
                                  v1::RunIdentificationReply* reply);
  /// Waits until the current run is over. False on timeout.
  bool wait(std::chrono::milliseconds timeout);
  /// Shuts every service down (the end of `hyloop up`, which owns the services' processes).
  void shutdown_services();
  /// Ends a run (its services deactivated) and takes every configured service back to
  /// UNCONFIGURED, leaving their processes serving: the coordinator process ending does not own
  /// the services' lives (compose, systemd or Kubernetes do, and would restart a service that
  /// exits on its own).
  void release_services();
  /// The registry the coordinator's metrics are declared in.
  [[nodiscard]] const std::shared_ptr<runtime::MetricsRegistry>& metrics() const noexcept {
    return metrics_;
  }

 private:
  /// Sets status_'s state and hyloop_run_state (holding mutex_).
  void set_state_locked(v1::RunState state);
  /// Records a row and counts it (run thread).
  void record_row(const std::vector<double>& row);

  /// Creates the run directory `out_dir` (Start.out_dir `out_name`) and its journal for
  /// `run_id` (holding mutex_); the status names out_dir on failure.
  grpc::Status open_recording_locked(const std::string& out_name, const std::string& run_id,
                                     const std::filesystem::path& out_dir);
  /// Resets the recording state of the run about to start (holding mutex_).
  void reset_run_state_locked();

  // The supervisor (coordinator_supervisor.cpp): runs the loop, records what arrives and ends
  // the run by the first stop rule that fires (stop_rules.hpp).
  struct RunContext;  // one run's supervision state
  void run(std::string out_dir) noexcept;
  /// Reads telemetry into the recorder until a stop rule ends the run.
  void supervise(RunContext& ctx);
  /// What the stop rules see now.
  [[nodiscard]] stop_rules::LoopView loop_view(const RunContext& ctx) const;
  /// Evaluates the stop rules in order and applies the one that fires; true: the run is over.
  bool apply_stop_rules(RunContext& ctx);
  /// Polls every service; a fault fails the run. True: the run is over (the watchdog case).
  bool check_health(RunContext& ctx);
  /// Fails the run with `why`: the loop services' emergency stop, then the drain.
  void fail(RunContext& ctx, const std::string& why);
  /// Records the telemetry that arrives for `how_long`.
  void drain(RunContext& ctx, std::chrono::milliseconds how_long);
  /// The watchdog rule's message, naming the service that died or failed when one did.
  /// The first service's fault (sr::service_fault, polled once), or "".
  std::string first_service_fault();
  std::string watchdog_message();
  /// Deactivates the loop services that still answer.
  void deactivate_loop(const std::string& unreachable);
  /// Writes summary.json and completes the run directory.
  void complete_recording(const std::string& run_id, v1::RunState state, const std::string& message,
                          double wall_time_s);

  /// Reads the identification sweep from the telemetry into `data` until the identification
  /// service reports it done: "" or what failed.
  std::string collect_sweep(const std::string& run_id, transport::Channel& telemetry,
                            ServiceHandle& ident, experiment::SweepData& data, std::size_t samples);

  [[nodiscard]] ServiceHandle* find_service(const std::string& name) const;
  /// OK, or FAILED_PRECONDITION naming the latched emergency stop (the coordinator's or a
  /// loop service's that no reset covers) and how to reset it. Not holding mutex_.
  grpc::Status check_not_latched();
  /// The ServiceStatus of `s` for GetStatus.
  static v1::ServiceStatus service_status(const ServiceHandle& s,
                                          const std::optional<v1::LifecycleReply>& st);
  /// The PULL socket the services' telemetry arrives on.
  std::unique_ptr<transport::Channel> bind_telemetry(const v1::LoopEndpoints& endpoints);
  /// Configures the loop services in binding order and activates them, `command_source`
  /// ("dynamics" or "identification") in the dynamics' slot. "" or what failed.
  std::string start_loop(const std::string& run_id, const std::string& scenario_yaml,
                         const v1::LoopEndpoints& endpoints, v1::ClockMode mode,
                         const char* command_source);
  // The recorder (coordinator_recorder.cpp): telemetry of the rig and the dynamics merged into
  // rows, recorded complete and in cycle order; the actuator's latencies and watchdog.
  void record(const v2::Telemetry& t);
  /// Maps the value names a sender announced to record columns.
  void learn_columns(std::uint32_t sender, const v2::Telemetry& t);
  /// Puts the rig's or the dynamics' values of a cycle into its pending row.
  void merge_row_part(std::uint32_t sender, const v2::Telemetry& t);
  /// The actuator's sample-to-command latency, e-stop latency and watchdog cycles.
  void note_actuator(const v2::Telemetry& t);
  /// A loop event; the dynamics' stop is kept until its last row is recorded.
  void note_event(const v2::Telemetry& t);
  /// Records the dynamics' stop reason once its last row is in (or was skipped). With
  /// `force`, records that row as it is first (the rig's part never came).
  void record_dynamics_stop(bool force);
  /// Records the rows complete in cycle order (real time: skips one stuck behind later rows).
  void record_complete_rows();
  void finish(v1::RunState state, const std::string& message);
  /// Real time, at the end: records the complete rows left in order, skips the incomplete.
  void flush_incomplete();
  nlohmann::json distributed_summary(v1::RunState state, const std::string& message) const;
  /// Per loop service, its loop thread's real-time set-up (Telemetry.realtime): asked for, and
  /// which steps took (SCHED_FIFO, locked memory, pinned, timer slack).
  nlohmann::json realtime_block() const;
  /// Keeps the late-command count of the minute `cycle` falls in (late_by_minute_).
  void note_late_minute(std::uint64_t cycle);
  /// The run's loop endpoints, derived by the coordinator alone (never from a request); ipc://
  /// ones inside a new private run directory handed to `run_dir` (removed when it is reset).
  v1::LoopEndpoints endpoints_for(const std::string& run_id,
                                  std::unique_ptr<transport::IpcRunDir>& run_dir) const;
  [[nodiscard]] transport::LoopPlaneOptions loop_plane() const;
  /// Parses a telemetry frame of the run into `t`; counts what is refused (truncated, not a
  /// Telemetry, no header, another run, an unknown sender) in hyloop_rejected_messages_total
  /// {service="coordinator"} and summary.json's rejected_messages.coordinator.
  bool accept_telemetry(const transport::Received& got, const std::string& run_id,
                        v2::Telemetry& t) noexcept;

  /// The latched emergency stop of `s` as GetStatus and Start see it: "" when none or when an
  /// operator's reset (`resets`) covers it.
  static std::string service_latch(const ServiceHandle& s,
                                   const std::optional<v1::LifecycleReply>& st,
                                   const std::map<std::string, std::uint64_t>& resets);

  std::string id_;  // "coordinator-HOST-PID-RANDOM"
  std::vector<std::unique_ptr<ServiceHandle>> services_;
  zmq::context_t& context_;
  CoordinatorOptions options_;

  std::shared_ptr<runtime::MetricsRegistry> metrics_ = std::make_shared<runtime::MetricsRegistry>();
  std::map<v1::RunState, runtime::GaugeSlot> state_gauges_;
  runtime::CounterSlot cycles_recorded_;
  runtime::CounterSlot cycles_received_;
  runtime::GaugeSlot telemetry_depth_;
  std::array<runtime::CounterSlot, transport::kVerdictCount> telemetry_rejected_total_;
  std::atomic<std::uint64_t> telemetry_rejected_{0};  // of the current run

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string scenario_text_;
  std::string rig_driver_ = "emulator";  ///< the loaded scenario's rig.driver.type
  std::string scenario_name_;
  // LoadScenario in flight: each takes the next ticket; only the newest may land (under mutex_).
  std::uint64_t load_tickets_ = 0;
  std::string load_request_id_;  // the request id of the load that landed, and its reply
  v1::LoadScenarioReply load_reply_;
  std::string start_request_id_;  // the request id of the latest Start that began a run
  std::unique_ptr<experiment::Experiment> recorder_;
  // The run directory being recorded (INCOMPLETE and the journal until the run's end).
  std::filesystem::path runs_dir_;
  std::unique_ptr<recording::RunRecording> recording_;
  bool recording_failed_ = false;            // run thread: the journal failed, the run was stopped
  std::vector<std::string> record_columns_;  // recorder_->record_columns()
  v1::RunStatus status_;
  v1::ClockMode mode_ = v1::CLOCK_MODE_LOCKSTEP;
  std::thread run_thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> estop_{false};
  std::string stop_reason_;
  // The latched emergency stop's reason ("" none) and, per service, the latch count an operator
  // reset (sent with that service's next Configure). Under mutex_.
  std::string estop_latched_;
  std::map<std::string, std::uint64_t> reset_counts_;
  // During a run, the services as the last health check found them: GetStatus answers from it
  // and never waits for a service that does not answer (a stopped one takes the RPC deadline).
  std::vector<v1::ServiceStatus> health_;
  std::vector<v1::RunInfo> runs_;
  std::map<std::string, std::string> summaries_;  // run id → summary.json

  // Recording state (run thread only, except the last row, read under mutex_).
  struct Pending {
    std::vector<double> row;
    unsigned parts = 0;
  };
  std::map<std::uint64_t, Pending> pending_;
  std::map<std::uint32_t, std::vector<int>> columns_;  // sender → column of each value
  std::map<std::uint32_t, std::vector<std::string>> names_;
  // The newest recorded rows, row k in slot k % kRecentRows (under mutex_): the telemetry
  // frames of next_frame.
  static constexpr std::uint64_t kRecentRows = 8192;
  std::vector<std::vector<double>> recent_rows_ = std::vector<std::vector<double>>(kRecentRows);
  // The cycle each slot holds (kNoRow: none yet this run); a real-time run skips cycles, so a
  // slot may hold an older cycle or nothing.
  static constexpr std::uint64_t kNoRow = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> recent_cycles_ = std::vector<std::uint64_t>(kRecentRows, kNoRow);
  /// Keeps `row` as the recorded row of `cycle` (holding mutex_).
  void keep_row_locked(std::uint64_t cycle, const std::vector<double>& row);
  std::uint64_t next_record_ = 0;
  std::uint64_t skipped_cycles_ = 0;
  std::uint64_t rig_last_cycle_ = 0;
  LatencyStats latencies_;  // bounded, whatever the run's length (latency_stats.hpp)
  std::int64_t estop_latency_ns_ = 0;
  std::uint64_t bare_ticks_ = 0;
  std::uint64_t bare_misses_ = 0;
  std::map<std::uint32_t, std::uint64_t> misses_;
  std::map<std::uint32_t, std::uint64_t> rejected_;
  std::map<std::uint32_t, std::uint32_t> realtime_;  ///< Telemetry.realtime per sender
  std::uint64_t late_commands_ = 0;
  /// The rig's late-command count at the end of each minute of the run (its cycles' time), at
  /// most kLateMinutes of them: summary.json's loop_misses.late_commands_per_minute.
  std::vector<std::uint64_t> late_by_minute_;
  v2::LoopEvent loop_event_ = v2::LOOP_EVENT_NONE;
  std::string loop_event_detail_;
  // The dynamics' stop: its cycle and reason, until its row is recorded (with the rig's part).
  std::optional<std::uint64_t> stop_cycle_;
  std::string stop_event_;
  bool stop_recorded_ = false;
  stop_rules::Clock::time_point stop_seen_at_{};
  std::uint64_t watchdog_cycles_ = 0;
};

/// The coordinator as a service component: its own lifecycle is trivial (it is never
/// configured by anyone); Shutdown stops a running run and releases the services (never ends
/// them); EmergencyStop fans out.
class CoordinatorComponent final : public runtime::Component {
 public:
  explicit CoordinatorComponent(Coordinator& coordinator)
      : Component("coordinator", coordinator.metrics()), coordinator_(coordinator) {}
  void on_configure(const v1::ConfigureRequest& /*request*/) override {}
  void on_activate() override {}
  void on_deactivate() override {}
  void on_shutdown() override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  Coordinator& coordinator_;
};

/// The hyloop.v1.Experiment gRPC service over a Coordinator.
std::unique_ptr<grpc::Service> make_experiment_service(Coordinator& coordinator);
/// hyloop.v1.Identification on the coordinator: RunIdentification drives the loop; the other
/// calls are forwarded to the identification service.
std::unique_ptr<grpc::Service> make_coordinator_identification_service(Coordinator& coordinator);

/// Parses "name=address,name=address" (the --services option / HYLOOP_SERVICES) into handles,
/// in kLoopServices order, then "identification" when given (optional). Throws
/// std::invalid_argument naming a missing or unknown service.
std::vector<std::unique_ptr<ServiceHandle>> grpc_service_handles(const std::string& spec);
/// Parses "rig_to_sensor=tcp://host:port,..." (LoopEndpoints field names; --endpoints /
/// HYLOOP_ENDPOINTS); an empty spec gives no explicit endpoints. Throws std::invalid_argument
/// naming an unknown channel.
v1::LoopEndpoints parse_endpoints(const std::string& spec);

}  // namespace hyloop::services
