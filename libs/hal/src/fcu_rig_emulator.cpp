#include "hyloop/hal/fcu_rig_emulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::hal {
namespace {

const FcuRigConfig& checked(const FcuRigConfig& c) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!(std::isfinite(c.step) && c.step > 0.0)) fail("FcuRigConfig.step must be finite and > 0");
  for (const auto& [name, delay] : {std::pair{"motor_delay", c.motor_delay},
                                    std::pair{"flow_meter_delay", c.flow_meter_delay}}) {
    if (!(std::isfinite(delay) && (delay == 0.0 || delay >= c.step))) {
      fail(std::string("FcuRigConfig.") + name + " must be 0 or at least one step");
    }
  }
  if (!(std::isfinite(c.noise_std) && c.noise_std >= 0.0)) {
    fail("FcuRigConfig.noise_std must be finite and >= 0");
  }
  return c;
}

}  // namespace

FcuRigEmulator::FcuRigEmulator(const FcuRigConfig& config)
    : config_(checked(config)),
      motor_(config.motor_delay / config.step),
      flow_meter_(config.flow_meter_delay / config.step),
      valve_(config.fcu, config.step, 0.0),
      rng_(config.seed) {}

void FcuRigEmulator::reset(double fuel) noexcept {
  motor_.reset(fuel);
  flow_meter_.reset(fuel);
  valve_.reset(valve_.command_for(fuel));
  rng_.seed(config_.seed);
  noise_.reset();
  sample_ = {fuel, valve_.position(), fuel, fuel, false};
}

const FcuRigSample& FcuRigEmulator::step(double command) noexcept {
  sample_.x_motor = motor_.push(command);
  sample_.fuel_flow = valve_.step(valve_.command_for(sample_.x_motor));
  sample_.saturated = valve_.saturated();
  sample_.valve_position = valve_.position();
  double x_m = flow_meter_.push(sample_.fuel_flow);
  if (config_.noise_std > 0.0) {
    x_m += config_.noise_std * noise_(rng_);
  }
  sample_.x_m = x_m;
  return sample_;
}

}  // namespace hyloop::hal
