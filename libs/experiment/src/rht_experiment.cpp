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
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

constexpr int kMaxTheta = 7;
const std::vector<std::string> kBaseColumns = {
    "time[s]",  "ground_accel[m/s^2]", "d_desired[m]", "d_command[m]", "d_measured[m]", "d_true[m]",
    "force[N]", "d_numerical[m]",      "error[m]",     "omega[rad/s]", "rls_status[-]"};

std::vector<std::string> columns() {
  std::vector<std::string> c = kBaseColumns;
  for (int i = 1; i <= kMaxTheta; ++i) c.push_back("theta_" + std::to_string(i) + "[-]");
  return c;
}

fs::path resolve(const RhtScenario& s, const std::string& file) {
  const fs::path p(file);
  if (p.is_absolute()) return p;
  const fs::path project = fs::path(HYLOOP_SOURCE_DIR) / p;
  if (fs::exists(project)) return project;
  const fs::path beside = fs::path(s.origin).parent_path() / p;
  return fs::exists(beside) ? beside : project;
}

core::GroundMotion load_motion(const RhtScenario& s) {
  try {
    core::GroundMotion m = core::read_ground_motion(
        resolve(s, s.ground_motion.file), core::parse_ground_motion_format(s.ground_motion.format),
        core::parse_acceleration_unit(s.ground_motion.unit));
    if (s.ground_motion.peak_g > 0.0) {
      m = core::scale_to_peak(m, s.ground_motion.peak_g * core::kStandardGravity);
    }
    return core::resample(m, s.timing.step);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(s.origin + ": ground_motion: " + e.what());
  } catch (const std::runtime_error& e) {
    throw ScenarioError(s.origin + ": ground_motion.file: " + e.what());
  }
}

core::InverseModelCompensatorConfig compensator_config(const RhtScenario& s) {
  auto c = core::InverseModelCompensatorConfig::preset(
      core::parse_loading_model_preset(s.compensator.model));
  c.forgetting_factor = s.compensator.forgetting_factor;
  c.batch_ridge = s.compensator.batch_ridge;
  c.max_parameter_jump = s.compensator.max_parameter_jump;
  c.max_covariance_trace = s.compensator.max_covariance_trace;
  c.adapt = s.compensator.adapt;
  return c;
}

hal::ServoActuatorConfig servo_config(const RhtScenario& s, std::uint64_t seed) {
  hal::ServoActuatorConfig c;
  c.step = s.timing.step;
  c.omega = s.servo.omega;
  c.zeta = s.servo.zeta;
  c.omega_variation.enabled = s.servo.varying;
  c.omega_variation.omega_min = s.servo.omega_min;
  c.omega_variation.omega_max = s.servo.omega_max;
  c.omega_variation.period = s.servo.period;
  c.noise_std = s.servo.noise_std;
  c.seed = seed;
  c.specimen_stiffness = s.specimen.stiffness;
  c.specimen_damping = s.specimen.damping;
  return c;
}

core::StructureConfig structure_config(const RhtScenario& s, double stiffness,
                                       double experimental) {
  core::StructureConfig c = core::StructureConfig::single_dof(
      s.structure.mass, s.structure.damping, stiffness, s.timing.step,
      core::StructureIntegrator::kCentralDifference);
  c.experimental_stiffness = experimental;
  return c;
}

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

RhtScenario load_rht_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_rht_scenario(read_scenario_text(path), path, overrides);
}

RhtScenario parse_rht_scenario(const std::string& text, const std::string& path,
                               const std::vector<std::string>& overrides) {
  const YAML::Node root = load_yaml(text, path, overrides);
  RhtScenario s;
  s.origin = path;
  MapReader top(root, "", path);
  top.integer("schema_version", s.schema_version);
  top.string("name", s.name);
  top.string("description", s.description);
  std::string kind = "rht";
  top.string("kind", kind);
  MapReader st = top.child("structure");
  st.number("mass_kg", s.structure.mass);
  st.number("damping_ns_per_m", s.structure.damping);
  st.number("numerical_stiffness_n_per_m", s.structure.numerical_stiffness);
  st.finish();
  MapReader sp = top.child("specimen");
  sp.number("stiffness_n_per_m", s.specimen.stiffness);
  sp.number("damping_ns_per_m", s.specimen.damping);
  sp.finish();
  MapReader gm = top.child("ground_motion");
  gm.string("file", s.ground_motion.file);
  gm.string("format", s.ground_motion.format);
  gm.string("unit", s.ground_motion.unit);
  gm.number("peak_g", s.ground_motion.peak_g);
  gm.finish();
  MapReader sv = top.child("servo");
  sv.number("omega_rad_s", s.servo.omega);
  sv.number("zeta", s.servo.zeta);
  sv.boolean("varying", s.servo.varying);
  sv.number("omega_min_rad_s", s.servo.omega_min);
  sv.number("omega_max_rad_s", s.servo.omega_max);
  sv.number("variation_period_s", s.servo.period);
  sv.number("noise_std_m", s.servo.noise_std);
  sv.unsigned64("seed", s.servo.seed);
  sv.number("stroke_m", s.servo.stroke);
  sv.finish();
  MapReader cp = top.child("compensator");
  cp.string("type", s.compensator.type);
  cp.string("model", s.compensator.model);
  cp.number("forgetting_factor", s.compensator.forgetting_factor);
  cp.number("batch_ridge", s.compensator.batch_ridge);
  cp.number("max_parameter_jump", s.compensator.max_parameter_jump);
  cp.number("max_covariance_trace", s.compensator.max_covariance_trace);
  cp.boolean("adapt", s.compensator.adapt);
  cp.number("offline_noise_std_m", s.compensator.offline_noise_std);
  cp.finish();
  MapReader tm = top.child("timing");
  tm.number("step_s", s.timing.step);
  tm.number("duration_s", s.timing.duration);
  tm.finish();
  MapReader mt = top.child("metrics");
  mt.number("settle_time_s", s.metrics.settle_time);
  mt.number("oscillation_threshold", s.metrics.oscillation_threshold);
  mt.finish();
  MapReader out = top.child("outputs");
  out.boolean("samples", s.outputs.samples);
  out.string("progress", s.outputs.progress);
  out.finish();
  top.finish();

  const auto fail = [&](const std::string& msg) { throw ScenarioError(path + ": " + msg); };
  validate_with_origin(path, [&] {
    require(s.schema_version == 1, "schema_version", s.schema_version, "this hyloop reads 1");
    if (kind != "rht") fail("kind = \"" + kind + "\": must be rht");
    require(s.structure.mass > 0.0, "structure.mass_kg", s.structure.mass, "must be > 0 kg");
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
    if (s.compensator.type != "none" && s.compensator.type != "adaptive") {
      fail("compensator.type = \"" + s.compensator.type + "\": must be none or adaptive");
    }
    if (s.compensator.model != "p3" && s.compensator.model != "p4" && s.compensator.model != "p7") {
      fail("compensator.model = \"" + s.compensator.model + "\": must be p3, p4 or p7");
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
  });
  return s;
}

std::string to_yaml(const RhtScenario& s) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  e << YAML::BeginMap << YAML::Key << "schema_version" << YAML::Value << s.schema_version
    << YAML::Key << "name" << YAML::Value << s.name << YAML::Key << "description" << YAML::Value
    << s.description << YAML::Key << "kind" << YAML::Value << "rht";
  e << YAML::Key << "structure" << YAML::Value << YAML::BeginMap << YAML::Key << "mass_kg"
    << YAML::Value << s.structure.mass << YAML::Key << "damping_ns_per_m" << YAML::Value
    << s.structure.damping << YAML::Key << "numerical_stiffness_n_per_m" << YAML::Value
    << s.structure.numerical_stiffness << YAML::EndMap;
  e << YAML::Key << "specimen" << YAML::Value << YAML::BeginMap << YAML::Key << "stiffness_n_per_m"
    << YAML::Value << s.specimen.stiffness << YAML::Key << "damping_ns_per_m" << YAML::Value
    << s.specimen.damping << YAML::EndMap;
  e << YAML::Key << "ground_motion" << YAML::Value << YAML::BeginMap << YAML::Key << "file"
    << YAML::Value << s.ground_motion.file << YAML::Key << "format" << YAML::Value
    << s.ground_motion.format << YAML::Key << "unit" << YAML::Value << s.ground_motion.unit
    << YAML::Key << "peak_g" << YAML::Value << s.ground_motion.peak_g << YAML::EndMap;
  e << YAML::Key << "servo" << YAML::Value << YAML::BeginMap << YAML::Key << "omega_rad_s"
    << YAML::Value << s.servo.omega << YAML::Key << "zeta" << YAML::Value << s.servo.zeta
    << YAML::Key << "varying" << YAML::Value << s.servo.varying << YAML::Key << "omega_min_rad_s"
    << YAML::Value << s.servo.omega_min << YAML::Key << "omega_max_rad_s" << YAML::Value
    << s.servo.omega_max << YAML::Key << "variation_period_s" << YAML::Value << s.servo.period
    << YAML::Key << "noise_std_m" << YAML::Value << s.servo.noise_std << YAML::Key << "seed"
    << YAML::Value << s.servo.seed << YAML::Key << "stroke_m" << YAML::Value << s.servo.stroke
    << YAML::EndMap;
  e << YAML::Key << "compensator" << YAML::Value << YAML::BeginMap << YAML::Key << "type"
    << YAML::Value << s.compensator.type << YAML::Key << "model" << YAML::Value
    << s.compensator.model << YAML::Key << "forgetting_factor" << YAML::Value
    << s.compensator.forgetting_factor << YAML::Key << "batch_ridge" << YAML::Value
    << s.compensator.batch_ridge << YAML::Key << "max_parameter_jump" << YAML::Value
    << s.compensator.max_parameter_jump << YAML::Key << "max_covariance_trace" << YAML::Value
    << s.compensator.max_covariance_trace << YAML::Key << "adapt" << YAML::Value
    << s.compensator.adapt << YAML::Key << "offline_noise_std_m" << YAML::Value
    << s.compensator.offline_noise_std << YAML::EndMap;
  e << YAML::Key << "timing" << YAML::Value << YAML::BeginMap << YAML::Key << "step_s"
    << YAML::Value << s.timing.step << YAML::Key << "duration_s" << YAML::Value << s.timing.duration
    << YAML::EndMap;
  e << YAML::Key << "metrics" << YAML::Value << YAML::BeginMap << YAML::Key << "settle_time_s"
    << YAML::Value << s.metrics.settle_time << YAML::Key << "oscillation_threshold" << YAML::Value
    << s.metrics.oscillation_threshold << YAML::EndMap;
  e << YAML::Key << "outputs" << YAML::Value << YAML::BeginMap << YAML::Key << "samples"
    << YAML::Value << s.outputs.samples << YAML::Key << "progress" << YAML::Value
    << s.outputs.progress << YAML::EndMap << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

RhtExperiment::RhtExperiment(const RhtScenario& scenario)
    : scenario_(scenario),
      motion_(load_motion(scenario)),
      total_steps_(scenario.timing.duration > 0.0
                       ? static_cast<std::int64_t>(
                             std::llround(scenario.timing.duration / scenario.timing.step))
                       : static_cast<std::int64_t>(motion_.size()) - 2),
      structure_(structure_config(scenario, scenario.structure.numerical_stiffness,
                                  scenario.specimen.stiffness)),
      reference_(structure_config(
          scenario, scenario.structure.numerical_stiffness + scenario.specimen.stiffness, 0.0)),
      servo_(servo_config(scenario, scenario.servo.seed)),
      samples_(columns(), scenario.outputs.samples
                              ? static_cast<std::size_t>(std::max<std::int64_t>(total_steps_, 0))
                              : 0),
      row_(columns().size(), 0.0) {
  if (total_steps_ < 10) {
    throw ScenarioError(scenario.origin + ": timing.duration_s: the run has " +
                        std::to_string(total_steps_) + " steps; at least 10 are needed");
  }
  if (static_cast<std::size_t>(total_steps_) + 2 > motion_.size()) {
    throw ScenarioError(
        scenario.origin + ": timing.duration_s = " + format_value(scenario.timing.duration) +
        ": longer than the ground motion (" + format_value(motion_.duration()) + " s)");
  }
  for (auto* v : {&desired_, &command_, &measured_, &true_})
    v->reserve(static_cast<std::size_t>(total_steps_));

  if (scenario.compensator.type == "adaptive") {
    compensator_.emplace(compensator_config(scenario));
    // Offline run (paper: the structure's pure-numerical response as the command), then batch LS.
    core::StructureModel offline_structure(structure_config(
        scenario, scenario.structure.numerical_stiffness + scenario.specimen.stiffness, 0.0));
    hal::ServoActuatorConfig offline = servo_config(scenario, scenario.servo.seed + 7919);
    offline.noise_std = scenario.compensator.offline_noise_std;
    hal::ServoActuatorEmulator offline_servo(offline);
    const auto n = static_cast<std::size_t>(total_steps_);
    std::vector<double> commands(n), measured(n);
    for (std::size_t i = 0; i < n; ++i) {
      offline_structure.step(motion_.acceleration[i], 0.0);
      commands[i] = offline_structure.displacement(0);
      measured[i] = offline_servo.step(commands[i]).displacement;
    }
    try {
      compensator_->initialise_batch(commands, measured);
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(scenario.origin +
                          ": compensator: the batch fit of the offline run failed (" + e.what() +
                          "); raise compensator.batch_ridge");
    }
    for (int i = 0; i < compensator_->parameter_count(); ++i)
      theta0_.push_back(compensator_->parameters()(i));
    compensator_->reset(0.0);
  }
  servo_.reset(0.0);
  // u_1 from rest with the load at t_0; the command for step 0.
  structure_.step(motion_.acceleration[0], 0.0);
  reference_.step(motion_.acceleration[0], 0.0);
  desired_next_ = structure_.displacement(0);
  command_next_ = compensator_ ? compensator_->command(desired_next_) : desired_next_;
}

void RhtExperiment::record(double t, double a_g, const hal::ServoMeasurement& m,
                           std::uint8_t status) noexcept {
  row_[0] = t;
  row_[1] = a_g;
  row_[2] = desired_next_;
  row_[3] = command_next_;
  row_[4] = m.displacement;
  row_[5] = m.true_displacement;
  row_[6] = m.force;
  row_[7] = reference_.displacement(0);
  row_[8] = m.displacement - desired_next_;
  row_[9] = m.omega;
  row_[10] = status;
  for (int i = 0; i < kMaxTheta; ++i) {
    row_[kBaseColumns.size() + static_cast<std::size_t>(i)] =
        compensator_ && i < compensator_->parameter_count() ? compensator_->parameters()(i) : 0.0;
  }
  if (scenario_.outputs.samples) samples_.append(row_);
}

bool RhtExperiment::step() noexcept {
  if (stopped_ || cycle_ >= total_steps_) return false;
  const auto i = static_cast<std::size_t>(cycle_);
  const double t_end = static_cast<double>(cycle_ + 1) * scenario_.timing.step;
  const hal::ServoMeasurement& m = servo_.step(command_next_);
  std::uint8_t status = 0;
  if (compensator_) {
    const core::RlsStatus s = compensator_->observe(command_next_, m.displacement);
    status = static_cast<std::uint8_t>(s);
    ++status_counts_[static_cast<std::size_t>(s)];
  }
  desired_.push_back(desired_next_);
  command_.push_back(command_next_);
  measured_.push_back(m.displacement);
  true_.push_back(m.true_displacement);
  record(t_end, motion_.acceleration[i + 1], m, status);
  ++cycle_;

  structure_.step(motion_.acceleration[i + 1], -m.force);
  reference_.step(motion_.acceleration[i + 1], 0.0);
  desired_next_ = structure_.displacement(0);
  command_next_ = compensator_ ? compensator_->command(desired_next_) : desired_next_;
  if (!std::isfinite(command_next_) || !std::isfinite(desired_next_)) {
    stopped_ = true;
    stop_reason_ = "not_finite";
    return false;
  }
  if (std::abs(command_next_) > scenario_.servo.stroke) {
    stopped_ = true;  // the command is never sent: the actuator holds its last position
    stop_reason_ = "stroke_limit";
    return false;
  }
  return cycle_ < total_steps_;
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
  j["stop_reason"] = stop_reason_ ? nlohmann::json(stop_reason_) : nlohmann::json(nullptr);
  j["ground_motion"] = {{"source", motion_.source},
                        {"peak_mps2", motion_.peak()},
                        {"peak_g", motion_.peak() / core::kStandardGravity}};
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
  if (compensator_) {
    nlohmann::json counts;
    for (std::size_t k = 0; k < core::kRlsStatusCount; ++k) {
      counts[std::string(core::to_string(static_cast<core::RlsStatus>(k)))] = status_counts_[k];
    }
    std::vector<double> theta;
    for (int k = 0; k < compensator_->parameter_count(); ++k)
      theta.push_back(compensator_->parameters()(k));
    j["rls"] = {{"model", scenario_.compensator.model},
                {"forgetting_factor", scenario_.compensator.forgetting_factor},
                {"initial_parameters", theta0_},
                {"final_parameters", theta},
                {"updates", counts},
                {"guard_rejections", compensator_->estimator().rejected()},
                {"covariance_trace", compensator_->estimator().covariance().trace()}};
  }
  return j;
}

void RhtExperiment::write_extra_files(const fs::path& dir) const {
  std::ofstream log(dir / "log.txt");
  log << "rht run " << scenario_.name << ": " << cycle_ << " steps\n";
  if (compensator_) {
    log << "batch initial parameters:";
    for (double v : theta0_) log << ' ' << format_number(v);
    log << "\n";
    const auto rejected = compensator_->estimator().rejected();
    log << "RLS guard: " << rejected << " update(s) rejected; last reason "
        << core::to_string(compensator_->estimator().last_rejection()) << "\n";
  }
  if (stopped_) log << "stopped: " << stop_reason_ << "\n";
  const nlohmann::json m = summary()["metrics"];
  if (m["command_two_step_oscillation"].get<bool>()) {
    log << "WARNING: the command oscillates at a period of two steps ("
        << m["command_two_step_ratio"].get<double>() * 100.0
        << " % of its RMS at the Nyquist frequency): unsafe for the specimen\n";
  }
}

}  // namespace hyloop::experiment
