#include "hyloop/core/turbojet_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;

namespace {

void require_step(double step) {
  require(std::isfinite(step) && step > 0.0, "step", step, "must be finite and > 0 s");
}

}  // namespace

void validate(const TurbojetConfig& c) {
  require(std::isfinite(c.idle_speed) && c.idle_speed > 0.0 && c.idle_speed < 1.0, "idle_speed",
          c.idle_speed, "must be in (0, 1)");
  require(std::isfinite(c.idle_fuel) && c.idle_fuel >= 0.0, "idle_fuel", c.idle_fuel,
          "must be >= 0 kg/s");
  require(std::isfinite(c.design_fuel) && c.design_fuel > c.idle_fuel, "design_fuel", c.design_fuel,
          "must be > idle_fuel");
  require(std::isfinite(c.idle_time_constant) && c.idle_time_constant > 0.0, "idle_time_constant",
          c.idle_time_constant, "must be > 0 s");
  require(std::isfinite(c.design_time_constant) && c.design_time_constant > 0.0,
          "design_time_constant", c.design_time_constant, "must be > 0 s");
}

// ---------------------------------------------------------------------------------- engine

TurbojetModel::TurbojetModel(const TurbojetConfig& config, double step, double initial_speed)
    : config_(config), step_(step), speed_(initial_speed) {
  validate(config);
  require_step(step);
  require(std::isfinite(initial_speed), "initial_speed", initial_speed, "must be finite");
}

double TurbojetModel::steady_speed(double fuel_flow) const noexcept {
  const TurbojetConfig& c = config_;
  return c.idle_speed +
         (1.0 - c.idle_speed) * (fuel_flow - c.idle_fuel) / (c.design_fuel - c.idle_fuel);
}

double TurbojetModel::steady_fuel(double speed) const noexcept {
  const TurbojetConfig& c = config_;
  return c.idle_fuel +
         (c.design_fuel - c.idle_fuel) * (speed - c.idle_speed) / (1.0 - c.idle_speed);
}

double TurbojetModel::time_constant(double speed) const noexcept {
  const TurbojetConfig& c = config_;
  const double tau = c.idle_time_constant + (c.design_time_constant - c.idle_time_constant) *
                                                (speed - c.idle_speed) / (1.0 - c.idle_speed);
  const double lo = std::min(c.idle_time_constant, c.design_time_constant);
  const double hi = std::max(c.idle_time_constant, c.design_time_constant);
  return std::clamp(tau, lo, hi);
}

double TurbojetModel::derivative(double speed, double fuel_flow) const noexcept {
  return (steady_speed(fuel_flow) - speed) / time_constant(speed);
}

double TurbojetModel::step(double fuel_flow) noexcept {
  const double h = step_;
  const double n = speed_;
  const double k1 = derivative(n, fuel_flow);
  const double k2 = derivative(n + 0.5 * h * k1, fuel_flow);
  const double k3 = derivative(n + 0.5 * h * k2, fuel_flow);
  const double k4 = derivative(n + h * k3, fuel_flow);
  speed_ = n + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  return speed_;
}

// ---------------------------------------------------------------------------------- ECU

EngineControlUnit::EngineControlUnit(const EngineControlUnitConfig& config,
                                     const TurbojetConfig& engine, double step)
    : config_(config), schedule_(engine, step, engine.idle_speed), step_(step) {
  const EngineControlUnitConfig& c = config;
  require(std::isfinite(c.pla_idle), "pla_idle", c.pla_idle, "must be finite");
  require(std::isfinite(c.pla_max) && c.pla_max > c.pla_idle, "pla_max", c.pla_max,
          "must be > pla_idle");
  require(std::isfinite(c.max_speed) && c.max_speed > engine.idle_speed, "max_speed", c.max_speed,
          "must be > the engine's idle_speed");
  require(std::isfinite(c.kp) && c.kp >= 0.0, "kp", c.kp, "must be >= 0");
  require(std::isfinite(c.ki) && c.ki >= 0.0, "ki", c.ki, "must be >= 0");
  require(std::isfinite(c.accel_ratio) && c.accel_ratio >= 1.0, "accel_ratio", c.accel_ratio,
          "must be >= 1");
  require(std::isfinite(c.decel_ratio) && c.decel_ratio > 0.0 && c.decel_ratio <= 1.0,
          "decel_ratio", c.decel_ratio, "must be in (0, 1]");
}

double EngineControlUnit::speed_demand(double pla_deg) const noexcept {
  const double n_idle = schedule_.config().idle_speed;
  const double n = n_idle + (config_.max_speed - n_idle) * (pla_deg - config_.pla_idle) /
                                (config_.pla_max - config_.pla_idle);
  return std::clamp(n, n_idle, config_.max_speed);
}

double EngineControlUnit::step(double pla_deg, double speed) noexcept {
  last_demand_ = speed_demand(pla_deg);
  const double error = last_demand_ - speed;
  const double unlimited = config_.kp * error + integrator_;
  const double schedule = schedule_.steady_fuel(speed);
  const double hi = config_.accel_ratio * schedule;
  const double lo = config_.decel_ratio * schedule;
  double out = unlimited;
  last_limit_ = EcuLimit::kNone;
  if (unlimited > hi) {
    out = hi;
    last_limit_ = EcuLimit::kAcceleration;
  } else if (unlimited < lo) {
    out = lo;
    last_limit_ = EcuLimit::kDeceleration;
  }
  const bool winding = (last_limit_ == EcuLimit::kAcceleration && error > 0.0) ||
                       (last_limit_ == EcuLimit::kDeceleration && error < 0.0);
  if (!winding) integrator_ += config_.ki * step_ * error;
  return out;
}

// ---------------------------------------------------------------------------------- FCU

FuelControlUnit::FuelControlUnit(const FuelControlUnitConfig& config, double step,
                                 double initial_position)
    : config_(config), decay_(0.0), position_(initial_position) {
  require(std::isfinite(config.valve_time_constant) && config.valve_time_constant >= 0.0,
          "valve_time_constant", config.valve_time_constant, "must be >= 0 s");
  require(std::isfinite(config.flow_gain) && config.flow_gain > 0.0, "flow_gain", config.flow_gain,
          "must be > 0 kg/s");
  require_step(step);
  require(std::isfinite(initial_position) && initial_position >= 0.0 && initial_position <= 1.0,
          "initial_position", initial_position, "must be in [0, 1]");
  decay_ = config.valve_time_constant > 0.0 ? std::exp(-step / config.valve_time_constant) : 0.0;
}

double FuelControlUnit::step(double position_command) noexcept {
  const double u = std::clamp(position_command, 0.0, 1.0);
  saturated_ = u != position_command;
  position_ = decay_ * position_ + (1.0 - decay_) * u;
  return config_.flow_gain * position_;
}

}  // namespace hyloop::core
