#include "hyloop/runtime/loop_component.hpp"

#include <algorithm>
#include <stdexcept>

#include "hyloop/runtime/logging.hpp"
#include "hyloop/runtime/rt_setup.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "hyloop/transport/clock.hpp"

namespace hyloop::runtime {

LoopComponent::LoopComponent(std::string name) : Component(std::move(name)) {
  MetricsRegistry& m = metrics();
  const MetricLabels service{{"service", this->name()}};
  cycles_total_ = m.counter("hyloop_cycles_total", "Cycles the service completed.", service);
  misses_total_ = m.counter("hyloop_deadline_misses_total",
                            "Cycles whose work ended after the next absolute deadline, or whose "
                            "input did not arrive in time; the service held its output.",
                            service);
  lateness_ = m.histogram("hyloop_lateness_seconds",
                          "How late the periodic timer woke up after the cycle's absolute "
                          "deadline (services with a periodic timer).",
                          service);
  message_age_ = m.histogram("hyloop_message_age_seconds",
                             "Age of the newest input the service used in a cycle: the cycle's "
                             "start minus the input's send time.",
                             service);
  for (std::size_t v = 1; v < transport::kVerdictCount; ++v) {
    MetricLabels labels = service;
    labels.emplace("reason", transport::to_string(static_cast<transport::Verdict>(v)));
    rejected_total_[v] =
        m.counter("hyloop_rejected_messages_total",
                  "Loop messages dropped by the receiver's validator, by reason.", labels);
  }
  collector_ = m.add_collector([this] { collect_inputs(); });
}

LoopComponent::~LoopComponent() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
  metrics().remove_collector(collector_);
}

std::size_t LoopComponent::declare_input(const std::string& channel, const std::string& hop) {
  InputMetrics input;
  input.depth = metrics().gauge("hyloop_queue_depth",
                                "Messages found waiting in a loop channel's receive queue: the "
                                "largest backlog since the previous scrape.",
                                {{"service", name()}, {"channel", channel}}, GaugeKind::kPeak);
  input.expired = metrics().counter(
      "hyloop_input_deadline_expired_total",
      "Real time: times a loop input was silent for input_deadline_periods of its periods (its "
      "upstream counted as lost; the actuator then ramps the rig to rest).",
      {{"service", name()}, {"channel", channel}});
  if (!hop.empty()) {
    input.hop = declare_hop(hop);
  }
  std::size_t index = 0;
  metrics().exclusive([&] {
    inputs_.push_back(input);
    index = inputs_.size() - 1;
  });
  return index;
}

HistogramSlot LoopComponent::declare_hop(const std::string& hop) {
  return metrics().histogram("hyloop_loop_latency_seconds",
                             "Per hop: arrival at the receiver minus the header's send time; "
                             "sample_to_command: arrival of the command minus the rig's sample "
                             "time it derives from.",
                             {{"hop", hop}});
}

void LoopComponent::watch_input(std::size_t index, const transport::VerdictCounters& counters) {
  metrics().exclusive([&] {
    InputMetrics& input = inputs_.at(index);
    input.counters = &counters;
    for (std::size_t v = 0; v < transport::kVerdictCount; ++v) {
      input.seen[v] = counters.count(static_cast<transport::Verdict>(v));
    }
  });
}

void LoopComponent::unwatch_inputs() {
  metrics().exclusive([this] {
    collect_inputs();
    for (InputMetrics& input : inputs_) {
      input.counters = nullptr;
      input.backlog = 0;
    }
  });
}

void LoopComponent::collect_inputs() noexcept {
  for (InputMetrics& input : inputs_) {
    if (input.counters == nullptr) continue;
    for (std::size_t v = 1; v < transport::kVerdictCount; ++v) {
      const std::uint64_t n = input.counters->count(static_cast<transport::Verdict>(v));
      if (n > input.seen[v]) rejected_total_[v].add(n - input.seen[v]);
      input.seen[v] = n;
    }
  }
}

namespace {
double seconds_since(std::int64_t then_ns, std::int64_t now_ns) noexcept {
  return static_cast<double>(std::max<std::int64_t>(0, now_ns - then_ns)) * 1e-9;
}
}  // namespace

void LoopComponent::note_received(std::size_t index, const v2::Header& header,
                                  std::int64_t read_start_ns) noexcept {
  const std::int64_t now = transport::monotonic_now_ns();
  const std::int64_t sent = header.send_time_ns();
  observe_hop(index, sent, now);
  observe_message_age(sent, now);
  if (index < inputs_.size()) {
    InputMetrics& input = inputs_[index];
    input.backlog = sent <= read_start_ns ? input.backlog + 1 : 0;
    input.deadline.arrived(now);
    input.lost = false;
    input.depth.raise(static_cast<double>(input.backlog));
  }
}

void LoopComponent::set_input_deadline_periods(int periods) {
  if (periods < kMinInputDeadlinePeriods || periods > kMaxInputDeadlinePeriods) {
    throw std::invalid_argument("input_deadline_periods = " + std::to_string(periods) +
                                ": must be in [" + std::to_string(kMinInputDeadlinePeriods) + ", " +
                                std::to_string(kMaxInputDeadlinePeriods) + "]");
  }
  deadline_periods_override_ = periods;
}

void LoopComponent::set_input_deadline_floor_ms(int floor_ms) {
  if (floor_ms < 0 || floor_ms > kMaxInputDeadlineFloorMs) {
    throw std::invalid_argument("input_deadline_floor_ms = " + std::to_string(floor_ms) +
                                ": must be in [0, " + std::to_string(kMaxInputDeadlineFloorMs) +
                                "]");
  }
  deadline_floor_override_ = floor_ms;
}

void LoopComponent::expect_period(std::size_t index, std::chrono::nanoseconds period) noexcept {
  if (index >= inputs_.size()) return;
  inputs_[index].deadline.configure(period, deadline_periods_,
                                    std::chrono::milliseconds(deadline_floor_ms_), !lockstep());
  inputs_[index].lost = false;
}

bool LoopComponent::input_lost(std::size_t index, std::int64_t now_ns) noexcept {
  if (index >= inputs_.size()) return false;
  InputMetrics& input = inputs_[index];
  if (!input.deadline.expired(now_ns)) return false;
  if (!input.lost) {
    input.lost = true;
    input.expired.add();
  }
  return true;
}

void LoopComponent::observe_hop(std::size_t index, std::int64_t send_time_ns,
                                std::int64_t now_ns) noexcept {
  if (index < inputs_.size()) inputs_[index].hop.observe(seconds_since(send_time_ns, now_ns));
}

void LoopComponent::observe_message_age(std::int64_t send_time_ns,
                                        std::int64_t cycle_start_ns) noexcept {
  message_age_.observe(seconds_since(send_time_ns, cycle_start_ns));
}

void LoopComponent::note_queue_depth(std::size_t index, std::uint64_t messages) noexcept {
  if (index < inputs_.size()) inputs_[index].depth.raise(static_cast<double>(messages));
}

void LoopComponent::count_deadline_miss() noexcept {
  deadline_misses_.fetch_add(1, std::memory_order_relaxed);
  misses_total_.add();
}

void LoopComponent::observe_lateness(std::int64_t lateness_ns) noexcept {
  lateness_ns_.store(lateness_ns, std::memory_order_relaxed);
  lateness_.observe(static_cast<double>(std::max<std::int64_t>(0, lateness_ns)) * 1e-9);
}

transport::ChannelConfig LoopComponent::channel(const std::string& endpoint, const char* field,
                                                transport::Pattern pattern, transport::Role role,
                                                int hwm) {
  if (endpoint.empty()) {
    throw std::invalid_argument(std::string("endpoints.") + field +
                                ": missing (a ZeroMQ address such as tcp://127.0.0.1:5601, or "
                                "ipc://IPC_DIR/RUN/NAME as the coordinator derives it)");
  }
  transport::LoopPlaneOptions plane;
  if (loop_plane_) {
    plane = *loop_plane_;
  } else {
    const ServiceConfig& config = service_config();
    plane.ipc_dir = config.ipc_dir;
    plane.security_dir = config.security_dir;
    plane.insecure = config.insecure;
  }
  transport::ChannelConfig c;
  c.security = transport::loop_channel_security(plane, field, name(), role, endpoint,
                                                endpoints_.command_source());
  c.endpoint = endpoint;
  c.field = std::string("endpoints.") + field;
  c.pattern = pattern;
  c.role = role;
  // A peer that is not there yet (connect before bind) or restarts is retried every 10–50 ms,
  // not with ZeroMQ's back-off up to half a second: the loop must close quickly.
  c.reconnect_ivl_ms = 10;
  c.reconnect_ivl_max_ms = 50;
  c.send_hwm = hwm;
  c.recv_hwm = hwm;
  if (!c.security.curve.empty() && std::string_view(field) != "telemetry") {
    c.on_handshake_failed = [this, f = std::string(field), role](const std::string& what) {
      handshake_failed(f, role, what);
    };
  }
  return c;
}

void LoopComponent::handshake_failed(const std::string& field, transport::Role role,
                                     const std::string& what) {
  metrics()
      .counter("hyloop_curve_handshake_failures_total",
               "ZMTP (CURVE) handshakes that failed on a loop channel's socket.",
               {{"service", name()}, {"channel", field}})
      .add();
  const bool binder = role == transport::Role::kBind;
  const std::string message = "CURVE " + what + " (endpoints." + field + ", " +
                              (binder ? "bound" : "connected") + " by " + name() + ")";
  if (binder) {
    // Each retry of a peer fails again: the 1st, 2nd, 4th, 8th, ... are logged.
    const std::uint64_t n = binder_refusals_.fetch_add(1) + 1;
    if ((n & (n - 1)) == 0) {
      logger()->warn("{}: {}: a peer that is not this channel's was refused ({} so far)", name(),
                     message, n);
    }
    return;
  }
  report_fault(message + ": check the security directories (`hyloop certs`) of both ends");
}

void LoopComponent::report_fault(std::string message) {
  {
    const std::lock_guard lock(fault_mutex_);
    if (fault_.load()) return;
    fault_message_ = std::move(message);
    fault_.store(true, std::memory_order_release);
  }
  logger()->error("{}: {}", name(), fault_message_);
  // Not running yet: Activate is refused naming the fault. Running: the loop stops as on a
  // Deactivate (the actuator ramps the rig to rest) and its next telemetry carries the fault
  // (the actuator's first ramp cycle; the others' last message); the coordinator fails the run.
  // The component moves to ERROR when its loop has ended.
  if (!running_.load()) {
    fail(fault_message_);
  } else {
    stop_.store(true);
  }
}

transport::ValidatorConfig LoopComponent::validator_config(std::size_t frame_length) const {
  transport::ValidatorConfig v;
  v.frame_length = frame_length;
  v.run_id = run_id_;
  v.mode = lockstep() ? transport::Mode::kLockstep : transport::Mode::kRealTime;
  return v;
}

transport::EncoderConfig LoopComponent::encoder_config() const {
  transport::EncoderConfig e;
  e.run_id = run_id_;
  e.sender = sender_id_;
  return e;
}

void LoopComponent::on_configure(const v1::ConfigureRequest& request) {
  if (thread_.joinable()) {
    if (!done_.load()) throw std::logic_error("configure: the loop thread is still running");
    thread_.join();  // a loop that ended on a fault (ERROR): nothing to deactivate
  }
  if (request.run_id().empty()) {
    throw std::invalid_argument("run_id: missing (every loop message is stamped with it)");
  }
  if (request.mode() != v1::CLOCK_MODE_LOCKSTEP && request.mode() != v1::CLOCK_MODE_REAL_TIME) {
    throw std::invalid_argument("mode: " + std::to_string(request.mode()) +
                                ": must be CLOCK_MODE_LOCKSTEP or CLOCK_MODE_REAL_TIME");
  }
  close_channels();
  try {
    open_channels(request);
  } catch (...) {
    close_channels();  // a failed configure holds no port: another service may bind it next
    throw;
  }
}

void LoopComponent::open_channels(const v1::ConfigureRequest& request) {
  run_id_ = request.run_id();
  mode_ = request.mode();
  sender_id_ = request.sender_id();
  endpoints_ = request.endpoints();
  scenario_yaml_ = request.scenario_yaml();
  names_sent_ = false;
  {
    const std::lock_guard lock(fault_mutex_);
    fault_.store(false);
    fault_message_.clear();
    fault_sent_ = false;
  }
  deadline_misses_ = 0;
  rejected_ = 0;
  deadline_periods_ = deadline_periods_override_.value_or(service_config().input_deadline_periods);
  deadline_floor_ms_ = deadline_floor_override_.value_or(service_config().input_deadline_floor_ms);
  for (InputMetrics& input : inputs_) {
    input.deadline.configure(std::chrono::nanoseconds(0), deadline_periods_,
                             std::chrono::milliseconds(0), false);
    input.lost = false;
  }
  transport::ChannelConfig telemetry =
      channel(endpoints_.telemetry(), "telemetry", transport::Pattern::kPush,
              transport::Role::kConnect, 100000);
  telemetry.heartbeat_ivl_ms = static_cast<int>(kSupervisionHeartbeat.count());
  telemetry.heartbeat_timeout_ms = static_cast<int>(kSupervisionTimeout.count());
  telemetry_ =
      std::make_unique<transport::LoopOutput>(context(), std::move(telemetry), encoder_config());
  coordinator_watch_ = std::make_unique<PeerWatch>(
      context(), telemetry_->channel().socket(),
      [this](const std::string& what) {
        if (running_.load() && !done_.load()) (void)emergency_stop("coordinator lost: " + what);
      },
      [this](const std::string& what) {
        handshake_failed("telemetry", transport::Role::kConnect, what);
      });
  channels_open_ = true;
  configure_loop(request);
  logger()->info(
      "run {} ({}): loop endpoints rig_to_sensor={} sensor_to_dynamics={} "
      "dynamics_to_actuator={} actuator_to_rig={} telemetry={}; input deadline max({} periods, "
      "{} ms){}",
      run_id_, lockstep() ? "lockstep" : "real time", endpoints_.rig_to_sensor(),
      endpoints_.sensor_to_dynamics(), endpoints_.dynamics_to_actuator(),
      endpoints_.actuator_to_rig(), endpoints_.telemetry(), deadline_periods_, deadline_floor_ms_,
      lockstep() ? " (off in lockstep)" : "");
}

void LoopComponent::on_activate() {
  if (!channels_open_) {
    throw std::logic_error(
        "activate: not configured for a run (the loop channels close when a run ends: configure "
        "again)");
  }
  stop_.store(false);
  done_.store(false);
  running_.store(true);
  thread_ = std::thread([this] {
    // Real-time set-up of the loop thread from the service's --config (SCHED_FIFO, mlockall,
    // CPU pinning, timer slack), each step falling back with a warning where not permitted.
    const RtOptions& rt = rt_override_ ? *rt_override_ : service_config().rt;
    rt_flags_.store(rt.enabled ? realtime_flags(apply_rt_setup(rt)) : 0U,
                    std::memory_order_relaxed);
    // A component that sends no telemetry per cycle (the sensor) reports its set-up once.
    if (rt.enabled && telemetry_names_.empty()) send_telemetry(0, 0.0, {});
    run_loop();
    if (fault_.load(std::memory_order_acquire)) {
      // Event only (no values): the coordinator records no row part from it.
      if (!fault_sent_) send_telemetry(last_cycle_, last_time_s_, {}, v2::LOOP_EVENT_FAULT);
      fail(fault_message_);
    }
    done_.store(true);
  });
}

void LoopComponent::on_deactivate() {
  running_.store(false);
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
  // The run is over: nothing may reach the loop's sockets any more, and no socket file is left.
  close_channels();
}

void LoopComponent::on_shutdown() { on_deactivate(); }

void LoopComponent::on_cleanup() noexcept { close_channels(); }

void LoopComponent::close_channels() noexcept {
  unwatch_inputs();
  release_loop();
  coordinator_watch_.reset();
  telemetry_.reset();
  channels_open_ = false;
}

void LoopComponent::send_telemetry(std::uint64_t cycle, double virtual_time_s,
                                   std::span<const double> values, v2::LoopEvent event,
                                   std::string_view detail) noexcept {
  if (!telemetry_) {
    return;
  }
  last_cycle_ = cycle;
  last_time_s_ = virtual_time_s;
  if (fault_.load(std::memory_order_acquire) && !fault_sent_) {
    fault_sent_ = true;  // this message carries the fault found off the loop thread
    event = v2::LOOP_EVENT_FAULT;
    detail = fault_message_;
  }
  try {
    v2::Telemetry& m = telemetry_msg_;
    m.clear_names();
    if (!names_sent_) {
      for (const std::string& n : telemetry_names_) {
        m.add_names(n);
      }
      names_sent_ = true;
    }
    m.clear_values();
    for (double v : values) {
      m.add_values(v);
    }
    m.set_deadline_misses(deadline_misses_.load(std::memory_order_relaxed));
    m.set_lateness_ns(lateness_ns_.load(std::memory_order_relaxed));
    m.set_rejected(rejected_.load(std::memory_order_relaxed));
    m.set_realtime(rt_flags_.load(std::memory_order_relaxed));
    m.set_event(event);
    m.mutable_event_detail()->assign(detail.data(), detail.size());  // reuses its capacity
    telemetry_->send(m, cycle, virtual_time_s, lockstep(), std::chrono::milliseconds(2000));
  } catch (...) {
    // Telemetry is never allowed to break the loop.
  }
}

}  // namespace hyloop::runtime
