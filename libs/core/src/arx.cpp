#include "hyloop/core/arx.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "number_text.hpp"

namespace hyloop::core {
namespace {

constexpr int kMaxArxOrderSum = 64;

using detail::str;

// 100·(1 − ‖y − ŷ‖/‖y − ȳ‖) over the given samples.
double nrmse_fit_percent(std::span<const double> y, std::span<const double> y_hat) {
  double mean = 0.0;
  for (double v : y) {
    mean += v;
  }
  mean /= static_cast<double>(y.size());
  double error = 0.0;
  double spread = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) {
    error += (y[k] - y_hat[k]) * (y[k] - y_hat[k]);
    spread += (y[k] - mean) * (y[k] - mean);
  }
  if (spread == 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double fit = 100.0 * (1.0 - std::sqrt(error / spread));
  return std::isnan(fit) ? -std::numeric_limits<double>::infinity() : fit;
}

// Branch of arg(jω − r) that is continuous in ω (see bode() in the header).
double factor_phase(double omega, std::complex<double> r) {
  if (r.real() < 0.0) {
    return std::atan2(omega - r.imag(), -r.real());
  }
  if (r.real() > 0.0) {
    return std::numbers::pi - std::atan2(omega - r.imag(), r.real());
  }
  return omega > r.imag() ? 0.5 * std::numbers::pi
                          : (omega < r.imag() ? -0.5 * std::numbers::pi : 0.0);
}

// Continuous phase φ(ω) in rad, without the final 360° shift.
double continuous_phase(const ZeroPoleGain& zpk, double omega) {
  double phase = zpk.gain < 0.0 ? std::numbers::pi : 0.0;
  for (const auto& z : zpk.zeros) {
    phase += factor_phase(omega, z);
  }
  for (const auto& p : zpk.poles) {
    phase -= factor_phase(omega, p);
  }
  return phase;
}

// φ(0⁺): the limit of each factor's branch as ω → 0 from above.
double low_frequency_phase(const ZeroPoleGain& zpk) {
  const auto limit = [](std::complex<double> r) {
    if (r.real() == 0.0) {
      return r.imag() >= 0.0 ? (r.imag() == 0.0 ? 0.5 : -0.5) * std::numbers::pi
                             : 0.5 * std::numbers::pi;
    }
    return factor_phase(0.0, r);
  };
  double phase = zpk.gain < 0.0 ? std::numbers::pi : 0.0;
  for (const auto& z : zpk.zeros) {
    phase += limit(z);
  }
  for (const auto& p : zpk.poles) {
    phase -= limit(p);
  }
  return phase;
}

void require_frequencies(std::span<const double> frequencies_hz) {
  for (std::size_t i = 0; i < frequencies_hz.size(); ++i) {
    if (!std::isfinite(frequencies_hz[i]) || frequencies_hz[i] < 0.0) {
      throw std::invalid_argument("bode: frequencies_hz[" + std::to_string(i) + "] = " +
                                  str(frequencies_hz[i]) + " Hz; allowed: finite and >= 0");
    }
  }
}

template <typename Evaluate>
std::vector<BodePoint> bode_points(const ZeroPoleGain& zpk, std::span<const double> frequencies_hz,
                                   Evaluate evaluate) {
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  constexpr double kRadToDeg = 180.0 / std::numbers::pi;
  // Multiple of 2π that puts φ(0⁺) into [−π, π).
  const double phi0 = low_frequency_phase(zpk);
  const double shift = kTwoPi * std::floor((phi0 + std::numbers::pi) / kTwoPi);
  std::vector<BodePoint> points;
  points.reserve(frequencies_hz.size());
  for (double f : frequencies_hz) {
    const double omega = kTwoPi * f;
    const std::complex<double> g = evaluate(omega);
    const double branch = continuous_phase(zpk, omega) - shift;
    const double value_phase = std::arg(g);
    const double phase = value_phase + kTwoPi * std::round((branch - value_phase) / kTwoPi);
    const double magnitude = std::abs(g);
    points.push_back({f, magnitude, 20.0 * std::log10(magnitude), phase * kRadToDeg});
  }
  return points;
}

}  // namespace

std::vector<double> ArxModel::standard_deviations() const {
  std::vector<double> s(static_cast<std::size_t>(covariance.rows()));
  for (Eigen::Index i = 0; i < covariance.rows(); ++i) {
    s[static_cast<std::size_t>(i)] = std::sqrt(covariance(i, i));
  }
  return s;
}

namespace {

struct Layout {
  std::size_t na = 0, nb = 0, nk = 0;
  std::size_t k0 = 0;  // first row
  std::size_t p = 0;   // parameters
  std::size_t n = 0;   // samples
};

Layout check_inputs(const std::string& who, std::span<const double> u, std::span<const double> y,
                    const ArxOrders& orders) {
  if (orders.n_a < 0) {
    throw std::invalid_argument(who + ": orders.n_a = " + std::to_string(orders.n_a) +
                                "; allowed: n_a >= 0");
  }
  if (orders.n_b < 1) {
    throw std::invalid_argument(who + ": orders.n_b = " + std::to_string(orders.n_b) +
                                "; allowed: n_b >= 1 (the number of b coefficients)");
  }
  if (orders.n_k < 0) {
    throw std::invalid_argument(who + ": orders.n_k = " + std::to_string(orders.n_k) +
                                "; allowed: n_k >= 0");
  }
  if (orders.n_a + orders.n_b + orders.n_k > kMaxArxOrderSum) {
    throw std::invalid_argument(
        who + ": orders n_a + n_b + n_k = " + std::to_string(orders.n_a + orders.n_b + orders.n_k) +
        "; allowed: at most " + std::to_string(kMaxArxOrderSum));
  }
  if (u.size() != y.size()) {
    throw std::invalid_argument(who + ": u has " + std::to_string(u.size()) +
                                " samples but y has " + std::to_string(y.size()) +
                                "; u and y must have the same length");
  }
  Layout l;
  l.na = static_cast<std::size_t>(orders.n_a);
  l.nb = static_cast<std::size_t>(orders.n_b);
  l.nk = static_cast<std::size_t>(orders.n_k);
  l.k0 = std::max(l.na, l.nk + l.nb - 1);
  l.p = l.na + l.nb;
  l.n = u.size();
  if (l.n < l.k0 + l.p + 1) {
    throw std::invalid_argument(who + ": u and y have " + std::to_string(l.n) +
                                " samples; these orders need at least " +
                                std::to_string(l.k0 + l.p + 1));
  }
  for (std::size_t k = 0; k < l.n; ++k) {
    if (!std::isfinite(u[k])) {
      throw std::invalid_argument(who + ": u[" + std::to_string(k) + "] = " + str(u[k]) +
                                  " is not finite");
    }
    if (!std::isfinite(y[k])) {
      throw std::invalid_argument(who + ": y[" + std::to_string(k) + "] = " + str(y[k]) +
                                  " is not finite");
    }
  }
  return l;
}

// (XᵀX)⁻¹ = P·R⁻¹·R⁻ᵀ·Pᵀ with X·P = Q·R, and the condition number of X.
std::pair<Eigen::MatrixXd, double> inverse_gram(
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd>& qr, Eigen::Index p) {
  const Eigen::MatrixXd rr = qr.matrixR().topLeftCorner(p, p).triangularView<Eigen::Upper>();
  const Eigen::MatrixXd r_inv =
      rr.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(p, p));
  const Eigen::MatrixXd inner = r_inv * r_inv.transpose();
  const auto& perm = qr.colsPermutation();
  const Eigen::VectorXd singular = Eigen::JacobiSVD<Eigen::MatrixXd>(rr).singularValues();
  return {perm * inner * perm.transpose(), singular(0) / singular(p - 1)};
}

void set_coefficients(ArxModel& model, const Eigen::VectorXd& theta, const Layout& l) {
  model.a.assign(theta.data(), theta.data() + l.na);
  model.b.assign(theta.data() + l.na, theta.data() + l.p);
  const std::size_t order = l.k0;
  model.transfer_function.num.assign(order + 1, 0.0);
  model.transfer_function.den.assign(order + 1, 0.0);
  model.transfer_function.den[0] = 1.0;
  for (std::size_t i = 0; i < l.na; ++i) {
    model.transfer_function.den[i + 1] = model.a[i];
  }
  for (std::size_t j = 0; j < l.nb; ++j) {
    model.transfer_function.num[l.nk + j] = model.b[j];
  }
}

Eigen::VectorXd theta_of(const ArxModel& model) {
  Eigen::VectorXd theta(static_cast<Eigen::Index>(model.a.size() + model.b.size()));
  Eigen::Index i = 0;
  for (double a : model.a) theta(i++) = a;
  for (double b : model.b) theta(i++) = b;
  return theta;
}

// out = (B/A)·u with θ = [a…, b…], started at rest (values before k = 0 are zero).
void simulate(const Eigen::VectorXd& theta, const Layout& l, std::span<const double> u,
              std::vector<double>& out) {
  out.assign(l.n, 0.0);
  for (std::size_t k = 0; k < l.n; ++k) {
    double acc = 0.0;
    for (std::size_t i = 0; i < l.na && i < k; ++i) {
      acc -= theta(static_cast<Eigen::Index>(i)) * out[k - 1 - i];
    }
    for (std::size_t j = 0; j < l.nb && l.nk + j <= k; ++j) {
      acc += theta(static_cast<Eigen::Index>(l.na + j)) * u[k - l.nk - j];
    }
    out[k] = acc;
  }
}

// out = x/A with A = 1 + a1·z⁻¹ + …, at rest before k = 0.
void filter_by_inverse_a(const std::vector<double>& a, std::span<const double> x,
                         std::vector<double>& out) {
  out.assign(x.size(), 0.0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    double acc = x[k];
    for (std::size_t i = 0; i < a.size() && i < k; ++i) {
      acc -= a[i] * out[k - 1 - i];
    }
    out[k] = acc;
  }
}

// Roots of z^na + a1·z^(na−1) + … + a_na (companion matrix).
std::vector<std::complex<double>> roots_of_a(const std::vector<double>& a) {
  const auto na = static_cast<Eigen::Index>(a.size());
  if (na == 0) return {};
  Eigen::MatrixXd companion = Eigen::MatrixXd::Zero(na, na);
  for (Eigen::Index i = 0; i < na; ++i) {
    companion(0, i) = -a[static_cast<std::size_t>(i)];
  }
  for (Eigen::Index i = 1; i < na; ++i) {
    companion(i, i - 1) = 1.0;
  }
  const Eigen::VectorXcd ev = Eigen::EigenSolver<Eigen::MatrixXd>(companion, false).eigenvalues();
  return {ev.data(), ev.data() + na};
}

// A stable A with no root on the closed negative real axis: the denominator of a model with a
// continuous zero-order-hold preimage (continualise's condition).
bool has_zoh_preimage(const std::vector<double>& a) {
  for (const auto& r : roots_of_a(a)) {
    if (!(std::abs(r) < 1.0)) return false;
    if (std::abs(r.imag()) <= 1e-9 * (1.0 + std::abs(r.real())) && r.real() <= 0.0) return false;
  }
  return true;
}

std::vector<double> polynomial_of_roots(const std::vector<std::complex<double>>& roots) {
  std::vector<std::complex<double>> poly{1.0};
  for (const auto& r : roots) {
    poly.push_back(0.0);
    for (std::size_t i = poly.size() - 1; i > 0; --i) poly[i] -= r * poly[i - 1];
  }
  std::vector<double> out(roots.size());
  for (std::size_t i = 0; i < roots.size(); ++i) out[i] = poly[i + 1].real();
  return out;
}

// A with every root |z| >= 1 reflected to 1/z̄ (pulled just inside if on the circle).
std::vector<double> stabilised(const std::vector<double>& a, int& reflected) {
  reflected = 0;
  std::vector<std::complex<double>> roots = roots_of_a(a);
  bool any = false;
  for (auto& r : roots) {
    const double m = std::abs(r);
    if (!std::isfinite(m)) {
      throw std::invalid_argument("fit_iv: the estimate has a non-finite pole");
    }
    if (m >= 1.0) {
      r = 1.0 / std::conj(r);
      if (std::abs(r) > 0.9999) r *= 0.9999 / std::abs(r);
      ++reflected;
      any = true;
    }
  }
  if (!any) return a;
  return polynomial_of_roots(roots);
}

// stabilised(a), then every real root r <= 0 mirrored to max(−r, 1e-3): a start inside the set
// has_zoh_preimage describes.
std::vector<double> admissible(const std::vector<double>& a) {
  int reflected = 0;
  std::vector<std::complex<double>> roots = roots_of_a(stabilised(a, reflected));
  for (auto& r : roots) {
    if (std::abs(r.imag()) <= 1e-9 * (1.0 + std::abs(r.real())) && r.real() <= 0.0) {
      r = std::max(-r.real(), 1e-3);
    }
  }
  return polynomial_of_roots(roots);
}

// Rows k = k0 … N−1 of [−s[k−1] … −s[k−na], v[k−nk] … v[k−nk−nb+1]].
Eigen::MatrixXd regressor(const Layout& l, std::span<const double> s, std::span<const double> v) {
  const auto rows = static_cast<Eigen::Index>(l.n - l.k0);
  Eigen::MatrixXd m(rows, static_cast<Eigen::Index>(l.p));
  for (std::size_t row = 0; row < l.n - l.k0; ++row) {
    const std::size_t k = l.k0 + row;
    const auto ri = static_cast<Eigen::Index>(row);
    for (std::size_t i = 0; i < l.na; ++i) {
      m(ri, static_cast<Eigen::Index>(i)) = -s[k - 1 - i];
    }
    for (std::size_t j = 0; j < l.nb; ++j) {
      m(ri, static_cast<Eigen::Index>(l.na + j)) = v[k - l.nk - j];
    }
  }
  return m;
}

void check_options(const std::string& who, const IterativeFitOptions& options) {
  if (options.max_iterations < 1) {
    throw std::invalid_argument(who + ": options.max_iterations = " +
                                std::to_string(options.max_iterations) + "; allowed: >= 1");
  }
  if (!std::isfinite(options.tolerance) || options.tolerance <= 0.0) {
    throw std::invalid_argument(who + ": options.tolerance = " + str(options.tolerance) +
                                "; allowed: finite and > 0");
  }
}

// σ², residual RMS and both fits from the simulation error over all N samples; covariance from
// the Gram inverse of `x` (instruments or Jacobian).
void output_error_statistics(ArxModel& model, const Layout& l, std::span<const double> u,
                             std::span<const double> y, const Eigen::MatrixXd& x) {
  std::vector<double> sim;
  simulate(theta_of(model), l, u, sim);
  double rss = 0.0;
  for (std::size_t k = 0; k < l.n; ++k) rss += (y[k] - sim[k]) * (y[k] - sim[k]);
  model.rows = l.n;
  model.noise_variance = rss / static_cast<double>(l.n - l.p);
  model.residual_rms = std::sqrt(rss / static_cast<double>(l.n));
  model.fit_simulation_percent = nrmse_fit_percent(y, sim);
  model.fit_prediction_percent = model.fit_simulation_percent;
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
  if (qr.rank() < static_cast<Eigen::Index>(l.p)) {
    model.covariance =
        Eigen::MatrixXd::Constant(static_cast<Eigen::Index>(l.p), static_cast<Eigen::Index>(l.p),
                                  std::numeric_limits<double>::infinity());
    model.condition_number = std::numeric_limits<double>::infinity();
    return;
  }
  auto [inner, condition] = inverse_gram(qr, static_cast<Eigen::Index>(l.p));
  model.covariance = model.noise_variance * inner;
  model.condition_number = condition;
}

double simulation_cost(const Eigen::VectorXd& theta, const Layout& l, std::span<const double> u,
                       std::span<const double> y, std::vector<double>& sim) {
  const std::vector<double> a(theta.data(), theta.data() + l.na);
  if (!has_zoh_preimage(a)) return std::numeric_limits<double>::infinity();
  simulate(theta, l, u, sim);
  double v = 0.0;
  for (std::size_t k = 0; k < l.n; ++k) v += (y[k] - sim[k]) * (y[k] - sim[k]);
  return std::isfinite(v) ? v : std::numeric_limits<double>::infinity();
}

}  // namespace

const char* to_string(FitMethod method) noexcept {
  switch (method) {
    case FitMethod::kArx:
      return "arx";
    case FitMethod::kInstrumentalVariable:
      return "iv";
    case FitMethod::kOutputError:
      return "oe";
  }
  return "?";
}

FitMethod parse_fit_method(const std::string& text, const std::string& field) {
  for (FitMethod m : {FitMethod::kArx, FitMethod::kInstrumentalVariable, FitMethod::kOutputError}) {
    if (text == to_string(m)) return m;
  }
  std::string shown = text.substr(0, 40);
  throw std::invalid_argument(field + " = \"" + shown +
                              "\": must be arx (equation error, biased by output noise), iv "
                              "(refined instrumental variable) or oe (output error)");
}

ArxModel fit_arx(std::span<const double> u, std::span<const double> y, const ArxOrders& orders) {
  const Layout l = check_inputs("fit_arx", u, y, orders);
  const std::size_t na = l.na, nb = l.nb, nk = l.nk, k0 = l.k0, p = l.p, n = l.n;

  // Regression of Eq. 28–30.
  const std::size_t rows = n - k0;
  const auto r = static_cast<Eigen::Index>(rows);
  const auto pi = static_cast<Eigen::Index>(p);
  const Eigen::MatrixXd phi = regressor(l, y, u);
  Eigen::VectorXd target(r);
  for (std::size_t row = 0; row < rows; ++row) {
    target(static_cast<Eigen::Index>(row)) = y[k0 + row];
  }

  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(phi);
  if (qr.rank() < pi) {
    throw std::invalid_argument(
        "fit_arx: the regressor matrix has rank " + std::to_string(qr.rank()) + " < " +
        std::to_string(p) +
        " parameters; u and y are not informative enough for n_a = " + std::to_string(na) +
        ", n_b = " + std::to_string(nb) + " (input not persistently exciting)");
  }
  const Eigen::VectorXd theta = qr.solve(target);
  const Eigen::VectorXd prediction = phi * theta;
  const double rss = (target - prediction).squaredNorm();

  ArxModel model;
  model.orders = orders;
  model.rows = rows;
  set_coefficients(model, theta, l);
  model.noise_variance = rss / static_cast<double>(rows - p);
  model.residual_rms = std::sqrt(rss / static_cast<double>(rows));
  auto [inner, condition] = inverse_gram(qr, pi);
  model.covariance = model.noise_variance * inner;
  model.condition_number = condition;

  model.fit_prediction_percent =
      nrmse_fit_percent(std::span<const double>(target.data(), rows),
                        std::span<const double>(prediction.data(), rows));
  std::vector<double> simulated(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(k0));
  simulated.resize(n, 0.0);
  for (std::size_t k = k0; k < n; ++k) {
    double acc = 0.0;
    for (std::size_t i = 0; i < na; ++i) {
      acc -= model.a[i] * simulated[k - 1 - i];
    }
    for (std::size_t j = 0; j < nb; ++j) {
      acc += model.b[j] * u[k - nk - j];
    }
    simulated[k] = acc;
  }
  model.fit_simulation_percent =
      nrmse_fit_percent(y.subspan(k0), std::span<const double>(simulated).subspan(k0));
  return model;
}

ArxModel fit_iv(std::span<const double> u, std::span<const double> y, const ArxOrders& orders,
                const IterativeFitOptions& options) {
  check_options("fit_iv", options);
  const Layout l = check_inputs("fit_iv", u, y, orders);
  ArxModel model = fit_arx(u, y, orders);
  model.method = FitMethod::kInstrumentalVariable;
  Eigen::VectorXd theta = theta_of(model);
  const auto pi = static_cast<Eigen::Index>(l.p);
  std::vector<double> x, yf, uf, xf;
  Eigen::MatrixXd zeta;
  model.converged = false;
  if (l.na == 0) {  // FIR: the ARX estimate is already consistent
    model.converged = true;
    zeta = regressor(l, y, u);
  }
  double previous_change = std::numeric_limits<double>::infinity();
  for (int it = 0; it < options.max_iterations && !model.converged; ++it) {
    const std::vector<double> a_hat =
        stabilised(std::vector<double>(theta.data(), theta.data() + l.na), model.reflected_roots);
    Eigen::VectorXd filter_theta = theta;
    for (std::size_t i = 0; i < l.na; ++i) filter_theta(static_cast<Eigen::Index>(i)) = a_hat[i];
    simulate(filter_theta, l, u, x);
    filter_by_inverse_a(a_hat, y, yf);
    filter_by_inverse_a(a_hat, u, uf);
    filter_by_inverse_a(a_hat, x, xf);
    const Eigen::MatrixXd phi = regressor(l, yf, uf);
    zeta = regressor(l, xf, uf);
    Eigen::VectorXd target(phi.rows());
    for (Eigen::Index row = 0; row < phi.rows(); ++row) {
      target(row) = yf[l.k0 + static_cast<std::size_t>(row)];
    }
    const Eigen::FullPivLU<Eigen::MatrixXd> lu(zeta.transpose() * phi);
    if (lu.rank() < pi) {
      throw std::invalid_argument("fit_iv: the instrument matrix has rank " +
                                  std::to_string(lu.rank()) + " < " + std::to_string(l.p) +
                                  " parameters (input not persistently exciting for n_a = " +
                                  std::to_string(l.na) + ", n_b = " + std::to_string(l.nb) + ")");
    }
    const Eigen::VectorXd next = lu.solve(zeta.transpose() * target);
    if (!next.allFinite()) {
      throw std::invalid_argument("fit_iv: iteration " + std::to_string(it + 1) +
                                  " gave a non-finite estimate");
    }
    const double change = (next - theta).norm();
    theta = next;
    model.iterations = it + 1;
    // Converged: the tolerance met, or the change has stopped shrinking at rounding level.
    model.converged = change <= options.tolerance * theta.norm() ||
                      (change <= 1e-6 * theta.norm() && change >= previous_change);
    previous_change = change;
  }
  set_coefficients(model, theta, l);
  output_error_statistics(model, l, u, y, zeta);
  return model;
}

namespace {

struct Descent {
  Eigen::VectorXd theta;
  double cost = std::numeric_limits<double>::infinity();
  int iterations = 0;
  bool converged = false;
  Eigen::MatrixXd jacobian;
};

// Levenberg–Marquardt on V(θ) from `theta` (header comment of fit_oe).
Descent descend(Eigen::VectorXd theta, const Layout& l, std::span<const double> u,
                std::span<const double> y, const IterativeFitOptions& options) {
  Descent d;
  const auto n = static_cast<Eigen::Index>(l.n);
  const auto pi = static_cast<Eigen::Index>(l.p);
  std::vector<double> sim, candidate_sim, w, v;
  double cost = simulation_cost(theta, l, u, y, sim);
  Eigen::MatrixXd jac(n, pi);
  Eigen::MatrixXd stacked(n + pi, pi);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + pi);
  double lambda = 1e-3;
  constexpr double kLambdaMax = 1e12;
  for (int it = 0; it < options.max_iterations && std::isfinite(cost); ++it) {
    const std::vector<double> a(theta.data(), theta.data() + l.na);
    filter_by_inverse_a(a, sim, w);
    filter_by_inverse_a(a, u, v);
    for (std::size_t k = 0; k < l.n; ++k) {
      const auto ki = static_cast<Eigen::Index>(k);
      for (std::size_t i = 0; i < l.na; ++i) {
        jac(ki, static_cast<Eigen::Index>(i)) = k >= i + 1 ? -w[k - 1 - i] : 0.0;
      }
      for (std::size_t j = 0; j < l.nb; ++j) {
        jac(ki, static_cast<Eigen::Index>(l.na + j)) = k >= l.nk + j ? v[k - l.nk - j] : 0.0;
      }
      rhs(ki) = y[k] - sim[k];
    }
    const Eigen::VectorXd scale = jac.colwise().norm().transpose();
    bool improved = false;
    while (lambda <= kLambdaMax) {
      stacked.topRows(n) = jac;
      stacked.bottomRows(pi) = (std::sqrt(lambda) * scale).asDiagonal();
      const Eigen::VectorXd step = stacked.colPivHouseholderQr().solve(rhs);
      const Eigen::VectorXd candidate = theta + step;
      const double candidate_cost = candidate.allFinite()
                                        ? simulation_cost(candidate, l, u, y, candidate_sim)
                                        : std::numeric_limits<double>::infinity();
      if (candidate_cost < cost) {
        const double decrease = cost - candidate_cost;
        theta = candidate;
        std::swap(sim, candidate_sim);
        d.converged = decrease <= options.tolerance * cost;
        cost = candidate_cost;
        lambda = std::max(lambda * 0.1, 1e-12);
        improved = true;
        break;
      }
      lambda *= 10.0;
    }
    d.iterations = it + 1;
    if (!improved) {
      d.converged = true;  // no descent direction left: a (local) minimum
    }
    if (d.converged) break;
  }
  d.theta = theta;
  d.cost = cost;
  d.jacobian = std::move(jac);
  return d;
}

}  // namespace

ArxModel fit_oe(std::span<const double> u, std::span<const double> y, const ArxOrders& orders,
                const IterativeFitOptions& options) {
  check_options("fit_oe", options);
  const Layout l = check_inputs("fit_oe", u, y, orders);
  // Two starts, the IV and the ARX estimate, each moved into the admissible set; the lower cost
  // wins (a single sine leaves V(θ) with more than one minimum).
  Descent best;
  int iterations = 0;
  for (const ArxModel& start : {fit_iv(u, y, orders, options), fit_arx(u, y, orders)}) {
    Eigen::VectorXd theta = theta_of(start);
    const std::vector<double> a_hat =
        admissible(std::vector<double>(theta.data(), theta.data() + l.na));
    for (std::size_t i = 0; i < l.na; ++i) theta(static_cast<Eigen::Index>(i)) = a_hat[i];
    Descent d = descend(theta, l, u, y, options);
    iterations += d.iterations;
    if (d.cost < best.cost) best = std::move(d);
  }
  if (!std::isfinite(best.cost)) {
    throw std::invalid_argument(
        "fit_oe: no admissible start (stable, no pole on the negative real axis) has a finite "
        "simulation error; no output-error fit");
  }
  ArxModel model;
  model.orders = orders;
  model.method = FitMethod::kOutputError;
  model.iterations = iterations;
  model.converged = best.converged;
  set_coefficients(model, best.theta, l);
  output_error_statistics(model, l, u, y, best.jacobian);
  return model;
}

ArxModel fit(FitMethod method, std::span<const double> u, std::span<const double> y,
             const ArxOrders& orders, const IterativeFitOptions& options) {
  switch (method) {
    case FitMethod::kArx:
      return fit_arx(u, y, orders);
    case FitMethod::kInstrumentalVariable:
      return fit_iv(u, y, orders, options);
    case FitMethod::kOutputError:
      return fit_oe(u, y, orders, options);
  }
  throw std::invalid_argument("fit: unknown method");
}

std::vector<BodePoint> discrete_bode(const ArxModel& model, double step, int advance,
                                     std::span<const double> frequencies_hz) {
  if (!std::isfinite(step) || step <= 0.0) {
    throw std::invalid_argument("discrete_bode: step = " + str(step) +
                                " s; allowed: finite and > 0");
  }
  if (advance < 0) {
    throw std::invalid_argument("discrete_bode: advance = " + std::to_string(advance) +
                                "; allowed: advance >= 0");
  }
  require_frequencies(frequencies_hz);
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  std::vector<BodePoint> points;
  points.reserve(frequencies_hz.size());
  for (double f : frequencies_hz) {
    const double omega = kTwoPi * f;
    const std::complex<double> g =
        frequency_response_discrete(model.transfer_function, omega, step) *
        std::polar(1.0, -omega * step * static_cast<double>(advance));
    const double magnitude = std::abs(g);
    points.push_back(
        {f, magnitude, 20.0 * std::log10(magnitude), std::arg(g) * 180.0 / std::numbers::pi});
  }
  return points;
}

TransferFunction identified_continuous_transfer_function(const ArxModel& model, double step,
                                                         int advance) {
  if (!std::isfinite(step) || step <= 0.0) {
    throw std::invalid_argument("identified_continuous_model: step = " + str(step) +
                                " s; allowed: finite and > 0");
  }
  if (advance < 0) {
    throw std::invalid_argument("identified_continuous_model: advance = " +
                                std::to_string(advance) + "; allowed: advance >= 0");
  }
  std::vector<double> num = model.transfer_function.num;
  std::vector<double> den = model.transfer_function.den;
  if (num.empty() || den.empty() || den.front() == 0.0) {
    throw std::invalid_argument(
        "identified_continuous_model: model.transfer_function is empty or has den[0] == 0");
  }
  den.insert(den.end(), static_cast<std::size_t>(advance), 0.0);  // H(z)·z^−advance
  while (num.size() > 1 && den.size() > 1 && num.back() == 0.0 && den.back() == 0.0) {
    num.pop_back();
    den.pop_back();
  }
  std::size_t first = 0;
  while (first + 1 < num.size() && num[first] == 0.0) {
    ++first;
  }
  num.erase(num.begin(), num.begin() + static_cast<std::ptrdiff_t>(first));
  if (num.size() > den.size()) {
    throw std::invalid_argument(
        "identified_continuous_model: advance = " + std::to_string(advance) +
        " makes the discrete model improper (numerator degree " + std::to_string(num.size() - 1) +
        " > denominator degree " + std::to_string(den.size() - 1) + ")");
  }
  if (den.size() > 1 && den.back() == 0.0) {
    throw std::invalid_argument(
        "identified_continuous_model: after z^-" + std::to_string(advance) +
        " the model keeps a pole at z = 0 (a pure delay), which no continuous model sampled with "
        "a zero-order hold has; check n_k and advance");
  }
  const StateSpace discrete = to_state_space({num, den});
  return to_transfer_function(continualise(discrete, step, Discretisation::kZeroOrderHold));
}

ZeroPoleGain identified_continuous_model(const ArxModel& model, double step, int advance) {
  return to_zero_pole_gain(identified_continuous_transfer_function(model, step, advance));
}

std::vector<BodePoint> bode(const TransferFunction& continuous_tf,
                            std::span<const double> frequencies_hz) {
  require_frequencies(frequencies_hz);
  const ZeroPoleGain zpk = to_zero_pole_gain(continuous_tf);
  return bode_points(zpk, frequencies_hz,
                     [&](double omega) { return frequency_response(continuous_tf, omega); });
}

std::vector<BodePoint> bode(const ZeroPoleGain& continuous_zpk,
                            std::span<const double> frequencies_hz) {
  require_frequencies(frequencies_hz);
  if (!std::isfinite(continuous_zpk.gain)) {
    throw std::invalid_argument("bode: continuous_zpk.gain = " + str(continuous_zpk.gain) +
                                " is not finite");
  }
  return bode_points(continuous_zpk, frequencies_hz, [&](double omega) {
    const std::complex<double> s(0.0, omega);
    std::complex<double> g = continuous_zpk.gain;
    for (const auto& z : continuous_zpk.zeros) {
      g *= s - z;
    }
    for (const auto& p : continuous_zpk.poles) {
      g /= s - p;
    }
    return g;
  });
}

}  // namespace hyloop::core
