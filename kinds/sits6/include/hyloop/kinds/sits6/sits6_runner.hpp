#pragma once
// The SITS6 experiment: its loop parts (sits6_kind.cpp: hal::Sits6RigEmulator; Sits6Dynamics)
// stepped by the generic LoopChain, and its recorder: samples, per-axis cycle metrics
// (core::CycleMetrics on each of the six axes, fed as the 1-D SitsRunner feeds its own: v_i,
// v_i,ideal, the body's energy and the twin's, e_F = E_i − F′_i, e_V = v_i − v_i,ideal; on a
// rotational axis v is ω_i in rad/s and E, F′ are moments in N·m), the summary. The summary has
// the x axis's figures under the 1-D summary's names (energy_ratio, amplitude_growth_rate_per_s,
// cycles, metrics.e_F_peak_N, e_V_peak_mps, e_R, k_h, ...) and a block per axis under "axes"
// (a rotational axis's peaks as e_F_peak_N_m and e_V_peak_rad_s). cycles.csv holds x's cycles
// in the 1-D form (kCyclesHeader), cycles_axes.csv every axis's, the axis (0–5: x, y, z, rx, ry,
// rz) first. In cycle k:
//   1. the actuator holds X_c[k] (6 axes); 2. the rig advances one step and measures X_R[k],
//   W[k] (delayed, noisy); 3. the dynamics computes F′[k] per axis and advances the body and its
//   twin (sits6_dynamics.hpp); 4. X_c[k+1] = the contact frame's (X[k+1], Ẋ[k+1]) every h steps.
// step() is RT-safe: everything is allocated by the constructor.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/core/cycle_metrics.hpp"
#include "hyloop/core/energy_guard.hpp"
#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/kinds/sits6/sits6_dynamics.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"

namespace hyloop::experiment {

/// The SITS6 loop plan (6 axes: x, y, z in m, rx, ry, rz in rad) and parts (sits6_kind.cpp).
LoopPlan sits6_loop_plan(const Sits6Scenario& s);
/// The rig part rig.driver selects: the emulated robot and F/T sensor, or an EGM robot's whole
/// pose on the wire (rig_driver.hpp's make_wire_pose_rig_part).
std::unique_ptr<RigPart> make_sits6_rig_part(const Sits6Scenario& s);
/// The emulated rig whatever rig.driver says: the in-process runner's (it never binds a port).
std::unique_ptr<RigPart> make_sits6_emulated_rig_part(const Sits6Scenario& s);
std::unique_ptr<DynamicsPart> make_sits6_dynamics_part(const Sits6Scenario& s);
/// `hyloop analyze`: the 1-D loop's Routh and sampled-loop analyses per axis (sits6_analysis.cpp).
const Analysis& sits6_analysis();

class Sits6Runner final : public Experiment {
 public:
  /// Keeps every outputs.decimation-th row in memory when outputs.samples is on.
  explicit Sits6Runner(const Sits6Scenario& scenario);
  /// The streamed recorder (the coordinator's): samples.csv written as rows arrive.
  Sits6Runner(const Sits6Scenario& scenario, SampleTable::Streamed);
  Sits6Runner(const Sits6Runner&) = delete;
  Sits6Runner& operator=(const Sits6Runner&) = delete;

  bool step() noexcept override { return chain_.step(*this); }
  bool record_cycle(std::span<const double> row) noexcept override;
  void record_stop(std::string_view reason) noexcept override;

  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return total_steps_; }
  [[nodiscard]] double step_size() const noexcept override { return step_; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  [[nodiscard]] std::string name() const override { return scenario_.name; }
  [[nodiscard]] std::string kind() const override { return "sits6"; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return to_yaml(scenario_); }
  void stream_tables(const std::filesystem::path& dir) override;
  void write_extra_files(const std::filesystem::path& dir) const override;
  [[nodiscard]] std::string progress_mode() const override { return scenario_.outputs.progress; }
  [[nodiscard]] std::string output_format() const override { return scenario_.outputs.format; }

  [[nodiscard]] bool stopped() const noexcept { return stop_reason_ != StopReason::kNone; }
  [[nodiscard]] StopReason stop_reason() const noexcept { return stop_reason_; }
  [[nodiscard]] const Sits6Scenario& scenario() const noexcept { return scenario_; }
  /// The cycle metrics of axis `axis` (0–2: x, y, z; 3–5: rx, ry, rz).
  [[nodiscard]] const core::CycleMetrics& metrics(std::size_t axis) const noexcept {
    return metrics_[axis];
  }
  [[nodiscard]] std::uint64_t rejected_commands() const noexcept {
    return chain_.rig().rejected_commands();
  }

 private:
  /// The streamed recorder's cycles files, written as each axis's cycles end (RT-safe).
  struct CycleFiles {
    CsvStream x;     ///< cycles.csv
    CsvStream axes;  ///< cycles_axes.csv
  };
  class AxisCycles final : public core::CycleSink {
   public:
    AxisCycles(CycleFiles& files, std::size_t axis) : files_(&files), axis_(axis) {}
    void on_cycle(const core::CycleRecord& cycle) noexcept override;

   private:
    CycleFiles* files_;
    std::size_t axis_;
  };
  Sits6Runner(const Sits6Scenario& scenario, bool streamed);
  [[nodiscard]] nlohmann::json axis_summary(std::size_t axis) const;

  Sits6Scenario scenario_;
  double step_;
  std::int64_t total_steps_;
  mutable CycleFiles cycle_files_;  // finished by the const write_extra_files
  std::array<AxisCycles, kSits6Axes> sinks_;
  std::vector<core::CycleMetrics> metrics_;  // x, y, z, rx, ry, rz
  SampleTable samples_;
  LoopChain chain_;
  std::int64_t decimation_;
  std::int64_t cycle_ = 0;
  std::vector<double> row_;
  StopReason stop_reason_ = StopReason::kNone;
  std::array<double, kSits6Axes> k_h_min_{};
  std::array<double, kSits6Axes> k_h_max_{};
  /// The dynamics' energy guard replayed from the rows (the summary's figures).
  core::EnergyGuard guard_;
};

}  // namespace hyloop::experiment
