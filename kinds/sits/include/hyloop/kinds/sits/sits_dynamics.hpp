#pragma once
// The dynamics + compensation side of the SITS loop (DESIGN.md §6, step 4), shared by the
// in-process runner and the dynamics service so that both compute the same numbers in the same
// order (the lockstep test compares them bit for bit). In cycle k, from the measurements of
// cycle k (robot position X_R[k], its velocity, the delayed force F_meas[k]):
//   v̂_R[k] = TD(X_R[k]);  F′[k] = F_meas[k] + K_h[k]·v̂_R[k] (+ K_x[k]·X_R[k] when the phase
//   correction is on; K_x[k] from the target's and the twin's states of cycle k)
//   v[k+1] = v[k] + T·F′[k]/m_e;  x[k+1] = x[k] + T·v[k+1]      (target, semi-implicit Euler)
//   the ideal twin advances under E[k] = −K_tc·x_i[k] − B_tc·v_i[k]
// and the candidate command for cycle k+1 is (x[k+1], v[k+1]); the actuator latches it every
// h steps. The stability guard (guard.*; core::EnergyGuard) is fed each cycle with the row's
// time and target energy ½·m_e·v[k]² + ½·K_tc·x[k]²; when it trips, the run stops (reason
// stability_guard) as at the displacement limit: the next command is not sent.
// step() is RT-safe: no allocation, no exceptions.

#include <array>
#include <cstdint>
#include <string_view>

#include "hyloop/core/compensator.hpp"
#include "hyloop/core/contact_model.hpp"
#include "hyloop/core/energy_guard.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/core/phase_correction.hpp"
#include "hyloop/core/sit_model.hpp"
#include "hyloop/core/tracking_differentiator.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/sits_rig_emulator.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"

namespace hyloop::experiment {

/// The columns of samples.csv, in order, with their units.
enum class SitsColumn : std::uint8_t {
  kTime,
  kX,
  kV,
  kXIdeal,
  kVIdeal,
  kXCmd,
  kXRobot,
  kVRobot,
  kVEst,
  kFContact,
  kFMeas,
  kFIdeal,
  kFInput,
  kFComp,
  kKh,
  kEpsH,
  kEpsSum,
  kEnergy,
  kEnergyIdeal,
  kPower,
  kPowerIdeal,
  kKx,     ///< K_x of the phase correction, N/m (0 when off)
  kPhase,  ///< φ of the target against the twin, rad (0 when off)
  kCount
};
inline constexpr std::size_t kSitsColumns = static_cast<std::size_t>(SitsColumn::kCount);
/// "name[unit]" headers of samples.csv.
extern const std::array<std::string_view, kSitsColumns> kSitsColumnHeaders;
using SampleRow = std::array<double, kSitsColumns>;
constexpr std::size_t col(SitsColumn c) noexcept { return static_cast<std::size_t>(c); }

/// The columns only the rig knows (its held command and the true contact force); the dynamics
/// fills every other column.
inline constexpr std::array<SitsColumn, 2> kSitsRigColumns = {SitsColumn::kXCmd,
                                                              SitsColumn::kFContact};

/// The rig emulator's configuration of a SITS scenario.
hal::SitsRigConfig sits_rig_config(const SitsScenario& scenario);

/// The actuator safety layer's configuration of a SITS scenario (rig.limits and safety).
hal::SafetyConfig sits_safety_config(const SitsScenario& scenario);

/// The linearised loop of a scenario for the model-based K_x (core::model_stiffness_correction),
/// with the given robot model (identified or configured; ignored when the robot is bypassed).
core::PhaseCorrectionModel phase_correction_model(const SitsScenario& scenario,
                                                  const core::ZeroPoleGain& robot, double k_h);

/// The K_x (N/m) `hyloop analyze` puts into the characteristic equation for this scenario:
/// 0 when compensator.phase_correction is off, else the model-based value within its bound.
double analysis_k_x(const SitsScenario& scenario, const core::ZeroPoleGain& robot, double k_h);

/// The measurements of cycle k the dynamics needs.
struct SitsMeasurement {
  double robot_position = 0.0;  ///< X_R[k], m
  double robot_velocity = 0.0;  ///< Ẋ_R[k], m/s (recorded; the TD estimates its own)
  double force = 0.0;           ///< F_meas[k], N
};

class SitsDynamics {
 public:
  explicit SitsDynamics(const SitsScenario& scenario);

  /// The command held before cycle 0 (bumpless start at the target's initial state).
  [[nodiscard]] hal::ActuatorCommand initial_command() const noexcept;

  /// Step 4 of cycle k: fills every dynamics column of `row` (not kSitsRigColumns), advances the
  /// target and the twin, and writes the candidate command of cycle k+1 into `next`. Returns
  /// kNotFinite, kDisplacementLimit or kStabilityGuard when the next command must not be sent.
  /// RT-safe.
  StopReason step(std::int64_t k, const SitsMeasurement& m, SampleRow& row,
                  hal::ActuatorCommand& next) noexcept;

  [[nodiscard]] const core::Compensator& compensator() const noexcept { return compensator_; }
  [[nodiscard]] const core::PhaseCorrection& phase_correction() const noexcept {
    return phase_correction_;
  }
  /// The stability guard (fed only when guard.enabled).
  [[nodiscard]] const core::EnergyGuard& guard() const noexcept { return guard_; }

 private:
  double step_;
  double initial_position_;
  double initial_velocity_;
  hal::ActuatorLimits limits_;
  core::PointMass target_;
  core::IdealTwin twin_;
  core::ContactModel contact_;  // the nominal contact, for the target's energy
  core::TrackingDifferentiator td_;
  core::Compensator compensator_;
  core::PhaseCorrection phase_correction_;
  core::EnergyGuard guard_;
  bool guarded_;
};

}  // namespace hyloop::experiment
