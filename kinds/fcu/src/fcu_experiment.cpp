#include "hyloop/kinds/fcu/fcu_experiment.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace {

std::size_t history_capacity(const FcuScenario& s) {
  const auto window =
      static_cast<std::int64_t>(std::llround(s.metrics.delay_window / s.timing.step));
  return static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(window, s.steps())));
}

nlohmann::json errors_json(const core::TrackingErrors& e) {
  return {{"nrms", e.nrms},
          {"rms", e.rms},
          {"peak", e.peak},
          {"normalised_peak", e.normalised_peak},
          {"command_range", e.command_range},
          {"samples", e.samples}};
}

}  // namespace

// ---------------------------------------------------------------------------------- runner

const std::array<std::string_view, kFcuColumns> kFcuColumnHeaders = {
    "time[s]",       "pla[deg]",          "n_demand[%]",           "x_c[kg/s]", "x_p[kg/s]",
    "x_motor[kg/s]", "valve_position[-]", "fuel_flow[kg/s]",       "x_m[kg/s]", "n[%]",
    "n_ideal[%]",    "x_c_ideal[kg/s]",   "fuel_flow_ideal[kg/s]", "e_n[%]",    "e_flow[kg/s]",
    "ti[kg^2/s^2]"};

const std::vector<std::string>& fcu_record_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c(kFcuColumnHeaders.begin(), kFcuColumnHeaders.end());
    c.insert(c.end(), {"speed[-]", "speed_ideal[-]", "ecu_limited[-]", "valve_saturated[-]"});
    return c;
  }();
  return columns;
}

FcuExperiment::FcuExperiment(const FcuScenario& scenario) : FcuExperiment(scenario, false) {}

FcuExperiment::FcuExperiment(const FcuScenario& scenario, SampleTable::Streamed)
    : FcuExperiment(scenario, true) {}

FcuExperiment::FcuExperiment(const FcuScenario& scenario, bool streamed)
    : scenario_(scenario),
      step_(scenario.timing.step),
      total_steps_(scenario.steps()),
      dynamics_(scenario_),
      record_(kFcuColumns + kFcuExtraColumns, 0.0),
      command_history_(history_capacity(scenario)),
      measured_history_(history_capacity(scenario)),
      samples_(make_sample_table(
          std::vector<std::string>(kFcuColumnHeaders.begin(), kFcuColumnHeaders.end()),
          scenario.outputs.samples
              ? static_cast<std::size_t>(scenario.steps() / scenario.outputs.decimation + 1)
              : 0,
          streamed)),
      // Bumpless start at the steady state of PLA(0).
      chain_(fcu_loop_plan(scenario), make_fcu_rig_part(scenario), make_fcu_dynamics_part(scenario),
             fcu_record_columns()),
      decimation_(scenario.outputs.decimation) {}

void FcuExperiment::record_row(std::span<const double> row) noexcept {
  const std::int64_t k = cycle_;
  const double x_c = row[col(FcuColumn::kXc)];
  const double x_m = row[col(FcuColumn::kXm)];
  const auto extra = [&row](FcuExtraColumn c) {
    return row[kFcuColumns + static_cast<std::size_t>(c)];
  };
  flow_errors_.update(x_c, x_m);
  speed_errors_.update(extra(FcuExtraColumn::kSpeedIdeal), extra(FcuExtraColumn::kSpeed));
  if (extra(FcuExtraColumn::kEcuLimited) != 0.0) ++ecu_limited_;
  if (extra(FcuExtraColumn::kValveSaturated) != 0.0) ++valve_saturated_;
  const std::size_t slot = static_cast<std::size_t>(k) % command_history_.size();
  command_history_[slot] = x_c;
  measured_history_[slot] = x_m;
  history_count_ = std::min(history_count_ + 1, command_history_.size());
  std::copy_n(row.begin(), kFcuColumns, row_.begin());
  row_[col(FcuColumn::kTrackingIndicator)] = ti_.update(x_c, x_m);
  // The observers (journal, run.h5) get the row with the tracking indicator the recorder derives,
  // as samples.csv has it (a replay recomputes it from x_c and x_m).
  if (row.data() != record_.data()) std::copy(row.begin(), row.end(), record_.begin());
  record_[col(FcuColumn::kTrackingIndicator)] = row_[col(FcuColumn::kTrackingIndicator)];
  observe_row(record_);
  if (scenario_.outputs.samples && k % decimation_ == 0) samples_.append(row_);
  cycle_ = k + 1;
}

bool FcuExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != kFcuColumns + kFcuExtraColumns || finished()) return false;
  record_row(row);
  return true;
}

void FcuExperiment::record_stop(std::string_view reason) noexcept {
  stop_reason_ = StopReason::kServiceFault;
  for (const StopReason r : {StopReason::kNotFinite, StopReason::kSpeedLimit}) {
    if (reason == to_string(r)) stop_reason_ = r;
  }
}

core::DelayEstimate FcuExperiment::delay_estimate() const {
  const std::size_t count = history_count_;
  const std::size_t cap = command_history_.size();
  std::vector<double> c(count);
  std::vector<double> m(count);
  // Unroll the ring: the oldest stored sample first.
  const std::size_t first =
      static_cast<std::size_t>(cycle_) >= cap ? static_cast<std::size_t>(cycle_) % cap : 0;
  for (std::size_t i = 0; i < count; ++i) {
    c[i] = command_history_[(first + i) % cap];
    m[i] = measured_history_[(first + i) % cap];
  }
  const int max_lag = static_cast<int>(std::llround(scenario_.metrics.delay_search / step_));
  return core::estimate_delay(c, m, std::min(max_lag, static_cast<int>(count) - 2));
}

nlohmann::json FcuExperiment::summary() const {
  const FcuScenario& s = scenario_;
  nlohmann::json j;
  j["compensator"] = std::string(to_string(s.compensator.type));
  j["diverged"] = stopped();
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason_))) : nlohmann::json(nullptr);
  j["tracking_indicator"] = {{"ti_kg2_s2", ti_.value()},
                             {"area_kg2_s2", ti_.area()},
                             {"complementary_area_kg2_s2", ti_.complementary_area()}};
  nlohmann::json delay;
  try {
    const core::DelayEstimate d = delay_estimate();
    delay = {{"delay_s", d.delay(step_)},
             {"lag_steps", d.lag_steps},
             {"correlation", d.correlation},
             {"at_boundary", d.at_boundary}};
  } catch (const std::invalid_argument& e) {
    delay = {{"delay_s", nullptr}, {"error", e.what()}};
  }
  delay["transfer_delay_s"] = s.transfer.total_delay();
  delay["valve_time_constant_s"] = s.fcu.valve_time_constant;
  j["delay_estimate"] = delay;
  j["engine_speed_error"] = errors_json(speed_errors());
  j["flow_error_kg_s"] = errors_json(flow_errors());
  nlohmann::json comp = {{"type", std::string(to_string(s.compensator.type))}};
  if (s.compensator.type == FcuCompensatorType::kInverse) {
    comp["alpha"] = alpha();
    comp["delay_s"] = s.resolved_compensator_delay();
  }
  if (s.compensator.type == FcuCompensatorType::kPolynomial) {
    comp["points"] = s.compensator.points;
    comp["order"] = s.compensator.order;
    comp["steps_ahead"] = s.resolved_steps_ahead();
    comp["weights"] = predictor_weights();
  }
  j["compensation"] = comp;
  j["valve_saturated_steps"] = valve_saturated_;
  j["ecu_limited_steps"] = ecu_limited_;
  j["delays"] = {{"motor_s", s.transfer.motor_delay},
                 {"flow_meter_s", s.transfer.flow_meter_delay},
                 {"total_s", s.transfer.total_delay()}};
  j["seed"] = s.transfer.seed;
  return j;
}

}  // namespace hyloop::experiment
