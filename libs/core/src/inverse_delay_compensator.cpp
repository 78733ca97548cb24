#include "hyloop/core/inverse_delay_compensator.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hyloop::core {

InverseDelayCompensator::InverseDelayCompensator(const InverseDelayCompensatorConfig& config,
                                                 double initial)
    : config_(config), alpha_(0.0), previous_(initial) {
  if (!std::isfinite(config.step) || config.step <= 0.0) {
    std::ostringstream msg;
    msg << "step = " << config.step << ": must be finite and > 0 s";
    throw std::invalid_argument(msg.str());
  }
  if (!std::isfinite(config.delay) || config.delay < config.step) {
    std::ostringstream msg;
    msg << "delay = " << config.delay
        << " s: must be finite and at least one step (>= " << config.step << " s)";
    throw std::invalid_argument(msg.str());
  }
  alpha_ = alpha_for(config.delay, config.step);
}

}  // namespace hyloop::core
