#include "hyloop/hal/sits_rig_emulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::hal {
namespace {
double checked_noise(const char* field, double v) {
  if (!std::isfinite(v) || v < 0.0) {
    throw std::invalid_argument(std::string(field) + " = " + std::to_string(v) + ": must be >= 0");
  }
  return v;
}
}  // namespace

SitsRigEmulator::SitsRigEmulator(const SitsRigConfig& config)
    : config_(config),
      contact_(config.contact),
      sensor_delay_(config.sensor_delay_steps),
      rng_(config.seed) {
  if (!std::isfinite(config.step) || config.step <= 0.0) {
    throw std::invalid_argument("step = " + std::to_string(config.step) + ": must be > 0 s");
  }
  checked_noise("force_noise_std", config.force_noise_std);
  checked_noise("position_noise_std", config.position_noise_std);
  if (config.robot) {
    robot_.emplace(core::to_state_space(*config.robot), config.step);
  }
  reset(0.0);
}

void SitsRigEmulator::reset(double position) noexcept {
  command_ = {position, 0.0};
  state_ = {position, 0.0};
  measured_state_ = state_;
  if (robot_) {
    robot_->reset(position);
  }
  contact_force_ = contact_.force(position, 0.0);
  sensor_delay_.reset(contact_force_);
  measured_force_ = contact_force_;
  rng_.seed(config_.seed);
  unit_noise_.reset();
  cycle_ = -1;
}

DriverStatus SitsRigEmulator::apply(const ActuatorCommand& command) noexcept {
  if (check_command(command, config_.limits) != LimitVerdict::kOk) {
    ++rejected_;
    return DriverStatus::kRejected;
  }
  command_ = command;
  return DriverStatus::kOk;
}

void SitsRigEmulator::advance() noexcept {
  ++cycle_;
  if (robot_) {
    state_.position = robot_->step(command_.position);
    state_.velocity = robot_->output_rate();
  } else {
    state_.position = command_.position;
    state_.velocity = command_.velocity;
  }
  contact_force_ = contact_.force(state_.position, state_.velocity);
  const double delayed = sensor_delay_.push(contact_force_);
  if (!faults_.freeze_force) {
    measured_force_ =
        delayed +
        (config_.force_noise_std > 0.0 ? config_.force_noise_std * unit_noise_(rng_) : 0.0);
  }
  if (!faults_.lose_position) {
    measured_state_ = state_;
    if (config_.position_noise_std > 0.0) {
      measured_state_.position += config_.position_noise_std * unit_noise_(rng_);
    }
  }
}

void SitsAxisPlant::reset(double position) noexcept {
  rig_.reset(position);
  last_command_ = position;
  measurement_ = {};
  measure();
}

const ServoMeasurement& SitsAxisPlant::step(double command) noexcept {
  const double step = rig_.config().step;
  (void)rig_.apply({command, (command - last_command_) / step});
  last_command_ = command;
  rig_.advance();
  measurement_.time += step;
  measure();
  return measurement_;
}

void SitsAxisPlant::measure() noexcept {
  measurement_.displacement = rig_.robot_state().position;
  measurement_.true_displacement = rig_.true_robot_state().position;
  measurement_.velocity = rig_.true_robot_state().velocity;
  measurement_.force = rig_.measured_force();
}

}  // namespace hyloop::hal
