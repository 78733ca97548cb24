// The vrths recorder (vrths_experiment.hpp): full-rate series for the benchmark's criteria.
#include "hyloop/kinds/vrths/vrths_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hyloop::experiment {
namespace {

// Record columns the recorder reads (vrths_record_columns() order).
enum Column : std::size_t {
  kTime = 0,
  kXm = 8,
  kY1 = 2,
  kY2 = 3,
  kY3 = 4,
  kR1 = 5,
  kR2 = 6,
  kR3 = 7,
  kU = 10,
  kC0 = 11,
  kX = 15,
  kV = 16,
  kForce = 17,
};
constexpr std::size_t kColumns = 18;  // vrths_record_columns().size(), checked at construction
constexpr std::array<std::size_t, 7> kSeries = {kXm, kY1, kY2, kY3, kR1, kR2, kR3};

std::int64_t total_steps_of(const VrthsScenario& s) { return s.steps(load_vrths_ground_motion(s)); }

}  // namespace

VrthsExperiment::VrthsExperiment(const VrthsScenario& scenario)
    : VrthsExperiment(scenario, false) {}

VrthsExperiment::VrthsExperiment(const VrthsScenario& scenario, SampleTable::Streamed)
    : VrthsExperiment(scenario, true) {}

VrthsExperiment::VrthsExperiment(const VrthsScenario& scenario, bool streamed)
    : scenario_(scenario),
      total_steps_(total_steps_of(scenario)),
      samples_(make_sample_table(
          vrths_record_columns(),
          scenario.outputs.samples
              ? static_cast<std::size_t>(total_steps_ / scenario.outputs.decimation + 1)
              : 0,
          streamed)),
      chain_(vrths_loop_plan(scenario), make_vrths_emulated_rig_part(scenario),
             make_vrths_dynamics_part(scenario), vrths_record_columns()),
      guard_(scenario.guard.config) {
  if (vrths_record_columns().size() != kColumns) {
    throw std::logic_error("vrths: the recorder's column count is out of date");
  }
  for (auto& s : series_) s.reserve(static_cast<std::size_t>(total_steps_));
}

bool VrthsExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != kColumns || cycle_ >= total_steps_ || stopped()) {
    return false;
  }
  for (std::size_t i = 0; i < kSeries.size(); ++i) series_[i].push_back(row[kSeries[i]]);
  peak_force_ = std::max(peak_force_, std::abs(row[kForce]));
  peak_command_ = std::max(peak_command_, std::abs(row[kU]));
  peak_x_ = std::max(peak_x_, std::abs(row[kX]));
  peak_v_ = std::max(peak_v_, std::abs(row[kV]));
  std::copy_n(row.begin() + kC0, coefficients_.size(), coefficients_.begin());
  guard_.update(row[kTime], row[kY1], row[kXm]);
  observe_row(row);
  if (scenario_.outputs.samples && cycle_ % scenario_.outputs.decimation == 0) {
    samples_.append(row);
  }
  ++cycle_;
  return true;
}

void VrthsExperiment::record_stop(std::string_view reason) noexcept {
  stop_reason_ = StopReason::kServiceFault;
  for (const StopReason r :
       {StopReason::kNotFinite, StopReason::kStrokeLimit, StopReason::kStabilityGuard}) {
    if (reason == to_string(r)) stop_reason_ = r;
  }
}

core::rths::Criteria VrthsExperiment::criteria() const {
  return core::rths::evaluate(series_[0], series_[1], series_[2], series_[3], series_[4],
                              series_[5], series_[6], scenario_.timing.step);
}

nlohmann::json VrthsExperiment::summary() const {
  const VrthsScenario& s = scenario_;
  const core::rths::PlantParameters p = s.run_plant();
  nlohmann::json j;
  j["case"] = s.building_case;
  j["controller"] = s.controller.type;
  j["diverged"] = stopped();
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason_))) : nlohmann::json(nullptr);
  j["perturbation_seed"] = s.perturbation.seed;
  j["plant"] = {{"a3_per_s", p.a3},
                {"beta1_per_s", p.beta1},
                {"beta2_per_s2", p.beta2},
                {"k_e_n_per_m", p.k_e},
                {"c_e_ns_per_m", p.c_e()}};
  try {
    const core::rths::Criteria c = criteria();
    static constexpr const char* kNames[9] = {"J1_ms",      "J2_percent", "J3_percent",
                                              "J4_percent", "J5_percent", "J6_percent",
                                              "J7_percent", "J8_percent", "J9_percent"};
    for (std::size_t i = 0; i < c.size(); ++i) j[kNames[i]] = c[i];
  } catch (const std::invalid_argument& e) {
    j["criteria_error"] = e.what();
  }
  j["peak_actuator_force_n"] = peak_force_;
  j["actuator_capacity_exceeded"] = peak_force_ >= s.limits.force;
  j["peak_command_m"] = peak_command_;
  j["peak_displacement_m"] = peak_x_;
  double peak_reference = 0.0;
  for (const double r : series_[4]) peak_reference = std::max(peak_reference, std::abs(r));
  j["peak_reference_m"] = peak_reference;
  j["stroke_exceeded"] = peak_x_ > s.limits.stroke;
  j["peak_velocity_m_per_s"] = peak_v_;
  j["velocity_limit_exceeded"] = peak_v_ > s.limits.velocity;
  if (s.controller.type == "ats") {
    j["ats_coefficients"] = {coefficients_[0], coefficients_[1], coefficients_[2]};
  }
  if (s.controller.type == "amb") {
    j["amb_coefficients"] = coefficients_;
  }
  j["recorded_cycles"] = cycle_;
  const auto number = [](double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
  };
  j["stability_guard"] = {
      {"enabled", s.guard.enabled},
      {"limit", s.guard.config.max_tracking_ratio},
      {"max_tracking_ratio", guard_.max_ratio()},
      {"max_tracking_ratio_at_s",
       guard_.max_ratio() > 0.0 ? number(guard_.max_ratio_at()) : nlohmann::json()},
      {"tripped_at_s", number(guard_.tripped_at())}};
  return j;
}

}  // namespace hyloop::experiment
