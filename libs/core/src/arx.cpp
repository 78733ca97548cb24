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

namespace hyloop::core {
namespace {

constexpr int kMaxArxOrderSum = 64;

std::string str(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

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

ArxModel fit_arx(std::span<const double> u, std::span<const double> y, const ArxOrders& orders) {
  if (orders.n_a < 0) {
    throw std::invalid_argument("fit_arx: orders.n_a = " + std::to_string(orders.n_a) +
                                "; allowed: n_a >= 0");
  }
  if (orders.n_b < 1) {
    throw std::invalid_argument("fit_arx: orders.n_b = " + std::to_string(orders.n_b) +
                                "; allowed: n_b >= 1 (the number of b coefficients)");
  }
  if (orders.n_k < 0) {
    throw std::invalid_argument("fit_arx: orders.n_k = " + std::to_string(orders.n_k) +
                                "; allowed: n_k >= 0");
  }
  if (orders.n_a + orders.n_b + orders.n_k > kMaxArxOrderSum) {
    throw std::invalid_argument("fit_arx: orders n_a + n_b + n_k = " +
                                std::to_string(orders.n_a + orders.n_b + orders.n_k) +
                                "; allowed: at most " + std::to_string(kMaxArxOrderSum));
  }
  if (u.size() != y.size()) {
    throw std::invalid_argument("fit_arx: u has " + std::to_string(u.size()) +
                                " samples but y has " + std::to_string(y.size()) +
                                "; u and y must have the same length");
  }
  const auto na = static_cast<std::size_t>(orders.n_a);
  const auto nb = static_cast<std::size_t>(orders.n_b);
  const auto nk = static_cast<std::size_t>(orders.n_k);
  const std::size_t k0 = std::max(na, nk + nb - 1);
  const std::size_t p = na + nb;
  const std::size_t n = u.size();
  if (n < k0 + p + 1) {
    throw std::invalid_argument("fit_arx: u and y have " + std::to_string(n) +
                                " samples; these orders need at least " +
                                std::to_string(k0 + p + 1));
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(u[k])) {
      throw std::invalid_argument("fit_arx: u[" + std::to_string(k) + "] = " + str(u[k]) +
                                  " is not finite");
    }
    if (!std::isfinite(y[k])) {
      throw std::invalid_argument("fit_arx: y[" + std::to_string(k) + "] = " + str(y[k]) +
                                  " is not finite");
    }
  }

  // Regression of Eq. 28–30.
  const std::size_t rows = n - k0;
  const auto r = static_cast<Eigen::Index>(rows);
  const auto pi = static_cast<Eigen::Index>(p);
  Eigen::MatrixXd phi(r, pi);
  Eigen::VectorXd target(r);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t k = k0 + row;
    const auto ri = static_cast<Eigen::Index>(row);
    for (std::size_t i = 0; i < na; ++i) {
      phi(ri, static_cast<Eigen::Index>(i)) = -y[k - 1 - i];
    }
    for (std::size_t j = 0; j < nb; ++j) {
      phi(ri, static_cast<Eigen::Index>(na + j)) = u[k - nk - j];
    }
    target(ri) = y[k];
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
  model.a.assign(theta.data(), theta.data() + na);
  model.b.assign(theta.data() + na, theta.data() + p);
  model.noise_variance = rss / static_cast<double>(rows - p);
  model.residual_rms = std::sqrt(rss / static_cast<double>(rows));

  // (ΦᵀΦ)⁻¹ = P·R⁻¹·R⁻ᵀ·Pᵀ with Φ·P = Q·R.
  const Eigen::MatrixXd rr = qr.matrixR().topLeftCorner(pi, pi).triangularView<Eigen::Upper>();
  const Eigen::MatrixXd r_inv =
      rr.triangularView<Eigen::Upper>().solve(Eigen::MatrixXd::Identity(pi, pi));
  const Eigen::MatrixXd inner = r_inv * r_inv.transpose();
  const auto& perm = qr.colsPermutation();
  model.covariance = model.noise_variance * (perm * inner * perm.transpose());

  const Eigen::VectorXd singular = Eigen::JacobiSVD<Eigen::MatrixXd>(rr).singularValues();
  model.condition_number = singular(0) / singular(pi - 1);

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

  const std::size_t order = k0;
  model.transfer_function.num.assign(order + 1, 0.0);
  model.transfer_function.den.assign(order + 1, 0.0);
  model.transfer_function.den[0] = 1.0;
  for (std::size_t i = 0; i < na; ++i) {
    model.transfer_function.den[i + 1] = model.a[i];
  }
  for (std::size_t j = 0; j < nb; ++j) {
    model.transfer_function.num[nk + j] = model.b[j];
  }
  return model;
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
