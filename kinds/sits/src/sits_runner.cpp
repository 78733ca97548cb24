#include "hyloop/kinds/sits/sits_runner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "hyloop/experiment/cycle_table.hpp"
#include "hyloop/experiment/scenario_fields.hpp"

namespace hyloop::experiment {
namespace {

std::size_t cycle_capacity(const SitsScenario& s) {
  // A vibration cycle shorter than 8 steps cannot be resolved; the bound keeps memory modest.
  return static_cast<std::size_t>(s.steps() / 8 + 16);
}

SampleTable sits_samples(const SitsScenario& s, bool streamed) {
  std::vector<std::string> headers(kSitsColumnHeaders.begin(), kSitsColumnHeaders.end());
  const auto rows =
      s.outputs.samples ? static_cast<std::size_t>(s.steps() / s.outputs.decimation + 1) : 0;
  if (streamed) return {std::move(headers), rows, SampleTable::Streamed{}};
  return {std::move(headers), rows};
}

core::CycleMetrics sits_cycle_metrics(const SitsScenario& s, bool streamed, core::CycleSink& sink) {
  const double window_start = s.timing.duration - s.metrics.window;
  if (streamed) return {cycle_capacity(s), window_start, sink};
  return {cycle_capacity(s), window_start};
}

}  // namespace

void SitsRunner::CycleCsv::on_cycle(const core::CycleRecord& c) noexcept {
  const std::array<double, 10> values = cycle_values(c);
  csv.write_row(c.index, values);
}

SitsRunner::SitsRunner(const SitsScenario& scenario) : SitsRunner(scenario, false) {}

SitsRunner::SitsRunner(const SitsScenario& scenario, SampleTable::Streamed)
    : SitsRunner(scenario, true) {}

SitsRunner::SitsRunner(const SitsScenario& scenario, bool streamed)
    : scenario_(scenario),
      step_(scenario.timing.step),
      total_steps_(scenario.steps()),
      metrics_(sits_cycle_metrics(scenario, streamed, cycle_csv_)),
      samples_(sits_samples(scenario, streamed)),
      // Bumpless start: the rig at rest at the target's initial position, the command there.
      chain_(sits_loop_plan(scenario), make_sits_emulated_rig_part(scenario),
             make_sits_dynamics_part(scenario), samples_.headers()),
      decimation_(scenario.outputs.decimation),
      k_h_min_(std::numeric_limits<double>::infinity()),
      k_h_max_(-std::numeric_limits<double>::infinity()),
      guard_(scenario.guard.config) {}

bool SitsRunner::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != kSitsColumns || cycle_ >= total_steps_) {
    return false;
  }
  observe_row(row);
  const std::int64_t k = cycle_;
  std::copy(row.begin(), row.end(), row_.begin());
  const double k_h = row_[col(SitsColumn::kKh)];
  k_h_min_ = std::min(k_h_min_, k_h);
  k_h_max_ = std::max(k_h_max_, k_h);
  if (scenario_.outputs.samples && k % decimation_ == 0) {
    samples_.append(row_);
  }
  const double f_input = row_[col(SitsColumn::kFInput)];
  metrics_.add({.t = row_[col(SitsColumn::kTime)],
                .v = row_[col(SitsColumn::kV)],
                .v_ideal = row_[col(SitsColumn::kVIdeal)],
                .energy = row_[col(SitsColumn::kEnergy)],
                .energy_ideal = row_[col(SitsColumn::kEnergyIdeal)],
                .e_f = row_[col(SitsColumn::kFIdeal)] - f_input,
                .e_v = row_[col(SitsColumn::kV)] - row_[col(SitsColumn::kVIdeal)]});
  guard_.update(row_[col(SitsColumn::kTime)], row_[col(SitsColumn::kEnergy)]);
  cycle_ = k + 1;
  return true;
}

void SitsRunner::record_stop(std::string_view reason) noexcept {
  stop_reason_ = parse_stop_reason(reason);
  if (stop_reason_ == StopReason::kNone) {
    stop_reason_ = StopReason::kDriverFault;
  }
}

nlohmann::json SitsRunner::summary() const {
  const SitsScenario& s = scenario_;
  const core::CycleMetrics& m = metrics_;
  const core::WindowMetrics w = m.window();
  const double energy_ratio = m.energy_ratio();
  const bool diverged =
      stopped() || (std::isfinite(energy_ratio) && energy_ratio > s.metrics.diverged_energy_ratio);
  nlohmann::json j;
  j["compensator"] = std::string(core::to_string(s.compensator.kind));
  j["diverged"] = diverged;
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason()))) : nlohmann::json(nullptr);
  j["energy_ratio"] = fields::json_number(energy_ratio);
  j["amplitude_growth_rate_per_s"] = fields::json_number(m.amplitude_growth_rate());
  j["cycles"] = m.cycle_count();
  j["dropped_cycles"] = m.dropped_cycles();
  j["metrics"] = {{"window_s", s.metrics.window},
                  {"cycles_in_window", w.cycles},
                  {"e_F_peak_N", w.e_f_peak},
                  {"e_V_peak_mps", w.e_v_peak},
                  {"e_R", fields::json_number(w.e_r)},
                  {"amplitude_ratio", fields::json_number(w.amplitude_ratio)}};
  j["k_h"] = {{"min", fields::json_number(k_h_min())},
              {"max", fields::json_number(k_h_max())},
              {"final", last_row()[static_cast<std::size_t>(SitsColumn::kKh)]}};
  j["phase_correction"] = {
      {"enabled", s.compensator.phase_correction.enabled},
      {"k_x_final_n_per_m", last_row()[static_cast<std::size_t>(SitsColumn::kKx)]},
      {"phase_final_rad", last_row()[static_cast<std::size_t>(SitsColumn::kPhase)]}};
  j["delays"] = {{"force_measurement_steps", s.sensor_delay_steps()},
                 {"control_cycle_steps", s.hold_steps()},
                 {"robot_response", s.delays.robot_response}};
  j["rejected_commands"] = rejected_commands();
  j["seed"] = s.rig.seed;
  j["stability_guard"] = {{"enabled", s.guard.enabled},
                          {"limit", s.guard.config.max_energy_ratio},
                          {"reference_energy_j", fields::json_number(guard_.reference())},
                          {"max_energy_ratio", guard_.max_ratio()},
                          {"max_energy_ratio_at_s",
                           cycle_ > 0 ? nlohmann::json(guard_.max_ratio_at()) : nlohmann::json()},
                          {"tripped_at_s", fields::json_number(guard_.tripped_at())}};
  return j;
}

void SitsRunner::stream_tables(const std::filesystem::path& dir) {
  if (!samples_.streamed()) return;
  samples_.stream_to(dir / "samples.csv");
  cycle_csv_.csv.open(dir / "cycles.csv", kCyclesHeader);
}

void SitsRunner::write_extra_files(const std::filesystem::path& dir) const {
  if (samples_.streamed()) {
    CsvStream& csv = cycle_csv_.csv;
    if (!csv.is_open() || csv.path() != dir / "cycles.csv") {
      throw std::logic_error("cycles.csv: a streamed recorder writes only where it streamed");
    }
    csv.finish();
    return;
  }
  write_cycles_csv(dir / "cycles.csv", kCyclesHeader, metrics_.cycles());
}

}  // namespace hyloop::experiment
