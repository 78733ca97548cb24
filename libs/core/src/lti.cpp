#include "hyloop/core/lti.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

// Eigen's matrix-function module trips GCC's -Wnull-dereference after inlining (a false
// positive on a freshly resized vector); silence it for that header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <unsupported/Eigen/MatrixFunctions>
#pragma GCC diagnostic pop

#include "hyloop/core/polynomial.hpp"

namespace hyloop::core {
namespace {

using detail::str;

void require_step(const char* where, double step) {
  if (!std::isfinite(step) || step <= 0.0) {
    throw std::invalid_argument(std::string(where) + ": step = " + str(step) +
                                " s; allowed: finite and > 0");
  }
}

void require_coefficients(const char* where, const char* name, const std::vector<double>& c) {
  if (c.empty()) {
    throw std::invalid_argument(std::string(where) + ": " + name +
                                " is empty; need at least one coefficient");
  }
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c[i])) {
      throw std::invalid_argument(std::string(where) + ": " + name + "[" + std::to_string(i) +
                                  "] = " + str(c[i]) + " is not finite");
    }
  }
}

void require_state_space(const char* where, const StateSpace& ss) {
  const Eigen::Index n = ss.a.rows();
  if (ss.a.cols() != n || ss.b.rows() != n || ss.c.cols() != n) {
    throw std::invalid_argument(std::string(where) + ": inconsistent dimensions a " +
                                std::to_string(ss.a.rows()) + "x" + std::to_string(ss.a.cols()) +
                                ", b " + std::to_string(ss.b.rows()) + "x1, c 1x" +
                                std::to_string(ss.c.cols()) + "; need a n x n, b n x 1, c 1 x n");
  }
  if (!ss.a.allFinite() || !ss.b.allFinite() || !ss.c.allFinite() || !std::isfinite(ss.d)) {
    throw std::invalid_argument(std::string(where) + ": a, b, c and d must be finite");
  }
}

// Strips leading (highest-power) zeros of a descending coefficient list; keeps at least one.
std::vector<double> strip_leading_zeros(const std::vector<double>& c) {
  std::size_t first = 0;
  while (first + 1 < c.size() && c[first] == 0.0) {
    ++first;
  }
  return {c.begin() + static_cast<std::ptrdiff_t>(first), c.end()};
}

// Descending coefficients of p padded with leading zeros to `length`.
std::vector<double> descending_padded(const Polynomial& p, std::size_t length) {
  std::vector<double> d(length, 0.0);
  const auto& c = p.coeffs();
  for (std::size_t i = 0; i < c.size() && i < length; ++i) {
    d[length - 1 - i] = c[i];
  }
  return d;
}

// det(sI − A) by the Hessenberg recurrence
//   p_k = (s − h_kk)·p_{k−1} − Σ_{i<k} h_ik·(Π_{j=i+1..k} h_{j,j−1})·p_{i−1}.
Polynomial characteristic_polynomial(const Eigen::MatrixXd& a) {
  const Eigen::Index n = a.rows();
  if (n == 0) {
    return Polynomial::constant(1.0);
  }
  Eigen::MatrixXd h = a;
  if (n > 2) {
    h = Eigen::HessenbergDecomposition<Eigen::MatrixXd>(a).matrixH();
  }
  std::vector<Polynomial> p(static_cast<std::size_t>(n) + 1);
  p[0] = Polynomial::constant(1.0);
  for (Eigen::Index k = 1; k <= n; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    p[uk] = Polynomial({-h(k - 1, k - 1), 1.0}) * p[uk - 1];
    double product = 1.0;
    for (Eigen::Index i = k - 1; i >= 1; --i) {
      product *= h(i, i - 1);
      p[uk] -= (h(i - 1, k - 1) * product) * p[static_cast<std::size_t>(i) - 1];
    }
  }
  return p.back();
}

std::complex<double> horner_descending(const std::vector<double>& c, std::complex<double> s) {
  std::complex<double> acc = 0.0;
  for (double x : c) {
    acc = acc * s + x;
  }
  return acc;
}

}  // namespace

StateSpace to_state_space(const TransferFunction& tf) {
  constexpr const char* kWhere = "to_state_space";
  require_coefficients(kWhere, "tf.num", tf.num);
  require_coefficients(kWhere, "tf.den", tf.den);
  if (tf.den.front() == 0.0) {
    throw std::invalid_argument(
        "to_state_space: tf.den[0] = 0; the leading denominator coefficient must be nonzero");
  }
  const std::vector<double> num = strip_leading_zeros(tf.num);
  const std::size_t n = tf.den.size() - 1;
  if (num.size() > tf.den.size()) {
    throw std::invalid_argument("to_state_space: improper transfer function (numerator degree " +
                                std::to_string(num.size() - 1) + " > denominator degree " +
                                std::to_string(n) + "); need deg num <= deg den");
  }
  if (n > static_cast<std::size_t>(kMaxLtiOrder)) {
    throw std::invalid_argument("to_state_space: order " + std::to_string(n) +
                                " exceeds kMaxLtiOrder = " + std::to_string(kMaxLtiOrder));
  }
  const double lead = tf.den.front();
  std::vector<double> b(n + 1, 0.0);
  for (std::size_t i = 0; i < num.size(); ++i) {
    b[n + 1 - num.size() + i] = num[i] / lead;
  }
  const auto ni = static_cast<Eigen::Index>(n);
  StateSpace ss;
  ss.a = LtiMatrix::Zero(ni, ni);
  ss.b = LtiVector::Zero(ni);
  ss.c = LtiRow::Zero(ni);
  ss.d = b[0];
  for (std::size_t i = 1; i <= n; ++i) {
    const double ai = tf.den[i] / lead;
    const auto col = static_cast<Eigen::Index>(i) - 1;
    ss.a(0, col) = -ai;
    ss.c(col) = b[i] - b[0] * ai;
  }
  for (Eigen::Index i = 1; i < ni; ++i) {
    ss.a(i, i - 1) = 1.0;
  }
  if (ni > 0) {
    ss.b(0) = 1.0;
  }
  return ss;
}

TransferFunction to_transfer_function(const StateSpace& ss) {
  require_state_space("to_transfer_function", ss);
  const Eigen::Index n = ss.a.rows();
  const Eigen::MatrixXd a = ss.a;
  const Eigen::MatrixXd closed = a - ss.b * ss.c;
  const Polynomial den = characteristic_polynomial(a);
  const Polynomial num = characteristic_polynomial(closed) - den + ss.d * den;
  const auto length = static_cast<std::size_t>(n) + 1;
  return {descending_padded(num, length), descending_padded(den, length)};
}

ZeroPoleGain to_zero_pole_gain(const TransferFunction& tf) {
  constexpr const char* kWhere = "to_zero_pole_gain";
  require_coefficients(kWhere, "tf.num", tf.num);
  require_coefficients(kWhere, "tf.den", tf.den);
  const Polynomial num = Polynomial::from_descending(tf.num);
  const Polynomial den = Polynomial::from_descending(tf.den);
  if (den.is_zero()) {
    throw std::invalid_argument("to_zero_pole_gain: tf.den is all zeros");
  }
  ZeroPoleGain zpk;
  zpk.gain = num.leading() / den.leading();
  if (!num.is_zero()) {
    zpk.zeros = num.roots();
  }
  zpk.poles = den.roots();
  return zpk;
}

TransferFunction to_transfer_function(const ZeroPoleGain& zpk) {
  if (!std::isfinite(zpk.gain)) {
    throw std::invalid_argument("to_transfer_function: zpk.gain = " + str(zpk.gain) +
                                " is not finite");
  }
  const Polynomial num = Polynomial::from_roots(zpk.zeros, zpk.gain);
  const Polynomial den = Polynomial::from_roots(zpk.poles, 1.0);
  return {num.descending(), den.descending()};
}

StateSpace discretise(const StateSpace& continuous, double step, Discretisation method) {
  require_state_space("discretise", continuous);
  require_step("discretise", step);
  const Eigen::Index n = continuous.a.rows();
  StateSpace out;
  if (method == Discretisation::kZeroOrderHold) {
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n + 1, n + 1);
    m.topLeftCorner(n, n) = continuous.a * step;
    m.topRightCorner(n, 1) = continuous.b * step;
    const Eigen::MatrixXd e = m.exp();
    out.a = e.topLeftCorner(n, n);
    out.b = e.topRightCorner(n, 1);
    out.c = continuous.c;
    out.d = continuous.d;
    return out;
  }
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  const Eigen::MatrixXd w = identity - continuous.a * (0.5 * step);
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(w);
  if (!lu.isInvertible()) {
    throw std::invalid_argument("discretise: I - A*step/2 is singular for step = " + str(step) +
                                " s (A has an eigenvalue at 2/step); Tustin is undefined");
  }
  const Eigen::MatrixXd w_inv = lu.inverse();
  const Eigen::MatrixXd b = continuous.b;
  out.a = w_inv * (identity + continuous.a * (0.5 * step));
  out.b = w_inv * b * step;
  out.c = continuous.c * w_inv;
  out.d = continuous.d + (continuous.c * w_inv * b).value() * 0.5 * step;
  return out;
}

StateSpace continualise(const StateSpace& discrete, double step, Discretisation method) {
  require_state_space("continualise", discrete);
  require_step("continualise", step);
  const Eigen::Index n = discrete.a.rows();
  StateSpace out;
  const Eigen::MatrixXd ad = discrete.a;
  if (method == Discretisation::kZeroOrderHold) {
    if (n > 0) {
      const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(ad, false).eigenvalues();
      for (Eigen::Index i = 0; i < n; ++i) {
        const std::complex<double> l = lambda(i);
        if (l.real() <= 0.0 && std::abs(l.imag()) <= 1e-12 * std::max(1.0, std::abs(l))) {
          throw std::invalid_argument(
              "continualise: discrete.a has the eigenvalue " + str(l.real()) +
              " on the closed negative real axis; it is not the zero-order-hold image of a "
              "real continuous model (no real matrix logarithm)");
        }
      }
    }
    Eigen::MatrixXd m = Eigen::MatrixXd::Identity(n + 1, n + 1);
    m.topLeftCorner(n, n) = ad;
    m.topRightCorner(n, 1) = discrete.b;
    const Eigen::MatrixXd l = m.log() / step;
    out.a = l.topLeftCorner(n, n);
    out.b = l.topRightCorner(n, 1);
    out.c = discrete.c;
    out.d = discrete.d;
    return out;
  }
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(ad + identity);
  if (!lu.isInvertible()) {
    throw std::invalid_argument(
        "continualise: discrete.a + I is singular (an eigenvalue at z = -1); it is not the "
        "Tustin image of a finite continuous model");
  }
  // A_d and (A_d + I)⁻¹ commute, so A = (2/T)(A_d + I)⁻¹(A_d − I).
  const Eigen::MatrixXd a = lu.solve(ad - identity) * (2.0 / step);
  const Eigen::MatrixXd w = identity - a * (0.5 * step);
  const Eigen::MatrixXd bd = discrete.b;
  out.a = a;
  out.b = w * bd / step;
  out.c = discrete.c * w;
  out.d = discrete.d - (discrete.c * out.b).value() * 0.5 * step;
  return out;
}

std::complex<double> frequency_response(const TransferFunction& continuous_tf, double omega_rad_s) {
  require_coefficients("frequency_response", "continuous_tf.num", continuous_tf.num);
  require_coefficients("frequency_response", "continuous_tf.den", continuous_tf.den);
  if (!std::isfinite(omega_rad_s)) {
    throw std::invalid_argument("frequency_response: omega_rad_s = " + str(omega_rad_s) +
                                " is not finite");
  }
  const std::complex<double> s(0.0, omega_rad_s);
  return horner_descending(continuous_tf.num, s) / horner_descending(continuous_tf.den, s);
}

std::complex<double> frequency_response_discrete(const TransferFunction& discrete_tf,
                                                 double omega_rad_s, double step) {
  require_coefficients("frequency_response_discrete", "discrete_tf.num", discrete_tf.num);
  require_coefficients("frequency_response_discrete", "discrete_tf.den", discrete_tf.den);
  require_step("frequency_response_discrete", step);
  if (!std::isfinite(omega_rad_s)) {
    throw std::invalid_argument("frequency_response_discrete: omega_rad_s = " + str(omega_rad_s) +
                                " is not finite");
  }
  const std::complex<double> z = std::polar(1.0, omega_rad_s * step);
  return horner_descending(discrete_tf.num, z) / horner_descending(discrete_tf.den, z);
}

LtiSystem::LtiSystem(const StateSpace& continuous, double step, Discretisation method)
    : continuous_(continuous), step_(step), method_(method) {
  require_state_space("LtiSystem", continuous);
  require_step("LtiSystem", step);
  discrete_ = discretise(continuous, step, method);
  const Eigen::Index n = continuous.a.rows();
  equilibrium_per_unit_input_ = LtiVector::Zero(n);
  if (n > 0) {
    const Eigen::MatrixXd a = continuous.a;
    const Eigen::VectorXd minus_b = -continuous.b;
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
    equilibrium_per_unit_input_ = cod.solve(minus_b);
    has_equilibrium_ = cod.rank() == n;
  }
  rate_row_ = continuous.c * continuous.a;
  rate_gain_ = n > 0 ? (continuous.c * continuous.b).value() : 0.0;
  x_ = LtiVector::Zero(n);
  x_next_ = LtiVector::Zero(n);
  reset(0.0);
}

void LtiSystem::reset(double u_steady) noexcept {
  if (u_steady == 0.0) {
    x_.setZero();
  } else {
    x_ = equilibrium_per_unit_input_ * u_steady;
  }
  u_ = u_steady;
  y_ = continuous_.c.dot(x_.transpose()) + continuous_.d * u_steady;
}

double LtiSystem::step(double u) noexcept {
  x_next_.noalias() = discrete_.a * x_;
  x_next_ += discrete_.b * u;
  x_ = x_next_;
  u_ = u;
  y_ = continuous_.c.dot(x_.transpose()) + continuous_.d * u;
  return y_;
}

double LtiSystem::output_rate() const noexcept {
  return rate_row_.dot(x_.transpose()) + rate_gain_ * u_;
}

TransferFunction LtiSystem::sampled_transfer_function() const {
  // G1(z) = C(zI − A_d)⁻¹B_d: strictly proper, num[0] == 0 exactly (both determinants monic).
  const StateSpace open{discrete_.a, discrete_.b, continuous_.c, 0.0};
  const TransferFunction g1 = to_transfer_function(open);
  const std::size_t length = g1.den.size();
  TransferFunction h;
  h.den = g1.den;
  h.num.assign(length, 0.0);
  for (std::size_t i = 0; i + 1 < length; ++i) {
    h.num[i] = g1.num[i + 1];  // multiply by z
  }
  for (std::size_t i = 0; i < length; ++i) {
    h.num[i] += continuous_.d * h.den[i];
  }
  return h;
}

}  // namespace hyloop::core
