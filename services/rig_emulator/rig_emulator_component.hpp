#pragma once
// The rig emulator service: stands where the robot controller, the servo-hydraulic controller
// and the force sensor's DAQ stand (DESIGN.md §1). It receives the applied position command of
// cycle k from the actuator service, advances the emulated rig one step (experiment::RigPart:
// the SITS robot, contact and sensor, or the RHT servo and specimen — the same physics as the
// in-process runners) and sends the measurements of cycle k to the sensor service. Lockstep: cycle
// k starts when command k is there. Real time: a periodic timer at T; the newest command is
// applied, a command that did not arrive by the tick is a missed deadline (the rig holds the last
// one and counts it). Telemetry: the rig's truth columns (e.g. held command and contact force) for
// the recorder.
//
// A silent actuator (real time): the rig stands for a hardware controller with its own command
// watchdog. Once the loop has started, `silence_limit()` ticks in a row without a new command
// (the longer of 2·W + 5 control periods, W = safety.watchdog_cycles, which is more than the
// actuator takes to trip its own watchdog and start ramping when its input stops, and
// kActuatorSilence, so that a loaded machine's scheduling stall is not taken for a dead
// actuator) mean the actuator is gone (killed, stopped, deactivated): the rig latches a hold
// of its last command for the rest of the run
// (later commands are ignored) and sends the telemetry event LOOP_EVENT_FAULT "rig: ..." once,
// which makes the coordinator fail the run with that reason.

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/runtime/loop_component.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

/// Real time: the shortest silence of the actuator the rig takes for its loss.
inline constexpr double kActuatorSilence = 0.5;  // s

class RigEmulatorComponent final : public runtime::LoopComponent {
 public:
  RigEmulatorComponent();

  /// Commands that missed their tick (real time) so far.
  [[nodiscard]] std::uint64_t late_commands() const noexcept { return late_.load(); }
  /// Real time: ticks without a command after which the actuator counts as silent.
  [[nodiscard]] std::uint64_t silence_limit() const noexcept { return silence_limit_; }
  /// True once the rig latched its hold on a silent actuator (this run).
  [[nodiscard]] bool actuator_silent() const noexcept { return silent_.load(); }
  /// Pressing the emulated robot's hardware e-stop button (fault injection).
  void press_hardware_estop() noexcept { hardware_estop_.store(true); }

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  /// Holds every axis's command of `command` (and its send time).
  void hold(const v2::Frame& command) noexcept;
  bool cycle(std::uint64_t k, const v2::Frame* command, std::int64_t tick_ns,
             std::string_view fault = {}) noexcept;
  /// Declares every registered kind's position and command gauges.
  void declare_quantity_gauges();
  /// Points position_ and command_ at the configured kind's gauges; every one reads NaN.
  void show_command_quantity(const experiment::CommandGauges& spec);

  // Metrics: the input actuator_to_rig; the measured and the applied (held) position; the
  // hardware e-stop input.
  std::size_t input_;
  /// The measured position and applied command gauges of every registered kind
  /// (experiment::CommandGauges), declared at construction; the configured kind's are set
  /// (position_, command_; detached: none), the others read NaN.
  struct QuantityGauge {
    std::string metric;
    runtime::GaugeSlot slot;
  };
  std::vector<QuantityGauge> quantity_gauges_;
  runtime::GaugeSlot position_;
  runtime::GaugeSlot command_;
  double command_scale_ = 1.0;  // loop unit → the metrics' unit
  runtime::GaugeSlot estop_;
  std::int64_t held_send_ns_ = 0;  // send time of the command held

  experiment::LoopPlan plan_;
  std::unique_ptr<experiment::RigPart> rig_;
  std::array<double, hal::kMaxSignals> measured_{};        ///< the plan's measurement layout
  std::array<double, experiment::kMaxTruth + 1> truth_{};  ///< truth values, late commands
  std::size_t measurement_count_ = 0;
  std::array<hal::ActuatorCommand, hal::kMaxAxes> held_{};  // every axis's, axis 0 first
  std::size_t axes_ = 1;
  std::unique_ptr<transport::LoopInput<v2::Frame>> commands_;
  std::unique_ptr<transport::LoopOutput> samples_;
  v2::Frame sample_;
  std::atomic<std::uint64_t> late_{0};
  std::size_t truth_count_ = 0;
  std::atomic<bool> hardware_estop_{false};
  std::uint64_t silence_limit_ = 0;
  std::string silence_event_;  // made at configure: no allocation on the loop
  std::atomic<bool> silent_{false};
  bool driver_fault_sent_ = false;  ///< the rig part's fault() went out as a FAULT event
};

}  // namespace hyloop::services
