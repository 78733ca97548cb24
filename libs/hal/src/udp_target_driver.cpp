#include "hyloop/hal/udp_target_driver.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "hyloop/hal/latest_force.hpp"
#include "require.hpp"
#include "wire_counter.hpp"

namespace hyloop::hal {

using detail::bump;
using detail::require;

struct UdpTargetDriver::Counters {
  std::atomic<std::uint64_t> sent{0}, send_failed{0}, received{0}, lost{0}, duplicate{0},
      reordered{0}, rejected_foreign{0}, rejected_malformed{0}, rejected_commands{0},
      round_trips{0}, late{0};
  std::atomic<double> rtt_last{0.0}, rtt_max{0.0}, rtt_sum{0.0};
  static_assert(std::atomic<double>::is_always_lock_free);
};

UdpTargetDriver::Field UdpTargetDriver::field(const PacketCodec& codec, const std::string& name,
                                              const char* what) const {
  if (name.empty()) {
    return {};
  }
  const auto index = codec.find(name);
  if (!index) {
    throw std::invalid_argument(std::string("signals.") + what + " = '" + name +
                                "': no such field in the layout");
  }
  return {*index, true};
}

UdpTargetDriver::UdpTargetDriver(const UdpTargetConfig& config)
    : config_(config),
      command_codec_("command layout", config.command),
      measurement_codec_("measurement layout", config.measurement),
      cmd_position_(field(command_codec_, config.signals.command_position, "command_position")),
      cmd_velocity_(field(command_codec_, config.signals.command_velocity, "command_velocity")),
      meas_position_(
          field(measurement_codec_, config.signals.measured_position, "measured_position")),
      meas_velocity_(
          field(measurement_codec_, config.signals.measured_velocity, "measured_velocity")),
      meas_force_(field(measurement_codec_, config.signals.measured_force, "measured_force")),
      echo_(field(measurement_codec_, config.signals.command_echo, "command_echo")),
      status_(field(measurement_codec_, config.signals.status, "status")),
      peer_(to_sockaddr("peer", config.peer)),
      socket_("local", config.local),
      link_(config.timeout),
      counters_(std::make_unique<Counters>()),
      io_(socket_, {peer_, false, kMaxPacketBytes, &counters_->rejected_foreign,
                    &counters_->rejected_malformed}) {
  require(cmd_position_.present, "signals.command_position (empty)", 0.0,
          "the name of a command field");
  require(meas_position_.present, "signals.measured_position (empty)", 0.0,
          "the name of a measurement field");
  require(command_codec_.sequence_index().has_value(), "command.sequence (empty)", 0.0,
          "the name of a u16/u32/u64 field");
  require(measurement_codec_.sequence_index().has_value(), "measurement.sequence (empty)", 0.0,
          "the name of a u16/u32/u64 field");
  require(config.peer.port != 0, "peer.port", config.peer.port, "1..65535");
  require(std::isfinite(config.period) && config.period > 0.0, "period", config.period,
          "finite and > 0 s");
  require(std::isfinite(config.timeout) && config.timeout >= config.period, "timeout",
          config.timeout, "finite and >= period");
  if (meas_force_.present) {
    force_ = std::make_unique<LatestForce<UdpTargetDriver, &UdpTargetSample::sequence>>(*this);
  }
  io_.start(*this);
}

UdpTargetDriver::~UdpTargetDriver() { io_.stop(); }

ForceSensorDriver& UdpTargetDriver::force_sensor() {
  if (!force_) {
    throw std::logic_error("the UDP target driver has no signals.measured_force field");
  }
  return *force_;
}

DriverStatus UdpTargetDriver::command(const ActuatorCommand& c) noexcept {
  const DriverStatus health_now = health();
  const bool encodable =
      command_codec_.encodable(cmd_position_.index, c.position) &&
      (!cmd_velocity_.present || command_codec_.encodable(cmd_velocity_.index, c.velocity));
  if (check_command(c, config_.limits) != LimitVerdict::kOk || !encodable) {
    bump(counters_->rejected_commands);
    return health_now == DriverStatus::kFault ? DriverStatus::kFault : DriverStatus::kRejected;
  }
  link_.commanded();
  ++command_sequence_;
  pending_.store({c.position, c.velocity, command_sequence_});
  io_.notify();
  return health_now;
}

ActuatorState UdpTargetDriver::state() const noexcept {
  const UdpTargetSample s = sample_.load();
  return {s.position, s.velocity};
}

bool UdpTargetDriver::emergency_stop_input() const noexcept { return link_.device_stop(); }

DriverStatus UdpTargetDriver::health() const noexcept { return link_.health(); }

UdpTargetMetrics UdpTargetDriver::metrics() const noexcept {
  const Counters& c = *counters_;
  constexpr auto r = std::memory_order_relaxed;
  UdpTargetMetrics m;
  m.sent = c.sent.load(r);
  m.send_failed = c.send_failed.load(r);
  m.received = c.received.load(r);
  m.lost = c.lost.load(r);
  m.duplicate = c.duplicate.load(r);
  m.reordered = c.reordered.load(r);
  m.rejected_foreign = c.rejected_foreign.load(r);
  m.rejected_malformed = c.rejected_malformed.load(r);
  m.rejected_commands = c.rejected_commands.load(r);
  m.round_trips = c.round_trips.load(r);
  m.late = c.late.load(r);
  m.round_trip_last = c.rtt_last.load(r);
  m.round_trip_max = c.rtt_max.load(r);
  m.round_trip_mean =
      m.round_trips > 0 ? c.rtt_sum.load(r) / static_cast<double>(m.round_trips) : 0.0;
  return m;
}

bool UdpTargetDriver::wait_for_measurement(double timeout) const {
  return poll_until([this] { return sample_.load().valid; }, timeout);
}

void UdpTargetDriver::before_receive(double /*now*/) noexcept {
  const Pending p = pending_.load();
  if (p.sequence == last_sent_) {
    return;
  }
  last_sent_ = p.sequence;
  std::array<double, kMaxPacketFields> values{};
  for (std::size_t i = 0; i < command_codec_.field_count(); ++i) {
    values[i] = command_codec_.field(i).value;
  }
  values[cmd_position_.index] = p.position;
  if (cmd_velocity_.present) {
    values[cmd_velocity_.index] = p.velocity;
  }
  std::array<std::uint8_t, kMaxPacketBytes> frame{};
  const std::size_t n = command_codec_.encode(values, p.sequence, frame);
  send_stamps_[p.sequence % send_stamps_.size()] = {p.sequence, monotonic_seconds()};
  if (n > 0 && socket_.send_to({frame.data(), n}, peer_)) {
    bump(counters_->sent);
  } else {
    bump(counters_->send_failed);
  }
}

void UdpTargetDriver::on_datagram(std::span<const std::uint8_t> datagram,
                                  const sockaddr_in& /*from*/, double now) noexcept {
  std::array<double, kMaxPacketFields> values{};
  std::uint64_t sequence = 0;
  if (measurement_codec_.decode(datagram, values, sequence) != DecodeResult::kOk) {
    bump(counters_->rejected_malformed);
    return;
  }
  if (have_sequence_) {
    const std::int64_t delta =
        sequence_delta(last_sequence_, sequence, measurement_codec_.sequence_bits());
    if (delta == 0) {
      bump(counters_->duplicate);
      return;
    }
    if (delta < 0) {
      bump(counters_->reordered);
      return;
    }
    bump(counters_->lost, static_cast<std::uint64_t>(delta - 1));
  }
  have_sequence_ = true;
  last_sequence_ = sequence;
  UdpTargetSample s;
  s.position = values[meas_position_.index];
  s.velocity = meas_velocity_.present ? values[meas_velocity_.index] : 0.0;
  s.force = meas_force_.present ? values[meas_force_.index] : 0.0;
  s.status = status_.present ? values[status_.index] : 0.0;
  s.sequence = sequence;
  s.echo = echo_.present ? static_cast<std::uint64_t>(values[echo_.index]) : 0;
  s.received_at = now;
  s.valid = true;
  sample_.store(s);
  link_.heard(now);
  if (s.status != 0.0) {
    link_.device_stopped();
  }
  bump(counters_->received);
  if (echo_.present) {
    note_round_trip(s.echo, now);
  }
}

void UdpTargetDriver::note_round_trip(std::uint64_t echo, double now) noexcept {
  const unsigned bits = command_codec_.sequence_bits();
  if (echo == 0 || echo == last_echo_) {
    return;  // no command applied yet, or the same one as in the last step (no new round trip)
  }
  last_echo_ = echo;
  const SendStamp& stamp = send_stamps_[last_sent_ % send_stamps_.size()];
  // Find the stamp of the echoed command among the last 256 sent.
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t back = (stamp.sequence - echo) & mask;
  if (back >= send_stamps_.size() || stamp.sequence < back) {
    return;
  }
  const SendStamp& sent = send_stamps_[(stamp.sequence - back) % send_stamps_.size()];
  if (sent.sequence != stamp.sequence - back || sent.at < 0.0) {
    return;
  }
  const double rtt = now - sent.at;
  Counters& c = *counters_;
  c.rtt_last.store(rtt, std::memory_order_relaxed);
  c.rtt_max.store(std::max(rtt, c.rtt_max.load(std::memory_order_relaxed)),
                  std::memory_order_relaxed);
  c.rtt_sum.store(c.rtt_sum.load(std::memory_order_relaxed) + rtt, std::memory_order_relaxed);
  bump(c.round_trips);
  if (rtt > config_.period) {
    bump(c.late);
  }
}

}  // namespace hyloop::hal
