#include "hyloop/kinds/sits6/sits6_runner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "hyloop/experiment/cycle_table.hpp"
#include "hyloop/experiment/scenario_fields.hpp"

namespace hyloop::experiment {
namespace {

constexpr std::array<const char*, kSits6Axes> kSits6AxisKey = {"x", "y", "z", "rx", "ry", "rz"};

std::size_t sits6_cycle_capacity(const Sits6Scenario& s) {
  return static_cast<std::size_t>(s.steps() / 8 + 16);  // as the 1-D runner's
}

SampleTable sits6_samples(const Sits6Scenario& s, bool streamed) {
  std::vector<std::string> headers = sits6_dynamics_names();
  for (std::string& t : sits6_truth_names()) headers.push_back(std::move(t));
  const auto rows =
      s.outputs.samples ? static_cast<std::size_t>(s.steps() / s.outputs.decimation + 1) : 0;
  return make_sample_table(std::move(headers), rows, streamed);
}

constexpr const char* kAxesCyclesHeader =
    "axis[-],cycle[-],t_start[s],t_end[s],e_R[-],amplitude_ratio[-],v_peak[m/s|rad/s],"
    "v_ideal_peak[m/s|rad/s],energy_max[J],energy_ideal_max[J],e_F_peak[N|N*m],"
    "e_V_peak[m/s|rad/s]";

/// A cycles_axes.csv line: the axis, the cycle's index, its figures.
std::array<double, 12> axis_cycle_values(std::size_t axis, const core::CycleRecord& c) {
  std::array<double, 12> v{};
  v[0] = static_cast<double>(axis);
  v[1] = static_cast<double>(c.index);
  const std::array<double, 10> figures = cycle_values(c);
  std::copy(figures.begin(), figures.end(), v.begin() + 2);
  return v;
}

template <typename Sinks>
std::vector<core::CycleMetrics> sits6_metrics(const Sits6Scenario& s, bool streamed, Sinks& sinks) {
  const double window_start = s.timing.duration - s.metrics.window;
  std::vector<core::CycleMetrics> m;
  m.reserve(kSits6Axes);
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    if (streamed) {
      m.emplace_back(sits6_cycle_capacity(s), window_start, sinks[a]);
    } else {
      m.emplace_back(sits6_cycle_capacity(s), window_start);
    }
  }
  return m;
}

nlohmann::json sits6_window_json(const core::CycleMetrics& m, double window, bool rotational) {
  const core::WindowMetrics w = m.window();
  return {{"window_s", window},
          {"cycles_in_window", w.cycles},
          {rotational ? "e_F_peak_N_m" : "e_F_peak_N", w.e_f_peak},
          {rotational ? "e_V_peak_rad_s" : "e_V_peak_mps", w.e_v_peak},
          {"e_R", fields::json_number(w.e_r)},
          {"amplitude_ratio", fields::json_number(w.amplitude_ratio)}};
}

}  // namespace

Sits6Runner::Sits6Runner(const Sits6Scenario& scenario) : Sits6Runner(scenario, false) {}

Sits6Runner::Sits6Runner(const Sits6Scenario& scenario, SampleTable::Streamed)
    : Sits6Runner(scenario, true) {}

void Sits6Runner::AxisCycles::on_cycle(const core::CycleRecord& cycle) noexcept {
  if (axis_ == 0) {
    const std::array<double, 10> values = cycle_values(cycle);
    files_->x.write_row(cycle.index, values);
  }
  const std::array<double, 12> line = axis_cycle_values(axis_, cycle);
  files_->axes.write_row(line);
}

Sits6Runner::Sits6Runner(const Sits6Scenario& scenario, bool streamed)
    : scenario_(scenario),
      step_(scenario.timing.step),
      total_steps_(scenario.steps()),
      sinks_{AxisCycles(cycle_files_, 0), AxisCycles(cycle_files_, 1), AxisCycles(cycle_files_, 2),
             AxisCycles(cycle_files_, 3), AxisCycles(cycle_files_, 4), AxisCycles(cycle_files_, 5)},
      metrics_(sits6_metrics(scenario, streamed, sinks_)),
      samples_(sits6_samples(scenario, streamed)),
      chain_(sits6_loop_plan(scenario), make_sits6_emulated_rig_part(scenario),
             make_sits6_dynamics_part(scenario), samples_.headers()),
      decimation_(scenario.outputs.decimation),
      row_(samples_.headers().size(), 0.0),
      guard_(scenario.guard.config) {
  k_h_min_.fill(std::numeric_limits<double>::infinity());
  k_h_max_.fill(-std::numeric_limits<double>::infinity());
}

bool Sits6Runner::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != row_.size() || cycle_ >= total_steps_) return false;
  observe_row(row);
  const std::int64_t k = cycle_;
  std::copy(row.begin(), row.end(), row_.begin());
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    const double k_h = row_[sits6_column(a, Sits6AxisColumn::kGain)];
    k_h_min_[a] = std::min(k_h_min_[a], k_h);
    k_h_max_[a] = std::max(k_h_max_[a], k_h);
  }
  if (scenario_.outputs.samples && k % decimation_ == 0) samples_.append(row_);
  const double t = row_[0];
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    const double v = row_[sits6_column(a, Sits6AxisColumn::kRate)];
    const double v_ideal = row_[sits6_column(a, Sits6AxisColumn::kRateIdeal)];
    const double f_input = row_[sits6_column(a, Sits6AxisColumn::kWrenchInput)];
    metrics_[a].add({.t = t,
                     .v = v,
                     .v_ideal = v_ideal,
                     .energy = row_[kSits6Energy],
                     .energy_ideal = row_[kSits6EnergyIdeal],
                     .e_f = row_[sits6_column(a, Sits6AxisColumn::kWrenchIdeal)] - f_input,
                     .e_v = v - v_ideal});
  }
  guard_.update(t, row_[kSits6Energy]);
  cycle_ = k + 1;
  return true;
}

void Sits6Runner::record_stop(std::string_view reason) noexcept {
  stop_reason_ = parse_stop_reason(reason);
  if (stop_reason_ == StopReason::kNone) stop_reason_ = StopReason::kDriverFault;
}

nlohmann::json Sits6Runner::axis_summary(std::size_t a) const {
  nlohmann::json j;
  const core::CycleMetrics& m = metrics_[a];
  j["energy_ratio"] = fields::json_number(m.energy_ratio());
  j["amplitude_growth_rate_per_s"] = fields::json_number(m.amplitude_growth_rate());
  j["cycles"] = m.cycle_count();
  j["dropped_cycles"] = m.dropped_cycles();
  j["metrics"] = sits6_window_json(m, scenario_.metrics.window, a >= 3);
  j["k_h"] = {{"min", fields::json_number(k_h_min_[a])},
              {"max", fields::json_number(k_h_max_[a])},
              {"final", row_[sits6_column(a, Sits6AxisColumn::kGain)]}};
  return j;
}

nlohmann::json Sits6Runner::summary() const {
  const Sits6Scenario& s = scenario_;
  bool diverged = stopped();
  for (const core::CycleMetrics& m : metrics_) {
    const double r = m.energy_ratio();
    diverged = diverged || (std::isfinite(r) && r > s.metrics.diverged_energy_ratio);
  }
  nlohmann::json j = axis_summary(0);  // the x axis's figures under the 1-D names
  j["compensator"] = std::string(core::to_string(s.compensator.kind));
  j["rotational_compensator"] = std::string(core::to_string(s.rotational_compensator.kind));
  j["energy_observer"] = s.body_energy_observer ? "body" : "axis";
  j["diverged"] = diverged;
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason_))) : nlohmann::json(nullptr);
  for (std::size_t a = 0; a < kSits6Axes; ++a) j["axes"][kSits6AxisKey[a]] = axis_summary(a);
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

void Sits6Runner::stream_tables(const std::filesystem::path& dir) {
  if (!samples_.streamed()) return;
  samples_.stream_to(dir / "samples.csv");
  cycle_files_.x.open(dir / "cycles.csv", kCyclesHeader);
  cycle_files_.axes.open(dir / "cycles_axes.csv", kAxesCyclesHeader);
}

void Sits6Runner::write_extra_files(const std::filesystem::path& dir) const {
  if (samples_.streamed()) {
    for (CsvStream* csv : {&cycle_files_.x, &cycle_files_.axes}) {
      if (!csv->is_open() || csv->path().parent_path() != dir) {
        throw std::logic_error(csv->path().filename().string() +
                               ": a streamed recorder writes only where it streamed");
      }
      csv->finish();
    }
    return;
  }
  write_cycles_csv(dir / "cycles.csv", kCyclesHeader, metrics_[0].cycles());
  // In the order the streamed recorder writes them: by end time, the axes in order at a tie.
  std::vector<std::array<double, 12>> lines;
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    for (const core::CycleRecord& c : metrics_[a].cycles())
      lines.push_back(axis_cycle_values(a, c));
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& l, const auto& r) { return l[3] < r[3]; });  // t_end
  CsvStream axes;
  axes.open(dir / "cycles_axes.csv", kAxesCyclesHeader);
  for (const std::array<double, 12>& line : lines) axes.write_row(line);
  axes.finish();
}

}  // namespace hyloop::experiment
