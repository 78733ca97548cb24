#pragma once
// Stability of the SITS loop exactly as it is sampled (DESIGN §6 cycle contract), beside the Routh
// test of the rational model of Eq. 34 (stability.hpp). The simulation is a discrete, linear
// (for the small signals of SITS), h-periodic system; this file writes that system down step by
// step and reads its stability from the eigenvalues of its period map (Floquet multipliers).
// Nothing is approximated: no Padé for the force delay, no 2/(2 + T_c·s) for the hold, and the
// tracking differentiator and the acquisition filter are in the loop.
//
// State z[k] at the start of cycle k (before the rig advances):
//   x, v             the target (m, m/s)
//   X_c, V_c         the held command and its velocity feed-forward (m, m/s)
//   r (n_R states)   the robot G_R in the continuous coordinates of LtiSystem (bypassed: none)
//   F[k−1..k−L]      the force history of the delay line, L = ⌊d⌋ + (d fractional ? 1 : 0)
//   y_f              the acquisition low-pass (only if τ_f > 0)
//   x1, x2           the tracking differentiator (m, m/s)
// One cycle k (the order of SitsRunner::step):
//   r⁺ = A_d·r + B_d·X_c,  X_R = C·r⁺ + D·X_c,  Ẋ_R = C·A·r⁺ + C·B·X_c      (bypassed: X_c, V_c)
//   F[k] = −K_tc·X_R − B_tc·Ẋ_R
//   F_m = (1 − f)·F[k − n] + f·F[k − n − 1]                   d = n + f steps (DelayLine)
//   y_f⁺ = y_f + a·(F_m − y_f),  a = T/(τ_f + T)              (ForceConditioner; F_m if τ_f = 0)
//   x1⁺ = x1 + T·x2,  x2⁺ = x2 − T·((x1 − X_R)/h_td² + 2·x2/h_td)
//                                    (Eq. 49–50 in its linear region |y| ≤ r·h², |a| ≤ r·h, where
//                                     fhan = −(x1 − X + 2h·x2)/h²: a critically damped pair at 1/h)
//   F′ = y_f⁺ + K_h·x2⁺ + K_x·X_R                              (compensation, N)
//   v⁺ = v + T·F′/m_e,  x⁺ = x + T·v⁺                          (semi-implicit Euler)
//   X_c⁺, V_c⁺ = x⁺, v⁺ if (k + 1) mod h = 0, else X_c, V_c     (latch of the actuator stage)
// so z[k+1] = A_latch·z[k] or A_hold·z[k], and over one control period (h steps from a cycle
// k ≡ 0 mod h)
//   z[k+h] = Φ·z[k],   Φ = A_latch·A_hold^(h−1).
// The loop is asymptotically stable iff every eigenvalue μ of Φ (Floquet multiplier) has |μ| < 1.
// A multiplier gives a mode growing as e^{σt} with σ = ln|μ|/(h·T) (1/s), and an oscillation at
// arg(μ)/(2π·h·T) Hz, aliased into ±1/(2·h·T). The loop's growth rate is the largest σ.
// Left out (state them when they matter): the actuator safety layer's clips (off for commands
// inside rig.limits), the tare offset (a constant: no effect on stability), sensor noise, and the
// TD's nonlinear region (amplitudes above r·h² = 0.116 m of tracking error for Table 1).
//
// Units: SI throughout (s, kg, N/m, N·s/m, m). Nothing here is real-time safe (analysis).

#include <Eigen/Core>
#include <complex>
#include <optional>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/core/stability.hpp"
#include "hyloop/core/tracking_differentiator.hpp"

namespace hyloop::core {

struct SampledSitsLoop {
  double step = 0.002;                    ///< T, s, > 0
  int hold_steps = 1;                     ///< h ≥ 1 (T_c = h·T)
  double force_delay_steps = 0.0;         ///< d ≥ 0, fractional allowed (τ_s/T)
  double m_e = 500.0;                     ///< kg, > 0
  double k_tc = 0.0;                      ///< N/m, ≥ 0
  double b_tc = 0.0;                      ///< N·s/m, ≥ 0
  std::optional<TransferFunction> robot;  ///< continuous G_R; empty: bypassed (X_R = X_c)
  TrackingDifferentiatorConfig td;        ///< r, h and step (step must equal `step`)
  double filter_time_constant = 0.0;      ///< τ_f of the acquisition low-pass, s; 0: off
  double k_h = 0.0;                       ///< N·s/m
  double k_x = 0.0;                       ///< stiffness (phase) correction, N/m
};

/// Indices of the state vector z (−1: absent).
struct SampledLoopLayout {
  int x = 0, v = 1, command = 2, command_velocity = 3;
  int robot = -1, robot_order = 0;
  int force_history = -1, history_length = 0;
  int filter = -1;
  int td_x1 = -1, td_x2 = -1;
  int size = 0;
};

struct FloquetMode {
  std::complex<double> multiplier;  ///< μ, eigenvalue of Φ
  double growth_rate = 0.0;         ///< σ = ln|μ|/(h·T), 1/s
  double frequency_hz = 0.0;        ///< |arg μ|/(2π·h·T), Hz (aliased)
};

struct SampledLoopAnalysis {
  SampledLoopLayout layout;
  double spectral_radius = 0.0;    ///< max |μ|
  double growth_rate = 0.0;        ///< max σ, 1/s
  std::vector<FloquetMode> modes;  ///< all multipliers, |μ| descending
  [[nodiscard]] bool stable() const noexcept { return spectral_radius < 1.0; }
};

/// The layout for these parameters. @throws std::invalid_argument naming the field that is out
/// of range (step, hold_steps, force_delay_steps, m_e, k_tc, b_tc, filter_time_constant, k_h, k_x,
/// td.r, td.h, td.step ≠ step), or a robot model LtiSystem refuses.
SampledLoopLayout sampled_loop_layout(const SampledSitsLoop& loop);

/// A_latch (latch = true) or A_hold of the header comment. Throws as sampled_loop_layout.
Eigen::MatrixXd sampled_loop_step_matrix(const SampledSitsLoop& loop, bool latch);

/// Φ = A_latch·A_hold^(h−1). Throws as sampled_loop_layout.
Eigen::MatrixXd sampled_loop_period_matrix(const SampledSitsLoop& loop);

/// Floquet multipliers, growth rate and verdict. Throws as sampled_loop_layout.
SampledLoopAnalysis analyse_sampled_loop(const SampledSitsLoop& loop);

/// The K_h (loop.k_h ignored) in [−k_limit, k_limit] for which the sampled loop is stable, as
/// sorted disjoint open intervals (an end at ±k_limit means "at least to there"). A symmetric
/// logarithmic grid (0, ±k_limit·10^(−j/40), j = 0 … 40·decades) finds the sign changes of
/// ln ρ(Φ); bisection puts each end within rel_tolerance·max(1, |K|). An interval narrower than
/// the grid spacing (≈ 6 % of |K|) can be missed.
/// @throws std::invalid_argument for k_limit not finite and > 0, decades < 1, or as above.
std::vector<GainInterval> sampled_stable_gain_intervals(SampledSitsLoop loop, double k_limit,
                                                        int decades = 9,
                                                        double rel_tolerance = 1e-10);

}  // namespace hyloop::core
