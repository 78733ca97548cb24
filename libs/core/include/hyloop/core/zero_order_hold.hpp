#pragma once
// Zero-order hold at a control period of h steps (Tc = h·T): the held value is latched at the
// cycles that are multiples of h and kept in between (DESIGN.md §6, step 5):
//
//   X_c[k] = x[k]        if k mod h == 0
//   X_c[k] = X_c[k - 1]  otherwise
//
// Value can be any copyable type (a position, or a position and velocity set point).

#include <cstdint>
#include <stdexcept>
#include <string>

namespace hyloop::core {

template <typename Value>
class ZeroOrderHold {
 public:
  /// @param period_steps h ≥ 1. @throws std::invalid_argument naming `period_steps` otherwise.
  explicit ZeroOrderHold(std::int64_t period_steps, Value initial = Value{})
      : period_(period_steps), held_(initial) {
    if (period_steps < 1) {
      throw std::invalid_argument("period_steps = " + std::to_string(period_steps) +
                                  ": must be >= 1");
    }
  }

  /// Offers the value of cycle k; returns the held value for cycle k. RT-safe.
  const Value& update(std::int64_t cycle, const Value& value) noexcept {
    if (cycle % period_ == 0) {
      held_ = value;
    }
    return held_;
  }

  void reset(const Value& value) noexcept { held_ = value; }
  [[nodiscard]] const Value& held() const noexcept { return held_; }
  [[nodiscard]] std::int64_t period_steps() const noexcept { return period_; }

 private:
  std::int64_t period_;
  Value held_;
};

}  // namespace hyloop::core
