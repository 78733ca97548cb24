#include "hyloop/core/cycle_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hyloop::core {

CycleMetrics::CycleMetrics(std::size_t max_cycles, double window_start)
    : capacity_(max_cycles), window_start_(window_start) {
  cycles_.reserve(max_cycles);
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
      if (cycles_.size() < capacity_) {
        cycles_.push_back(current_);
      } else {
        ++dropped_;
      }
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
  if (cycles_.size() < 2 || cycles_.front().energy_max <= 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return cycles_.back().energy_max / cycles_.front().energy_max;
}

double CycleMetrics::amplitude_growth_rate(std::size_t first_cycle) const noexcept {
  double n = 0.0, st = 0.0, sy = 0.0, stt = 0.0, sty = 0.0;
  for (std::size_t i = first_cycle; i < cycles_.size(); ++i) {
    const CycleRecord& c = cycles_[i];
    if (!(c.v_peak > 0.0) || !std::isfinite(c.v_peak)) {
      continue;
    }
    const double y = std::log(c.v_peak);
    n += 1.0;
    st += c.t_end;
    sy += y;
    stt += c.t_end * c.t_end;
    sty += c.t_end * y;
  }
  const double den = n * stt - st * st;
  if (n < 2.0 || den <= 0.0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return (n * sty - st * sy) / den;
}

}  // namespace hyloop::core
