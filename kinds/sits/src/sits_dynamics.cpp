#include "hyloop/kinds/sits/sits_dynamics.hpp"

#include <cmath>

namespace hyloop::experiment {

const std::array<std::string_view, kSitsColumns> kSitsColumnHeaders = {
    "time[s]",        "x[m]",         "v[m/s]",       "x_ideal[m]",      "v_ideal[m/s]",
    "x_cmd[m]",       "x_robot[m]",   "v_robot[m/s]", "v_est[m/s]",      "f_contact[N]",
    "f_meas[N]",      "f_ideal[N]",   "f_input[N]",   "f_comp[N]",       "k_h[N*s/m]",
    "eps_h[J]",       "eps_sum[J*s]", "energy[J]",    "energy_ideal[J]", "power[W]",
    "power_ideal[W]", "k_x[N/m]",     "phase[rad]"};

hal::SitsRigConfig sits_rig_config(const SitsScenario& s) {
  hal::SitsRigConfig c;
  c.step = s.timing.step;
  if (s.delays.robot_response) {
    c.robot = s.rig.robot.transfer_function();
  }
  c.contact = s.rig.contact;
  c.sensor_delay_steps = s.sensor_delay_steps();
  c.force_noise_std = s.rig.force_noise_std;
  c.position_noise_std = s.rig.position_noise_std;
  c.seed = s.rig.seed;
  c.limits = s.rig.limits;
  return c;
}

core::PhaseCorrectionModel phase_correction_model(const SitsScenario& s,
                                                  const core::ZeroPoleGain& robot, double k_h) {
  core::PhaseCorrectionModel m;
  m.mass = s.model.mass;
  m.stiffness = s.rig.contact.stiffness;
  m.damping = s.rig.contact.damping;
  m.step = s.timing.step;
  m.sensor_delay_steps = s.sensor_delay_steps();
  m.hold_steps = static_cast<int>(s.hold_steps());
  m.k_h = k_h;
  m.td = s.tracking_differentiator;
  if (s.delays.robot_response) {
    m.robot_zeros = robot.zeros;
    m.robot_poles = robot.poles;
    m.robot_gain = robot.gain;
  }
  return m;
}

double analysis_k_x(const SitsScenario& s, const core::ZeroPoleGain& robot, double k_h) {
  if (!s.compensator.phase_correction.enabled) return 0.0;
  return core::analysis_stiffness_correction(
      s.compensator.phase_correction,
      core::model_stiffness_correction(phase_correction_model(s, robot, k_h)));
}

hal::SafetyConfig sits_safety_config(const SitsScenario& s) {
  hal::SafetyConfig c;
  c.limits = s.rig.limits;
  c.limits.acceleration_max = s.safety.acceleration_max;
  c.step = s.timing.step * static_cast<double>(s.hold_steps());  // the control period
  c.rate_limit = s.safety.rate_limit;
  c.watchdog_cycles = s.safety.watchdog_cycles;
  c.stop_deceleration = s.safety.stop_deceleration;
  return c;
}

SitsDynamics::SitsDynamics(const SitsScenario& scenario)
    : step_(scenario.timing.step),
      initial_position_(scenario.model.initial_position),
      initial_velocity_(scenario.model.initial_velocity),
      limits_(scenario.rig.limits),
      target_(scenario.model.mass, scenario.timing.step,
              {scenario.model.initial_position, scenario.model.initial_velocity}),
      twin_(scenario.model.mass, scenario.timing.step, scenario.rig.contact,
            {scenario.model.initial_position, scenario.model.initial_velocity}),
      contact_(scenario.rig.contact),
      td_(scenario.tracking_differentiator),
      compensator_(scenario.compensator, scenario.timing.step),
      phase_correction_(scenario.compensator.phase_correction,
                        std::sqrt(scenario.rig.contact.stiffness / scenario.model.mass),
                        scenario.rig.contact.stiffness, scenario.timing.step),
      guard_(scenario.guard.config),
      guarded_(scenario.guard.enabled) {
  td_.reset(scenario.model.initial_position,
            scenario.delays.robot_response ? 0.0 : scenario.model.initial_velocity);
}

hal::ActuatorCommand SitsDynamics::initial_command() const noexcept {
  return {initial_position_, initial_velocity_};
}

StopReason SitsDynamics::step(std::int64_t k, const SitsMeasurement& m, SampleRow& row,
                              hal::ActuatorCommand& next) noexcept {
  const double t = static_cast<double>(k) * step_;
  const double v_est = td_.update(m.robot_position);
  const core::MassState x = target_.state();
  const core::MassState xi = twin_.state();
  const bool corrected = phase_correction_.config().enabled;
  const double k_x =
      corrected ? phase_correction_.update(t, x.position, x.velocity, xi.position, xi.velocity)
                : 0.0;
  const double f_h = compensator_.force(t, v_est, m.force, x.velocity);
  const double f_comp = corrected ? f_h + k_x * m.robot_position : f_h;
  const double f_input = m.force + f_comp;
  const double f_ideal = twin_.force();
  const double eps_h = compensator_.observe(t, f_ideal, xi.position, f_input, m.robot_position);
  const double energy = target_.kinetic_energy() + contact_.potential_energy(x.position);

  row[col(SitsColumn::kTime)] = t;
  row[col(SitsColumn::kX)] = x.position;
  row[col(SitsColumn::kV)] = x.velocity;
  row[col(SitsColumn::kXIdeal)] = xi.position;
  row[col(SitsColumn::kVIdeal)] = xi.velocity;
  row[col(SitsColumn::kXRobot)] = m.robot_position;
  row[col(SitsColumn::kVRobot)] = m.robot_velocity;
  row[col(SitsColumn::kVEst)] = v_est;
  row[col(SitsColumn::kFMeas)] = m.force;
  row[col(SitsColumn::kFIdeal)] = f_ideal;
  row[col(SitsColumn::kFInput)] = f_input;
  row[col(SitsColumn::kFComp)] = f_comp;
  row[col(SitsColumn::kKh)] = compensator_.last_gain();
  row[col(SitsColumn::kEpsH)] = eps_h;
  row[col(SitsColumn::kEpsSum)] = compensator_.observer().sum();
  row[col(SitsColumn::kEnergy)] = energy;
  row[col(SitsColumn::kEnergyIdeal)] = twin_.energy();
  row[col(SitsColumn::kPower)] = f_input * x.velocity;
  row[col(SitsColumn::kPowerIdeal)] = f_ideal * xi.velocity;
  row[col(SitsColumn::kKx)] = k_x;
  row[col(SitsColumn::kPhase)] = corrected ? phase_correction_.phase() : 0.0;

  target_.step(f_input);
  twin_.step();

  const core::MassState after = target_.state();
  next = {after.position, after.velocity};
  if (!std::isfinite(after.position) || !std::isfinite(after.velocity) || !std::isfinite(f_input)) {
    return StopReason::kNotFinite;
  }
  if (after.position < limits_.position_min || after.position > limits_.position_max) {
    return StopReason::kDisplacementLimit;
  }
  if (guarded_ && guard_.update(t, energy)) {
    return StopReason::kStabilityGuard;
  }
  return StopReason::kNone;
}

}  // namespace hyloop::experiment
