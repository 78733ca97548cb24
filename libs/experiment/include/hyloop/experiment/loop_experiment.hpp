#pragma once
// The generic in-process runner (issue 12): a kind's loop parts (loop_parts.hpp) stepped in the
// order the services step them in lockstep (DESIGN.md §6), so a kind that runs on it gives in
// process exactly the samples its services give, by construction:
//
//   cycle 0:  the actuator stage holds the plan's bumpless initial command
//   cycle k:  rig part (applies the held command, measures)  →  the sensor's conditioning of the
//             measurement's force (core::ForceConditioner, as the sensor service)  →  dynamics
//             part (values of cycle k, the command of k+1)  →  recorder (the dynamics' values,
//             then the rig's truth values)  →  actuator stage (hal::ActuatorStage: latch every h
//             cycles through the safety layer) gives the command held over cycle k+1.
//
// A dynamics part's stop reason ends the run after its row (no command is sent, as in the
// services). Summary: the stop reason and, per recorded column, its peak |value|.
// step() is RT-safe: fixed-size buffers, no allocation after construction.

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

class LoopExperiment final : public Experiment {
 public:
  /// `name`: the scenario's name; `resolved_yaml`: its resolved text (run directory, services).
  /// @throws std::invalid_argument when the parts do not fit the plan's layouts.
  LoopExperiment(LoopPlan plan, std::unique_ptr<RigPart> rig,
                 std::unique_ptr<DynamicsPart> dynamics, std::string name,
                 std::string resolved_yaml);

  bool step() noexcept override;
  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return plan_.total_steps; }
  [[nodiscard]] double step_size() const noexcept override { return plan_.step; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::string kind() const override { return plan_.kind; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return resolved_yaml_; }
  bool record_cycle(std::span<const double> row) noexcept override;
  void record_stop(std::string_view reason) override { recorded_stop_ = std::string(reason); }

  /// The recorded columns of a kind's parts: the dynamics part's names, then the rig's truth.
  [[nodiscard]] static std::vector<std::string> columns(const DynamicsPart& dynamics,
                                                        const RigPart& rig);

 private:
  void record(std::span<const double> row) noexcept;

  LoopPlan plan_;
  std::unique_ptr<RigPart> rig_;
  std::unique_ptr<DynamicsPart> dynamics_;
  std::string name_;
  std::string resolved_yaml_;
  hal::ActuatorStage stage_;
  core::ForceConditioner conditioner_;
  std::optional<std::size_t> force_;  ///< the measurement's force, which the sensor conditions
  std::size_t truth_count_ = 0;
  std::array<double, hal::kMaxSignals> measured_{};
  std::vector<double> row_;   ///< dynamics values, then truth (sized once)
  std::vector<double> peak_;  ///< peak |value| per column
  SampleTable samples_;
  hal::ActuatorCommand applied_{};
  std::int64_t cycle_ = 0;
  const char* stop_ = nullptr;  ///< the dynamics part's stop reason (a literal), in process
  std::string recorded_stop_;   ///< a distributed run's stop reason (record_stop)
};

}  // namespace hyloop::experiment
