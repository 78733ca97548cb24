#pragma once
// Phase (stiffness) correction of the SITS hybrid loop, added to the compensator's force:
//
//   F′[k] = F_meas[k] + K_h[k]·v̂_R[k] + K_x[k]·X_R[k]                          (N)
//
// Why: the force delay, the hold, the robot and the tracking differentiator's lag make the
// contact look slightly stiffer to the target than K_tc; the hybrid then oscillates faster than
// the ideal twin and drifts out of phase. A velocity gain K_h changes damping, not stiffness; the
// positive stiffness K_x (N/m, an anti-restoring force) removes the frequency error.
//
// Online estimate (a phase-locked loop against the ideal twin, the signals the energy observer
// already uses). With the nominal frequency ω0 = √(K_tc/m_e) (rad/s) the normalised phasors
//   z = x + j·v/ω0,   z_i = x_i + j·v_i/ω0
// give the phase of the hybrid target (x, v) against the twin (x_i, v_i):
//   φ[k] = atan2((x·v_i − v·x_i)/ω0, x·x_i + v·v_i/ω0²)          (rad, > 0: the hybrid leads)
// independent of both amplitudes. A stiffness error ΔK makes φ drift at dφ/dt = c·(ΔK − K_x),
// c = ω0/(2·K_tc) (rad/s per N/m); a PI law on φ
//   I[k+1] = I[k] + K_I·φ[k]·T,     K_x* = K_x,0 + K_P·φ[k] + I[k+1]
//   K_P = 2·ζ_a·ω_a/c (N/m per rad),  K_I = ω_a²/c (N/m per rad·s)
// makes ψ = ∫φ a second-order system of bandwidth ω_a (rad/s) and damping ζ_a: φ → 0 and
// K_x → ΔK. The output is rate-limited and bounded,
//   K_x[k] = clamp(K_x[k−1] + clamp(K_x* − K_x[k−1], ±ρ·T), ±K_x,max)
// with back-calculation of I (anti-windup). It adapts only for t ≥ t_start and while both |z|
// and |z_i| exceed a_min (m); otherwise K_x holds.
//
// For the linearised analysis the converged value is predicted from the loop's model
// (model_stiffness_correction): at ω0, with P(jω) = X_R/x (the hold's mean lag of (h−1)/2 steps
// times G_R(jω)), the delayed force D(jω) = e^{−jω·d·T} and the tracking differentiator's
// discrete linear-region response V(jω) = v̂/X_R, K_x makes the real part of F′/x equal −K_tc:
//   K_x·Re[P] = −K_tc + Re[(K_tc + jω·B_tc)·D·P] − K_h·Re[V·P]
// (the velocity error that remains is K_h's business). Units: N/m.
//
// RT-safety: update() and the accessors are RT-safe (no allocation, no exceptions); the
// constructor validates and may throw.

#include <complex>
#include <vector>

#include "hyloop/core/tracking_differentiator.hpp"

namespace hyloop::core {

/// Scenario fields `compensator.phase_correction.*` (see docs/scenarios.md).
struct PhaseCorrectionConfig {
  bool enabled = false;         ///< enabled
  double k_x_initial = 0.0;     ///< K_x,0, N/m (k_x_initial_n_per_m)
  double k_x_max = 200.0;       ///< |K_x| bound, N/m (k_x_max_n_per_m)
  double rate_max = 20.0;       ///< ρ, |dK_x/dt| bound, N/m/s (rate_max_n_per_m_s)
  double bandwidth = 0.5;       ///< ω_a, rad/s (bandwidth_rad_s)
  double damping = 0.7;         ///< ζ_a (damping)
  double start_time = 0.0;      ///< t_start, s (start_time_s)
  double min_amplitude = 1e-4;  ///< a_min, m (min_amplitude_m)
};

/// @throws std::invalid_argument naming the field (as in the scenario) and the allowed range.
void validate(const PhaseCorrectionConfig& config);

/// The loop the model-based K_x is computed for (linearised, at the nominal frequency).
struct PhaseCorrectionModel {
  double mass = 500.0;              ///< m_e, kg
  double stiffness = 20000.0;       ///< K_tc, N/m
  double damping = 0.0;             ///< B_tc, N·s/m
  double step = 0.002;              ///< T, s
  double sensor_delay_steps = 1.0;  ///< d (0: off)
  int hold_steps = 2;               ///< h (1: off)
  double k_h = 0.0;                 ///< K_h, N·s/m
  TrackingDifferentiatorConfig td;  ///< its linear region: v̂ = TD(X_R)
  /// G_R(s) as zeros, poles (rad/s) and gain; empty with gain 1: robot bypassed.
  std::vector<std::complex<double>> robot_zeros;
  std::vector<std::complex<double>> robot_poles;
  double robot_gain = 1.0;
};

/// The K_x (N/m) that removes the frequency error of the linearised loop (equation above).
/// Pure; not RT-safe. @throws std::invalid_argument if the model is not finite or Re[P] ≈ 0.
double model_stiffness_correction(const PhaseCorrectionModel& model);

/// The K_x the stability analysis should use for a loop with this correction: 0 when disabled,
/// else the model-based value clamped to ±k_x_max (what the online estimate converges to).
double analysis_stiffness_correction(const PhaseCorrectionConfig& config, double model_k_x);

/// φ (rad) of (x, v) against (x_i, v_i) at ω0 (equation above); 0 if either phasor is zero.
double phase_against_twin(double x, double v, double x_ideal, double v_ideal,
                          double omega0) noexcept;

class PhaseCorrection {
 public:
  /// @param omega0 √(K_tc/m_e), rad/s; @param stiffness K_tc, N/m; @param step T, s.
  /// @throws std::invalid_argument naming the field that is out of range.
  PhaseCorrection(const PhaseCorrectionConfig& config, double omega0, double stiffness,
                  double step);

  /// Updates K_x from the states of cycle k and returns K_x[k] (N/m); 0 when disabled. RT-safe.
  double update(double t, double x, double v, double x_ideal, double v_ideal) noexcept;

  /// K_x[k]·X_R[k] (N) with the K_x of the last update. RT-safe.
  [[nodiscard]] double force(double robot_position) const noexcept { return k_x_ * robot_position; }

  void reset() noexcept;
  [[nodiscard]] double k_x() const noexcept { return k_x_; }
  [[nodiscard]] double phase() const noexcept { return phase_; }  ///< last φ, rad
  [[nodiscard]] double k_p() const noexcept { return k_p_; }      ///< N/m per rad
  [[nodiscard]] double k_i() const noexcept { return k_i_; }      ///< N/m per rad·s
  [[nodiscard]] const PhaseCorrectionConfig& config() const noexcept { return config_; }

 private:
  PhaseCorrectionConfig config_;
  double omega0_;
  double step_;
  double k_p_;
  double k_i_;
  double integral_ = 0.0;
  double k_x_ = 0.0;
  double phase_ = 0.0;
};

}  // namespace hyloop::core
