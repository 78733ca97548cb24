#pragma once
// The other end of UdpTargetDriver, shipped as product (as libfranka ships its mock server): a
// real-time target on a real UDP socket running the servo-hydraulic actuator emulator
// (servo_actuator_emulator.hpp), with the wire's impairments and the target's own reflex.
//
// Pacing (period T = plant.step): the target takes plant step j when command j arrives (its
// sequence field; host and target count from 1), so a run with every datagram on time steps
// the plant exactly as the in-process emulator does under the same commands. A command late by
// more than T/2 (nothing for 1.5·T) lets the target's own clock take step j with the held
// command; the late command then only replaces the held one. A command ahead of j first takes
// the skipped steps with the held command (at most 16). Each step sends one measurement
// (sequence = the target's own count, echo = the command sequence applied, status 0).
//
// Before the first command the target streams its state every T at rest (the plant does not
// move). The reflex: once commands flow, none for `command_timeout` stops the target: it holds
// the position it is at (the plant comes to rest there), reports status 1 and ignores commands
// until it is restarted (latched, as a real controller needs re-enabling). Commands outside
// its own limits, from another address, of the wrong size or not finite are dropped and
// counted; the held command stays.
//
// The wire's impairments are wire_impairment.hpp's (a reordered datagram is held back 1.5·T).
// One I/O thread; stats() and plant() are wait-free from any thread.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/udp_packet.hpp"
#include "hyloop/hal/udp_socket.hpp"
#include "hyloop/hal/udp_target_driver.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::hal {

struct UdpTargetEmulatorConfig {
  UdpEndpoint local{"127.0.0.1", 0};  ///< bound
  UdpEndpoint host{"127.0.0.1", 0};   ///< the only source of commands; measurements go here
  PacketLayout command;               ///< as the driver's
  PacketLayout measurement;           ///< as the driver's
  UdpSignalMap signals;               ///< as the driver's (echo and status are filled if named)
  ServoActuatorConfig plant;          ///< plant.step is the period T
  /// When set, the axis instead of the servo `plant` (whose step stays the device's cycle).
  std::shared_ptr<AxisPlant> axis_plant;
  double initial_position = 0.0;  ///< m
  double command_timeout = 0.05;  ///< s; ≥ 2·T
  ActuatorLimits limits;          ///< the target's own stroke and speed
  WireImpairments impairments;
};

struct UdpTargetEmulatorStats {
  std::uint64_t steps = 0;           ///< plant steps taken
  std::uint64_t commands = 0;        ///< commands accepted
  std::uint64_t fallback_steps = 0;  ///< steps taken with the held command (late or lost)
  std::uint64_t late_commands = 0;   ///< commands for a step already taken
  std::uint64_t sent = 0;
  std::uint64_t dropped_out = 0;  ///< outgoing datagrams the impairment lost
  std::uint64_t dropped_in = 0;   ///< incoming commands the impairment lost
  std::uint64_t rejected_foreign = 0;
  std::uint64_t rejected_malformed = 0;
  std::uint64_t rejected_limits = 0;
  /// Σ over running steps of (step − sequence of the command it applied): 0 when every command
  /// drove its own step.
  std::uint64_t command_lag_steps = 0;
  bool stopped = false;  ///< the reflex fired
};

class UdpTargetEmulator final : private IoHandler {
 public:
  /// @throws std::invalid_argument naming the field; std::system_error when binding fails.
  explicit UdpTargetEmulator(const UdpTargetEmulatorConfig& config);
  ~UdpTargetEmulator() override;
  UdpTargetEmulator(const UdpTargetEmulator&) = delete;
  UdpTargetEmulator& operator=(const UdpTargetEmulator&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return socket_.port(); }
  [[nodiscard]] UdpTargetEmulatorStats stats() const noexcept;
  /// The plant's newest step (true state, not what went on the wire). Wait-free.
  [[nodiscard]] ServoMeasurement plant() const noexcept { return plant_view_.load(); }
  /// Stops sending (a return link that died); the plant keeps running. Any thread.
  void mute(bool muted) noexcept { muted_.store(muted); }

 private:
  struct Counters;

  // The I/O thread (paced_io_loop.hpp): steps on commands, falls back on its own clock.
  [[nodiscard]] double next_wake(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  void after_receive(double now) noexcept override;
  void on_command(std::uint64_t raw_sequence, double position, double velocity,
                  double now) noexcept;
  void step(std::uint64_t echo, bool fallback, double now) noexcept;
  void send_measurement(std::uint64_t echo, double now) noexcept;
  void tick(double now) noexcept;

  UdpTargetEmulatorConfig config_;
  PacketCodec command_codec_;
  PacketCodec measurement_codec_;
  std::size_t cmd_position_ = 0;
  std::optional<std::size_t> cmd_velocity_, meas_position_, meas_velocity_, meas_force_, echo_,
      status_;
  sockaddr_in host_{};
  UdpSocket socket_;
  std::shared_ptr<AxisPlant> plant_;  ///< config_.axis_plant, or a servo of config_.plant
  SeqLock<ServoMeasurement> plant_view_;
  std::unique_ptr<Counters> counters_;
  std::atomic<bool> muted_{false};

  // I/O thread only.
  enum class Mode : std::uint8_t { kIdle, kRunning, kStopped };
  Mode mode_ = Mode::kIdle;
  double period_;
  double held_ = 0.0;
  std::uint64_t held_sequence_ = 0;
  std::uint64_t next_step_ = 1;  ///< the command sequence the next plant step belongs to
  std::uint64_t last_raw_ = 0;
  std::uint64_t measurement_sequence_ = 0;
  double last_step_at_ = 0.0;
  double last_command_at_ = 0.0;
  WireImpairer wire_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
