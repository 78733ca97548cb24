#pragma once
// Delay compensators of the SITS paper §4 (Eq. 43, 45–46): a velocity feedback added to the
// input force of the dynamic model,
//
//   F′[k] = F_meas[k] + F_h[k],        F_h[k] = K_h[k]·v̂_R[k]                (N)
//
// with the gain K_h (N·s/m) scheduled by the kind of compensator:
//
//   none   K_h = 0
//   FGC    K_h = K_ε0
//   LGC    K_h = K_ε0 + K_ε1·t                                    for all t
//   SCVG   K_h = K_ε0 + K_ε1·t                                    for t ≤ t_ε
//          K_h = K_ε0 + K_ε2·S(t)                                 for t > t_ε   (paper, literal)
//          K_h = K_ε0 + K_ε1·t_ε + K_ε2·S(t)                      (bumpless variant)
//
// where S is the energy observer's sum S(t) = Σ_{t_j > t_ε} |ε_h[j]|·T (J·s) and
//
//   ε_h[k] = E[k]·x_i[k] − F′[k]·X_R[k]                                      (J, Eq. 45)
//
// (E and x_i are the ideal twin's force and position, X_R the robot position). Within cycle k the
// gain K_h[k] uses S up to k−1, because ε_h[k] needs F′[k], which needs K_h[k].
//
//   TDPA   F_h = −α[k]·v[k] with v the model's own velocity, α the time-domain passivity
//          controller's damping (passivity.hpp, held-output convention) on the model's port
//          to the rig: E_obs = −T·Σ F_meas·v, the energy the rig (delays, robot, contact) has
//          taken in; when E_obs + E_pc < 0 (the delayed rig gives back energy it never
//          stored) α dissipates it, 0 ≤ α ≤ max_damping (Hannaford & Ryu 2002). Observed on
//          v̂_R instead, the rig looks passive (the robot and its spring are): the delay
//          between the model and the robot is what generates the energy.
//
// Any kind can add the phase (stiffness) correction of phase_correction.hpp,
// F′[k] = F_meas[k] + K_h[k]·v̂_R[k] + K_x[k]·X_R[k]; its configuration is phase_correction.

#include <cstdint>
#include <string_view>

#include "hyloop/core/passivity.hpp"
#include "hyloop/core/phase_correction.hpp"

namespace hyloop::core {

enum class CompensatorKind { kNone, kFixedGain, kLinearGain, kSwitching, kPassivity };

/// "none", "fgc", "lgc", "scvg", "tdpa". @throws std::invalid_argument listing the allowed names.
CompensatorKind parse_compensator_kind(std::string_view name);
std::string_view to_string(CompensatorKind kind) noexcept;

struct CompensatorConfig {
  CompensatorKind kind = CompensatorKind::kNone;
  double k_eps0 = 0.0;        ///< K_ε0, N·s/m
  double k_eps1 = 0.0;        ///< K_ε1, N·s/m per s
  double k_eps2 = 0.0;        ///< K_ε2, N·s/m per J·s
  double switch_time = 36.0;  ///< t_ε, s (SCVG only)
  bool bumpless = false;      ///< SCVG: continue from K_ε0 + K_ε1·t_ε at the switch
  double max_damping = 1e4;   ///< TDPA: the passivity controller's largest α, N·s/m
  PhaseCorrectionConfig phase_correction{};  ///< K_x·X_R term (off by default)
};

class EnergyObserver {
 public:
  /// @param start_time the sum S counts ε_h from samples with t > start_time.
  EnergyObserver(double step, double start_time) : step_(step), start_time_(start_time) {}

  /// ε_h = E·x_i − F′·X_R (J). RT-safe.
  [[nodiscard]] static double epsilon(double ideal_force, double ideal_position, double input_force,
                                      double robot_position) noexcept {
    return ideal_force * ideal_position - input_force * robot_position;
  }
  /// ε_h[k] = E·x_i − F′·X_R; adds |ε_h|·T to S when t > start time. RT-safe.
  double observe(double t, double ideal_force, double ideal_position, double input_force,
                 double robot_position) noexcept {
    return add(t, epsilon(ideal_force, ideal_position, input_force, robot_position));
  }
  /// Takes ε_h[k] computed elsewhere (e.g. a sum over axes): adds |ε_h|·T to S when t > start
  /// time. RT-safe.
  double add(double t, double epsilon) noexcept;

  [[nodiscard]] double last() const noexcept { return last_; }
  [[nodiscard]] double sum() const noexcept { return sum_; }
  void reset() noexcept { last_ = sum_ = 0.0; }

 private:
  double step_;
  double start_time_;
  double last_ = 0.0;
  double sum_ = 0.0;
};

class Compensator {
 public:
  /// @throws std::invalid_argument naming the field that is not finite or out of range.
  Compensator(const CompensatorConfig& config, double step);

  /// K_h[k] for time t (s), from the energy sum up to k−1. RT-safe.
  [[nodiscard]] double gain(double t) const noexcept;

  /// F_h[k] = K_h[k]·v̂_R[k] (N), remembering K_h[k]. RT-safe.
  double force(double t, double velocity_estimate) noexcept;
  /// The same; for TDPA (kPassivity) F_h[k] = −α[k]·v[k] from the passivity controller on the
  /// model's port to the rig (flow v: the model's velocity, effort −F_meas: the energy flowing
  /// from the model into delays, robot and contact), K_h[k] = −α[k]. RT-safe.
  double force(double t, double velocity_estimate, double measured_force,
               double model_velocity) noexcept;

  /// Feeds ε_h[k] once F′[k] is known. RT-safe.
  double observe(double t, double ideal_force, double ideal_position, double input_force,
                 double robot_position) noexcept {
    return observer_.observe(t, ideal_force, ideal_position, input_force, robot_position);
  }
  /// Feeds an ε_h[k] observed elsewhere (a body's sum over its axes). RT-safe.
  void observe_energy(double t, double epsilon) noexcept { (void)observer_.add(t, epsilon); }

  void reset() noexcept;
  [[nodiscard]] double last_gain() const noexcept { return last_gain_; }
  [[nodiscard]] const EnergyObserver& observer() const noexcept { return observer_; }
  [[nodiscard]] const CompensatorConfig& config() const noexcept { return config_; }

 private:
  CompensatorConfig config_;
  EnergyObserver observer_;
  PassivityController passivity_;
  double last_gain_ = 0.0;
};

}  // namespace hyloop::core
