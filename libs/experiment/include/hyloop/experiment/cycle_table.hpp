#pragma once
// cycles.csv (DESIGN §7, §9): one line per vibration cycle of core::CycleMetrics, its index, then
// its figures. A recorder that streams (the coordinator's) writes each cycle as it ends through a
// CsvStream; a kept one writes the file at the end; both give the same bytes (17 significant
// digits, as samples.csv).
#include <array>
#include <filesystem>
#include <span>

#include "hyloop/core/cycle_metrics.hpp"

namespace hyloop::experiment {

inline constexpr const char* kCyclesHeader =
    "cycle[-],t_start[s],t_end[s],e_R[-],amplitude_ratio[-],v_peak[m/s],v_ideal_peak[m/s],"
    "energy_max[J],energy_ideal_max[J],e_F_peak[N],e_V_peak[m/s]";

/// A cycle's figures after its index, in kCyclesHeader's order.
std::array<double, 10> cycle_values(const core::CycleRecord& c);

/// Writes `header` and one line per cycle (index, cycle_values) to `file`.
/// @throws std::runtime_error naming the file when a write fails.
void write_cycles_csv(const std::filesystem::path& file, const char* header,
                      std::span<const core::CycleRecord> cycles);

}  // namespace hyloop::experiment
