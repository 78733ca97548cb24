#include "hyloop/core/cycle_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hyloop::core {

CycleMetrics::CycleMetrics(std::size_t max_cycles, double window_start)
    : capacity_(max_cycles), window_start_(window_start) {
  cycles_.reserve(max_cycles);
}

CycleMetrics::CycleMetrics(std::size_t max_cycles, double window_start, CycleSink& sink)
    : sink_(&sink), capacity_(max_cycles), window_start_(window_start) {}

void CycleMetrics::end_cycle() noexcept {
  if (count_ >= capacity_) {
    ++dropped_;
    return;
  }
  if (sink_ == nullptr) {
    cycles_.push_back(current_);
    ++count_;
    return;
  }
  // The figures window(), energy_ratio() and amplitude_growth_rate() compute from the kept
  // cycles, folded in as each ends (the same comparisons and sums in the same order).
  const CycleRecord& c = current_;
  if (count_ == 0) first_energy_max_ = c.energy_max;
  last_energy_max_ = c.energy_max;
  if (c.t_end >= window_start_) {
    ++window_cycles_;
    if (std::abs(c.e_r - 1.0) > worst_r_) {
      worst_r_ = std::abs(c.e_r - 1.0);
      window_e_r_ = c.e_r;
    }
    if (std::abs(c.amplitude_ratio - 1.0) > worst_a_) {
      worst_a_ = std::abs(c.amplitude_ratio - 1.0);
      window_amplitude_ = c.amplitude_ratio;
    }
  }
  if (count_ >= kGrowthFirstCycle) growth_.add(c);
  ++count_;
  sink_->on_cycle(c);
}

void CycleMetrics::GrowthSums::add(const CycleRecord& c) noexcept {
  if (!(c.v_peak > 0.0) || !std::isfinite(c.v_peak)) {
    return;
  }
  const double y = std::log(c.v_peak);
  n += 1.0;
  st += c.t_end;
  sy += y;
  stt += c.t_end * c.t_end;
  sty += c.t_end * y;
}

double CycleMetrics::GrowthSums::rate() const noexcept {
  const double den = n * stt - st * st;
  if (n < 2.0 || den <= 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return (n * sty - st * sy) / den;
}

void CycleMetrics::add(const MetricSample& s) noexcept {
  if (s.t >= window_start_) {
    window_e_f_ = std::max(window_e_f_, std::abs(s.e_f));
    window_e_v_ = std::max(window_e_v_, std::abs(s.e_v));
  }
  const bool crossing = have_previous_ && previous_v_ideal_ < 0.0 && s.v_ideal >= 0.0;
  have_previous_ = true;
  previous_v_ideal_ = s.v_ideal;
  if (crossing) {
    if (started_) {
      current_.t_end = s.t;
      current_.e_r = current_.v_ideal_peak > 0.0 ? v_at_ideal_peak_ / current_.v_ideal_peak
                                                 : std::numeric_limits<double>::quiet_NaN();
      current_.amplitude_ratio = current_.v_ideal_peak > 0.0
                                     ? current_.v_peak / current_.v_ideal_peak
                                     : std::numeric_limits<double>::quiet_NaN();
      end_cycle();
    }
    started_ = true;
    current_ = CycleRecord{};
    current_.index = next_index_++;
    current_.t_start = s.t;
    v_at_ideal_peak_ = 0.0;
  }
  if (!started_) {
    return;
  }
  const double abs_v = std::abs(s.v);
  const double abs_vi = std::abs(s.v_ideal);
  if (abs_vi > current_.v_ideal_peak) {
    current_.v_ideal_peak = abs_vi;
    v_at_ideal_peak_ = abs_v;
  }
  current_.v_peak = std::max(current_.v_peak, abs_v);
  current_.energy_max = std::max(current_.energy_max, s.energy);
  current_.energy_ideal_max = std::max(current_.energy_ideal_max, s.energy_ideal);
  current_.e_f_peak = std::max(current_.e_f_peak, std::abs(s.e_f));
  current_.e_v_peak = std::max(current_.e_v_peak, std::abs(s.e_v));
}

WindowMetrics CycleMetrics::window() const noexcept {
  WindowMetrics w;
  w.e_f_peak = window_e_f_;
  w.e_v_peak = window_e_v_;
  w.e_r = std::numeric_limits<double>::quiet_NaN();
  w.amplitude_ratio = std::numeric_limits<double>::quiet_NaN();
  if (sink_ != nullptr) {
    w.cycles = window_cycles_;
    if (worst_r_ >= 0.0) w.e_r = window_e_r_;
    if (worst_a_ >= 0.0) w.amplitude_ratio = window_amplitude_;
    return w;
  }
  double worst_r = -1.0;
  double worst_a = -1.0;
  for (const CycleRecord& c : cycles_) {
    if (c.t_end < window_start_) {
      continue;
    }
    ++w.cycles;
    if (std::abs(c.e_r - 1.0) > worst_r) {
      worst_r = std::abs(c.e_r - 1.0);
      w.e_r = c.e_r;
    }
    if (std::abs(c.amplitude_ratio - 1.0) > worst_a) {
      worst_a = std::abs(c.amplitude_ratio - 1.0);
      w.amplitude_ratio = c.amplitude_ratio;
    }
  }
  return w;
}

double CycleMetrics::energy_ratio() const noexcept {
  const double first = sink_ != nullptr  ? first_energy_max_
                       : cycles_.empty() ? 0.0
                                         : cycles_.front().energy_max;
  const double last = sink_ != nullptr  ? last_energy_max_
                      : cycles_.empty() ? 0.0
                                        : cycles_.back().energy_max;
  if (count_ < 2 || first <= 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return last / first;
}

double CycleMetrics::amplitude_growth_rate(std::size_t first_cycle) const noexcept {
  if (sink_ != nullptr) return growth_.rate();
  GrowthSums sums;
  for (std::size_t i = first_cycle; i < cycles_.size(); ++i) sums.add(cycles_[i]);
  return sums.rate();
}

}  // namespace hyloop::core
