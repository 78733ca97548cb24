#include "hyloop/core/free_rigid_body.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;
using detail::str;

namespace {

constexpr double kAgmEpsilon = std::numeric_limits<double>::epsilon();
constexpr double kEllipticNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxAgm = 40;  // the AGM converges quadratically: < 10 steps for m < 1

// The AGM of 1 and √(1 − m), 0 ≤ m < 1.
double agm_of_complement(double m) noexcept {
  double a = 1.0;
  double b = std::sqrt(1.0 - m);
  for (int n = 0; n < kMaxAgm && a - b > kAgmEpsilon * a; ++n) {
    const double next = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = next;
  }
  return a;
}

}  // namespace

JacobiElliptic jacobi_elliptic(double u, double m) noexcept {
  if (!(m >= 0.0 && m <= 1.0) || !std::isfinite(u))
    return {kEllipticNaN, kEllipticNaN, kEllipticNaN};
  if (m == 1.0) {
    const double sech = 1.0 / std::cosh(u);
    return {std::tanh(u), sech, sech};
  }
  std::array<double, kMaxAgm + 1> a{};
  std::array<double, kMaxAgm + 1> b{};
  std::array<double, kMaxAgm + 1> c{};
  a[0] = 1.0;
  b[0] = std::sqrt(1.0 - m);
  c[0] = std::sqrt(m);
  int n = 0;
  while (n < kMaxAgm && c[n] > kAgmEpsilon * a[n]) {
    a[n + 1] = 0.5 * (a[n] + b[n]);
    b[n + 1] = std::sqrt(a[n] * b[n]);
    c[n + 1] = c[n] * c[n] / (4.0 * a[n + 1]);  // = (aₙ − bₙ)/2 without the cancellation
    ++n;
  }
  const double period = 2.0 * std::numbers::pi / a[n];  // 4K
  const double reduced = u - period * std::nearbyint(u / period);
  double phi = std::ldexp(a[n] * reduced, n);
  for (int j = n; j > 0; --j) {
    // ψ = asin(k·sin φ), k = cₙ/aₙ, as atan2 with cos ψ = √(q² + k²·cos² φ), q = bₙ/aₙ
    // (1 − k² = q²): asin is ill-conditioned where its argument nears 1 (m → 1), this is not
    const double k = c[j] / a[j];
    const double q = b[j] / a[j];
    const double kc = k * std::cos(phi);
    phi = 0.5 * (phi + std::atan2(k * std::sin(phi), std::sqrt(q * q + kc * kc)));
  }
  const double sn = std::sin(phi);
  const double cn = std::cos(phi);
  // dn² = 1 − m + m·cn²: no cancellation, unlike cos φ₀/cos(φ₁ − φ₀) (0/0 at u = K)
  const double dn = std::sqrt((1.0 - m) + m * cn * cn);
  return {sn, cn, dn};
}

double elliptic_k(double m) noexcept {
  if (m == 1.0) return std::numeric_limits<double>::infinity();
  if (!(m >= 0.0 && m < 1.0)) return kEllipticNaN;
  return std::numbers::pi / (2.0 * agm_of_complement(m));
}

double elliptic_f(double phi, double m) noexcept {
  if (!(m >= 0.0 && m < 1.0) || !std::isfinite(phi)) return kEllipticNaN;
  const double turns = std::nearbyint(phi / std::numbers::pi);
  double p = phi - turns * std::numbers::pi;  // in [−π/2, π/2]
  double a = 1.0;
  double b = std::sqrt(1.0 - m);
  int n = 0;
  while (n < kMaxAgm && a - b > kAgmEpsilon * a) {
    // φₙ₊₁ = φₙ + atan(b/a·tan φₙ) on the branch continuous in φₙ
    const double s = std::sin(p);
    const double c = std::cos(p);
    p = 2.0 * p - std::atan2((a - b) * s * c, a * c * c + b * s * s);
    const double next = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = next;
    ++n;
  }
  return std::ldexp(p, -n) / a + turns * std::numbers::pi / a;  // + 2nK, K = π/(2a)
}

FreeRigidBody::FreeRigidBody(double i1, double i2, double i3, const Eigen::Vector3d& omega0) {
  const std::array<double, 3> given{i1, i2, i3};
  const std::array<const char*, 3> names{"I1", "I2", "I3"};
  for (int k = 0; k < 3; ++k) {
    require(std::isfinite(given[k]) && given[k] > 0.0, names[k], given[k],
            "must be finite and > 0 kg*m^2");
    require(std::isfinite(omega0[k]), "omega0", omega0[k], "each component must be finite");
  }
  order_ = {0, 1, 2};
  std::sort(order_.begin(), order_.end(), [&](int x, int y) { return given[x] < given[y]; });
  // a permutation of three is odd iff it fixes exactly one element (a transposition)
  const int fixed = (order_[0] == 0) + (order_[1] == 1) + (order_[2] == 2);
  handedness_ = fixed == 1 ? -1.0 : 1.0;
  const double j1 = given[order_[0]], j2 = given[order_[1]], j3 = given[order_[2]];
  for (int s = 0; s < 2; ++s) {
    const double lo = given[order_[s]], hi = given[order_[s + 1]];
    if (!(hi - lo > kDistinctTolerance * j3)) {
      throw std::invalid_argument(std::string(names[order_[s]]) + " = " + str(lo) + ", " +
                                  names[order_[s + 1]] + " = " + str(hi) +
                                  ": the principal moments must be distinct (relative gap > " +
                                  str(kDistinctTolerance) + ")");
    }
  }
  const double w1 = handedness_ * omega0[order_[0]];
  const double w2 = handedness_ * omega0[order_[1]];
  const double w3 = handedness_ * omega0[order_[2]];
  const double l2 = j1 * j1 * w1 * w1 + j2 * j2 * w2 * w2 + j3 * j3 * w3 * w3;
  energy_ = 0.5 * (j1 * w1 * w1 + j2 * w2 * w2 + j3 * w3 * w3);
  momentum_ = std::sqrt(l2);
  const double upper = j1 * (j3 - j1) * w1 * w1 + j2 * (j3 - j2) * w2 * w2;   // 2E·I₃ − L²
  const double lower = j2 * (j2 - j1) * w2 * w2 + j3 * (j3 - j1) * w3 * w3;   // L² − 2E·I₁
  const double middle = j3 * (j3 - j2) * w3 * w3 - j1 * (j2 - j1) * w1 * w1;  // L² − 2E·I₂
  if (!(std::abs(middle) > kSeparatrixTolerance * l2)) {
    throw std::invalid_argument("omega0: L^2 - 2*E*I_mid = " + str(middle) + " with L^2 = " +
                                str(l2) + ": on the separatrix (|L^2 - 2*E*I_mid| must be > " +
                                str(kSeparatrixTolerance) + "*L^2, omega0 != 0)");
  }
  major_ = middle > 0.0;
  const double product = j1 * j2 * j3;
  const double p1 = std::sqrt(upper / (j1 * (j3 - j1)));
  const double p3 = std::sqrt(lower / (j3 * (j3 - j1)));
  double phase_angle = 0.0;  // the amplitude φ₀ = am τ₀
  if (major_) {
    const double p2 = std::sqrt(upper / (j2 * (j3 - j2)));
    const double s = w3 >= 0.0 ? 1.0 : -1.0;
    amplitude_ = {p1, s * p2, s * p3};
    rate_ = std::sqrt((j3 - j2) * lower / product);
    m_ = (j2 - j1) * upper / ((j3 - j2) * lower);
    phase_angle = std::atan2(s * w2 * p1, w1 * p2);  // sn τ₀ = ω₂/a₂, cn τ₀ = ω₁/a₁
  } else {
    const double p2 = std::sqrt(lower / (j2 * (j2 - j1)));
    const double s = w1 >= 0.0 ? 1.0 : -1.0;
    amplitude_ = {s * p1, s * p2, p3};
    rate_ = std::sqrt((j2 - j1) * upper / product);
    m_ = (j3 - j2) * lower / ((j2 - j1) * upper);
    phase_angle = std::atan2(s * w2 * p3, w3 * p2);  // sn τ₀ = ω₂/a₂, cn τ₀ = ω₃/a₃
  }
  phase_ = elliptic_f(phase_angle, m_);
  period_ = 4.0 * elliptic_k(m_) / rate_;
}

Eigen::Vector3d FreeRigidBody::omega(double t) const noexcept {
  const JacobiElliptic e = jacobi_elliptic(rate_ * t + phase_, m_);
  const Eigen::Vector3d sorted =
      major_ ? Eigen::Vector3d(amplitude_[0] * e.cn, amplitude_[1] * e.sn, amplitude_[2] * e.dn)
             : Eigen::Vector3d(amplitude_[0] * e.dn, amplitude_[1] * e.sn, amplitude_[2] * e.cn);
  Eigen::Vector3d out;
  for (int s = 0; s < 3; ++s) out[order_[s]] = handedness_ * sorted[s];
  return out;
}

}  // namespace hyloop::core
