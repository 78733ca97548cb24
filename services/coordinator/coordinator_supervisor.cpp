// The coordinator's supervisor: runs the loop of one run, feeds the recorder and ends the run by
// the first stop rule that fires (stop_rules.hpp), then drains, deactivates and completes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "coordinator/coordinator_component.hpp"
#include "hyloop/runtime/logging.hpp"
#include "hyloop/transport/clock.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace sr = stop_rules;
using Clock = sr::Clock;

namespace {

bool in_loop(const ServiceHandle& s) {
  return std::find(kLoopServices.begin(), kLoopServices.end(), s.name()) != kLoopServices.end();
}

/// Real time: a bare periodic timer at the loop's period beside the loop (its miss rate is the
/// floor the machine gives).
class BareTimer {
 public:
  BareTimer() = default;
  BareTimer(const BareTimer&) = delete;
  BareTimer& operator=(const BareTimer&) = delete;
  ~BareTimer() { stop(); }
  void start(double step_s, std::uint64_t& ticks, std::uint64_t& misses) {
    thread_ = std::thread([this, step_s, &ticks, &misses] {
      tp::PeriodicClockConfig c;
      c.period = std::chrono::nanoseconds(static_cast<std::int64_t>(step_s * 1e9 + 0.5));
      tp::PeriodicClock clock(c);
      clock.start();
      while (!stop_.load(std::memory_order_relaxed)) {
        const tp::Tick tick = clock.wait_next();
        ++ticks;
        if (tick.missed) ++misses;
      }
    });
  }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

struct Coordinator::RunContext {
  std::string run_id;
  tp::Channel* telemetry = nullptr;
  std::vector<std::byte> buffer = std::vector<std::byte>(1 << 16);
  v2::Telemetry t;
  v1::RunState final_state = v1::RUN_STATE_FINISHED;
  std::string message;
  bool ok = true;           // false: failed (start or a fault); the loop ends
  std::string unreachable;  // a service that stopped answering: not called again this run
  std::uint64_t total = 0;
  std::uint64_t backlog = 0;  // telemetry messages read in a row that were already waiting
  Clock::time_point next_health;
  Clock::time_point rig_done_at;
  Clock::time_point estop_since;
};

void Coordinator::run(std::string out_dir) noexcept {
  RunContext ctx;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ctx.run_id = status_.run_id();
  }
  std::unique_ptr<tp::IpcRunDir> ipc_run_dir;  // removed before the run is declared over
  BareTimer bare;
  telemetry_rejected_ = 0;
  try {
    const v1::LoopEndpoints endpoints = endpoints_for(ctx.run_id, ipc_run_dir);
    const auto telemetry_channel = bind_telemetry(endpoints);
    ctx.telemetry = telemetry_channel.get();
    ctx.message = start_loop(ctx.run_id, scenario_text_, endpoints, mode_, "dynamics");
    ctx.ok = ctx.message.empty();
    // The run's wall time: from the loop's start (every service active) to the end of its loop.
    const auto loop_start = Clock::now();
    if (mode_ == v1::CLOCK_MODE_REAL_TIME) {
      bare.start(recorder_->step_size(), bare_ticks_, bare_misses_);
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      status_.set_message(ctx.ok ? "running" : ctx.message);
    }
    supervise(ctx);
    if (!ctx.ok && ctx.final_state == v1::RUN_STATE_FINISHED) {
      ctx.final_state = v1::RUN_STATE_FAILED;
    }
    if (const std::string late =
            sr::late_commands_fault(late_commands_, static_cast<std::uint64_t>(recorder_->cycle()));
        ctx.final_state == v1::RUN_STATE_FINISHED && mode_ == v1::CLOCK_MODE_REAL_TIME &&
        !late.empty()) {
      ctx.final_state = v1::RUN_STATE_FAILED;
      ctx.message = late + " [" + ctx.message + "]";
    }
    const double wall_time_s = std::chrono::duration<double>(Clock::now() - loop_start).count();
    bare.stop();
    deactivate_loop(ctx.unreachable);
    complete_recording(ctx.run_id, ctx.final_state, ctx.message, wall_time_s);
  } catch (const std::exception& e) {
    bare.stop();
    ctx.final_state = v1::RUN_STATE_FAILED;
    ctx.message = std::string("coordinator: ") + e.what() + "; the run directory " + out_dir +
                  " is marked INCOMPLETE (hyloop summary --recover)";
    recorder_->set_row_observer(nullptr);
    recording_.reset();
  }
  ipc_run_dir.reset();  // before finish(): a waiter woken by it finds the sockets gone
  finish(ctx.final_state, ctx.message);
  changed_.notify_all();
}

void Coordinator::supervise(RunContext& ctx) {
  ctx.total = static_cast<std::uint64_t>(recorder_->total_steps());
  ctx.next_health = Clock::now();
  while (ctx.ok) {
    const std::int64_t read_start = tp::monotonic_now_ns();
    if (auto got = ctx.telemetry->receive(ctx.buffer, std::chrono::milliseconds(50))) {
      if (accept_telemetry(*got, ctx.run_id, ctx.t)) {
        ctx.backlog = ctx.t.header().send_time_ns() <= read_start ? ctx.backlog + 1 : 0;
        telemetry_depth_.raise(static_cast<double>(ctx.backlog));
        record(ctx.t);
      }
      if (sr::keep_reading(loop_view(ctx))) continue;
    }
    if (apply_stop_rules(ctx)) break;
  }
}

sr::LoopView Coordinator::loop_view(const RunContext& ctx) const {
  sr::LoopView v;
  v.total_cycles = ctx.total;
  v.next_record = next_record_;
  v.recorded_cycles = static_cast<std::uint64_t>(recorder_->cycle());
  v.rig_last_cycle = rig_last_cycle_;
  v.real_time = mode_ == v1::CLOCK_MODE_REAL_TIME;
  v.event = loop_event_;
  v.event_detail = loop_event_detail_;
  v.failing = ctx.final_state == v1::RUN_STATE_FAILED;
  v.stop_requested = stop_.load();
  v.estop_requested = estop_.load();
  v.now = Clock::now();
  v.rig_done_at = ctx.rig_done_at;
  v.estop_since = ctx.estop_since;
  v.next_health = ctx.next_health;
  v.stop_seen = stop_cycle_.has_value();
  v.stop_row_pending = stop_cycle_.has_value() && !stop_recorded_;
  v.stop_seen_at = stop_seen_at_;
  return v;
}

bool Coordinator::apply_stop_rules(RunContext& ctx) {
  sr::LoopView v = loop_view(ctx);
  if (sr::finished(v)) {
    ctx.message = "finished: " + std::to_string(recorder_->cycle()) + " cycles";
    return true;
  }
  if (sr::rig_done(v) && ctx.rig_done_at == Clock::time_point{}) {
    ctx.rig_done_at = v.rig_done_at = v.now;  // the grace period starts
  }
  if (sr::lost_tail(v)) {
    flush_incomplete();
    ctx.message = "finished: " + std::to_string(recorder_->cycle()) + " cycles recorded of " +
                  std::to_string(ctx.total) + " (" + std::to_string(skipped_cycles_) +
                  " incomplete: a message was lost)";
    return true;
  }
  if (sr::dynamics_stopped(v)) {
    record_dynamics_stop(true);  // a last row still waiting for the rig's part goes in as it is
    // A stability guard's stop is often the symptom of a loop service that left (the rig no
    // longer follows the model): then that service's fault is the run's end.
    if (const std::string cause = first_service_fault(); !cause.empty()) {
      fail(ctx, cause + "; the dynamics then stopped: " + stop_event_);
      return true;
    }
    ctx.message = "the dynamics stopped the run: " + stop_event_;
    return true;
  }
  if (sr::loop_fault(v)) {  // e.g. the rig: its actuator went silent
    fail(ctx, loop_event_detail_);
    return true;
  }
  if (sr::watchdog_at_rest(v)) {  // keeps draining: rows already sent are recorded
    ctx.final_state = v1::RUN_STATE_FAILED;
    ctx.message = watchdog_message();
    v = loop_view(ctx);
  }
  if (sr::operator_stop(v)) {
    ctx.final_state = v1::RUN_STATE_STOPPED;
    ctx.message = "stopped on request";
    return true;
  }
  if (v.estop_requested && ctx.estop_since == Clock::time_point{}) {
    ctx.estop_since = v.estop_since = v.now;  // the wait for the rig at rest starts
  }
  if (sr::emergency_stop_done(v)) {
    ctx.final_state = v1::RUN_STATE_ESTOPPED;
    const std::lock_guard<std::mutex> lock(mutex_);
    ctx.message = "emergency stop: " + stop_reason_;
    return true;
  }
  return sr::health_due(v) && check_health(ctx);
}

bool Coordinator::check_health(RunContext& ctx) {
  ctx.next_health = Clock::now() + options_.health_period;
  std::vector<std::optional<v1::LifecycleReply>> states;
  std::vector<v1::ServiceStatus> health;
  for (auto& s : services_) {
    states.push_back(s->state());
    health.push_back(service_status(*s, states.back()));
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    health_ = std::move(health);
  }
  for (std::size_t i = 0; i < services_.size(); ++i) {
    const ServiceHandle& s = *services_[i];
    if (std::string fault = sr::service_fault(s.name(), states[i], in_loop(s)); !fault.empty()) {
      if (!states[i]) ctx.unreachable = s.name();
      fail(ctx, fault);
      break;
    }
  }
  return ctx.final_state == v1::RUN_STATE_FAILED && ctx.ok;  // the watchdog case
}

void Coordinator::fail(RunContext& ctx, const std::string& why) {
  // The run fails with `why`; an emergency stop fans out (the actuator ramps the rig to rest;
  // every service latches it until an operator's reset), then what was sent before the fault
  // is drained into the recording.
  ctx.final_state = v1::RUN_STATE_FAILED;
  ctx.message = why;
  ctx.ok = false;
  runtime::logger()->error("run {} failed: {}", ctx.run_id, why);
  for (const char* name : {"actuator", "dynamics", "sensor", "rig-emulator"}) {
    if (ServiceHandle* s = find_service(name); s != nullptr && ctx.unreachable != name) {
      (void)s->emergency_stop("run failed: " + why);
    }
  }
  drain(ctx, std::chrono::milliseconds(500));
}

void Coordinator::drain(RunContext& ctx, std::chrono::milliseconds how_long) {
  const auto until = Clock::now() + how_long;
  while (Clock::now() < until) {
    if (auto got = ctx.telemetry->receive(ctx.buffer, std::chrono::milliseconds(50))) {
      if (accept_telemetry(*got, ctx.run_id, ctx.t)) record(ctx.t);
    }
  }
}

std::string Coordinator::first_service_fault() {
  for (auto& s : services_) {
    if (std::string cause = sr::service_fault(s->name(), s->state(), in_loop(*s)); !cause.empty()) {
      return cause;
    }
  }
  return {};
}

std::string Coordinator::watchdog_message() {
  // Name the cause: a service that died or failed (the watchdog is usually faster than the
  // periodic health check). A dead process can take a moment to stop answering.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (std::string cause = first_service_fault(); !cause.empty()) {
      return cause + "; the actuator's watchdog brought the rig to rest";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "commands stopped arriving: the actuator's watchdog brought the rig to rest";
}

void Coordinator::deactivate_loop(const std::string& unreachable) {
  // A service that does not answer (dead, or stopped: its Deactivate would wait out the
  // deadline) is skipped.
  for (const char* name : {"actuator", "dynamics", "sensor", "rig-emulator"}) {
    if (ServiceHandle* s = find_service(name); s != nullptr && name != unreachable && s->state()) {
      (void)s->deactivate();
    }
  }
}

}  // namespace hyloop::services
