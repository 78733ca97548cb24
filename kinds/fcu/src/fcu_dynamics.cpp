#include "hyloop/kinds/fcu/fcu_dynamics.hpp"

#include <algorithm>
#include <cmath>

#include "hyloop/kinds/fcu/fcu_experiment.hpp"

namespace hyloop::experiment {
namespace {

constexpr std::size_t extra(FcuExtraColumn c) { return kFcuColumns + static_cast<std::size_t>(c); }

core::InverseDelayCompensatorConfig inverse_config(const FcuScenario& s) {
  // Only used when the type is inverse; otherwise a valid placeholder of one step.
  const double delay = s.compensator.type == FcuCompensatorType::kInverse
                           ? s.resolved_compensator_delay()
                           : s.timing.step;
  return {delay, s.timing.step};
}

core::PolynomialPredictorConfig predictor_config(const FcuScenario& s) {
  core::PolynomialPredictorConfig c;
  c.points = s.compensator.points;
  c.order = s.compensator.order;
  c.steps_ahead = std::max(1, s.resolved_steps_ahead());
  return c;
}

}  // namespace

double fcu_initial_speed(const FcuScenario& s) {
  const core::EngineControlUnit ecu(s.ecu, s.engine, s.timing.step);
  return ecu.speed_demand(s.reference.at(0.0));
}

double fcu_initial_fuel(const FcuScenario& s) {
  const core::TurbojetModel engine(s.engine, s.timing.step, 0.0);
  return engine.steady_fuel(fcu_initial_speed(s));
}

hal::FcuRigConfig fcu_rig_config(const FcuScenario& s) {
  hal::FcuRigConfig c;
  c.step = s.timing.step;
  c.motor_delay = s.transfer.motor_delay;
  c.flow_meter_delay = s.transfer.flow_meter_delay;
  c.noise_std = s.transfer.measurement_noise_std;
  c.seed = s.transfer.seed;
  c.fcu = s.fcu;
  return c;
}

hal::SafetyConfig fcu_safety_config(const FcuScenario& s) {
  hal::SafetyConfig c;
  c.limits.position_min = s.safety.command_min;
  c.limits.position_max = s.safety.resolved_command_max(s.fcu.flow_gain);
  c.step = s.timing.step;
  c.watchdog_cycles = s.safety.watchdog_cycles;
  c.limits.acceleration_max = s.safety.command_acceleration_max;
  // The ramp to rest brakes at the acceleration bound (a hold at once when that is .inf).
  c.stop_deceleration = std::numeric_limits<double>::infinity();
  return c;
}

FcuDynamics::FcuDynamics(const FcuScenario& scenario)
    : scenario_(&scenario),
      step_(scenario.timing.step),
      engine_(scenario.engine, scenario.timing.step, fcu_initial_speed(scenario)),
      ecu_(scenario.ecu, scenario.engine, scenario.timing.step),
      twin_engine_(scenario.engine, scenario.timing.step, fcu_initial_speed(scenario)),
      twin_ecu_(scenario.ecu, scenario.engine, scenario.timing.step),
      twin_fcu_(scenario.fcu, scenario.timing.step, 0.0),
      inverse_(inverse_config(scenario)),
      predictor_(predictor_config(scenario)) {
  // Bumpless start at the steady state of PLA(0).
  const double w0 = fcu_initial_fuel(scenario);
  ecu_.reset(w0);
  twin_ecu_.reset(w0);
  twin_fcu_.reset(twin_fcu_.command_for(w0));
  inverse_.reset(w0);
  predictor_.reset(w0);
  command(0);
}

void FcuDynamics::command(std::int64_t k) noexcept {
  pla_ = scenario_->reference.at(static_cast<double>(k) * step_);
  x_c_ = ecu_.step(pla_, engine_.speed());
  demand_ = ecu_.last_demand();
  ecu_limited_ = ecu_.last_limit() != core::EcuLimit::kNone;
  switch (scenario_->compensator.type) {
    case FcuCompensatorType::kNone:
      x_p_ = x_c_;
      break;
    case FcuCompensatorType::kInverse:
      x_p_ = inverse_.step(x_c_);
      break;
    case FcuCompensatorType::kPolynomial:
      x_p_ = predictor_.step(x_c_);
      break;
  }
}

const char* FcuDynamics::step(std::int64_t k, double x_m, std::span<double> row,
                              double& next) noexcept {
  const double n = engine_.speed();
  const double n_ideal = twin_engine_.speed();
  engine_.step(x_m);
  const double x_c_ideal = twin_ecu_.step(pla_, n_ideal);
  const double fuel_flow_ideal = twin_fcu_.step(twin_fcu_.command_for(x_c_ideal));
  twin_engine_.step(fuel_flow_ideal);

  row[col(FcuColumn::kTime)] = static_cast<double>(k) * step_;
  row[col(FcuColumn::kPla)] = pla_;
  row[col(FcuColumn::kSpeedDemand)] = 100.0 * demand_;
  row[col(FcuColumn::kXc)] = x_c_;
  row[col(FcuColumn::kXp)] = x_p_;
  row[col(FcuColumn::kXm)] = x_m;
  row[col(FcuColumn::kSpeed)] = 100.0 * n;
  row[col(FcuColumn::kSpeedIdeal)] = 100.0 * n_ideal;
  row[col(FcuColumn::kXcIdeal)] = x_c_ideal;
  row[col(FcuColumn::kFuelFlowIdeal)] = fuel_flow_ideal;
  row[col(FcuColumn::kSpeedError)] = 100.0 * (n - n_ideal);
  row[col(FcuColumn::kFlowError)] = x_m - x_c_;
  row[extra(FcuExtraColumn::kSpeed)] = n;
  row[extra(FcuExtraColumn::kSpeedIdeal)] = n_ideal;
  row[extra(FcuExtraColumn::kEcuLimited)] = ecu_limited_ ? 1.0 : 0.0;

  const double n_next = engine_.speed();
  if (!std::isfinite(n_next) || !std::isfinite(x_p_) || !std::isfinite(x_m)) {
    return to_string(StopReason::kNotFinite).data();  // NUL-terminated literals
  }
  if (n_next < 0.0 || n_next > scenario_->metrics.speed_limit) {
    return to_string(StopReason::kSpeedLimit).data();
  }
  command(k + 1);
  next = x_p_;
  // A non-finite command is never sent.
  return std::isfinite(x_p_) ? nullptr : to_string(StopReason::kNotFinite).data();
}

double FcuDynamics::alpha() const noexcept {
  return scenario_->compensator.type == FcuCompensatorType::kInverse ? inverse_.alpha() : 0.0;
}

std::vector<double> FcuDynamics::predictor_weights() const {
  if (scenario_->compensator.type != FcuCompensatorType::kPolynomial) return {};
  const auto w = predictor_.weights();
  return {w.begin(), w.end()};
}

}  // namespace hyloop::experiment
