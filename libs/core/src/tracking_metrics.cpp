#include "hyloop/core/tracking_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {

void require_same_size(std::span<const double> command, std::span<const double> measured) {
  if (command.size() != measured.size()) {
    throw std::invalid_argument("measured.size() = " + std::to_string(measured.size()) +
                                ": must equal command.size() = " + std::to_string(command.size()));
  }
}

}  // namespace

double TrackingIndicator::update(double command, double measured) noexcept {
  if (started_) {
    area_ += 0.5 * (command + command_) * (measured - measured_);
    complementary_area_ += 0.5 * (measured + measured_) * (command - command_);
  }
  started_ = true;
  command_ = command;
  measured_ = measured;
  return value();
}

void TrackingIndicator::reset() noexcept { *this = TrackingIndicator{}; }

void TrackingErrorAccumulator::update(double command, double measured) noexcept {
  const double e = measured - command;
  if (samples_ == 0) {
    command_min_ = command_max_ = command;
  }
  ++samples_;
  sum_squares_ += e * e;
  peak_ = std::max(peak_, std::abs(e));
  command_min_ = std::min(command_min_, command);
  command_max_ = std::max(command_max_, command);
  command_peak_ = std::max(command_peak_, std::abs(command));
}

TrackingErrors TrackingErrorAccumulator::result() const noexcept {
  TrackingErrors r;
  r.samples = samples_;
  if (samples_ == 0) {
    return r;
  }
  r.rms = std::sqrt(sum_squares_ / static_cast<double>(samples_));
  r.peak = peak_;
  r.command_range = command_max_ - command_min_;
  r.command_peak = command_peak_;
  r.nrms = r.command_range > 0.0 ? r.rms / r.command_range : 0.0;
  r.normalised_peak = r.command_peak > 0.0 ? r.peak / r.command_peak : 0.0;
  return r;
}

DelayEstimate estimate_delay(std::span<const double> command, std::span<const double> measured,
                             int max_lag_steps) {
  require_same_size(command, measured);
  const auto n = static_cast<long>(command.size());
  if (max_lag_steps < 1 || max_lag_steps > n - 2) {
    throw std::invalid_argument("max_lag_steps = " + std::to_string(max_lag_steps) +
                                ": must be in [1, N - 2] with N = " + std::to_string(n));
  }
  for (long i = 0; i < n; ++i) {
    if (!std::isfinite(command[static_cast<std::size_t>(i)]) ||
        !std::isfinite(measured[static_cast<std::size_t>(i)])) {
      throw std::invalid_argument("command/measured[" + std::to_string(i) +
                                  "]: values must be finite");
    }
  }
  // Pearson correlation of the overlapping segments c[i], m[i + k]: equal to 1 at the lag of an
  // exact (integer) copy, whatever the window, so the estimate is free of edge bias.
  auto r = [&](long k) {
    const long first = std::max(0L, -k);
    const long last = std::min(n, n - k);  // i + k < n
    const auto count = static_cast<double>(last - first);
    double sc = 0.0;
    double sm = 0.0;
    for (long i = first; i < last; ++i) {
      sc += command[static_cast<std::size_t>(i)];
      sm += measured[static_cast<std::size_t>(i + k)];
    }
    const double mc = sc / count;
    const double mm = sm / count;
    double scc = 0.0;
    double smm = 0.0;
    double scm = 0.0;
    for (long i = first; i < last; ++i) {
      const double c = command[static_cast<std::size_t>(i)] - mc;
      const double m = measured[static_cast<std::size_t>(i + k)] - mm;
      scc += c * c;
      smm += m * m;
      scm += c * m;
    }
    return scc > 0.0 && smm > 0.0 ? scm / std::sqrt(scc * smm) : 0.0;
  };
  {
    const auto [lo, hi] = std::minmax_element(command.begin(), command.end());
    const auto [mlo, mhi] = std::minmax_element(measured.begin(), measured.end());
    if (*lo == *hi || *mlo == *mhi) {
      throw std::invalid_argument(std::string(*lo == *hi ? "command" : "measured") +
                                  ": constant signal, no delay can be estimated");
    }
  }

  DelayEstimate est;
  double best = -2.0;
  double before = 0.0;
  double after = 0.0;
  double previous = r(-max_lag_steps);
  double current = previous;
  for (long k = -max_lag_steps; k <= max_lag_steps; ++k) {
    const double next = k < max_lag_steps ? r(k + 1) : 0.0;
    if (current > best) {
      best = current;
      est.integer_lag = static_cast<int>(k);
      before = previous;
      after = next;
    }
    previous = current;
    current = next;
  }
  est.correlation = best;
  est.lag_steps = est.integer_lag;
  est.at_boundary = est.integer_lag == -max_lag_steps || est.integer_lag == max_lag_steps;
  if (!est.at_boundary) {
    const double curvature = before - 2.0 * best + after;
    if (curvature < 0.0) {
      est.lag_steps += 0.5 * (before - after) / curvature;
    }
  }
  return est;
}

double tracking_indicator(std::span<const double> command, std::span<const double> measured) {
  require_same_size(command, measured);
  TrackingIndicator ti;
  for (std::size_t i = 0; i < command.size(); ++i) {
    ti.update(command[i], measured[i]);
  }
  return ti.value();
}

TrackingErrors tracking_errors(std::span<const double> command, std::span<const double> measured) {
  require_same_size(command, measured);
  if (command.empty()) {
    throw std::invalid_argument("command.size() = 0: must be >= 1");
  }
  TrackingErrorAccumulator acc;
  for (std::size_t i = 0; i < command.size(); ++i) {
    acc.update(command[i], measured[i]);
  }
  return acc.result();
}

}  // namespace hyloop::core
