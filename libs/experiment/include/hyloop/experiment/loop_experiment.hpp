#pragma once
// The generic in-process runner (issue 12): a kind's loop parts (loop_parts.hpp) stepped in the
// order the services step them in lockstep (DESIGN.md §6), so a kind that runs on it gives in
// process exactly the samples its services give, by construction:
//
//   cycle 0:  the actuator stage holds the plan's bumpless initial command
//   cycle k:  rig part (applies the held command, measures)  →  the sensor's conditioning of the
//             measurement's force (core::ForceConditioner, as the sensor service)  →  dynamics
//             part (values of cycle k, the command of k+1)  →  recorder (the dynamics' values
//             and the rig's truth values, placed by name in the recorder's record_columns(), as
//             the coordinator places the services' telemetry)  →  actuator stage
//             (hal::ActuatorStage: latch every h cycles through the safety layer) gives the
//             command held over cycle k+1.
//
// LoopChain is that cycle; the recorder is any Experiment's record_cycle()/record_stop() (the
// kind's own: SitsRunner, RhtExperiment, FcuExperiment; or LoopExperiment's generic one: peak
// |value| per column). A dynamics part's stop reason ends the run after its row (no command is
// sent, as in the services); a rig part's driver fault ends it before the row (the rig service
// sends FAULT, the coordinator stops). step() is RT-safe: fixed-size buffers, no allocation after
// construction.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hyloop/core/force_conditioner.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/hal/actuator_stage.hpp"

namespace hyloop::experiment {

class LoopChain {
 public:
  /// `record_columns`: the recorder's record_columns(); a column neither part writes stays 0.
  /// @throws std::invalid_argument when the parts do not fit the plan's layouts.
  LoopChain(LoopPlan plan, std::unique_ptr<RigPart> rig, std::unique_ptr<DynamicsPart> dynamics,
            const std::vector<std::string>& record_columns);

  /// Runs cycle recorder.cycle() and records it through `recorder`; false when the run is over
  /// (finished, stopped, or the recorder refused the row). RT-safe when the recorder's
  /// record_cycle() and record_stop() are.
  bool step(Experiment& recorder) noexcept;

  [[nodiscard]] const LoopPlan& plan() const noexcept { return plan_; }
  [[nodiscard]] const RigPart& rig() const noexcept { return *rig_; }
  [[nodiscard]] const DynamicsPart& dynamics() const noexcept { return *dynamics_; }
  /// Whether a part stopped the run.
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }

 private:
  LoopPlan plan_;
  std::unique_ptr<RigPart> rig_;
  std::unique_ptr<DynamicsPart> dynamics_;
  hal::ActuatorStage stage_;
  core::ForceConditioner conditioner_;
  std::optional<std::size_t> force_;  ///< the measurement's force, which the sensor conditions
  std::size_t value_count_ = 0;
  std::size_t truth_count_ = 0;
  std::array<double, hal::kMaxSignals> measured_{};
  std::vector<double> values_;         ///< the dynamics' values, then the rig's truth
  std::vector<std::ptrdiff_t> place_;  ///< values_[i] → row_[place_[i]] (-1: not recorded)
  std::vector<double> row_;            ///< in the recorder's record_columns() order
  bool stopped_ = false;
};

class LoopExperiment final : public Experiment {
 public:
  /// `name`: the scenario's name; `resolved_yaml`: its resolved text (run directory, services).
  /// @throws std::invalid_argument when the parts do not fit the plan's layouts.
  LoopExperiment(LoopPlan plan, std::unique_ptr<RigPart> rig,
                 std::unique_ptr<DynamicsPart> dynamics, std::string name,
                 std::string resolved_yaml);

  bool step() noexcept override { return chain_.step(*this); }
  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override {
    return chain_.plan().total_steps;
  }
  [[nodiscard]] double step_size() const noexcept override { return chain_.plan().step; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::string kind() const override { return chain_.plan().kind; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return resolved_yaml_; }
  bool record_cycle(std::span<const double> row) noexcept override;
  /// Keeps the first kMaxStopReason characters (no allocation: reserved).
  void record_stop(std::string_view reason) noexcept override;

  /// The recorded columns of a kind's parts: the dynamics part's names, then the rig's truth.
  [[nodiscard]] static std::vector<std::string> columns(const DynamicsPart& dynamics,
                                                        const RigPart& rig);

 private:
  static constexpr std::size_t kMaxStopReason = 64;

  LoopChain chain_;
  std::string name_;
  std::string resolved_yaml_;
  std::vector<double> peak_;  ///< peak |value| per column
  SampleTable samples_;
  std::int64_t cycle_ = 0;
  std::string stop_reason_;  ///< reserved kMaxStopReason; empty: none
};

}  // namespace hyloop::experiment
