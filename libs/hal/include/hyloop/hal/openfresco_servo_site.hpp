#pragma once
// The servo-hydraulic emulator (hal/servo_actuator_emulator.hpp) as an OpenFresco site's rig,
// behind the actuator safety layer (hal/actuator_safety.hpp); and ServoSite, a SiteServer
// running it on its own thread (the test-facing pair; the hyloop-site service comes later).
//
// One DOF, SI units: trial disp (m) is the actuator's set point, trial vel (m/s) its velocity
// feed-forward (0 when not sent); trial accel and time are accepted and recorded only.
// Per trial, `steps_per_trial` times: ActuatorSafety::filter(command) → emulator step(output)
// (the OpenSees step is the recorded cycle; the rig runs lockstep with the peer, one trial =
// steps_per_trial·Δt of rig time). Daq: disp = the measured d_m (m), vel (m/s), force = the
// specimen's k·x + c·ẋ (N), time = the rig's time at the end of the last step (s).
// A session is armed bumpless at the rig's measured position; whatever ends it, the rig is
// brought to rest: `rest_steps` steps of the safety layer with no command (hold, then the
// watchdog's ramp), so the actuator stops where it is.
//
// Threads: the SiteRig methods run on the server's thread (trial/measure/commit lock-free);
// records() and reports() copy (not RT) and may be called from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/openfresco_site.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"

namespace hyloop::hal::openfresco {

struct ServoRigConfig {
  hal::ServoActuatorConfig servo;        ///< Δt = servo.step
  hal::SafetyConfig safety;              ///< safety.step must equal servo.step
  std::int32_t steps_per_trial = 1;      ///< ≥ 1
  std::int32_t rest_steps = 50;          ///< ≥ 1, steps run at the end of a session
  std::size_t record_capacity = 100000;  ///< rows kept (allocated at construction)
};

/// The rig's signal layout: 1 DOF, ctrl disp/vel/accel/time, driven by disp, daq
/// disp/vel/force/time.
[[nodiscard]] RigSignalLayout servo_rig_layout();
/// k and c of the specimen as the stiffness and damping replies, mass 0.
[[nodiscard]] SiteMatrices servo_rig_matrices(const hal::ServoActuatorConfig& servo);

/// One trial as the rig saw it.
struct TrialRecord {
  std::uint64_t session = 0;      ///< 0-based session index
  std::uint64_t trial = 0;        ///< 1-based trial index in the session
  double command = 0.0;           ///< trial disp, m
  double command_velocity = 0.0;  ///< trial vel, m/s (0 when not sent)
  double output = 0.0;            ///< what the safety layer let through, m
  hal::SafetyEvent event = hal::SafetyEvent::kNone;
  hal::ServoMeasurement measurement;  ///< at the end of the trial's last step
};

class ServoRig final : public SiteRig {
 public:
  /// @throws std::invalid_argument naming the field out of range.
  explicit ServoRig(const ServoRigConfig& config);

  void begin_session(const SetupId& setup) override;
  hal::DriverStatus trial(const TrialView& trial) noexcept override;
  void measure(const DaqView& daq) noexcept override;
  void commit() noexcept override;
  void end_session(const SessionReport& report) override;

  [[nodiscard]] std::vector<TrialRecord> records() const;
  [[nodiscard]] std::vector<SessionReport> reports() const;
  /// Waits until `count` sessions have ended; false on timeout.
  bool wait_for_sessions(std::size_t count, std::chrono::milliseconds timeout) const;
  /// The safety layer is at rest (read after a session ended).
  [[nodiscard]] bool at_rest() const;
  [[nodiscard]] std::uint64_t commits() const noexcept { return commits_.load(); }
  [[nodiscard]] const ServoRigConfig& config() const noexcept { return config_; }
  /// The last trial of the current (or last) session. Server thread, or after the session.
  [[nodiscard]] const TrialRecord& last_trial() const noexcept { return last_; }
  /// The rig's latest measurement. Server thread, or after the session.
  [[nodiscard]] const hal::ServoMeasurement& measurement() const noexcept {
    return servo_.measurement();
  }
  /// Latches the safety layer's e-stop: the next trial (or the end of the session) ramps the
  /// rig to rest and the session ends as a rig fault. Any thread, async-signal-safe.
  void emergency_stop() noexcept { safety_.emergency_stop(); }
  /// Trials not recorded because record_capacity was reached.
  [[nodiscard]] std::uint64_t dropped_records() const noexcept { return dropped_records_.load(); }

 private:
  ServoRigConfig config_;
  hal::ServoActuatorEmulator servo_;
  hal::ActuatorSafety safety_;
  mutable std::mutex mutex_;  ///< guards reports_ and at_rest_
  mutable std::condition_variable ended_;
  /// Sized at construction; the server thread writes row count_, then publishes count_ + 1.
  std::vector<TrialRecord> records_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::uint64_t> dropped_records_{0};
  std::atomic<std::uint64_t> commits_{0};
  std::vector<SessionReport> reports_;
  TrialRecord last_;           ///< server thread only
  std::uint64_t session_ = 0;  ///< server thread only
  std::uint64_t trial_ = 0;    ///< server thread only
  bool at_rest_ = true;
};

/// A SiteServer with a ServoRig, serving on its own thread from construction to destruction.
class ServoSite {
 public:
  ServoSite(SiteServerConfig server, const ServoRigConfig& rig);
  ~ServoSite();
  ServoSite(const ServoSite&) = delete;
  ServoSite& operator=(const ServoSite&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return server_.port(); }
  [[nodiscard]] ServoRig& rig() noexcept { return rig_; }
  [[nodiscard]] const ServoRig& rig() const noexcept { return rig_; }
  [[nodiscard]] SiteServer& server() noexcept { return server_; }
  [[nodiscard]] const SiteServer& server() const noexcept { return server_; }

 private:
  ServoRig rig_;
  SiteServer server_;
  std::thread thread_;
};

}  // namespace hyloop::hal::openfresco
