#pragma once
// The dynamics + compensation service: hosts experiment::DynamicsPart (SitsDynamics or
// RhtDynamics, the same blocks the in-process runners step). For each measurement frame of cycle k
// it computes step 4 of the cycle contract and sends the command frame of cycle k+1 (its header
// carries the rig's sample time as origin, so the actuator measures the loop latency), and the
// recorder's columns of cycle k as telemetry. Lockstep: cycle k starts when sample k is there. Real
// time: each sample is used as it arrives; stale or out-of-order samples are dropped and counted by
// the validator. A stop verdict (not finite, displacement limit) stops sending commands: the
// actuator's watchdog then ramps the rig to rest.
//
// Metrics: the experiment gauges of docs/metrics.md, set every cycle from the values the part
// computes (looked up by column name at configure: the kind's SignalRoles and GaugeSpecs,
// kind.hpp), plus e_R of the last completed vibration
// cycle (core::CycleMetrics), Mercan's tracking indicator (core::TrackingIndicator) on the
// command issued for cycle k and the position measured in cycle k, and the delay estimated by
// cross-correlation of those two signals (core::estimate_delay), which the loop hands to the
// exporter thread through a lock-free ring: the estimate runs there, never in the cycle.

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "hyloop/core/cycle_metrics.hpp"
#include "hyloop/core/tracking_metrics.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/runtime/loop_component.hpp"

namespace hyloop::services {

class DynamicsComponent final : public runtime::LoopComponent {
 public:
  DynamicsComponent();
  ~DynamicsComponent() override;
  DynamicsComponent(const DynamicsComponent&) = delete;
  DynamicsComponent& operator=(const DynamicsComponent&) = delete;

  /// Pairs (command issued for cycle k, position measured in cycle k) → delay estimate. push()
  /// on the loop thread, collect() on the exporter thread (under the registry's lock).
  class DelayTracker {
   public:
    /// Sizes the window for step `step` (s) and empties it; off the loop.
    void configure(double step);
    bool push(double command, double measured) noexcept { return ring_.push({command, measured}); }
    /// Drains the ring; every quarter window re-estimates and sets `gauge` (s).
    void collect(const runtime::GaugeSlot& gauge);

   private:
    runtime::SpscRing<std::pair<double, double>, 8192> ring_;
    double step_ = 0.0;
    std::size_t window_ = 0;
    int max_lag_ = 0;
    std::vector<double> command_, measured_;     // circular window
    std::vector<double> ordered_c_, ordered_m_;  // oldest → newest, for the estimate
    std::size_t next_ = 0, filled_ = 0, since_ = 0;
  };

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  /// Declares the experiment gauges (the tracking ones, then every kind's own).
  void declare_gauges();
  /// The column of `name` in the part's values, or −1.
  [[nodiscard]] int column(const std::string& name) const noexcept;
  /// column(role) when the role's unit is `unit`, else −1.
  [[nodiscard]] int column_in(const std::string& role, std::string_view unit) const;
  /// Points the gauges at the configured kind's columns.
  void resolve_columns(const experiment::Kind& kind);
  /// Sets the experiment gauges from the values of cycle k (loop thread).
  void publish(std::uint64_t k, double measured_position) noexcept;

  // Metrics.
  std::size_t input_;
  struct Gauges {
    runtime::GaugeSlot x, v, x_ideal, v_ideal, f_meas, error, ratio, ti, delay;
  } gauges_;
  /// The tracking values of the configured kind (experiment::SignalRoles), −1: none or in
  /// another unit than the gauge's.
  struct Columns {
    int x = -1, v = -1, x_ideal = -1, v_ideal = -1, f_meas = -1, energy = -1, energy_ideal = -1,
        f_ideal = -1, f_input = -1;
  } columns_;
  /// The kinds' own gauges (experiment::GaugeSpec): every registered kind's, declared at
  /// construction; each reads `column` of the configured kind (−1: NaN) times `scale`.
  struct KindGauge {
    std::string metric;
    runtime::MetricLabels labels;
    runtime::GaugeSlot slot;
    int column = -1;
    double scale = 1.0;
  };
  std::vector<KindGauge> kind_gauges_;
  std::optional<core::CycleMetrics> cycles_;
  std::size_t cycles_seen_ = 0;
  core::TrackingIndicator indicator_;
  std::shared_ptr<DelayTracker> delay_ = std::make_shared<DelayTracker>();
  runtime::MetricsRegistry::CollectorId delay_collector_ = 0;
  double applied_ = 0.0;       // the command of this cycle as the actuator holds it
  double next_command_ = 0.0;  // issued for the next cycle
  double previous_x_ = 0.0, previous_x_ideal_ = 0.0;
  bool have_previous_ = false;

  experiment::LoopPlan plan_;
  std::unique_ptr<experiment::DynamicsPart> dynamics_;
  std::unique_ptr<transport::LoopInput<v2::Frame>> samples_;
  std::unique_ptr<transport::LoopOutput> commands_;
  v2::Frame command_;
  std::vector<double> values_;
  std::atomic<bool> estop_{false};
};

}  // namespace hyloop::services
