#include "hyloop/core/passivity.hpp"

#include <algorithm>
#include <cmath>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;

namespace {

void validate_step(double step) {
  require(std::isfinite(step) && step > 0.0, "step", step, "must be finite and > 0");
}

void validate(const PassivityControllerConfig& c) {
  validate_step(c.step);
  require(std::isfinite(c.max_damping) && c.max_damping > 0.0, "max_damping", c.max_damping,
          "must be finite and > 0");
  require(std::isfinite(c.initial_energy) && c.initial_energy >= 0.0, "initial_energy",
          c.initial_energy, "must be finite and >= 0");
}

// The damping that takes −w (J) out of the port over one step with this input, clipped at the
// bound; 0 when the port is passive or the input is 0.
double damping_for(double w, double input, double step, double max_damping,
                   std::uint64_t& saturated) noexcept {
  const double input2 = input * input;
  if (!(w < 0.0) || input2 == 0.0) return 0.0;
  const double g = -w / (step * input2);
  if (g > max_damping) {
    ++saturated;
    return max_damping;
  }
  return g;
}

}  // namespace

PassivityObserver::PassivityObserver(const PassivityObserverConfig& config) : config_(config) {
  validate_step(config.step);
  require(std::isfinite(config.initial_energy) && config.initial_energy >= 0.0, "initial_energy",
          config.initial_energy, "must be finite and >= 0");
}

double PassivityObserver::observe(double effort, double flow) noexcept {
  const double e = config_.step * effort * flow;
  if (!std::isfinite(effort) || !std::isfinite(flow) || !std::isfinite(e)) {
    ++rejected_;
  } else if (e > 0.0) {
    input_energy_ += e;
  } else {
    output_energy_ -= e;
  }
  return energy();
}

void PassivityObserver::reset() noexcept {
  input_energy_ = output_energy_ = 0.0;
  rejected_ = 0;
}

PassivityController::PassivityController(const PassivityControllerConfig& config)
    : config_(config) {
  validate(config);
}

double PassivityController::step(double input, double output) noexcept {
  const double t = config_.step;
  if (!std::isfinite(input) || !std::isfinite(output) || !std::isfinite(input * output)) {
    ++rejected_;
    return output;
  }
  double w = 0.0;
  if (config_.hold == HoldConvention::kSameSample) {
    observed_ += t * input * output;
    w = port_energy();
  } else {
    // The period [n−1, n] that just ended, with the output that was held over it.
    observed_ += t * input * last_output_;
    dissipated_ += t * damping_ * last_input_ * input;
    w = port_energy() + t * input * output;  // and the next period, predicted
  }
  damping_ = damping_for(w, input, t, config_.max_damping, saturated_);
  if (config_.hold == HoldConvention::kSameSample) {
    dissipated_ += t * damping_ * input * input;
  }
  last_input_ = input;
  last_output_ = output;
  return output + damping_ * input;
}

void PassivityController::reset() noexcept {
  observed_ = dissipated_ = damping_ = 0.0;
  last_input_ = last_output_ = 0.0;
  saturated_ = rejected_ = 0;
}

TwoPortSide::TwoPortSide(const PassivityControllerConfig& config) : config_(config) {
  validate(config);
  require(config.hold == HoldConvention::kSameSample, "hold", static_cast<int>(config.hold),
          "must be kSameSample (0) for a two-port side");
}

double TwoPortSide::step(double input, double output, double remote_input_energy) noexcept {
  if (std::isfinite(remote_input_energy)) remote_ = std::max(remote_, remote_input_energy);
  const double t = config_.step;
  const double e = t * input * output;
  if (!std::isfinite(input) || !std::isfinite(output) || !std::isfinite(e)) {
    ++rejected_;
    return output;
  }
  if (e > 0.0) {
    input_energy_ += e;
  } else {
    output_energy_ -= e;
  }
  const double w = config_.initial_energy + remote_ - output_energy_ + dissipated_;
  damping_ = damping_for(w, input, t, config_.max_damping, saturated_);
  dissipated_ += t * damping_ * input * input;
  return output + damping_ * input;
}

void TwoPortSide::reset() noexcept {
  input_energy_ = output_energy_ = dissipated_ = remote_ = damping_ = 0.0;
  saturated_ = rejected_ = 0;
}

namespace {

PassivityControllerConfig side_config(const TwoPortPassivityConfig& c, bool left) {
  PassivityControllerConfig s;
  s.step = c.step;
  s.causality = left ? c.left_causality : c.right_causality;
  s.max_damping = left ? c.left_max_damping : c.right_max_damping;
  return s;
}

const TwoPortPassivityConfig& validated(const TwoPortPassivityConfig& c) {
  validate_step(c.step);
  require(c.delay_steps >= 1 && c.delay_steps <= TwoPortPassivityConfig::kMaxDelaySteps,
          "delay_steps", c.delay_steps, "must lie within [1, 1000000]");
  require(std::isfinite(c.left_max_damping) && c.left_max_damping > 0.0, "left_max_damping",
          c.left_max_damping, "must be finite and > 0");
  require(std::isfinite(c.right_max_damping) && c.right_max_damping > 0.0, "right_max_damping",
          c.right_max_damping, "must be finite and > 0");
  return c;
}

}  // namespace

TwoPortPassivity::TwoPortPassivity(const TwoPortPassivityConfig& config)
    : config_(validated(config)),
      left_(side_config(config, true)),
      right_(side_config(config, false)),
      to_left_(static_cast<std::size_t>(config.delay_steps), 0.0),
      to_right_(static_cast<std::size_t>(config.delay_steps), 0.0) {}

double TwoPortPassivity::step_left(double input, double output) noexcept {
  return left_.step(input, output, to_left_[head_]);
}

double TwoPortPassivity::step_right(double input, double output) noexcept {
  return right_.step(input, output, to_right_[head_]);
}

void TwoPortPassivity::advance() noexcept {
  to_right_[head_] = left_.input_energy();
  to_left_[head_] = right_.input_energy();
  head_ = (head_ + 1) % to_left_.size();
}

void TwoPortPassivity::reset() noexcept {
  left_.reset();
  right_.reset();
  std::fill(to_left_.begin(), to_left_.end(), 0.0);
  std::fill(to_right_.begin(), to_right_.end(), 0.0);
  head_ = 0;
}

}  // namespace hyloop::core
