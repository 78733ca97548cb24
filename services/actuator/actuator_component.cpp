#include "actuator/actuator_component.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <thread>

#include "hyloop/runtime/logging.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;

namespace {
constexpr std::array<const char*, 5> kLimitKindNames = {"position", "velocity", "acceleration",
                                                        "rate", "not_finite"};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

ActuatorComponent::ActuatorComponent()
    : LoopComponent("actuator"),
      input_(declare_input("dynamics_to_actuator", "dynamics_to_actuator")),
      sample_to_command_(declare_hop("sample_to_command")),
      watchdog_(
          metrics().gauge("hyloop_watchdog_tripped",
                          "1 while the command watchdog has tripped (no fresh command in time).")),
      estop_(metrics().gauge("hyloop_emergency_stop",
                             "1 while an emergency stop is latched (gRPC or hardware input).")) {
  declare_command_gauges();
  for (std::size_t i = 0; i < kLimitKinds; ++i) {
    limit_hits_[i] =
        metrics().counter("hyloop_actuator_limit_hits_total",
                          "Commands that the safety layer clipped or refused, by kind of limit.",
                          {{"kind", kLimitKindNames[i]}});
  }
}

void ActuatorComponent::declare_command_gauges() {
  for (const ex::Kind* kind : ex::kinds()) {
    const ex::CommandGauges g = kind->command_gauges();
    const auto same = [&g](const QuantityGauges& c) { return c.metric == g.command_metric; };
    if (g.command_metric.empty() ||
        std::any_of(command_gauges_.begin(), command_gauges_.end(), same)) {
      continue;
    }
    command_gauges_.push_back({g.command_metric, metrics().gauge(g.command_metric, g.actuator_help),
                               metrics().gauge(g.limit_metric, g.limit_help, {{"bound", "min"}}),
                               metrics().gauge(g.limit_metric, g.limit_help, {{"bound", "max"}})});
  }
}

void ActuatorComponent::show_command_quantity(const ex::CommandGauges& spec) {
  command_ = {};
  command_scale_ = spec.scale;
  for (const QuantityGauges& g : command_gauges_) {
    const bool own = g.metric == spec.command_metric;
    const double scale = own ? spec.scale : kNaN;
    g.limit_min.set(scale * plan_.safety.limits.position_min);
    g.limit_max.set(scale * plan_.safety.limits.position_max);
    g.command.set(kNaN);
    if (own) command_ = g.command;
  }
}

void ActuatorComponent::count_limit_hits() noexcept {
  using S = hal::ActuatorSafety;
  const hal::ActuatorStage& s = *stage_;
  const std::array<std::uint64_t, kLimitKinds> now = {
      s.total(&S::rejected_position), s.total(&S::rejected_velocity),
      s.total(&S::rejected_acceleration), s.total(&S::rate_limited),
      s.total(&S::rejected_not_finite)};
  for (std::size_t i = 0; i < kLimitKinds; ++i) {
    if (now[i] > limit_seen_[i]) limit_hits_[i].add(now[i] - limit_seen_[i]);
    limit_seen_[i] = now[i];  // also after a reset of the safety layer's counters
  }
}

void ActuatorComponent::configure_loop(const v1::ConfigureRequest& request) {
  const auto loaded = ex::load_scenario_text(request.scenario_yaml(), "scenario");  // one parse
  const ex::Kind& kind = loaded->kind();
  plan_ = loaded->loop_plan();
  tp::require_layout(request.layouts(), "command", plan_.command);
  stage_.emplace(plan_.hold_steps, ex::plan_safety(plan_));
  tp::size_frame(out_, plan_.command);
  commands_ = std::make_unique<tp::LoopInput<v2::Frame>>(
      context(),
      channel(endpoints_.dynamics_to_actuator(), "dynamics_to_actuator", tp::Pattern::kPull,
              tp::Role::kConnect),
      [this] {
        tp::ValidatorConfig v = validator_config(plan_.command.size());
        v.first_cycle = 1;  // the dynamics sends the command of cycle k+1 from sample k
        return v;
      }());
  watch_input(input_, commands_->counters());
  // The commands the actuator uses come once per control period h·T.
  expect_period(input_, std::chrono::nanoseconds(static_cast<std::int64_t>(
                            plan_.step * static_cast<double>(plan_.hold_steps) * 1e9 + 0.5)));
  to_rig_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.actuator_to_rig(), "actuator_to_rig", tp::Pattern::kPush, tp::Role::kBind),
      encoder_config());
  const hal::Signal& set_point = plan_.command.signals[hal::kCommandSetPoint];
  set_telemetry_names({"latency[ns]", set_point.name + "_applied[" + set_point.unit + "]",
                       "limited[-]", "watchdog[-]", "estopped[-]", "estop_latency[ns]"});
  estop_request_ns_ = 0;
  estop_latency_ = 0;
  cycles_run_ = 0;
  estop_request_cycles_ = 0;
  estop_reaction_cycles_ = 0;
  trip_ns_ = 0;
  deadline_trip_ns_ = 0;
  silence_ns_ = 0;
  time_to_rest_ = 0;
  show_command_quantity(kind.command_gauges());
  watchdog_.set(0.0);
  estop_.set(0.0);
  limit_seen_ = {};
}

void ActuatorComponent::release_loop() noexcept {
  commands_.reset();
  to_rig_.reset();
}

void ActuatorComponent::on_emergency_stop(std::string_view /*reason*/) noexcept {
  note_stop_request();
  if (stage_) {
    stage_->emergency_stop();
  }
  estop_.set(1.0);
}

void ActuatorComponent::note_stop_request() noexcept {
  std::int64_t expected = 0;
  if (estop_request_ns_.compare_exchange_strong(expected, tp::monotonic_now_ns())) {
    estop_request_cycles_ = cycles_run_.load(std::memory_order_relaxed);
  }
}

bool ActuatorComponent::cycle(std::uint64_t c, const v2::Frame* command) noexcept {
  const std::int64_t now = tp::monotonic_now_ns();
  double latency = 0.0;
  std::array<hal::ActuatorCommand, hal::kMaxAxes> in{};
  if (command != nullptr) {
    for (std::size_t a = 0; a < stage_->axes(); ++a) {
      in[a] = {command->values(static_cast<int>(hal::command_set_point(a))),
               command->values(static_cast<int>(hal::command_rate(a)))};
    }
    if (command->header().origin_time_ns() > 0) {
      latency = static_cast<double>(now - command->header().origin_time_ns());
      sample_to_command_.observe(std::max(0.0, latency) * 1e-9);
    }
  }
  const hal::SafetyOutput& o =
      stage_->update(static_cast<std::int64_t>(c), command != nullptr ? in.data() : nullptr);
  set_out();
  out_.mutable_header()->set_origin_time_ns(command != nullptr ? command->header().origin_time_ns()
                                                               : 0);
  const double t = static_cast<double>(c) * plan_.step;
  // In real time a cycle without a command sends nothing (the rig holds by itself), unless the
  // watchdog or the e-stop ramp is moving the rig: a hold stamped c would collide with the late
  // command of cycle c, which the rig would then reject as a duplicate.
  if (command != nullptr || lockstep() || o.watchdog || o.estopped) {
    (void)to_rig_->send(out_, c, t, lockstep(), runtime::kLosslessSendTimeout);
  }
  cycles_run_.store(cycles_run_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (o.estopped && estop_latency_.load() == 0 && estop_request_ns_.load() != 0) {
    estop_latency_.store(std::max<std::int64_t>(1, tp::monotonic_now_ns() - estop_request_ns_));
    estop_reaction_cycles_ = cycles_run_.load(std::memory_order_relaxed) - estop_request_cycles_;
  }
  if (o.watchdog && trip_ns_ == 0) trip_ns_ = deadline_trip_ns_ != 0 ? deadline_trip_ns_ : now;
  const std::array<double, 6> values = {latency,
                                        o.command.position,
                                        o.limited ? 1.0 : 0.0,
                                        o.watchdog ? 1.0 : 0.0,
                                        o.estopped ? 1.0 : 0.0,
                                        static_cast<double>(estop_latency_.load())};
  command_.set(command_scale_ * o.command.position);
  watchdog_.set(o.watchdog ? 1.0 : 0.0);
  if (o.estopped) estop_.set(1.0);
  count_limit_hits();
  count_cycle();
  const bool resting = (o.watchdog || o.estopped) && stage_->at_rest();
  if (resting && time_to_rest_.load() == 0) {
    const std::int64_t since = o.estopped ? estop_request_ns_.load() : trip_ns_;
    if (since != 0) time_to_rest_.store(std::max<std::int64_t>(1, tp::monotonic_now_ns() - since));
  }
  send_telemetry(c, t, values, resting ? v2::LOOP_EVENT_AT_REST : v2::LOOP_EVENT_NONE,
                 resting ? (o.estopped ? "estop" : "watchdog") : "");
  return !resting;
}

void ActuatorComponent::set_out() noexcept {
  const std::span<const hal::ActuatorCommand> applied = stage_->applied();
  for (std::size_t a = 0; a < applied.size(); ++a) {
    out_.set_values(static_cast<int>(hal::command_set_point(a)), applied[a].position);
    out_.set_values(static_cast<int>(hal::command_rate(a)), applied[a].velocity);
  }
}

void ActuatorComponent::run_loop() noexcept {
  const auto total = static_cast<std::uint64_t>(plan_.total_steps);
  const double step = plan_.step;
  const std::array<hal::ActuatorCommand, hal::kMaxAxes> initial = ex::plan_initial(plan_);
  stage_->reset(std::span(initial.data(), stage_->axes()));
  limit_seen_ = {};
  // Cycle 0: the bumpless initial command (the rig is at rest there).
  set_out();
  // Lossless in both modes: the rig starts its clock on it, and in real time a try_send could
  // drop it while the rig's connection is still being made.
  (void)to_rig_->send(out_, 0, 0.0, true, runtime::kLosslessSendTimeout);

  const auto rt_wait = std::chrono::nanoseconds(
      std::max<std::int64_t>(1000000, static_cast<std::int64_t>(1.5 * step * 1e9 + 0.5)));
  bool lost = false;   // lockstep: the dynamics stopped sending
  bool armed = false;  // real time: the watchdog runs from the first command on
  auto last_command = std::chrono::steady_clock::now();
  std::uint64_t c = 1;
  while (c < total && !stop_requested()) {
    if (lockstep() && !lost && !stage_->estopped()) {
      const v2::Frame* cmd = receive_input(*commands_, input_, runtime::kLockstepPoll);
      if (cmd != nullptr) {
        last_command = std::chrono::steady_clock::now();
        cycle(c, cmd);
        ++c;
        continue;
      }
      if (std::chrono::steady_clock::now() - last_command < wall_timeout_) {
        continue;
      }
      lost = true;  // from here on each cycle is a missed command: the watchdog path
    }
    const v2::Frame* cmd = nullptr;
    if (!lockstep()) {
      cmd = wait_command(rt_wait);
      if (cmd != nullptr && cmd->header().cycle() < c) {
        continue;  // a cycle already sent ahead on the way to an e-stop's latch
      }
      if (cmd != nullptr) {
        c = cmd->header().cycle();  // the command's own cycle (earlier ones were lost or late)
        armed = true;
      } else if (stop_pending()) {
        // No wait: the cycles up to the latch that applies the stop go out now.
      } else if (!armed && !stage_->estopped()) {
        continue;  // the loop is still connecting: the rig holds the first command, at rest
      } else {
        count_deadline_miss();  // none within 1.5·T: hold, towards the watchdog
      }
    }
    if (!cycle(c, cmd)) {
      const bool estop = stage_->estopped();
      report_stop(c, estop ? "emergency stop (" + latched_emergency_stop() + ")" : watchdog_cause(),
                  estop);
      return;
    }
    ++c;
  }
  if (c < total && !lockstep()) {
    ramp_to_rest(c);
    return;
  }
  set_message("actuator: finished");
}

bool ActuatorComponent::stop_pending() const noexcept {
  const hal::SafetyOutput& out = stage_->output();
  return (estop_request_ns_.load(std::memory_order_relaxed) != 0 && !out.estopped) ||
         (stage_->watchdog_tripped() && !out.watchdog);
}

const v2::Frame* ActuatorComponent::wait_command(std::chrono::nanoseconds rt_wait) noexcept {
  // The wait ends at 1.5·T, or at the input's deadline if that comes first: both are absolute,
  // so a wake-up that comes late under load ends it at once instead of adding up cycle by cycle.
  // Once tripped, the ramp keeps the pace of 1.5·T per cycle.
  const std::int64_t now = tp::monotonic_now_ns();
  std::int64_t until = now + rt_wait.count();
  if (!stage_->watchdog_tripped()) {
    until = std::min(until, std::max(now, input_deadline(input_).due_ns()));
  }
  const v2::Frame* cmd = nullptr;
  while (!stop_pending() && !stop_requested()) {
    cmd = receive_input(*commands_, input_, kEstopPoll);
    if (cmd != nullptr || tp::monotonic_now_ns() >= until) break;
  }
  // An e-stop stops the dynamics' commands by design: its own ramp runs, not the watchdog's.
  const bool estop = stage_->estopped() || estop_request_ns_.load() != 0;
  if (cmd == nullptr && !estop && !stage_->watchdog_tripped() &&
      input_lost(input_, tp::monotonic_now_ns())) {
    // Silent for the input's deadline (its last receive found the queue empty): the upstream
    // is lost. The watchdog's own path from here: its ramp from the next latch, whose cycles go
    // out at once (stop_pending), the rig at rest, LOOP_EVENT_AT_REST "watchdog".
    stage_->trip_watchdog();
    deadline_trip_ns_ = tp::monotonic_now_ns();
    silence_ns_.store(deadline_trip_ns_ - input_deadline(input_).last_arrival_ns());
  }
  return cmd;
}

void ActuatorComponent::ramp_to_rest(std::uint64_t c) noexcept {
  // Stopped mid-run (Deactivate: the run was stopped, or another client switched the
  // actuator off): the rig goes to rest through the safety layer's ramp before the loop ends
  // (its latch is the safety layer's own, gone with the next configure), for at most
  // stop_ramp_limit().
  note_stop_request();
  const std::string latched = latched_emergency_stop();
  stage_->emergency_stop();
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(plan_.step * 1e9));
  const auto until = std::chrono::steady_clock::now() + stop_ramp_limit(plan_.safety.step);
  while (cycle(c, nullptr) && std::chrono::steady_clock::now() < until) {
    ++c;
    std::this_thread::sleep_for(period);
  }
  report_stop(
      c, latched.empty() ? "stopped mid-run (deactivated)" : "emergency stop (" + latched + ")",
      true);
}

std::string ActuatorComponent::watchdog_cause() const {
  if (deadline_trip_ns_ == 0) return "watchdog tripped";
  const runtime::InputDeadline& d = input_deadline(input_);
  return fmt::format(
      "watchdog tripped (no command on dynamics_to_actuator for {:.1f} ms, its deadline {:.1f} ms "
      "= max({} control periods, {} ms): the upstream is lost)",
      static_cast<double>(silence_ns_.load()) * 1e-6, static_cast<double>(d.deadline_ns()) * 1e-6,
      input_deadline_periods(), input_deadline_floor_ms());
}

void ActuatorComponent::report_stop(std::uint64_t c, const std::string& cause, bool requested) {
  // After the last cycle: the numbers of docs/reliability.md.
  const bool rest = stage_->at_rest();
  runtime::logger()->warn(
      "actuator: {} at cycle {}: first stopping command {} us ({} loop cycles) after the "
      "request, rig at rest {} ms after the {}{}",
      cause, c, static_cast<double>(estop_latency_.load()) * 1e-3, estop_reaction_cycles_.load(),
      static_cast<double>(time_to_rest_.load()) * 1e-6, requested ? "request" : "trip",
      rest ? "" : " (NOT at rest: the ramp was cut short)");
  set_message("actuator: " + cause + (rest ? ", rig at rest" : ", ramp to rest cut short"));
}

}  // namespace hyloop::services
