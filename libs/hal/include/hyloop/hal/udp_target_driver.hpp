#pragma once
// A real-time target (Speedgoat/xPC, dSPACE, LabVIEW RT, a PLC) that runs the actuator's servo
// loop and exchanges fixed binary packets over UDP (udp_packet.hpp), behind ActuatorDriver and,
// when the measurement carries a force, ForceSensorDriver.
//
// Per loop cycle, command() checks the set point (check_command against the limits, and that
// every value fits its wire type), hands it to the I/O thread through a seqlock and wakes it;
// the I/O thread encodes it with the next command sequence number and sends one datagram to
// the peer. The target answers with measurement datagrams; the I/O thread accepts one only if
//   - it comes from the configured peer address and port (else: rejected_foreign),
//   - it is exactly the layout's size (else: rejected_malformed; oversized ones included),
//   - every float field is finite (else: rejected_malformed),
//   - its sequence is newer than the last accepted (else: duplicate or reordered, dropped);
//     a gap of g counts g − 1 lost,
// and publishes it through a seqlock that state() and read() copy. With an echo field (the
// command sequence the target applied in that step) the round trip command → measurement is
// measured; one longer than `period` counts as late.
//
// Faults: once commands flow, a peer silent for longer than `timeout` latches a fault, and so
// does a non-zero status field: command() and read() then return kFault (the rig part's fault(),
// so the supervisor stops the run and ramps the actuator to rest through the safety layer,
// whose commands are still sent), and emergency_stop_input() reports the status fault.
//
// RT-safety: command(), state(), read(), emergency_stop_input(), metrics() and latest() take no
// lock, allocate nothing and throw nothing (seqlocks, relaxed atomics, one eventfd write).
// Binds only `local`; the constructor throws naming the field when the configuration is invalid.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/link_watch.hpp"
#include "hyloop/hal/paced_io_loop.hpp"
#include "hyloop/hal/seqlock.hpp"
#include "hyloop/hal/udp_packet.hpp"
#include "hyloop/hal/udp_socket.hpp"

namespace hyloop::hal {

/// Which packet fields carry the loop's signals ("" = not carried).
struct UdpSignalMap {
  std::string command_position = "position";   ///< set point, m (after scale/offset)
  std::string command_velocity;                ///< velocity feed-forward, m/s
  std::string measured_position = "position";  ///< m
  std::string measured_velocity;               ///< m/s
  std::string measured_force;                  ///< N
  std::string command_echo;  ///< the command sequence the target applied in this step
  std::string status;        ///< 0 = running; anything else = the target's fault
};

struct UdpTargetConfig {
  UdpEndpoint local{"127.0.0.1", 0};  ///< bound; the only address we listen on
  UdpEndpoint peer{"127.0.0.1", 0};   ///< the target: commands go here, only it is heard
  PacketLayout command;               ///< host → target, with a sequence field
  PacketLayout measurement;           ///< target → host, with a sequence field
  UdpSignalMap signals;
  double period = 0.001;  ///< s, the loop period: a round trip longer is late
  double timeout = 0.05;  ///< s without a measurement (once commands flow) → fault
  ActuatorLimits limits;
};

struct UdpTargetMetrics {
  std::uint64_t sent = 0;
  std::uint64_t send_failed = 0;
  std::uint64_t received = 0;  ///< accepted measurements
  std::uint64_t lost = 0;      ///< sequence gaps
  std::uint64_t duplicate = 0;
  std::uint64_t reordered = 0;
  std::uint64_t rejected_foreign = 0;
  std::uint64_t rejected_malformed = 0;
  std::uint64_t rejected_commands = 0;  ///< refused by command() (limits, not encodable)
  std::uint64_t round_trips = 0;
  std::uint64_t late = 0;
  double round_trip_last = 0.0;  ///< s
  double round_trip_max = 0.0;   ///< s
  double round_trip_mean = 0.0;  ///< s
};

/// The newest accepted measurement.
struct UdpTargetSample {
  double position = 0.0;
  double velocity = 0.0;
  double force = 0.0;
  double status = 0.0;
  std::uint64_t sequence = 0;
  std::uint64_t echo = 0;
  double received_at = 0.0;  ///< monotonic_seconds()
  bool valid = false;
};

class UdpTargetDriver final : public ActuatorDriver, private IoHandler {
 public:
  explicit UdpTargetDriver(const UdpTargetConfig& config);
  ~UdpTargetDriver() override;
  UdpTargetDriver(const UdpTargetDriver&) = delete;
  UdpTargetDriver& operator=(const UdpTargetDriver&) = delete;

  DriverStatus command(const ActuatorCommand& command) noexcept override;
  [[nodiscard]] ActuatorState state() const noexcept override;
  [[nodiscard]] bool emergency_stop_input() const noexcept override;

  /// The force channel. @throws std::logic_error when no measured_force field is mapped.
  ForceSensorDriver& force_sensor();

  /// kFault once the fault is latched (silent peer or status), else kOk. RT-safe.
  [[nodiscard]] DriverStatus health() const noexcept;
  [[nodiscard]] UdpTargetMetrics metrics() const noexcept;
  [[nodiscard]] UdpTargetSample latest() const noexcept { return sample_.load(); }
  [[nodiscard]] std::uint16_t local_port() const noexcept { return socket_.port(); }
  [[nodiscard]] std::uint64_t commands_sent_sequence() const noexcept { return command_sequence_; }
  /// Waits (not RT) until a measurement arrived or `timeout` s passed: before arming.
  bool wait_for_measurement(double timeout) const;

 private:
  struct Pending {
    double position = 0.0;
    double velocity = 0.0;
    std::uint64_t sequence = 0;
  };
  struct Field {
    std::size_t index = 0;
    bool present = false;
  };
  struct Counters;

  // The I/O thread (paced_io_loop.hpp): sends each new command, accepts measurements.
  [[nodiscard]] double next_wake(double now) noexcept override { return now + 0.1; }
  void before_receive(double now) noexcept override;
  void on_datagram(std::span<const std::uint8_t> datagram, const sockaddr_in& from,
                   double now) noexcept override;
  void note_round_trip(std::uint64_t echo, double now) noexcept;
  [[nodiscard]] Field field(const PacketCodec& codec, const std::string& name,
                            const char* what) const;

  UdpTargetConfig config_;
  PacketCodec command_codec_;
  PacketCodec measurement_codec_;
  Field cmd_position_, cmd_velocity_, meas_position_, meas_velocity_, meas_force_, echo_, status_;
  sockaddr_in peer_{};
  UdpSocket socket_;

  // Loop thread → I/O thread.
  SeqLock<Pending> pending_;
  std::uint64_t command_sequence_ = 0;  ///< loop thread only
  // I/O thread → loop thread.
  SeqLock<UdpTargetSample> sample_;
  LinkWatch link_;
  std::unique_ptr<Counters> counters_;
  // I/O thread only.
  std::uint64_t last_sent_ = 0;
  bool have_sequence_ = false;
  std::uint64_t last_sequence_ = 0;
  std::uint64_t last_echo_ = 0;
  struct SendStamp {
    std::uint64_t sequence = 0;
    double at = -1.0;
  };
  std::array<SendStamp, 256> send_stamps_{};
  std::unique_ptr<ForceSensorDriver> force_;
  PacedIoLoop io_;
};

}  // namespace hyloop::hal
