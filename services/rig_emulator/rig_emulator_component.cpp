#include "rig_emulator/rig_emulator_component.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "hyloop/experiment/rig_driver.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;

RigEmulatorComponent::RigEmulatorComponent()
    : LoopComponent("rig-emulator"),
      input_(declare_input("actuator_to_rig", "actuator_to_rig")),
      estop_(metrics().gauge("hyloop_emergency_stop",
                             "1 while an emergency stop is latched (gRPC or hardware input).")) {
  declare_quantity_gauges();
}

void RigEmulatorComponent::declare_quantity_gauges() {
  const auto declare = [this](const std::string& metric, const std::string& help) {
    const auto same = [&metric](const QuantityGauge& g) { return g.metric == metric; };
    if (metric.empty() || std::any_of(quantity_gauges_.begin(), quantity_gauges_.end(), same)) {
      return;
    }
    quantity_gauges_.push_back({metric, metrics().gauge(metric, help)});
  };
  for (const experiment::Kind* kind : experiment::kinds()) {
    const experiment::CommandGauges g = kind->command_gauges();
    declare(g.position_metric, g.position_help);
    declare(g.command_metric, g.rig_help);
  }
}

void RigEmulatorComponent::show_command_quantity(const experiment::CommandGauges& spec) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  position_ = command_ = {};
  command_scale_ = spec.scale;
  for (const QuantityGauge& g : quantity_gauges_) {
    g.slot.set(kNaN);
    if (g.metric == spec.position_metric) position_ = g.slot;
    if (g.metric == spec.command_metric) command_ = g.slot;
  }
}

void RigEmulatorComponent::configure_loop(const v1::ConfigureRequest& request) {
  // One parse: the plan and the rig part from one loaded scenario.
  const auto loaded = experiment::load_scenario_text(request.scenario_yaml(), "scenario");
  plan_ = loaded->loop_plan();
  axes_ = experiment::plan_axes(plan_);
  if (lockstep() && experiment::is_clocked_device(plan_.rig_driver)) {
    throw std::invalid_argument(experiment::wire_refusal(plan_.rig_driver, "lockstep"));
  }
  tp::require_loop_layouts(request.layouts(), plan_.measurement, plan_.command);
  // The gauges of the kind's command quantity (the others read NaN).
  show_command_quantity(loaded->kind().command_gauges());
  rig_ = loaded->make_rig_part();
  commands_ = std::make_unique<tp::LoopInput<v2::Frame>>(
      context(),
      channel(endpoints_.actuator_to_rig(), "actuator_to_rig", tp::Pattern::kPull,
              tp::Role::kConnect),
      validator_config(plan_.command.size()));
  watch_input(input_, commands_->counters());
  samples_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.rig_to_sensor(), "rig_to_sensor", tp::Pattern::kPush, tp::Role::kBind),
      encoder_config());
  std::vector<std::string> names = rig_->truth_names();
  if (names.size() > experiment::kMaxTruth) {
    throw std::logic_error("rig part of kind " + plan_.kind + " names " +
                           std::to_string(names.size()) + " truth values; at most " +
                           std::to_string(experiment::kMaxTruth) + " are recorded");
  }
  truth_count_ = names.size();
  measurement_count_ = plan_.measurement.size();
  tp::size_frame(sample_, plan_.measurement);
  names.emplace_back("late_commands[-]");
  set_telemetry_names(std::move(names));
  late_ = 0;
  silence_limit_ = std::max(static_cast<std::uint64_t>((2 * plan_.safety.watchdog_cycles + 5) *
                                                       std::max<std::int64_t>(1, plan_.hold_steps)),
                            static_cast<std::uint64_t>(std::ceil(kActuatorSilence / plan_.step)));
  silence_event_ =
      "rig: no command from the actuator for " + std::to_string(silence_limit_) + " cycles (" +
      std::to_string(std::llround(static_cast<double>(silence_limit_) * plan_.step * 1e3)) +
      " ms; killed, stopped or deactivated?): holding the last command";
  silent_ = false;
  driver_fault_sent_ = false;
  hardware_estop_ = false;
  estop_.set(0.0);
}

void RigEmulatorComponent::release_loop() noexcept {
  commands_.reset();
  samples_.reset();
  rig_.reset();
}

void RigEmulatorComponent::on_emergency_stop(std::string_view /*reason*/) noexcept {
  // The rig is the plant: it keeps following what the actuator commands (the actuator ramps it
  // to rest). Nothing to latch here but the state it reports.
  estop_.set(1.0);
}

void RigEmulatorComponent::hold(const v2::Frame& command) noexcept {
  for (std::size_t a = 0; a < axes_; ++a) {
    held_[a] = {command.values(static_cast<int>(hal::command_set_point(a))),
                command.values(static_cast<int>(hal::command_rate(a)))};
  }
  held_send_ns_ = command.header().send_time_ns();
}

bool RigEmulatorComponent::cycle(std::uint64_t k, const v2::Frame* command, std::int64_t tick_ns,
                                 std::string_view fault) noexcept {
  const double t = static_cast<double>(k) * plan_.step;
  if (command != nullptr) {
    hold(*command);
  }
  if (!lockstep() && held_send_ns_ != 0) {
    observe_message_age(held_send_ns_, tick_ns);  // the command applied in this cycle
  }
  rig_->step_axes(std::span(held_.data(), axes_),
                  std::span<double>(measured_.data(), measurement_count_),
                  std::span<double>(truth_.data(), truth_count_));
  if (fault.empty() && !driver_fault_sent_ && rig_->fault() != nullptr) {
    fault = rig_->fault();  // a driver's fault, reported once: the coordinator stops the run
    driver_fault_sent_ = true;
  }
  for (std::size_t i = 0; i < measurement_count_; ++i) {
    sample_.set_values(static_cast<int>(i), measured_[i]);
  }
  sample_.mutable_header()->set_origin_time_ns(tick_ns);
  if (plan_.corrupt_message_every > 0 &&
      k % static_cast<std::uint64_t>(plan_.corrupt_message_every) ==
          static_cast<std::uint64_t>(plan_.corrupt_message_every) - 1) {
    static constexpr std::array<std::byte, 3> kGarbage = {std::byte{0xff}, std::byte{0xff},
                                                          std::byte{0xff}};
    (void)samples_->channel().try_send(kGarbage);  // fault injection: a corrupted message
  } else {
    (void)samples_->send(sample_, k, t, lockstep(), runtime::kLosslessSendTimeout);
  }
  truth_[truth_count_] = static_cast<double>(late_.load());
  send_telemetry(k, t, std::span<const double>(truth_.data(), truth_count_ + 1),
                 fault.empty() ? v2::LOOP_EVENT_NONE : v2::LOOP_EVENT_FAULT, fault);
  position_.set(command_scale_ * measured_[0]);
  command_.set(command_scale_ * held_[0].position);
  if (hardware_estop_.load(std::memory_order_relaxed)) {
    estop_.set(1.0);
  }
  count_cycle();
  return true;
}

void RigEmulatorComponent::run_loop() noexcept {
  const auto total = static_cast<std::uint64_t>(plan_.total_steps);
  held_ = experiment::plan_initial(plan_);
  held_send_ns_ = 0;
  if (lockstep()) {
    for (std::uint64_t k = 0; k < total && !stop_requested();) {
      const v2::Frame* c = receive_input(*commands_, input_, runtime::kLockstepPoll);
      if (c == nullptr) {
        continue;  // waiting for command k (or the stop flag)
      }
      cycle(k, c, tp::monotonic_now_ns());
      ++k;
    }
    set_message("rig: finished");
    return;
  }
  tp::PeriodicClockConfig clock_config;
  clock_config.period = std::chrono::nanoseconds(static_cast<std::int64_t>(plan_.step * 1e9 + 0.5));
  tp::PeriodicClock clock(clock_config);
  // The rig starts ticking with the bumpless first command (cycle 0), sent by the actuator when
  // it is activated, the last of the loop services: no tick runs before the loop is complete.
  const v2::Frame* first = nullptr;
  while (first == nullptr && !stop_requested()) {
    first = commands_->receive(runtime::kLockstepPoll);
  }
  if (first != nullptr) {
    hold(*first);
  }
  clock.start();
  std::uint64_t without_command = 0;  // ticks in a row, once the loop has closed
  bool closed = false;                // a command of cycle >= 1 arrived (the dynamics' first)
  for (std::uint64_t k = 0; k < total && !stop_requested(); ++k) {
    const tp::Tick tick = clock.wait_next();
    if (tick.missed) {
      count_deadline_miss();
    }
    observe_lateness(tick.lateness_ns);
    const std::uint64_t before = commands_->channel().received();
    const v2::Frame* c = commands_->receive_newest();
    // Read at the tick: every command drained here was waiting in the queue, and its latency
    // includes the wait for the tick.
    note_queue_depth(input_, commands_->channel().received() - before);
    if (c != nullptr) {
      observe_hop(input_, c->header().send_time_ns(), tp::monotonic_now_ns());
    }
    if (k > 0 && (c == nullptr || c->header().cycle() < k)) {
      late_.fetch_add(1);  // command k missed its tick: hold (or apply the newest there is)
    }
    closed = closed || (c != nullptr && c->header().cycle() >= 1);
    without_command = c == nullptr && closed ? without_command + 1 : 0;
    std::string_view event;
    if (!silent_.load(std::memory_order_relaxed) && without_command >= silence_limit_) {
      silent_.store(true);  // latched for this run: hold, ignore later commands
      event = silence_event_;
    }
    cycle(k, silent_.load(std::memory_order_relaxed) ? nullptr : c, tick.wake_ns, event);
    rejected_ = commands_->counters().rejected();
  }
  set_message("rig: finished");
}

}  // namespace hyloop::services
