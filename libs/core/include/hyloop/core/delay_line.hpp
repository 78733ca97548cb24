#pragma once
// Pure delay of a sampled signal by an integer or fractional number of steps.
//
//   y[k] = x[k - d]                                  d integer
//   y[k] = (1 - f)·x[k - n] + f·x[k - n - 1]         d = n + f, 0 < f < 1 (linear interpolation)
//
// Samples before the first push read as the initial value given at construction (or reset()).
// Used for the force-measurement delay τs (d = τs/T) and for transport delays (FCU motor, flow
// meter). Units are those of the signal.

#include <cstddef>
#include <vector>

namespace hyloop::core {

class DelayLine {
 public:
  /// @param delay_steps d ≥ 0, finite, at most kMaxDelaySteps.
  /// @throws std::invalid_argument naming `delay_steps` otherwise.
  explicit DelayLine(double delay_steps, double initial = 0.0);

  static constexpr double kMaxDelaySteps = 1.0e6;

  /// Stores x[k] and returns y[k]. RT-safe: no allocation, no exception.
  double push(double x) noexcept;

  /// Fills the history with `value`. RT-safe.
  void reset(double value) noexcept;

  [[nodiscard]] double delay_steps() const noexcept { return delay_steps_; }

 private:
  [[nodiscard]] double at(std::size_t age) const noexcept;

  double delay_steps_;
  std::size_t whole_;
  double fraction_;
  std::vector<double> buffer_;
  std::size_t head_ = 0;  // index of the newest sample
};

}  // namespace hyloop::core
