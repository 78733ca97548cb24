#include "hyloop/experiment/rht_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <span>

#include "hyloop/core/tracking_metrics.hpp"
#include "hyloop/experiment/run_directory.hpp"
#include "hyloop/experiment/run_export.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

namespace f = fields;
using R = RhtScenario;

const BoundTable<R>& rht_table() {
  static const BoundTable<R> table(
      "rht",
      "Real-time hybrid test of a single-storey structure under an earthquake with adaptive "
      "delay compensation (RHT paper)",
      {
          f::integer<R>(
              "schema_version", "", closed(1, 1), "the scenario format; this hyloop reads 1",
              [](auto& s) -> auto& { return s.schema_version; }),
          f::text<R>(
              "name", FieldType::kString, {}, "names the run",
              [](auto& s) -> auto& { return s.name; }),
          f::text<R>(
              "description", FieldType::kString, {}, "one line for the report",
              [](auto& s) -> auto& { return s.description; }),
          f::kind<R>("rht", true),
          f::number<R>(
              "structure.mass_kg", "kg", closed(1e-3, 1e9), "the storey's mass m",
              [](auto& s) -> auto& { return s.structure.mass; }),
          f::number<R>(
              "structure.damping_ns_per_m", "N*s/m", at_least(0), "numerical damping c",
              [](auto& s) -> auto& { return s.structure.damping; }),
          f::number<R>(
              "structure.numerical_stiffness_n_per_m", "N/m", at_least(0),
              "stiffness kept in the model (the specimen carries the storey's)",
              [](auto& s) -> auto& { return s.structure.numerical_stiffness; }),
          f::number<R>(
              "specimen.stiffness_n_per_m", "N/m", at_least(0),
              "the physical specimen's stiffness (default: period 1 s with 1000 kg)",
              [](auto& s) -> auto& { return s.specimen.stiffness; }),
          f::number<R>(
              "specimen.damping_ns_per_m", "N*s/m", at_least(0), "c of the specimen",
              [](auto& s) -> auto& { return s.specimen.damping; }),
          f::text<R>(
              "ground_motion.file", FieldType::kFile, {},
              "the record: a data file (docs/scenarios.md \"Data files\")",
              [](auto& s) -> auto& { return s.ground_motion.file; }),
          f::text<R>(
              "ground_motion.format", FieldType::kEnum, {"auto", "at2", "two_column"},
              "at2 (PEER) or two_column (time, acceleration); auto: by content",
              [](auto& s) -> auto& { return s.ground_motion.format; }),
          f::text<R>(
              "ground_motion.unit", FieldType::kEnum, {"g", "m/s2", "m/s^2"},
              "acceleration unit of a two-column file",
              [](auto& s) -> auto& { return s.ground_motion.unit; }),
          f::number<R>(
              "ground_motion.peak_g", "g", closed(0, 5),
              "the record is scaled to this peak (0 keeps the record's)",
              [](auto& s) -> auto& { return s.ground_motion.peak_g; }),
          f::number<R>(
              "servo.omega_rad_s", "rad/s", above(0),
              "omega of the actuator G(s) = omega^2/(s^2 + 2*zeta*omega*s + omega^2)",
              [](auto& s) -> auto& { return s.servo.omega; }),
          f::number<R>(
              "servo.zeta", "", above(0), "zeta of G(s)",
              [](auto& s) -> auto& { return s.servo.zeta; }),
          f::boolean<R>(
              "servo.varying", "omega varies between omega_min_rad_s and omega_max_rad_s",
              [](auto& s) -> auto& { return s.servo.varying; }),
          f::used_when(
              f::number<R>(
                  "servo.omega_min_rad_s", "rad/s", above(0), "lowest omega, <= omega_max_rad_s",
                  [](auto& s) -> auto& { return s.servo.omega_min; }),
              "varying", {"true"}),
          f::used_when(f::number<R>(
                           "servo.omega_max_rad_s", "rad/s", {}, "highest omega",
                           [](auto& s) -> auto& { return s.servo.omega_max; }),
                       "varying", {"true"}),
          f::used_when(f::number<R>(
                           "servo.variation_period_s", "s", above(0), "the period of omega(t)",
                           [](auto& s) -> auto& { return s.servo.period; }),
                       "varying", {"true"}),
          f::number<R>(
              "servo.noise_std_m", "m", at_least(0), "noise on the measured displacement",
              [](auto& s) -> auto& { return s.servo.noise_std; }),
          f::seed<R>(
              "servo.seed", "seed of the noise and the variation",
              [](auto& s) -> auto& { return s.servo.seed; }),
          f::number<R>(
              "servo.stroke_m", "m", above(0),
              "a command beyond +- stroke is never sent and stops the run",
              [](auto& s) -> auto& { return s.servo.stroke; }),
          f::limit<R>(
              "servo.acceleration_max_mps2", "m/s^2", above(0),
              "bound on the command's implied acceleration (.inf: no limit; \"Acceleration "
              "limit\")",
              [](auto& s) -> auto& { return s.servo.acceleration_max; }),
          f::text<R>(
              "compensator.type", FieldType::kEnum, {"none", "adaptive"},
              "adaptive inverse compensation or none",
              [](auto& s) -> auto& { return s.compensator.type; }),
          f::used_when(f::text<R>(
                           "compensator.model", FieldType::kEnum, {"p3", "p4", "p7"},
                           "parameters of the loading-system model",
                           [](auto& s) -> auto& { return s.compensator.model; }),
                       "type", {"adaptive"}),
          f::used_when(
              f::number<R>(
                  "compensator.forgetting_factor", "", left_open(0, 1), "lambda of the RLS",
                  [](auto& s) -> auto& { return s.compensator.forgetting_factor; }),
              "type", {"adaptive"}),
          f::used_when(f::number<R>(
                           "compensator.batch_ridge", "", at_least(0),
                           "relative ridge of the offline batch fit (0: plain least squares)",
                           [](auto& s) -> auto& { return s.compensator.batch_ridge; }),
                       "type", {"adaptive"}),
          f::used_when(f::number<R>(
                           "compensator.max_parameter_jump", "", above(0),
                           "RLS guard: an update changing a parameter by more is rejected",
                           [](auto& s) -> auto& { return s.compensator.max_parameter_jump; }),
                       "type", {"adaptive"}),
          f::used_when(
              f::number<R>(
                  "compensator.max_covariance_trace", "", above(0), "RLS guard on trace(P)",
                  [](auto& s) -> auto& { return s.compensator.max_covariance_trace; }),
              "type", {"adaptive"}),
          f::used_when(f::boolean<R>(
                           "compensator.adapt", "adapt online (false: keep the offline model)",
                           [](auto& s) -> auto& { return s.compensator.adapt; }),
                       "type", {"adaptive"}),
          f::used_when(f::number<R>(
                           "compensator.offline_noise_std_m", "m", at_least(0),
                           "measurement noise of the offline run that initialises the model",
                           [](auto& s) -> auto& { return s.compensator.offline_noise_std; }),
                       "type", {"adaptive"}),
          f::number<R>(
              "timing.step_s", "s", left_open(0, 0.1),
              "central difference step, < T/pi of the structure",
              [](auto& s) -> auto& { return s.timing.step; }),
          f::number<R>(
              "timing.duration_s", "s", closed(0, 1e5),
              "0: the record's duration; duration/step <= 1e6",
              [](auto& s) -> auto& { return s.timing.duration; }),
          f::number<R>(
              "metrics.settle_time_s", "s", at_least(0),
              "errors after this time are reported separately",
              [](auto& s) -> auto& { return s.metrics.settle_time; }),
          f::number<R>(
              "metrics.oscillation_threshold", "", left_open(0, 1),
              "Nyquist share of the command that flags a 2*step oscillation",
              [](auto& s) -> auto& { return s.metrics.oscillation_threshold; }),
          f::boolean<R>(
              "outputs.samples", "keep samples.csv",
              [](auto& s) -> auto& { return s.outputs.samples; }),
          f::text<R>(
              "outputs.progress", FieldType::kEnum, {"auto", "on", "off"},
              "progress line on stderr (auto: when a terminal)",
              [](auto& s) -> auto& { return s.outputs.progress; }),
          f::text<R>(
              "outputs.format", FieldType::kEnum, {"csv", "hdf5"},
              "csv (samples.csv) or hdf5 (also run.h5, recorded while the run runs; hyloop export "
              "converts a run afterwards)",
              [](auto& s) -> auto& { return s.outputs.format; }),
      });
  return table;
}

}  // namespace

RhtScenario load_rht_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_rht_scenario(read_scenario_text(path), path, overrides,
                            DataSource::local_file(path));
}

RhtScenario parse_rht_scenario(const std::string& text, const std::string& path,
                               const std::vector<std::string>& overrides, const DataSource& data) {
  const YAML::Node root = load_yaml(text, path, overrides);
  RhtScenario s;
  s.origin = path;
  s.data = data;
  rht_table().parse(root, path, s);

  const auto fail = [&](const std::string& msg) { throw ScenarioError(path + ": " + msg); };
  validate_with_origin(path, [&] {
    require(s.schema_version == 1, "schema_version", s.schema_version, "this hyloop reads 1");
    require(s.structure.mass >= 1e-3 && s.structure.mass <= 1e9, "structure.mass_kg",
            s.structure.mass, "must be in [1e-3, 1e9] kg");
    require(s.structure.damping >= 0.0, "structure.damping_ns_per_m", s.structure.damping,
            "must be >= 0");
    require(s.structure.numerical_stiffness >= 0.0, "structure.numerical_stiffness_n_per_m",
            s.structure.numerical_stiffness, "must be >= 0");
    require(s.specimen.stiffness >= 0.0, "specimen.stiffness_n_per_m", s.specimen.stiffness,
            "must be >= 0");
    require(s.specimen.damping >= 0.0, "specimen.damping_ns_per_m", s.specimen.damping,
            "must be >= 0");
    require(s.ground_motion.peak_g >= 0.0 && s.ground_motion.peak_g <= 5.0, "ground_motion.peak_g",
            s.ground_motion.peak_g, "must be in [0, 5] g (0 keeps the record's peak)");
    require(s.servo.omega > 0.0, "servo.omega_rad_s", s.servo.omega, "must be > 0");
    require(s.servo.zeta > 0.0, "servo.zeta", s.servo.zeta, "must be > 0");
    require(s.servo.omega_min > 0.0 && s.servo.omega_min <= s.servo.omega_max,
            "servo.omega_min_rad_s", s.servo.omega_min, "must be > 0 and <= omega_max_rad_s");
    require(s.servo.period > 0.0, "servo.variation_period_s", s.servo.period, "must be > 0");
    require(s.servo.noise_std >= 0.0, "servo.noise_std_m", s.servo.noise_std, "must be >= 0 m");
    require(s.servo.stroke > 0.0, "servo.stroke_m", s.servo.stroke, "must be > 0 m");
    require(s.servo.acceleration_max > 0.0, "servo.acceleration_max_mps2", s.servo.acceleration_max,
            "must be > 0 (.inf: no limit)");
    if (s.compensator.type != "none" && s.compensator.type != "adaptive") {
      fail("compensator.type = \"" + excerpt(s.compensator.type) + "\": must be none or adaptive");
    }
    if (s.compensator.model != "p3" && s.compensator.model != "p4" && s.compensator.model != "p7") {
      fail("compensator.model = \"" + excerpt(s.compensator.model) + "\": must be p3, p4 or p7");
    }
    require(s.compensator.forgetting_factor > 0.0 && s.compensator.forgetting_factor <= 1.0,
            "compensator.forgetting_factor", s.compensator.forgetting_factor, "must be in (0, 1]");
    require(s.compensator.offline_noise_std >= 0.0, "compensator.offline_noise_std_m",
            s.compensator.offline_noise_std, "must be >= 0 m");
    require(s.compensator.batch_ridge >= 0.0, "compensator.batch_ridge", s.compensator.batch_ridge,
            "must be >= 0");
    require(s.compensator.max_parameter_jump > 0.0, "compensator.max_parameter_jump",
            s.compensator.max_parameter_jump, "must be > 0");
    require(s.compensator.max_covariance_trace > 0.0, "compensator.max_covariance_trace",
            s.compensator.max_covariance_trace, "must be > 0");
    require(s.timing.step > 0.0 && s.timing.step <= 0.1, "timing.step_s", s.timing.step,
            "must be in (0, 0.1] s");
    require(s.timing.duration >= 0.0 && s.timing.duration <= 1e5, "timing.duration_s",
            s.timing.duration, "must be in [0, 1e5] s (0: the record's duration)");
    require(s.timing.duration / s.timing.step <= kMaxRhtSteps, "timing.duration_s",
            s.timing.duration, "duration/step must be <= " + format_value(kMaxRhtSteps) + " steps");
    const double k_total = s.structure.numerical_stiffness + s.specimen.stiffness;
    if (k_total > 0.0) {
      const double t_min = 2.0 * std::numbers::pi * std::sqrt(s.structure.mass / k_total);
      require(s.timing.step < t_min / std::numbers::pi, "timing.step_s", s.timing.step,
              "central difference needs step < T/pi = " + format_value(t_min / std::numbers::pi) +
                  " s");
    }
    require(s.metrics.settle_time >= 0.0, "metrics.settle_time_s", s.metrics.settle_time,
            "must be >= 0");
    require(s.metrics.oscillation_threshold > 0.0 && s.metrics.oscillation_threshold <= 1.0,
            "metrics.oscillation_threshold", s.metrics.oscillation_threshold, "must be in (0, 1]");
    require_progress_mode("outputs.progress", s.outputs.progress);
    require_output_format("outputs.format", s.outputs.format);
  });
  return s;
}

std::string to_yaml(const RhtScenario& s) { return rht_table().emit(s); }

const FieldTable& rht_field_table() { return rht_table().table(); }

RhtExperiment::RhtExperiment(const RhtScenario& scenario)
    : scenario_(scenario),
      dynamics_(scenario),
      samples_(rht_column_headers(),
               scenario.outputs.samples ? static_cast<std::size_t>(dynamics_.total_steps()) : 0),
      chain_(rht_loop_plan(scenario), make_rht_rig_part(scenario),
             make_rht_dynamics_part(scenario), samples_.headers()),
      row_(kRhtColumns, 0.0) {
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
  if (dynamics_.compensator() != nullptr) {
    const auto status = static_cast<std::size_t>(row[col(RhtColumn::kRlsStatus)]);
    if (status < status_counts_.size()) ++status_counts_[status];
  }
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
  // 2Δt oscillation of the command: the RMS of its third difference /8 (gain 1 at the Nyquist
  // frequency, (ωΔt)³/8 below it) over the RMS of the command, after the settle time.
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
  nlohmann::json j;
  j["compensator"] =
      scenario_.compensator.type == "none" ? "none" : "adaptive_" + scenario_.compensator.model;
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
