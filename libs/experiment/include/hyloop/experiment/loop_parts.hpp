#pragma once
// What the loop services need of a scenario, whatever its kind: the plan (cycles, period,
// hold, safety limits, the bumpless first command, the sensor's conditioning), the rig's physics
// (for the rig emulator service) and the numerical side (for the dynamics service). Each kind
// implements them over the same blocks its in-process runner steps (SitsDynamics and the SITS
// rig emulator; RhtDynamics and the servo emulator; FcuDynamics and the FCU rig emulator), so a
// lockstep distributed run computes what `hyloop run` computes. The functions below ask the
// scenario's kind (kind.hpp); an unknown kind, or one without a distributed form, is refused by
// name (std::invalid_argument).
//
// The loop messages carry the mechanical kinds' quantities (position in m, force in N). The FCU
// loop maps onto them: the command is the fuel-flow demand x_p (kg/s) in the position fields,
// and the measured "position" is the flow meter's reading x_m (kg/s); force is 0.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/drivers.hpp"

namespace hyloop::experiment {

struct LoopPlan {
  std::string kind;
  std::int64_t total_steps = 0;
  double step = 0.0;             ///< T, s
  std::int64_t hold_steps = 1;   ///< h: the actuator latches every h cycles
  hal::SafetyConfig safety;      ///< at the control period h·T
  hal::ActuatorCommand initial;  ///< the command held before cycle 0
  bool tare = false;
  double filter_time_constant = 0.0;
  int corrupt_message_every = 0;  ///< rig fault injection (0: off)
};

/// @throws ScenarioError naming the field; std::invalid_argument for an unknown kind or one
/// without services.
LoopPlan loop_plan(const std::string& scenario_text);
/// The loop plan of a kind whose actuator latches every cycle (no hold, no conditioning).
LoopPlan every_cycle_plan(std::string kind, std::int64_t total_steps, double step,
                          const hal::SafetyConfig& safety, double initial_command);

/// The rig's measurements of one cycle and its truth columns (for the recorder).
struct RigSample {
  static constexpr std::size_t kMaxTruth = 4;
  double position = 0.0;                  ///< m
  double velocity = 0.0;                  ///< m/s
  double force = 0.0;                     ///< N, as the sensor's DAQ delivers it (delayed, noisy)
  std::array<double, kMaxTruth> truth{};  ///< the first truth_names().size() are used
};

class RigPart {
 public:
  virtual ~RigPart() = default;
  /// Applies the command of this cycle and advances one step. RT-safe.
  virtual void step(const hal::ActuatorCommand& applied, RigSample& out) noexcept = 0;
  /// "name[unit]" of RigSample::truth (at most kMaxTruth), as in the kind's record columns.
  [[nodiscard]] virtual std::vector<std::string> truth_names() const = 0;
};
std::unique_ptr<RigPart> make_rig_part(const std::string& scenario_text);

class DynamicsPart {
 public:
  virtual ~DynamicsPart() = default;
  /// "name[unit]" of the values step() writes, as in the kind's samples.csv.
  [[nodiscard]] virtual const std::vector<std::string>& names() const = 0;
  /// Cycle k from its measurements: writes names().size() values and the command of cycle
  /// k+1. Returns nullptr, or why the loop must stop (the command is then not sent). RT-safe.
  virtual const char* step(std::int64_t k, double position, double velocity, double force,
                           std::span<double> values, hal::ActuatorCommand& next) noexcept = 0;
};
std::unique_ptr<DynamicsPart> make_dynamics_part(const std::string& scenario_text);

/// The record columns [0, count) but `excluded` (the rig's, the recorder's): a dynamics part's.
std::vector<std::size_t> columns_except(std::size_t count,
                                        const std::vector<std::size_t>& excluded);
/// The indices of a kind's column enumerators.
template <class Column, std::size_t R>
std::vector<std::size_t> column_indices(const std::array<Column, R>& columns) {
  std::vector<std::size_t> out;
  for (const Column c : columns) out.push_back(static_cast<std::size_t>(c));
  return out;
}

}  // namespace hyloop::experiment
