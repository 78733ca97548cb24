#include "hyloop/hal/udp_target_emulator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

struct UdpTargetEmulator::Counters {
  std::atomic<std::uint64_t> steps{0}, commands{0}, fallback_steps{0}, late_commands{0}, sent{0},
      dropped_out{0}, dropped_in{0}, rejected_foreign{0}, rejected_malformed{0}, rejected_limits{0},
      command_lag_steps{0};
  std::atomic<bool> stopped{false};
};

namespace {

std::optional<std::size_t> optional_field(const PacketCodec& codec, const std::string& name,
                                          const char* what) {
  if (name.empty()) {
    return std::nullopt;
  }
  const auto index = codec.find(name);
  if (!index) {
    throw std::invalid_argument(std::string("signals.") + what + " = '" + name +
                                "': no such field in the layout");
  }
  return index;
}

void validate_emulator_config(const UdpTargetEmulatorConfig& c) {
  require(std::isfinite(c.command_timeout) && c.command_timeout >= 2.0 * c.plant.step,
          "command_timeout", c.command_timeout, "finite and >= 2 * plant.step");
  require(c.host.port != 0, "host.port", c.host.port, "1..65535");
  require(std::isfinite(c.initial_position), "initial_position", c.initial_position, "finite");
}

}  // namespace

UdpTargetEmulator::UdpTargetEmulator(const UdpTargetEmulatorConfig& config)
    : config_(config),
      command_codec_("command layout", config.command),
      measurement_codec_("measurement layout", config.measurement),
      host_(to_sockaddr("host", config.host)),
      socket_("local", config.local),
      plant_(axis_or_servo(config_.axis_plant, config_.plant)),
      counters_(std::make_unique<Counters>()),
      period_(config.plant.step),
      wire_(config.impairments, 1.5 * config.plant.step),
      io_(socket_, {host_, false, kMaxPacketBytes, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  validate_emulator_config(config);
  const auto position =
      optional_field(command_codec_, config.signals.command_position, "command_position");
  require(position.has_value(), "signals.command_position (empty)", 0.0, "a command field");
  cmd_position_ = *position;
  cmd_velocity_ =
      optional_field(command_codec_, config.signals.command_velocity, "command_velocity");
  meas_position_ =
      optional_field(measurement_codec_, config.signals.measured_position, "measured_position");
  meas_velocity_ =
      optional_field(measurement_codec_, config.signals.measured_velocity, "measured_velocity");
  meas_force_ = optional_field(measurement_codec_, config.signals.measured_force, "measured_force");
  echo_ = optional_field(measurement_codec_, config.signals.command_echo, "command_echo");
  status_ = optional_field(measurement_codec_, config.signals.status, "status");
  require(command_codec_.sequence_index().has_value(), "command.sequence (empty)", 0.0,
          "a u16/u32/u64 field");
  require(measurement_codec_.sequence_index().has_value(), "measurement.sequence (empty)", 0.0,
          "a u16/u32/u64 field");
  plant_->reset(config.initial_position);
  plant_view_.store(plant_->measurement());
  held_ = config.initial_position;
  last_step_at_ = monotonic_seconds();
  io_.start(*this);
}

UdpTargetEmulator::~UdpTargetEmulator() { io_.stop(); }

UdpTargetEmulatorStats UdpTargetEmulator::stats() const noexcept {
  const Counters& c = *counters_;
  constexpr auto r = std::memory_order_relaxed;
  UdpTargetEmulatorStats s;
  s.steps = c.steps.load(r);
  s.commands = c.commands.load(r);
  s.fallback_steps = c.fallback_steps.load(r);
  s.late_commands = c.late_commands.load(r);
  s.sent = c.sent.load(r);
  s.dropped_out = c.dropped_out.load(r);
  s.dropped_in = c.dropped_in.load(r);
  s.rejected_foreign = c.rejected_foreign.load(r);
  s.rejected_malformed = c.rejected_malformed.load(r);
  s.rejected_limits = c.rejected_limits.load(r);
  s.command_lag_steps = c.command_lag_steps.load(r);
  s.stopped = c.stopped.load(r);
  return s;
}

void UdpTargetEmulator::after_receive(double now) noexcept {
  tick(now);
  bump(counters_->sent, wire_.flush(socket_, host_, now));
}

double UdpTargetEmulator::next_wake(double now) noexcept {
  double wake = last_step_at_ + (mode_ == Mode::kRunning ? 1.5 : 1.0) * period_;
  return std::max(wire_.next_due(wake), now);
}

void UdpTargetEmulator::tick(double now) noexcept {
  if (mode_ == Mode::kRunning && now - last_command_at_ > config_.command_timeout) {
    mode_ = Mode::kStopped;  // the reflex: hold where it is, latched
    held_ = plant_->measurement().true_displacement;
    counters_->stopped.store(true, std::memory_order_relaxed);
  }
  switch (mode_) {
    case Mode::kIdle:
      if (now - last_step_at_ >= period_) {
        last_step_at_ = now;
        send_measurement(0, now);
      }
      break;
    case Mode::kRunning:
      if (now - last_step_at_ >= 1.5 * period_) {
        step(held_sequence_, true, now);
      }
      break;
    case Mode::kStopped:
      if (now - last_step_at_ >= period_) {
        step(held_sequence_, false, now);
      }
      break;
  }
}

void UdpTargetEmulator::on_datagram(std::span<const std::uint8_t> datagram,
                                    const sockaddr_in& /*from*/, double now) noexcept {
  std::array<double, kMaxPacketFields> values{};
  std::uint64_t sequence = 0;
  if (command_codec_.decode(datagram, values, sequence) != DecodeResult::kOk) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (wire_.lose_incoming()) {
    bump(counters_->dropped_in);
    return;
  }
  on_command(sequence, values[cmd_position_], cmd_velocity_ ? values[*cmd_velocity_] : 0.0, now);
}

void UdpTargetEmulator::on_command(std::uint64_t raw_sequence, double position, double velocity,
                                   double now) noexcept {
  if (mode_ == Mode::kStopped) {
    return;
  }
  // The full sequence from the wire's (possibly narrow) field.
  const std::uint64_t full =
      mode_ == Mode::kIdle
          ? raw_sequence
          : held_sequence_ + static_cast<std::uint64_t>(sequence_delta(
                                 last_raw_, raw_sequence, command_codec_.sequence_bits()));
  if (mode_ == Mode::kIdle) {
    mode_ = Mode::kRunning;
    next_step_ = full;
  } else if (full <= held_sequence_) {
    return;  // older than the command held: a reordered or duplicated datagram
  }
  last_raw_ = raw_sequence;
  last_command_at_ = now;
  bump(counters_->commands);
  const bool valid = check_command({position, velocity}, config_.limits) == LimitVerdict::kOk;
  if (!valid) {
    bump(counters_->rejected_limits);
  }
  const double incoming = valid ? position : held_;
  const std::uint64_t previous = held_sequence_;
  held_sequence_ = full;
  if (full < next_step_) {
    held_ = incoming;  // its step was taken with the command held before it
    bump(counters_->late_commands);
    return;
  }
  for (int skipped = 0; next_step_ < full && skipped < 16; ++skipped) {
    step(previous, true, now);  // steps it skipped run on the command held before it
  }
  held_ = incoming;
  next_step_ = full;
  step(full, false, now);
}

void UdpTargetEmulator::step(std::uint64_t echo, bool fallback, double now) noexcept {
  if (mode_ == Mode::kRunning && next_step_ > echo) {
    auto& lag = counters_->command_lag_steps;
    lag.store(lag.load(std::memory_order_relaxed) + (next_step_ - echo), std::memory_order_relaxed);
  }
  const ServoMeasurement& m = plant_->step(held_);
  plant_view_.store(m);
  last_step_at_ = now;
  ++next_step_;
  bump(counters_->steps);
  if (fallback) {
    bump(counters_->fallback_steps);
  }
  send_measurement(echo, now);
}

void UdpTargetEmulator::send_measurement(std::uint64_t echo, double now) noexcept {
  const ServoMeasurement& m = plant_->measurement();
  std::array<double, kMaxPacketFields> values{};
  for (std::size_t i = 0; i < measurement_codec_.field_count(); ++i) {
    values[i] = measurement_codec_.field(i).value;
  }
  const bool idle = mode_ == Mode::kIdle;
  if (meas_position_) values[*meas_position_] = idle ? held_ : m.displacement;
  if (meas_velocity_) values[*meas_velocity_] = idle ? 0.0 : m.velocity;
  if (meas_force_) values[*meas_force_] = m.force;
  if (echo_) values[*echo_] = static_cast<double>(echo);
  if (status_) values[*status_] = mode_ == Mode::kStopped ? 1.0 : 0.0;
  std::array<std::uint8_t, kMaxPacketBytes> frame{};
  const std::size_t n = measurement_codec_.encode(values, ++measurement_sequence_, frame);
  if (n == 0 || muted_.load(std::memory_order_relaxed) || !wire_.submit({frame.data(), n}, now)) {
    bump(counters_->dropped_out);
  }
}

}  // namespace hyloop::hal
