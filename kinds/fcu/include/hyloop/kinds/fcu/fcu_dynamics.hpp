#pragma once
// The numerical side of the FCU loop (the turbojet, its ECU, the delay compensator and the
// ideal twin), shared by the in-process runner and the dynamics service so both compute the
// same numbers in the same order (fcu_experiment.hpp has the cycle). In cycle k, from the flow
// meter's reading x_m[k] (kg/s):
//   engine:  n[k+1] = RK4 step of the engine under the held fuel flow x_m[k]
//   twin:    x_c,i[k] = ECU(PLA[k], n_i[k]); w_f,i[k] = FCU model(x_c,i[k]); n_i[k+1]
//   next:    PLA[k+1]; x_c[k+1] = ECU(PLA[k+1], n[k+1]); x_p[k+1] = compensator(x_c[k+1])
// x_p[0] is computed by the constructor (initial_command()). step() is RT-safe.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hyloop/core/inverse_delay_compensator.hpp"
#include "hyloop/core/polynomial_predictor.hpp"
#include "hyloop/core/turbojet_model.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/fcu_rig_emulator.hpp"

namespace hyloop::experiment {

struct FcuScenario;

/// The engine settled at the speed PLA(0) demands (normalised), and its steady fuel flow (kg/s).
double fcu_initial_speed(const FcuScenario& s);
double fcu_initial_fuel(const FcuScenario& s);
/// The rig emulator of a scenario (motor and flow-meter delays, noise, FCU valve).
hal::FcuRigConfig fcu_rig_config(const FcuScenario& s);
/// The actuator's safety layer: the command window of `safety`, at the step.
hal::SafetyConfig fcu_safety_config(const FcuScenario& s);

/// Columns of the record row beyond samples.csv (fcu_experiment.hpp): values the summary needs
/// at full precision.
enum class FcuExtraColumn : std::uint8_t { kSpeed, kSpeedIdeal, kEcuLimited, kValveSaturated };
inline constexpr std::size_t kFcuExtraColumns = 4;

class FcuDynamics {
 public:
  /// `scenario` must outlive this object.
  explicit FcuDynamics(const FcuScenario& scenario);

  /// x_p[0], the command of cycle 0.
  [[nodiscard]] double initial_command() const noexcept { return x_p_; }

  /// Cycle k: writes every column of `row` but the rig's (kFcuRigColumns) and the recorder's
  /// (kFcuRecorderColumn), and the extra columns kSpeed, kSpeedIdeal, kEcuLimited (after the
  /// kFcuColumns sample columns), and x_p[k+1] into `next`. Returns nullptr, or the stop reason
  /// ("not_finite", "speed_limit"): the next command must then not be sent. RT-safe.
  const char* step(std::int64_t k, double x_m, std::span<double> row, double& next) noexcept;

  [[nodiscard]] double alpha() const noexcept;
  [[nodiscard]] std::vector<double> predictor_weights() const;

 private:
  void command(std::int64_t k) noexcept;

  const FcuScenario* scenario_;
  double step_;
  core::TurbojetModel engine_;
  core::EngineControlUnit ecu_;
  core::TurbojetModel twin_engine_;
  core::EngineControlUnit twin_ecu_;
  core::FuelControlUnit twin_fcu_;
  core::InverseDelayCompensator inverse_;
  core::PolynomialPredictor predictor_;
  // Cycle k's command side, computed at the end of cycle k − 1.
  double pla_ = 0.0;
  double demand_ = 0.0;
  double x_c_ = 0.0;
  double x_p_ = 0.0;
  bool ecu_limited_ = false;
};

}  // namespace hyloop::experiment
