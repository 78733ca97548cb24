#pragma once
// Per-vibration-cycle metrics of the SITS paper (Eq. 44) as defined in DESIGN.md §7.
//
//   e_F = E − F′ (N),  e_V = v − v_i (m/s)
//   cycles are cut at the ideal twin's upward velocity zero-crossings (v_i[k−1] < 0 ≤ v_i[k])
//   e_R(cycle)             = |v| at the instant |v_i| peaks / that peak       (−)
//   amplitude_ratio(cycle) = max|v| / max|v_i|                                (−)
//   energy_max(cycle)      = max of ½m_e·v² + ½K_tc·x² over the cycle         (J)
//
// The window metrics (e_F and e_V peaks, the cycle value of e_R and of the amplitude ratio
// farthest from 1) cover the final `window` seconds of the run. Storage is reserved at
// construction; add() never allocates. Cycles beyond the capacity are counted, not stored.

#include <cstddef>
#include <span>
#include <vector>

namespace hyloop::core {

struct CycleRecord {
  int index = 0;
  double t_start = 0.0;           ///< s
  double t_end = 0.0;             ///< s
  double e_r = 0.0;               ///< −
  double amplitude_ratio = 0.0;   ///< −
  double v_peak = 0.0;            ///< max|v|, m/s
  double v_ideal_peak = 0.0;      ///< max|v_i|, m/s
  double energy_max = 0.0;        ///< J
  double energy_ideal_max = 0.0;  ///< J
  double e_f_peak = 0.0;          ///< max|e_F|, N
  double e_v_peak = 0.0;          ///< max|e_V|, m/s
};

struct MetricSample {
  double t;             ///< s
  double v;             ///< target velocity, m/s
  double v_ideal;       ///< twin velocity, m/s
  double energy;        ///< target mechanical energy, J
  double energy_ideal;  ///< twin mechanical energy, J
  double e_f;           ///< E − F′, N
  double e_v;           ///< v − v_i, m/s
};

struct WindowMetrics {
  double e_f_peak = 0.0;         ///< N
  double e_v_peak = 0.0;         ///< m/s
  double e_r = 0.0;              ///< the cycle value farthest from 1 (NaN if no cycle ended)
  double amplitude_ratio = 0.0;  ///< the cycle value farthest from 1 (NaN if no cycle ended)
  int cycles = 0;                ///< cycles that ended in the window
};

/// Receives each cycle a streamed CycleMetrics ends, in order (it keeps none).
class CycleSink {
 public:
  virtual ~CycleSink() = default;
  virtual void on_cycle(const CycleRecord& cycle) noexcept = 0;
};

class CycleMetrics {
 public:
  /// @param window_start metrics of the window cover samples (and cycle ends) with t ≥ this.
  CycleMetrics(std::size_t max_cycles, double window_start);
  /// Streamed: keeps no cycle (no storage at all) but hands each to `sink` (the capacity still
  /// counts); window(), energy_ratio() and amplitude_growth_rate() with its default first cycle
  /// are those of the kept form, bit for bit (the same values folded in the same order).
  CycleMetrics(std::size_t max_cycles, double window_start, CycleSink& sink);

  /// Adds the sample of one step. RT-safe (streamed: as the sink is).
  void add(const MetricSample& s) noexcept;

  /// The kept cycles (streamed: none).
  [[nodiscard]] std::span<const CycleRecord> cycles() const noexcept { return cycles_; }
  /// The cycles ended within the capacity (kept or handed to the sink).
  [[nodiscard]] std::size_t cycle_count() const noexcept { return count_; }
  [[nodiscard]] std::size_t dropped_cycles() const noexcept { return dropped_; }
  [[nodiscard]] WindowMetrics window() const noexcept;

  /// Largest energy of the last complete cycle over that of the first (NaN if < 2 cycles).
  [[nodiscard]] double energy_ratio() const noexcept;

  /// Growth rate σ (1/s) of the per-cycle velocity amplitude, v_peak ∝ e^{σ·t}: least squares
  /// of ln(v_peak) against the cycle's end time, over cycles with index ≥ first_cycle (streamed:
  /// first_cycle is kGrowthFirstCycle whatever is passed).
  static constexpr std::size_t kGrowthFirstCycle = 1;
  [[nodiscard]] double amplitude_growth_rate(
      std::size_t first_cycle = kGrowthFirstCycle) const noexcept;

 private:
  /// Keeps or hands on the cycle just ended and folds it into the streamed figures.
  void end_cycle() noexcept;
  /// The least-squares sums of amplitude_growth_rate.
  struct GrowthSums {
    double n = 0.0, st = 0.0, sy = 0.0, stt = 0.0, sty = 0.0;
    void add(const CycleRecord& c) noexcept;
    [[nodiscard]] double rate() const noexcept;
  };

  CycleSink* sink_ = nullptr;  ///< streamed: where the cycles go
  std::size_t count_ = 0;
  // Streamed: the first and last cycle's energy_max, the window's worst cycle values, the sums.
  double first_energy_max_ = 0.0;
  double last_energy_max_ = 0.0;
  int window_cycles_ = 0;
  double worst_r_ = -1.0, window_e_r_ = 0.0;
  double worst_a_ = -1.0, window_amplitude_ = 0.0;
  GrowthSums growth_;
  std::vector<CycleRecord> cycles_;
  std::size_t capacity_;
  std::size_t dropped_ = 0;
  double window_start_;
  bool started_ = false;
  bool have_previous_ = false;
  double previous_v_ideal_ = 0.0;
  CycleRecord current_{};
  double v_at_ideal_peak_ = 0.0;
  int next_index_ = 0;
  double window_e_f_ = 0.0;
  double window_e_v_ = 0.0;
};

}  // namespace hyloop::core
