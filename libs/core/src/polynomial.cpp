#include "hyloop/core/polynomial.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace hyloop::core {
namespace {

std::string number(double x) {
  if (!std::isfinite(x)) {
    return "null";
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

// Parlett–Reinsch balancing (EISPACK balanc): diagonal similarity by powers of two that makes
// row and column norms comparable, so that EigenSolver sees a well-scaled matrix.
void balance(Eigen::MatrixXd& m) {
  constexpr double kRadix = 2.0;
  constexpr double kRadixSquared = kRadix * kRadix;
  const Eigen::Index n = m.rows();
  bool done = false;
  while (!done) {
    done = true;
    for (Eigen::Index i = 0; i < n; ++i) {
      double r = 0.0;
      double c = 0.0;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (j != i) {
          c += std::abs(m(j, i));
          r += std::abs(m(i, j));
        }
      }
      if (c == 0.0 || r == 0.0 || !std::isfinite(c) || !std::isfinite(r)) {
        continue;  // (an infinite sum never scales down: the loops below would not end)
      }
      const double s = c + r;
      double f = 1.0;
      double g = r / kRadix;
      while (c < g) {
        f *= kRadix;
        c *= kRadixSquared;
      }
      g = r * kRadix;
      while (c > g) {
        f /= kRadix;
        c /= kRadixSquared;
      }
      if ((c + r) / f < 0.95 * s) {
        done = false;
        m.row(i) /= f;
        m.col(i) *= f;
      }
    }
  }
}

}  // namespace

Polynomial::Polynomial(std::vector<double> ascending) : coeffs_(std::move(ascending)) {
  for (std::size_t i = 0; i < coeffs_.size(); ++i) {
    if (!std::isfinite(coeffs_[i])) {
      throw std::invalid_argument("Polynomial: ascending[" + std::to_string(i) +
                                  "] = " + number(coeffs_[i]) +
                                  " is not finite; coefficients must be finite");
    }
  }
  trim();
}

Polynomial Polynomial::constant(double c) { return Polynomial(std::vector<double>{c}); }

Polynomial Polynomial::monomial(int power, double coefficient) {
  if (power < 0) {
    throw std::invalid_argument("Polynomial::monomial: power = " + std::to_string(power) +
                                " is negative; allowed: power >= 0");
  }
  std::vector<double> c(static_cast<std::size_t>(power) + 1, 0.0);
  c.back() = coefficient;
  return Polynomial(std::move(c));
}

Polynomial Polynomial::from_descending(std::span<const double> descending) {
  return Polynomial(std::vector<double>(descending.rbegin(), descending.rend()));
}

Polynomial Polynomial::from_roots(std::span<const std::complex<double>> roots, double leading) {
  constexpr double kPairTolerance = 1e-6;
  constexpr double kRealTolerance = 1e-12;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (!std::isfinite(roots[i].real()) || !std::isfinite(roots[i].imag())) {
      throw std::invalid_argument("Polynomial::from_roots: roots[" + std::to_string(i) +
                                  "] is not finite; roots must be finite");
    }
  }
  Polynomial p = constant(leading);
  std::vector<bool> used(roots.size(), false);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (used[i]) {
      continue;
    }
    used[i] = true;
    const std::complex<double> r = roots[i];
    if (r.imag() == 0.0) {
      p *= Polynomial({-r.real(), 1.0});
      continue;
    }
    // Nearest unused root to conj(r).
    std::size_t best = roots.size();
    double best_distance = std::numeric_limits<double>::infinity();
    for (std::size_t j = i + 1; j < roots.size(); ++j) {
      if (!used[j] && roots[j].imag() * r.imag() < 0.0) {
        const double d = std::abs(roots[j] - std::conj(r));
        if (d < best_distance) {
          best_distance = d;
          best = j;
        }
      }
    }
    const double scale = std::max(1.0, std::abs(r));
    if (best < roots.size() && best_distance <= kPairTolerance * scale) {
      used[best] = true;
      const double re = 0.5 * (r.real() + roots[best].real());
      const double im = 0.5 * (std::abs(r.imag()) + std::abs(roots[best].imag()));
      p *= Polynomial({re * re + im * im, -2.0 * re, 1.0});
    } else if (std::abs(r.imag()) <= kRealTolerance * scale) {
      p *= Polynomial({-r.real(), 1.0});
    } else {
      throw std::invalid_argument("Polynomial::from_roots: roots[" + std::to_string(i) + "] = " +
                                  number(r.real()) + (r.imag() < 0 ? "" : "+") + number(r.imag()) +
                                  "j has no complex-conjugate partner; complex roots of a real "
                                  "polynomial must come in conjugate pairs");
    }
  }
  return p;
}

double Polynomial::coeff(int power) const noexcept {
  if (power < 0 || power >= static_cast<int>(coeffs_.size())) {
    return 0.0;
  }
  return coeffs_[static_cast<std::size_t>(power)];
}

std::vector<double> Polynomial::descending() const {
  if (coeffs_.empty()) {
    return {0.0};
  }
  return {coeffs_.rbegin(), coeffs_.rend()};
}

std::complex<double> Polynomial::evaluate(std::complex<double> s) const noexcept {
  std::complex<double> acc = 0.0;
  for (auto it = coeffs_.rbegin(); it != coeffs_.rend(); ++it) {
    acc = acc * s + *it;
  }
  return acc;
}

double Polynomial::evaluate(double s) const noexcept {
  double acc = 0.0;
  for (auto it = coeffs_.rbegin(); it != coeffs_.rend(); ++it) {
    acc = acc * s + *it;
  }
  return acc;
}

Polynomial Polynomial::derivative() const {
  if (coeffs_.size() <= 1) {
    return {};
  }
  std::vector<double> d(coeffs_.size() - 1);
  for (std::size_t i = 1; i < coeffs_.size(); ++i) {
    d[i - 1] = static_cast<double>(i) * coeffs_[i];
  }
  return Polynomial(std::move(d));
}

namespace {

// Up to three Newton steps on a real root `x` of `p` (derivative `dp`), each kept only while it
// lowers |p(x)|.
double polished_real_root(const Polynomial& p, const Polynomial& dp, double x) {
  double fx = std::abs(p.evaluate(x));
  for (int iteration = 0; iteration < 3 && fx > 0.0; ++iteration) {
    const double slope = dp.evaluate(x);
    if (slope == 0.0) {
      break;
    }
    const double candidate = x - p.evaluate(x) / slope;
    const double f_candidate = std::abs(p.evaluate(candidate));
    if (!(f_candidate < fx)) {
      break;
    }
    x = candidate;
    fx = f_candidate;
  }
  return x;
}

// The same for a complex root `r`, which also stops before a step that would make it real.
std::complex<double> polished_complex_root(const Polynomial& p, const Polynomial& dp,
                                           std::complex<double> r) {
  double fr = std::abs(p.evaluate(r));
  for (int iteration = 0; iteration < 3 && fr > 0.0; ++iteration) {
    const std::complex<double> slope = dp.evaluate(r);
    if (slope == 0.0) {
      break;
    }
    const std::complex<double> candidate = r - p.evaluate(r) / slope;
    const double f_candidate = std::abs(p.evaluate(candidate));
    if (!(f_candidate < fr) || candidate.imag() == 0.0) {
      break;
    }
    r = candidate;
    fr = f_candidate;
  }
  return r;
}

}  // namespace

std::vector<std::complex<double>> Polynomial::roots() const {
  if (is_zero()) {
    throw std::invalid_argument(
        "Polynomial::roots: the zero polynomial has every s as a root; need a nonzero polynomial");
  }
  std::vector<std::complex<double>> result;
  // Exact roots at the origin.
  std::size_t zeros = 0;
  while (coeffs_[zeros] == 0.0) {
    ++zeros;
  }
  result.assign(zeros, std::complex<double>(0.0, 0.0));
  const Eigen::Index n = static_cast<Eigen::Index>(coeffs_.size() - zeros) - 1;
  if (n == 0) {
    return result;
  }
  const double lead = coeffs_.back();
  Eigen::MatrixXd companion = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (i > 0) {
      companion(i, i - 1) = 1.0;
    }
    companion(i, n - 1) = -coeffs_[zeros + static_cast<std::size_t>(i)] / lead;
    if (!std::isfinite(companion(i, n - 1))) {
      throw std::invalid_argument("Polynomial::roots: c" + std::to_string(zeros + i) + "/c" +
                                  std::to_string(coeffs_.size() - 1) +
                                  " is not finite (coefficients out of range)");
    }
  }
  Eigen::MatrixXd balanced = companion;
  balance(balanced);
  if (balanced.allFinite()) {  // balancing widely spread coefficients can overflow
    companion = balanced;
  }
  Eigen::EigenSolver<Eigen::MatrixXd> solver(companion, false);
  if (solver.info() != Eigen::Success) {
    throw std::runtime_error("Polynomial::roots: the eigenvalue iteration did not converge for " +
                             to_string());
  }
  const Polynomial dp = derivative();
  const auto& eigenvalues = solver.eigenvalues();
  for (Eigen::Index i = 0; i < n; ++i) {
    std::complex<double> r = eigenvalues(i);
    if (r.imag() == 0.0) {
      // Real roots stay real.
      r = {polished_real_root(*this, dp, r.real()), 0.0};
    } else {
      r = polished_complex_root(*this, dp, r);
      // EigenSolver returns a conjugate pair as neighbours: keep the pair exactly conjugate.
      if (i + 1 < n && eigenvalues(i + 1) == std::conj(eigenvalues(i))) {
        result.push_back(r);
        r = std::conj(r);
        ++i;
      }
    }
    result.push_back(r);
  }
  return result;
}

std::string Polynomial::to_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < coeffs_.size(); ++i) {
    if (i > 0) {
      s += ',';
    }
    s += number(coeffs_[i]);
  }
  s += ']';
  return s;
}

std::string Polynomial::to_expression(char variable) const {
  if (coeffs_.empty()) {
    return "0";
  }
  std::string s;
  for (std::size_t k = coeffs_.size(); k-- > 0;) {
    const double c = coeffs_[k];
    if (c == 0.0) {
      continue;
    }
    if (!s.empty()) {
      s += c < 0.0 ? " - " : " + ";
    } else if (c < 0.0) {
      s += '-';
    }
    const double magnitude = std::abs(c);
    if (k == 0 || magnitude != 1.0) {
      s += number(magnitude);
      if (k > 0) {
        s += '*';
      }
    }
    if (k >= 1) {
      s += variable;
    }
    if (k >= 2) {
      s += '^' + std::to_string(k);
    }
  }
  return s;
}

Polynomial& Polynomial::operator+=(const Polynomial& other) {
  if (other.coeffs_.size() > coeffs_.size()) {
    coeffs_.resize(other.coeffs_.size(), 0.0);
  }
  for (std::size_t i = 0; i < other.coeffs_.size(); ++i) {
    coeffs_[i] += other.coeffs_[i];
  }
  trim();
  return *this;
}

Polynomial& Polynomial::operator-=(const Polynomial& other) {
  if (other.coeffs_.size() > coeffs_.size()) {
    coeffs_.resize(other.coeffs_.size(), 0.0);
  }
  for (std::size_t i = 0; i < other.coeffs_.size(); ++i) {
    coeffs_[i] -= other.coeffs_[i];
  }
  trim();
  return *this;
}

Polynomial operator*(const Polynomial& lhs, const Polynomial& rhs) {
  if (lhs.is_zero() || rhs.is_zero()) {
    return {};
  }
  std::vector<double> c(lhs.coeffs_.size() + rhs.coeffs_.size() - 1, 0.0);
  for (std::size_t i = 0; i < lhs.coeffs_.size(); ++i) {
    for (std::size_t j = 0; j < rhs.coeffs_.size(); ++j) {
      c[i + j] += lhs.coeffs_[i] * rhs.coeffs_[j];
    }
  }
  Polynomial p;
  p.coeffs_ = std::move(c);
  p.trim();
  return p;
}

Polynomial& Polynomial::operator*=(const Polynomial& other) {
  *this = *this * other;
  return *this;
}

Polynomial& Polynomial::operator*=(double scale) {
  for (double& c : coeffs_) {
    c *= scale;
  }
  trim();
  return *this;
}

Polynomial& Polynomial::operator/=(double scale) {
  for (double& c : coeffs_) {
    c /= scale;
  }
  trim();
  return *this;
}

void Polynomial::trim() noexcept {
  while (!coeffs_.empty() && coeffs_.back() == 0.0) {
    coeffs_.pop_back();
  }
}

}  // namespace hyloop::core
