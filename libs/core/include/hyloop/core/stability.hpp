#pragma once
// Stability of the linearised SITS loop (SITS §3.3): the characteristic polynomial, the Routh
// array, and the exact set of compensation gains K_h that stabilise the loop.
//
// Characteristic polynomial (Eq. 34 with the erratum of DESIGN §8: hold G_c = 2/(2 + T_c·s)),
// built by polynomial products, never from the hand expansion of Eq. 37:
//
//   P(s) = m_e·s²·(2 + T_c·s)·(2 + τ_s·s)·Π(s − p_i)
//        + 2·K_R·Π(s − z_j)·(2 − τ_s·s)·(K_tc + B_tc·s)
//        − 2·K_h·K_R·s·(2 + τ_s·s)·Π(s − z_j)
//        − 2·K_x·K_R·(2 + τ_s·s)·Π(s − z_j)
//      = P0(s) + K_h·P1(s)            (the K_x term, a fixed parameter, is part of P0)
//
// from G_d = 1/(m_e s²), G_f = −(K_tc + B_tc s), G_s = (2 − τ_s s)/(2 + τ_s s) (first-order Padé
// of the force delay τ_s), G_c = 2/(2 + T_c s) (the hold of the control cycle T_c) and the robot
// G_R = K_R·Π(s − z_j)/Π(s − p_i) (Eq. 32). Switching a delay off (or setting τ_s = 0, T_c = 0)
// turns its factors into the constant 2; bypassing the robot makes G_R = 1. K_x (N/m) is the
// phase (stiffness) correction F′ = F_m + K_h·v̂_R + K_x·X_R of phase_correction.hpp; 0: none.
// This is the rational part only: the exact sampled loop is in sampled_loop_stability.hpp.
//
// Routh array (Eq. 38): rows s^n … s^0; row 0 = [a_n, a_(n−2), …], row 1 = [a_(n−1), a_(n−3), …],
//   r_i[j] = (r_(i−1)[0]·r_(i−2)[j+1] − r_(i−2)[0]·r_(i−1)[j+1]) / r_(i−1)[0].
// The number of sign changes in the first column is the number of right-half-plane roots
// (Eq. 39: all first-column entries positive ⇔ Hurwitz). Special cases:
//   zero first element, rest of the row not all zero: replaced by ε > 0 (reported);
//   all-zero row: replaced by the derivative of the auxiliary polynomial of the row above
//     (reported with the polynomial); the auxiliary polynomial's roots are symmetric about the
//     origin: pairs ±σ, quadruplets ±σ ± jω, and roots on the imaginary axis. Those on the axis
//     number deg(aux) − 2·(sign changes from the auxiliary row down).
// Entries whose magnitude is below zero_tolerance times the magnitude of the products they are
// computed from count as zero.
//
// Units: m_e in kg, K_tc in N/m, B_tc in N·s/m, τ_s and T_c in s, K_h in N·s/m, s in 1/s.
// Nothing here is real-time safe (analysis, off the loop).

#include <limits>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/core/polynomial.hpp"

namespace hyloop::core {

struct SitsLoopParameters {
  double m_e = 0.0;           // equivalent mass, kg, > 0
  double k_tc = 0.0;          // contact stiffness K_tc, N/m, ≥ 0
  double b_tc = 0.0;          // contact damping B_tc, N·s/m, ≥ 0
  double tau_s = 0.0;         // force-measurement delay τ_s, s, ≥ 0
  double t_c = 0.0;           // control cycle T_c, s, ≥ 0
  bool force_delay = true;    // false: G_s = 1 (as τ_s = 0)
  bool control_cycle = true;  // false: G_c = 1 (as T_c = 0)
  bool robot = true;          // false: G_R = 1 (robot bypassed)
  double k_x = 0.0;           // stiffness (phase) correction K_x, N/m, finite
};

/// The delay part of `p` as a scenario states it: each delay on or off, τ_s and T_c (0 when off).
inline void set_sits_delays(SitsLoopParameters& p, bool force_delay, double tau_s,
                            bool control_cycle, double t_c, bool robot) noexcept {
  p.tau_s = force_delay ? tau_s : 0.0;
  p.t_c = control_cycle ? t_c : 0.0;
  p.force_delay = force_delay;
  p.control_cycle = control_cycle;
  p.robot = robot;
}

/// P(s) = P0(s) + K_h·P1(s).
struct SitsCharacteristic {
  Polynomial p0;
  Polynomial p1;
  [[nodiscard]] Polynomial at(double k_h) const { return p0 + k_h * p1; }
};

/// P0 and P1 of the header comment for any number of robot zeros and poles.
/// @throws std::invalid_argument naming the parameter: m_e not finite and > 0, k_tc, b_tc, tau_s
///         or t_c negative or not finite, k_x not finite, robot.gain zero or not finite, or a
///         complex robot zero or pole without its conjugate.
SitsCharacteristic sits_characteristic(const SitsLoopParameters& p, const ZeroPoleGain& robot);

/// P0 + K_h·P1 (Eq. 34 with the hold erratum).
Polynomial sits_characteristic_polynomial(const SitsLoopParameters& p, const ZeroPoleGain& robot,
                                          double k_h);

enum class StabilityVerdict {
  kStable,    // every root in the open left half-plane (Hurwitz)
  kMarginal,  // no root in the right half-plane, simple roots on the imaginary axis
  kUnstable,  // a root in the right half-plane, or a repeated root on the imaginary axis
};

[[nodiscard]] const char* to_string(StabilityVerdict verdict) noexcept;

/// A zero first element replaced by ε.
struct RouthEpsilon {
  int row = 0;    // index into RouthResult::array
  int power = 0;  // the row of s^power
  double epsilon = 0.0;
};

/// An all-zero row replaced by the derivative of the auxiliary polynomial of the row above.
struct RouthZeroRow {
  int row = 0;                   // index of the zero row
  int power = 0;                 // the zero row was the row of s^power
  Polynomial auxiliary;          // from the row of s^(power + 1); its roots are symmetric about 0
  int imaginary_axis_roots = 0;  // deg(auxiliary) − 2·(sign changes from its row down)
};

struct RouthResult {
  Polynomial polynomial;                   // as analysed: leading coefficient made positive
  std::vector<std::vector<double>> array;  // array[i]: the row of s^(n−i), padded with zeros
  std::vector<double> first_column;
  int sign_changes = 0;  // = right-half-plane roots
  int imaginary_axis_roots = 0;
  bool repeated_imaginary_axis_roots = false;
  std::vector<RouthEpsilon> epsilons;
  std::vector<RouthZeroRow> zero_rows;
  StabilityVerdict verdict = StabilityVerdict::kUnstable;

  [[nodiscard]] int rhp_roots() const noexcept { return sign_changes; }
  [[nodiscard]] bool stable() const noexcept { return verdict == StabilityVerdict::kStable; }
  /// Multi-line table of the array for logs.
  [[nodiscard]] std::string to_string() const;
};

inline constexpr double kRouthZeroTolerance = 1e-10;

/// The Routh array of p (degree ≥ 0) with both special cases handled.
/// @throws std::invalid_argument for the zero polynomial or a tolerance outside [0, 1).
RouthResult routh(const Polynomial& p, double zero_tolerance = kRouthZeroTolerance);

/// An interval of gains; infinite ends are ±infinity and open.
struct GainInterval {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool lower_closed = false;
  bool upper_closed = false;
  [[nodiscard]] bool contains(double k) const noexcept;
};

/// The exact set of K for which p0 + K·p1 is Hurwitz, as sorted disjoint intervals.
/// Candidate boundaries: K = −p0(jω)/p1(jω) at the real roots ω ≥ 0 of
/// Im(p0(jω)·conj(p1(jω))) = 0 (a root crossing the imaginary axis) and the K where the degree
/// drops (a root through infinity). One Routh test inside each open interval between candidates
/// decides it; a degree-drop point is tested itself (the lower-degree polynomial may be Hurwitz,
/// making that end closed); adjacent stable pieces are merged.
/// @throws std::invalid_argument if p1 is the zero polynomial.
std::vector<GainInterval> stable_gain_intervals(const Polynomial& p0, const Polynomial& p1);

}  // namespace hyloop::core
