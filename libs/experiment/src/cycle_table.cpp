#include "hyloop/experiment/cycle_table.hpp"

#include "hyloop/experiment/experiment.hpp"

namespace hyloop::experiment {

std::array<double, 10> cycle_values(const core::CycleRecord& c) {
  return {c.t_start,  c.t_end,        c.e_r,        c.amplitude_ratio,
          c.v_peak,   c.v_ideal_peak, c.energy_max, c.energy_ideal_max,
          c.e_f_peak, c.e_v_peak};
}

void write_cycles_csv(const std::filesystem::path& file, const char* header,
                      std::span<const core::CycleRecord> cycles) {
  CsvStream csv;
  csv.open(file, header);
  for (const core::CycleRecord& c : cycles) {
    const std::array<double, 10> values = cycle_values(c);
    csv.write_row(c.index, values);
  }
  csv.finish();
}

}  // namespace hyloop::experiment
