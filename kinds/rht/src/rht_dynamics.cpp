#include "hyloop/kinds/rht/rht_dynamics.hpp"

#include <cmath>
#include <stdexcept>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"

namespace hyloop::experiment {

core::GroundMotion load_rht_ground_motion(const RhtScenario& s) {
  core::GroundMotion m = read_ground_motion_record(s.ground_motion.file, s.ground_motion.format,
                                                   s.ground_motion.unit, s.data, s.origin);
  try {
    if (s.ground_motion.peak_g > 0.0) {
      m = core::scale_to_peak(m, s.ground_motion.peak_g * core::kStandardGravity);
    }
    // The resampled record is held in memory: bound it before making it.
    const double steps = m.duration() / s.timing.step;
    if (!(steps <= kMaxRhtSteps)) {
      throw std::invalid_argument("the record lasts " + format_value(m.duration()) + " s, " +
                                  format_value(steps) + " steps of timing.step_s; at most " +
                                  format_value(kMaxRhtSteps) + " are allowed");
    }
    return core::resample(m, s.timing.step);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(s.origin + ": ground_motion: " + e.what());
  }
}

namespace {

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

}  // namespace

hal::ServoActuatorConfig rht_servo_config(const RhtScenario& s, std::uint64_t seed) {
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

namespace {

core::StructureConfig structure_config(const RhtScenario& s, double stiffness,
                                       double experimental) {
  core::StructureConfig c = core::StructureConfig::single_dof(
      s.structure.mass, s.structure.damping, stiffness, s.timing.step,
      core::StructureIntegrator::kCentralDifference);
  c.experimental_stiffness = experimental;
  return c;
}

}  // namespace

const std::vector<std::string>& rht_column_headers() {
  static const std::vector<std::string> headers = [] {
    std::vector<std::string> c = {"time[s]",      "ground_accel[m/s^2]", "d_desired[m]",
                                  "d_command[m]", "d_measured[m]",       "d_true[m]",
                                  "force[N]",     "d_numerical[m]",      "error[m]",
                                  "omega[rad/s]", "rls_status[-]"};
    for (int i = 1; i <= kRhtMaxTheta; ++i) c.push_back("theta_" + std::to_string(i) + "[-]");
    return c;
  }();
  return headers;
}

hal::SafetyConfig rht_safety_config(const RhtScenario& s) {
  hal::SafetyConfig c;
  c.limits.position_min = -s.servo.stroke;
  c.limits.position_max = s.servo.stroke;
  c.limits.acceleration_max = s.servo.acceleration_max;
  c.step = s.timing.step;
  c.stop_deceleration = 1.0;  // m/s² (SafetyConfig's former default): rest from ±stroke in ≤ 1 s
  return c;
}

std::int64_t rht_total_steps(const RhtScenario& s, const core::GroundMotion& motion) {
  return s.timing.duration > 0.0
             ? static_cast<std::int64_t>(std::llround(s.timing.duration / s.timing.step))
             : static_cast<std::int64_t>(motion.size()) - 2;
}

RhtDynamics::RhtDynamics(const RhtScenario& scenario)
    : step_(scenario.timing.step),
      stroke_(scenario.servo.stroke),
      motion_(load_rht_ground_motion(scenario)),
      total_steps_(rht_total_steps(scenario, motion_)),
      structure_(structure_config(scenario, scenario.structure.numerical_stiffness,
                                  scenario.specimen.stiffness)),
      reference_(structure_config(
          scenario, scenario.structure.numerical_stiffness + scenario.specimen.stiffness, 0.0)),
      guard_(scenario.guard.config),
      guarded_(scenario.guard.enabled) {
  if (total_steps_ < 10) {
    throw ScenarioError(scenario.origin + ": timing.duration_s: the run has " +
                        std::to_string(total_steps_) + " steps; at least 10 are needed");
  }
  if (static_cast<std::size_t>(total_steps_) + 2 > motion_.size()) {
    throw ScenarioError(
        scenario.origin + ": timing.duration_s = " + format_value(scenario.timing.duration) +
        ": longer than the ground motion (" + format_value(motion_.duration()) + " s)");
  }
  if (scenario.compensator.type == "adaptive") {
    compensator_.emplace(compensator_config(scenario));
    // Offline run (paper: the structure's pure-numerical response as the command), then batch LS.
    core::StructureModel offline_structure(structure_config(
        scenario, scenario.structure.numerical_stiffness + scenario.specimen.stiffness, 0.0));
    hal::ServoActuatorConfig offline = rht_servo_config(scenario, scenario.servo.seed + 7919);
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
  } else if (scenario.compensator.type == "ats") {
    ats_.emplace(scenario.compensator.ats);
  } else if (scenario.compensator.type == "amb") {
    amb_.emplace(scenario.compensator.amb);
  }
  // u_1 from rest with the load at t_0; the command for step 0.
  structure_.step(motion_.acceleration[0], 0.0);
  reference_.step(motion_.acceleration[0], 0.0);
  desired_next_ = structure_.displacement(0);
  command_next_ = command_for(desired_next_);
}

double RhtDynamics::command_for(double desired) noexcept {
  if (compensator_) return compensator_->command(desired);
  if (ats_) {
    // The target's velocity and acceleration by backward differences (0 before two targets).
    const double v = seen_ ? (desired - last_desired_) / step_ : 0.0;
    const double a = seen_ ? (v - last_velocity_) / step_ : 0.0;
    last_desired_ = desired;
    last_velocity_ = v;
    seen_ = true;
    return ats_->command(desired, v, a);
  }
  if (amb_) return amb_->command(desired);
  return desired;
}

void RhtDynamics::write_parameters(std::span<double> row) const noexcept {
  for (int i = 0; i < kRhtMaxTheta; ++i) {
    const auto k = static_cast<std::size_t>(i);
    double v = 0.0;
    if (compensator_ && i < compensator_->parameter_count()) v = compensator_->parameters()(i);
    if (ats_ && k < ats_->coefficients().size()) v = ats_->coefficients()[k];
    if (amb_ && k < amb_->coefficients().size()) v = amb_->coefficients()[k];
    row[col(RhtColumn::kTheta1) + k] = v;
  }
}

const char* RhtDynamics::step(std::int64_t i, double measured, double force, std::span<double> row,
                              double& next) noexcept {
  const auto k = static_cast<std::size_t>(i);
  const double t = static_cast<double>(i + 1) * step_;
  const double target = desired_next_;  // d_desired[i], the row's
  std::uint8_t status = 0;
  if (compensator_) {
    status = static_cast<std::uint8_t>(compensator_->observe(command_next_, measured));
  } else if (ats_) {
    ats_->observe(command_next_, measured);
  } else if (amb_) {
    amb_->observe(measured);  // closes the pair of command_next_ (sent in this cycle)
  }
  row[col(RhtColumn::kTime)] = t;
  row[col(RhtColumn::kGroundAccel)] = motion_.acceleration[k + 1];
  row[col(RhtColumn::kDesired)] = desired_next_;
  row[col(RhtColumn::kCommand)] = command_next_;
  row[col(RhtColumn::kMeasured)] = measured;
  row[col(RhtColumn::kForce)] = force;
  row[col(RhtColumn::kNumerical)] = reference_.displacement(0);
  row[col(RhtColumn::kError)] = measured - desired_next_;
  row[col(RhtColumn::kRlsStatus)] = status;
  write_parameters(row);

  structure_.step(motion_.acceleration[k + 1], -force);
  reference_.step(motion_.acceleration[k + 1], 0.0);
  desired_next_ = structure_.displacement(0);
  command_next_ = command_for(desired_next_);
  next = command_next_;
  if (!std::isfinite(command_next_) || !std::isfinite(desired_next_)) {
    return to_string(StopReason::kNotFinite).data();
  }
  if (std::abs(command_next_) > stroke_) {
    // The command is never sent: the actuator holds its last position.
    return to_string(StopReason::kStrokeLimit).data();
  }
  if (guarded_ && guard_.update(t, target, measured)) {
    return to_string(StopReason::kStabilityGuard).data();
  }
  return nullptr;
}

}  // namespace hyloop::experiment
