#include "hyloop/core/stability.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "number_text.hpp"

namespace hyloop::core {
namespace {

constexpr double kEpsilonRelative = 1e-9;

using detail::str;

void require_nonnegative(const char* name, double value) {
  if (!std::isfinite(value) || value < 0.0) {
    throw std::invalid_argument(std::string("sits_characteristic: ") + name + " = " + str(value) +
                                "; allowed: finite and >= 0");
  }
}

Polynomial roots_polynomial(const char* name, const std::vector<std::complex<double>>& roots) {
  try {
    return Polynomial::from_roots(roots);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("sits_characteristic: ") + name + ": " + e.what());
  }
}

int count_sign_changes(const std::vector<double>& column, std::size_t from) {
  int changes = 0;
  for (std::size_t i = from + 1; i < column.size(); ++i) {
    if ((column[i] > 0.0) != (column[i - 1] > 0.0)) {
      ++changes;
    }
  }
  return changes;
}

// p(jω) = E(ω) + j·O(ω) with E, O real polynomials in ω.
std::pair<Polynomial, Polynomial> even_odd_parts(const Polynomial& p) {
  std::vector<double> e(p.coeffs().size(), 0.0);
  std::vector<double> o(p.coeffs().size(), 0.0);
  for (std::size_t i = 0; i < p.coeffs().size(); ++i) {
    const double sign = (i / 2) % 2 == 0 ? 1.0 : -1.0;  // j^i = ±1 or ±j
    (i % 2 == 0 ? e : o)[i] = sign * p.coeffs()[i];
  }
  return {Polynomial(std::move(e)), Polynomial(std::move(o))};
}

// p0 + k·p1 with the coefficients that cancel to rounding level set to exactly zero.
Polynomial combine(const Polynomial& p0, const Polynomial& p1, double k) {
  const int n = std::max(p0.degree(), p1.degree());
  std::vector<double> c(static_cast<std::size_t>(n) + 1, 0.0);
  for (int i = 0; i <= n; ++i) {
    const double a = p0.coeff(i);
    const double b = k * p1.coeff(i);
    const double sum = a + b;
    c[static_cast<std::size_t>(i)] =
        std::abs(sum) <= 1e-13 * (std::abs(a) + std::abs(b)) ? 0.0 : sum;
  }
  return Polynomial(std::move(c));
}

bool hurwitz(const Polynomial& p) { return !p.is_zero() && routh(p).stable(); }

}  // namespace

SitsCharacteristic sits_characteristic(const SitsLoopParameters& p, const ZeroPoleGain& robot) {
  if (!std::isfinite(p.m_e) || p.m_e <= 0.0) {
    throw std::invalid_argument("sits_characteristic: m_e = " + str(p.m_e) +
                                " kg; allowed: finite and > 0");
  }
  require_nonnegative("k_tc", p.k_tc);
  require_nonnegative("b_tc", p.b_tc);
  require_nonnegative("tau_s", p.tau_s);
  require_nonnegative("t_c", p.t_c);
  if (!std::isfinite(p.k_x)) {
    throw std::invalid_argument("sits_characteristic: k_x = " + str(p.k_x) +
                                " N/m; allowed: finite");
  }
  Polynomial zeros = Polynomial::constant(1.0);
  Polynomial poles = Polynomial::constant(1.0);
  double k_r = 1.0;
  if (p.robot) {
    if (!std::isfinite(robot.gain) || robot.gain == 0.0) {
      throw std::invalid_argument("sits_characteristic: robot.gain = " + str(robot.gain) +
                                  "; allowed: finite and nonzero");
    }
    zeros = roots_polynomial("robot.zeros", robot.zeros);
    poles = roots_polynomial("robot.poles", robot.poles);
    k_r = robot.gain;
  }
  const Polynomial s = Polynomial::monomial(1);
  const Polynomial hold({2.0, p.control_cycle ? p.t_c : 0.0});       // 2 + T_c·s
  const Polynomial pade_den({2.0, p.force_delay ? p.tau_s : 0.0});   // 2 + τ_s·s
  const Polynomial pade_num({2.0, p.force_delay ? -p.tau_s : 0.0});  // 2 − τ_s·s
  const Polynomial contact({p.k_tc, p.b_tc});                        // K_tc + B_tc·s
  SitsCharacteristic c;
  c.p0 = p.m_e * s * s * hold * pade_den * poles + 2.0 * k_r * zeros * pade_num * contact;
  if (p.k_x != 0.0) {
    c.p0 = c.p0 + (-2.0 * p.k_x * k_r) * pade_den * zeros;
  }
  c.p1 = -2.0 * k_r * s * pade_den * zeros;
  return c;
}

Polynomial sits_characteristic_polynomial(const SitsLoopParameters& p, const ZeroPoleGain& robot,
                                          double k_h) {
  if (!std::isfinite(k_h)) {
    throw std::invalid_argument("sits_characteristic_polynomial: k_h = " + str(k_h) +
                                " is not finite");
  }
  return sits_characteristic(p, robot).at(k_h);
}

const char* to_string(StabilityVerdict verdict) noexcept {
  switch (verdict) {
    case StabilityVerdict::kStable:
      return "stable";
    case StabilityVerdict::kMarginal:
      return "marginal";
    case StabilityVerdict::kUnstable:
      return "unstable";
  }
  return "unknown";
}

namespace {

// Row i of the Routh array (of power `power`) is all zeros: the auxiliary polynomial of the row
// above (power + 1) is recorded and the row replaced by its derivative's coefficients.
void replace_zero_row(RouthResult& result, std::size_t i, int power, std::size_t width) {
  auto& row = result.array[i];
  const auto& above = result.array[i - 1];
  const int q = power + 1;
  std::vector<double> aux(static_cast<std::size_t>(q) + 1, 0.0);
  for (std::size_t j = 0; j < width; ++j) {
    const int k = q - 2 * static_cast<int>(j);
    if (k >= 0) {
      aux[static_cast<std::size_t>(k)] = above[j];
      row[j] = static_cast<double>(k) * above[j];
    }
  }
  RouthZeroRow zero_row;
  zero_row.row = static_cast<int>(i);
  zero_row.power = power;
  zero_row.auxiliary = Polynomial(std::move(aux));
  result.zero_rows.push_back(std::move(zero_row));
}

// From the completed array: the first column, its sign changes, the imaginary-axis roots of each
// zero row, and the verdict.
void count_and_judge(RouthResult& result) {
  result.first_column.reserve(result.array.size());
  for (const auto& row : result.array) {
    result.first_column.push_back(row[0]);
  }
  result.sign_changes = count_sign_changes(result.first_column, 0);
  for (std::size_t e = 0; e < result.zero_rows.size(); ++e) {
    RouthZeroRow& z = result.zero_rows[e];
    const int below = count_sign_changes(result.first_column, static_cast<std::size_t>(z.row) - 1);
    z.imaginary_axis_roots = z.auxiliary.degree() - 2 * below;
    if (e == 0) {
      result.imaginary_axis_roots = z.imaginary_axis_roots;
    } else if (z.imaginary_axis_roots > 0) {
      result.repeated_imaginary_axis_roots = true;
    }
  }
  if (result.sign_changes > 0 || result.repeated_imaginary_axis_roots) {
    result.verdict = StabilityVerdict::kUnstable;
  } else if (result.imaginary_axis_roots > 0) {
    result.verdict = StabilityVerdict::kMarginal;
  } else {
    result.verdict = StabilityVerdict::kStable;
  }
}

}  // namespace

RouthResult routh(const Polynomial& p_in, double zero_tolerance) {
  if (p_in.is_zero()) {
    throw std::invalid_argument("routh: the zero polynomial has no Routh array");
  }
  if (!(zero_tolerance >= 0.0 && zero_tolerance < 1.0)) {
    throw std::invalid_argument("routh: zero_tolerance = " + str(zero_tolerance) +
                                "; allowed: 0 <= zero_tolerance < 1");
  }
  RouthResult result;
  result.polynomial = p_in.leading() < 0.0 ? -p_in : p_in;
  const Polynomial& p = result.polynomial;
  const int n = p.degree();
  const std::size_t width = static_cast<std::size_t>(n) / 2 + 1;
  auto& rows = result.array;
  rows.assign(static_cast<std::size_t>(n) + 1, std::vector<double>(width, 0.0));
  for (std::size_t j = 0; j < width; ++j) {
    rows[0][j] = p.coeff(n - 2 * static_cast<int>(j));
    if (n >= 1) {
      rows[1][j] = p.coeff(n - 1 - 2 * static_cast<int>(j));
    }
  }
  for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i) {
    auto& row = rows[i];
    if (i >= 2) {
      const auto& above = rows[i - 1];
      const auto& above2 = rows[i - 2];
      const double a = above[0];
      for (std::size_t j = 0; j < width; ++j) {
        const double b = j + 1 < width ? above2[j + 1] : 0.0;
        const double d = j + 1 < width ? above[j + 1] : 0.0;
        const double c = above2[0];
        const double value = (a * b - c * d) / a;
        const double scale = (std::abs(a * b) + std::abs(c * d)) / std::abs(a);
        row[j] = std::abs(value) <= zero_tolerance * scale ? 0.0 : value;
      }
    }
    const int power = n - static_cast<int>(i);
    const bool all_zero = std::all_of(row.begin(), row.end(), [](double v) { return v == 0.0; });
    if (all_zero) {
      replace_zero_row(result, i, power, width);
    } else if (row[0] == 0.0) {
      double magnitude = 0.0;
      for (double v : row) {
        magnitude = std::max(magnitude, std::abs(v));
      }
      const double epsilon = kEpsilonRelative * magnitude;
      row[0] = epsilon;
      result.epsilons.push_back({static_cast<int>(i), power, epsilon});
    }
  }
  count_and_judge(result);
  return result;
}

std::string RouthResult::to_string() const {
  std::string s;
  const int n = static_cast<int>(array.size()) - 1;
  for (std::size_t i = 0; i < array.size(); ++i) {
    char label[16];
    std::snprintf(label, sizeof label, "s^%-2d |", n - static_cast<int>(i));
    s += label;
    for (double v : array[i]) {
      char cell[32];
      std::snprintf(cell, sizeof cell, " %14.6g", v);
      s += cell;
    }
    s += '\n';
  }
  s += "sign changes: " + std::to_string(sign_changes) +
       ", imaginary-axis roots: " + std::to_string(imaginary_axis_roots) +
       ", verdict: " + hyloop::core::to_string(verdict) + '\n';
  return s;
}

bool GainInterval::contains(double k) const noexcept {
  const bool above = lower_closed ? k >= lower : k > lower;
  const bool below = upper_closed ? k <= upper : k < upper;
  return above && below;
}

namespace {

// A gain K where the stability of p0 + K·p1 can change.
struct GainCandidate {
  double k;
  bool crossing;  // a root on the imaginary axis at this K (open end)
};

// The candidate gains of p0 + K·p1 (degree `n`), ascending, those within 1e-12 (relative) of the
// one before merged into it.
std::vector<GainCandidate> distinct_gain_candidates(const Polynomial& p0, const Polynomial& p1,
                                                    int n) {
  std::vector<GainCandidate> candidates;
  // Imaginary-axis crossings: ω = 0 and the real roots ω > 0 of Im(p0(jω)·conj(p1(jω))).
  if (p1.coeff(0) != 0.0) {
    candidates.push_back({-p0.coeff(0) / p1.coeff(0), true});
  }
  const auto [e0, o0] = even_odd_parts(p0);
  const auto [e1, o1] = even_odd_parts(p1);
  const Polynomial f = o0 * e1 - e0 * o1;
  if (f.degree() >= 1) {
    for (const std::complex<double>& w : f.roots()) {
      if (w.real() <= 0.0 || std::abs(w.imag()) > 1e-4 * std::abs(w)) {
        continue;
      }
      const std::complex<double> s(0.0, w.real());
      const std::complex<double> q1 = p1.evaluate(s);
      if (std::abs(q1) == 0.0) {
        continue;
      }
      const double k = -(p0.evaluate(s) / q1).real();
      if (std::isfinite(k)) {
        candidates.push_back({k, true});
      }
    }
  }
  // Degree drop: the leading coefficient of p0 + K·p1 vanishes.
  if (p1.degree() == n) {
    candidates.push_back({-p0.coeff(n) / p1.coeff(n), false});
  }

  std::sort(candidates.begin(), candidates.end(),
            [](const GainCandidate& a, const GainCandidate& b) { return a.k < b.k; });
  std::vector<GainCandidate> unique;
  for (const GainCandidate& c : candidates) {
    if (!unique.empty() &&
        std::abs(c.k - unique.back().k) <= 1e-12 * std::max(1.0, std::abs(c.k))) {
      unique.back().crossing = unique.back().crossing || c.crossing;
    } else {
      unique.push_back(c);
    }
  }
  return unique;
}

}  // namespace

std::vector<GainInterval> stable_gain_intervals(const Polynomial& p0, const Polynomial& p1) {
  if (p1.is_zero()) {
    throw std::invalid_argument(
        "stable_gain_intervals: p1 is the zero polynomial; p0 + K*p1 does not depend on K");
  }
  const int n = std::max(p0.degree(), p1.degree());
  const std::vector<GainCandidate> unique = distinct_gain_candidates(p0, p1, n);

  std::vector<GainInterval> intervals;
  const auto add_open = [&](double lower, double upper, double test) {
    if (!hurwitz(combine(p0, p1, test))) {
      return;
    }
    if (!intervals.empty() && intervals.back().upper == lower && intervals.back().upper_closed) {
      intervals.back().upper = upper;
      intervals.back().upper_closed = false;
    } else {
      intervals.push_back({lower, upper, false, false});
    }
  };
  const auto add_point = [&](double k) {
    Polynomial q = combine(p0, p1, k);
    if (q.degree() >= n) {
      // Force the exact cancellation of the leading coefficient at the degree drop.
      std::vector<double> c = q.coeffs();
      c.back() = 0.0;
      q = Polynomial(std::move(c));
    }
    if (!hurwitz(q)) {
      return;
    }
    if (!intervals.empty() && intervals.back().upper == k) {
      intervals.back().upper_closed = true;
    } else {
      intervals.push_back({k, k, true, true});
    }
  };

  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (unique.empty()) {
    add_open(-kInfinity, kInfinity, 0.0);
    return intervals;
  }
  add_open(-kInfinity, unique.front().k,
           unique.front().k - std::max(1.0, std::abs(unique.front().k)));
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (!unique[i].crossing) {
      add_point(unique[i].k);
    }
    const double lower = unique[i].k;
    if (i + 1 < unique.size()) {
      const double upper = unique[i + 1].k;
      add_open(lower, upper, 0.5 * (lower + upper));
    } else {
      add_open(lower, kInfinity, lower + std::max(1.0, std::abs(lower)));
    }
  }
  return intervals;
}

}  // namespace hyloop::core
