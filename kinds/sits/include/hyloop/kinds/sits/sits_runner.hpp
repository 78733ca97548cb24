#pragma once
// The SITS experiment: its loop parts (sits_kind.cpp: the rig emulator behind the hal driver
// interfaces; the SIT model, its ideal twin, the tracking differentiator and the compensator)
// stepped by the generic LoopChain (loop_experiment.hpp), and its recorder (samples, per-cycle
// metrics, summary). In cycle k:
//   1. the actuator holds X_c[k]; 2. the rig advances one step and measures X_R[k], F[k];
//   3. the sensor delivers F_meas[k] = F[k − d];
//   4. F′[k] = F_meas[k] + K_h[k]·v̂_R[k] (+ K_x[k]·X_R[k]); the target and the twin advance one
//   step;
//   5. X_c[k+1] = (x[k+1], v[k+1]) if (k+1) mod h = 0, else X_c[k].
// step() is RT-safe: everything is allocated by the constructor.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/core/cycle_metrics.hpp"
#include "hyloop/core/force_conditioner.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/hal/wire_impairment.hpp"
#include "hyloop/kinds/sits/sits_dynamics.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {

/// The SITS loop plan and parts (sits_kind.cpp), for the services and the runner.
LoopPlan sits_loop_plan(const SitsScenario& s);
/// The rig part rig.driver selects: the emulated robot and sensor (type emulator) or the device
/// on the wire (rig_driver.hpp), which must measure the force.
std::unique_ptr<RigPart> make_sits_rig_part(const SitsScenario& s);
/// The emulated rig whatever rig.driver says: the in-process runner's (it never binds a port).
std::unique_ptr<RigPart> make_sits_emulated_rig_part(const SitsScenario& s);
std::unique_ptr<DynamicsPart> make_sits_dynamics_part(const SitsScenario& s);
/// The device rig.driver names, emulated on its socket (hyloop up --emulate-wire): the SITS rig
/// (robot, contact, force sensor) behind a udp target at the scenario's step, or behind an egm
/// robot or rsi controller at its own cycle with the same sensor delay in seconds.
/// @throws ScenarioError naming the field.
std::unique_ptr<WireEmulator> make_sits_wire_emulator(const SitsScenario& s,
                                                      const hal::WireImpairments& impairments);

class SitsRunner final : public Experiment {
 public:
  /// Keeps every outputs.decimation-th row in memory when outputs.samples is on.
  explicit SitsRunner(const SitsScenario& scenario);
  /// The streamed recorder (the coordinator's): samples.csv and cycles.csv written as rows
  /// arrive (stream_tables), nothing kept that grows with the run's length.
  SitsRunner(const SitsScenario& scenario, SampleTable::Streamed);
  // The chain records into this runner: it stays where it was built.
  SitsRunner(const SitsRunner&) = delete;
  SitsRunner& operator=(const SitsRunner&) = delete;

  /// Runs cycle k. Returns false when the run is over (finished or stopped). RT-safe.
  bool step() noexcept override { return chain_.step(*this); }
  /// Records cycle `cycle()` computed elsewhere (the services of a distributed run): the same
  /// recording step() does. RT-safe.
  bool record_cycle(std::span<const double> row) noexcept override;
  void record_stop(std::string_view reason) noexcept override;

  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return total_steps_; }
  [[nodiscard]] double step_size() const noexcept override { return step_; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  [[nodiscard]] std::string name() const override { return scenario_.name; }
  [[nodiscard]] std::string kind() const override { return "sits"; }
  /// Diverged, energy ratio, growth rate, window metrics (DESIGN §7), K_h range, delays, the
  /// stability guard.
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return to_yaml(scenario_); }
  /// cycles.csv: the per-cycle metrics.
  void write_extra_files(const std::filesystem::path& dir) const override;
  void stream_tables(const std::filesystem::path& dir) override;
  [[nodiscard]] std::string progress_mode() const override { return scenario_.outputs.progress; }
  [[nodiscard]] std::string output_format() const override { return scenario_.outputs.format; }

  [[nodiscard]] bool finished() const noexcept { return cycle_ >= total_steps_ || stopped(); }
  [[nodiscard]] bool stopped() const noexcept { return stop_reason_ != StopReason::kNone; }
  [[nodiscard]] StopReason stop_reason() const noexcept { return stop_reason_; }
  [[nodiscard]] const SampleRow& last_row() const noexcept { return row_; }
  [[nodiscard]] const core::CycleMetrics& metrics() const noexcept { return metrics_; }
  [[nodiscard]] const SitsScenario& scenario() const noexcept { return scenario_; }
  [[nodiscard]] double k_h_min() const noexcept { return k_h_min_; }
  [[nodiscard]] double k_h_max() const noexcept { return k_h_max_; }
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept {
    return chain_.rig().rejected_commands();
  }

 private:
  /// cycles.csv as the streamed recorder's cycles end.
  class CycleCsv final : public core::CycleSink {
   public:
    void on_cycle(const core::CycleRecord& c) noexcept override;
    CsvStream csv;
  };
  SitsRunner(const SitsScenario& scenario, bool streamed);

  SitsScenario scenario_;
  double step_;
  std::int64_t total_steps_;
  mutable CycleCsv cycle_csv_;  // finished by the const write_extra_files
  core::CycleMetrics metrics_;
  SampleTable samples_;
  LoopChain chain_;
  std::int64_t decimation_;
  std::int64_t cycle_ = 0;
  SampleRow row_{};
  StopReason stop_reason_ = StopReason::kNone;
  double k_h_min_;
  double k_h_max_;
  /// The dynamics' stability guard replayed from the rows (the summary's figures, in process as
  /// in a distributed run; with guard.enabled false, when it would have tripped).
  core::EnergyGuard guard_;
};

}  // namespace hyloop::experiment
