#pragma once
// The numerical side of the RHT loop (the building storey under the earthquake, and the
// adaptive inverse-model compensator with its RLS), shared by the in-process runner and the
// dynamics service so both compute the same numbers in the same order. In cycle i, from the
// measured actuator displacement d_m[i] and the specimen's restoring force f[i] of cycle i:
//   RLS: θ ← update with (d_c[i], d_m[i])                    (adaptive compensator only)
//   structure: u[i+1] from a_g[i+1] and −f[i] (central difference); the reference structure
//              (pure numerical, the specimen's stiffness in the model) alongside
//   d_desired[i+1] = u[i+1];  d_c[i+1] = inverse model(d_desired[i+1]) or d_desired[i+1]
// The adaptive compensator is initialised as in the paper: an offline run of the structure's
// pure numerical response through an emulated servo, then a batch least-squares fit.
// compensator.type ats and amb take the RLS compensator's place (issue 13 §2), in the same
// order: the measurement of cycle i closes the pair of d_c[i] (ATS: observe(d_c[i], d_m[i]),
// a fit when due; AMB: observe(d_m[i]), an adaptation step), then d_c[i+1] is computed from
// d_desired[i+1] (ATS: with its backward differences, as the vrths kind; AMB: its own). Their
// coefficients fill the θ columns ([a0, a1, a2] or [a0 … a3]). No offline run.
// The stability guard (guard.*; core::StabilityGuard) is fed each cycle with the row's target
// d_desired[i] and d_m[i]; when it trips, the run stops (reason stability_guard) as at the
// stroke: the next command is not sent.
// step() is RT-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hyloop/core/adaptive_model_based.hpp"
#include "hyloop/core/adaptive_time_series.hpp"
#include "hyloop/core/ground_motion.hpp"
#include "hyloop/core/inverse_model_compensator.hpp"
#include "hyloop/core/stability_guard.hpp"
#include "hyloop/core/structure_model.hpp"
#include "hyloop/hal/actuator_safety.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"

namespace hyloop::experiment {

struct RhtScenario;

/// samples.csv of an RHT run: base columns, then θ_1..θ_7 (the RLS model's parameters, or the
/// ATS/AMB coefficients [a0 (-), a1 (s), a2 (s²), a3 (s³)], the rest 0).
enum class RhtColumn : std::uint8_t {
  kTime,
  kGroundAccel,
  kDesired,
  kCommand,
  kMeasured,
  kTrue,
  kForce,
  kNumerical,
  kError,
  kOmega,
  kRlsStatus,
  kTheta1
};
inline constexpr int kRhtMaxTheta = 7;
inline constexpr std::size_t kRhtColumns = static_cast<std::size_t>(RhtColumn::kTheta1) + 7;
constexpr std::size_t col(RhtColumn c) noexcept { return static_cast<std::size_t>(c); }
/// "name[unit]" headers of samples.csv.
const std::vector<std::string>& rht_column_headers();
/// The columns only the rig knows (true displacement, the servo's ω(t)).
inline constexpr std::array<RhtColumn, 2> kRhtRigColumns = {RhtColumn::kTrue, RhtColumn::kOmega};

core::GroundMotion load_rht_ground_motion(const RhtScenario& s);
hal::ServoActuatorConfig rht_servo_config(const RhtScenario& s, std::uint64_t seed);
/// The actuator safety layer of an RHT scenario: the stroke as the position window.
hal::SafetyConfig rht_safety_config(const RhtScenario& s);
/// Cycles of a run (timing.duration_s, or the whole record).
std::int64_t rht_total_steps(const RhtScenario& s, const core::GroundMotion& motion);

class RhtDynamics {
 public:
  /// Runs the offline initialisation of an adaptive compensator. @throws ScenarioError.
  explicit RhtDynamics(const RhtScenario& scenario);

  /// d_c[0], the command of cycle 0.
  [[nodiscard]] double initial_command() const noexcept { return command_next_; }

  /// Cycle i: fills every column of `row` but the rig's (kRhtRigColumns) and writes d_c[i+1]
  /// into `next`. Returns nullptr, or the stop reason ("not_finite", "stroke_limit",
  /// "stability_guard") when the next command must not be sent. RT-safe.
  const char* step(std::int64_t i, double measured, double force, std::span<double> row,
                   double& next) noexcept;

  [[nodiscard]] std::int64_t total_steps() const noexcept { return total_steps_; }
  [[nodiscard]] const core::GroundMotion& motion() const noexcept { return motion_; }
  [[nodiscard]] const std::vector<double>& initial_parameters() const noexcept { return theta0_; }
  [[nodiscard]] core::InverseModelCompensator* compensator() noexcept {
    return compensator_ ? &*compensator_ : nullptr;
  }
  [[nodiscard]] const core::InverseModelCompensator* compensator() const noexcept {
    return compensator_ ? &*compensator_ : nullptr;
  }
  /// Writes the θ columns of `row` from the compensator's current parameters.
  void write_parameters(std::span<double> row) const noexcept;

 private:
  /// d_c for the desired displacement `desired` (the next cycle's target). RT-safe.
  double command_for(double desired) noexcept;

  double step_;
  double stroke_;
  core::GroundMotion motion_;
  std::int64_t total_steps_;
  core::StructureModel structure_;
  core::StructureModel reference_;
  std::optional<core::InverseModelCompensator> compensator_;
  std::optional<core::AdaptiveTimeSeries> ats_;
  std::optional<core::AdaptiveModelBased> amb_;
  core::StabilityGuard guard_;
  bool guarded_;
  double last_desired_ = 0.0, last_velocity_ = 0.0;  // ATS: backward differences of d_desired
  bool seen_ = false;
  std::vector<double> theta0_;
  double desired_next_ = 0.0;
  double command_next_ = 0.0;
};

}  // namespace hyloop::experiment
