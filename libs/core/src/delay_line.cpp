#include "hyloop/core/delay_line.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {

DelayLine::DelayLine(double delay_steps, double initial) : delay_steps_(delay_steps) {
  if (!std::isfinite(delay_steps) || delay_steps < 0.0 || delay_steps > kMaxDelaySteps) {
    throw std::invalid_argument("delay_steps = " + std::to_string(delay_steps) +
                                ": must be finite and in [0, 1e6]");
  }
  whole_ = static_cast<std::size_t>(std::floor(delay_steps));
  fraction_ = delay_steps - static_cast<double>(whole_);
  buffer_.assign(whole_ + 2, initial);
}

double DelayLine::at(std::size_t age) const noexcept {
  const std::size_t n = buffer_.size();
  return buffer_[(head_ + n - age) % n];
}

double DelayLine::push(double x) noexcept {
  head_ = (head_ + 1) % buffer_.size();
  buffer_[head_] = x;
  const double newer = at(whole_);
  if (fraction_ == 0.0) {
    return newer;
  }
  return (1.0 - fraction_) * newer + fraction_ * at(whole_ + 1);
}

void DelayLine::reset(double value) noexcept {
  for (double& v : buffer_) {
    v = value;
  }
  head_ = 0;
}

}  // namespace hyloop::core
