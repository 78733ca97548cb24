#include "hyloop/kinds/rht/rht_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <span>

#include "hyloop/core/tracking_metrics.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

nlohmann::json num(double v) { return fields::json_number(v); }

// 2Δt oscillation of the command: the RMS of its third difference /8 (gain 1 at the Nyquist
// frequency, (ωΔt)³/8 below it), and that over the RMS of the command (NaN for a zero command),
// over cycles [settle, n).
std::pair<double, double> command_two_step(std::span<const double> c, std::size_t n,
                                           std::size_t settle) {
  double nyquist = 0.0, total = 0.0;
  std::size_t count = 0;
  for (std::size_t i = std::max<std::size_t>(settle, 3); i < n; ++i) {
    const double a = (c[i] - 3.0 * c[i - 1] + 3.0 * c[i - 2] - c[i - 3]) / 8.0;
    nyquist += a * a;
    total += c[i] * c[i];
    ++count;
  }
  const double two_step_rms = count > 0 ? std::sqrt(nyquist / static_cast<double>(count)) : 0.0;
  const double two_step_ratio =
      total > 0.0 ? std::sqrt(nyquist / total) : std::numeric_limits<double>::quiet_NaN();
  return {two_step_rms, two_step_ratio};
}

// ATS/AMB: the coefficients the dynamics wrote into the θ columns of the last row (`recorded`;
// else the initial ones).
void add_time_series_coefficients(nlohmann::json& j, const RhtScenario::Compensator& compensator,
                                  const std::array<double, kRhtMaxTheta>& theta, bool recorded) {
  if (compensator.type == "ats") {
    const auto& a = compensator.ats;
    j["ats"] = {{"window_s", a.window},
                {"update_every", a.update_every},
                {"initial_coefficients", a.initial},
                {"final_coefficients", recorded ? nlohmann::json{theta[0], theta[1], theta[2]}
                                                : nlohmann::json(a.initial)}};
  } else if (compensator.type == "amb") {
    const auto& a = compensator.amb;
    j["amb"] = {
        {"gain_per_s", a.gain},
        {"initial_coefficients", a.initial},
        {"final_coefficients", recorded ? nlohmann::json{theta[0], theta[1], theta[2], theta[3]}
                                        : nlohmann::json(a.initial)}};
  }
}

}  // namespace

RhtExperiment::RhtExperiment(const RhtScenario& scenario) : RhtExperiment(scenario, false) {}

RhtExperiment::RhtExperiment(const RhtScenario& scenario, SampleTable::Streamed)
    : RhtExperiment(scenario, true) {}

RhtExperiment::RhtExperiment(const RhtScenario& scenario, bool streamed)
    : scenario_(scenario),
      dynamics_(scenario),
      samples_(make_sample_table(
          rht_column_headers(),
          scenario.outputs.samples ? static_cast<std::size_t>(dynamics_.total_steps()) : 0,
          streamed)),
      chain_(rht_loop_plan(scenario), make_rht_emulated_rig_part(scenario),
             make_rht_dynamics_part(scenario), samples_.headers()),
      row_(kRhtColumns, 0.0),
      guard_(scenario.guard.config) {
  for (auto* v : {&desired_, &command_, &measured_, &true_})
    v->reserve(static_cast<std::size_t>(dynamics_.total_steps()));
  stop_reason_.reserve(kMaxStopReason);
}

void RhtExperiment::record_row(std::span<const double> row) noexcept {
  observe_row(row);
  desired_.push_back(row[col(RhtColumn::kDesired)]);
  command_.push_back(row[col(RhtColumn::kCommand)]);
  measured_.push_back(row[col(RhtColumn::kMeasured)]);
  true_.push_back(row[col(RhtColumn::kTrue)]);
  std::copy_n(row.begin() + static_cast<std::ptrdiff_t>(col(RhtColumn::kTheta1)), theta_.size(),
              theta_.begin());
  if (dynamics_.compensator() != nullptr) {
    const auto status = static_cast<std::size_t>(row[col(RhtColumn::kRlsStatus)]);
    if (status < status_counts_.size()) ++status_counts_[status];
  }
  guard_.update(row[col(RhtColumn::kTime)], row[col(RhtColumn::kDesired)],
                row[col(RhtColumn::kMeasured)]);
  if (scenario_.outputs.samples) samples_.append(row);
  ++cycle_;
}

bool RhtExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != kRhtColumns || cycle_ >= total_steps()) return false;
  if (core::InverseModelCompensator* c = dynamics_.compensator()) {
    const auto status = c->observe(row[col(RhtColumn::kCommand)], row[col(RhtColumn::kMeasured)]);
    if (static_cast<double>(status) != row[col(RhtColumn::kRlsStatus)]) ++replay_mismatches_;
  }
  std::copy(row.begin(), row.end(), row_.begin());
  record_row(row_);
  return true;
}

void RhtExperiment::record_stop(std::string_view reason) noexcept {
  stopped_ = true;
  stop_reason_.assign(reason.substr(0, kMaxStopReason));
}

nlohmann::json RhtExperiment::summary() const {
  const std::size_t n = desired_.size();
  const double dt = scenario_.timing.step;
  const auto settle = static_cast<std::size_t>(std::ceil(scenario_.metrics.settle_time / dt));
  double max_err = 0.0, max_err_settled = 0.0, max_true_err_settled = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = std::abs(measured_[i] - desired_[i]);
    max_err = std::max(max_err, e);
    if (i >= settle) {
      max_err_settled = std::max(max_err_settled, e);
      max_true_err_settled = std::max(max_true_err_settled, std::abs(true_[i] - desired_[i]));
    }
  }
  const std::span<const double> d(desired_), c(command_), m(measured_);
  // A delay estimate needs several times the lag range of data: too short a run reports null.
  constexpr int kMaxLag = 50;
  const bool enough = n >= 4 * static_cast<std::size_t>(kMaxLag);
  const core::DelayEstimate none{};
  const auto delay_cm = enough ? core::estimate_delay(c, m, kMaxLag) : none;
  const auto delay_dm = enough ? core::estimate_delay(d, m, kMaxLag) : none;
  const core::TrackingErrors errors = n > 0 ? core::tracking_errors(d, m) : core::TrackingErrors{};
  const auto [two_step_rms, two_step_ratio] = command_two_step(c, n, settle);
  nlohmann::json j;
  const std::string& type = scenario_.compensator.type;
  j["compensator"] = type == "adaptive" ? "adaptive_" + scenario_.compensator.model : type;
  j["diverged"] = stopped_;
  j["stop_reason"] = stopped_ ? nlohmann::json(stop_reason_) : nlohmann::json(nullptr);
  const core::GroundMotion& motion = dynamics_.motion();
  j["ground_motion"] = {{"source", motion.source},
                        {"peak_mps2", motion.peak()},
                        {"peak_g", motion.peak() / core::kStandardGravity}};
  j["metrics"] = {
      {"max_error_m", max_err},
      {"max_error_after_settle_m", max_err_settled},
      {"max_true_error_after_settle_m", max_true_err_settled},
      {"settle_time_s", scenario_.metrics.settle_time},
      {"nrms_error", errors.nrms},
      {"rms_error_m", errors.rms},
      {"peak_error_m", errors.peak},
      {"normalised_peak_error", errors.normalised_peak},
      {"tracking_indicator_m2", n > 1 ? core::tracking_indicator(d, m) : 0.0},
      {"delay_command_to_measured_s", enough ? num(delay_cm.delay(dt)) : nlohmann::json(nullptr)},
      {"delay_desired_to_measured_s", enough ? num(delay_dm.delay(dt)) : nlohmann::json(nullptr)},
      {"command_two_step_rms_m", two_step_rms},
      {"command_two_step_ratio", num(two_step_ratio)},
      {"command_two_step_oscillation",
       std::isfinite(two_step_ratio) && two_step_ratio > scenario_.metrics.oscillation_threshold}};
  if (const core::InverseModelCompensator* compensator = dynamics_.compensator()) {
    nlohmann::json counts;
    for (std::size_t k = 0; k < core::kRlsStatusCount; ++k) {
      counts[std::string(core::to_string(static_cast<core::RlsStatus>(k)))] = status_counts_[k];
    }
    std::vector<double> theta;
    for (int k = 0; k < compensator->parameter_count(); ++k)
      theta.push_back(compensator->parameters()(k));
    j["rls"] = {{"model", scenario_.compensator.model},
                {"forgetting_factor", scenario_.compensator.forgetting_factor},
                {"initial_parameters", dynamics_.initial_parameters()},
                {"final_parameters", theta},
                {"updates", counts},
                {"guard_rejections", compensator->estimator().rejected()},
                {"covariance_trace", compensator->estimator().covariance().trace()}};
    if (replay_mismatches_ > 0) j["rls"]["replay_mismatches"] = replay_mismatches_;
  }
  add_time_series_coefficients(j, scenario_.compensator, theta_, cycle_ > 0);
  j["stability_guard"] = {
      {"enabled", scenario_.guard.enabled},
      {"limit", scenario_.guard.config.max_tracking_ratio},
      {"max_tracking_ratio", guard_.max_ratio()},
      {"max_tracking_ratio_at_s",
       guard_.max_ratio() > 0.0 ? num(guard_.max_ratio_at()) : nlohmann::json()},
      {"tripped_at_s", num(guard_.tripped_at())}};
  return j;
}

void RhtExperiment::write_extra_files(const fs::path& dir) const {
  std::ofstream log(dir / "log.txt");
  log << "rht run " << scenario_.name << ": " << cycle_ << " steps\n";
  if (const core::InverseModelCompensator* compensator = dynamics_.compensator()) {
    log << "batch initial parameters:";
    for (double v : dynamics_.initial_parameters()) log << ' ' << format_number(v);
    log << "\n";
    const auto rejected = compensator->estimator().rejected();
    log << "RLS guard: " << rejected << " update(s) rejected; last reason "
        << core::to_string(compensator->estimator().last_rejection()) << "\n";
  }
  if (stopped_) log << "stopped: " << stop_reason_ << "\n";
  const nlohmann::json m = summary()["metrics"];
  if (m["command_two_step_oscillation"].get<bool>()) {
    log << "WARNING: the command oscillates at a period of two steps ("
        << m["command_two_step_ratio"].get<double>() * 100.0
        << " % of its RMS at the Nyquist frequency): unsafe for the specimen\n";
  }
  log.close();
  if (!log) throw std::runtime_error("writing " + (dir / "log.txt").string() + " failed");
}

}  // namespace hyloop::experiment
