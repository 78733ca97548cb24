#pragma once
// Inverse compensation of a transfer-system delay (Chen & Ricles; FCU paper §5, Eq. 4–8 with the
// erratum of DESIGN.md §8).
//
// The transfer system is idealised as reaching its command linearly over α steps (Eq. 4):
//
//   x_m[j+1] = x_m[j] + (x_c[j+1] − x_m[j])/α,    G_d(z) = z/(α·z − (α − 1))         (Eq. 5)
//
// and the compensator is its inverse, G_c(z) = (α·z − (α − 1))/z (Eq. 6), i.e.
//
//   x_p[j+1] = α·x_c[j+1] − (α − 1)·x_c[j]                          (Eq. 8 as corrected)
//
// with the delay constant α = τ/Δt + 1 (τ the delay in s, Δt the step in s; the delay is
// (α − 1)·Δt). τ = 0.177 s at Δt = 0.001 s gives α = 178. Units are those of the signal.

namespace hyloop::core {

struct InverseDelayCompensatorConfig {
  double delay = 0.0;  ///< τ, s; at least one step
  double step = 0.0;   ///< Δt, s; > 0
};

class InverseDelayCompensator {
 public:
  /// @throws std::invalid_argument naming `step` or `delay` (τ < Δt is rejected).
  explicit InverseDelayCompensator(const InverseDelayCompensatorConfig& config,
                                   double initial = 0.0);

  /// α = τ/Δt + 1.
  [[nodiscard]] static double alpha_for(double delay, double step) noexcept {
    return delay / step + 1.0;
  }

  /// Takes x_c[j+1], returns x_p[j+1]. RT-safe: no allocation, no exception.
  double step(double command) noexcept {
    const double out = alpha_ * command - (alpha_ - 1.0) * previous_;
    previous_ = command;
    return out;
  }

  /// Sets x_c[j] to `value`, so that a constant command passes unchanged (bumpless). RT-safe.
  void reset(double value) noexcept { previous_ = value; }

  [[nodiscard]] double alpha() const noexcept { return alpha_; }
  [[nodiscard]] const InverseDelayCompensatorConfig& config() const noexcept { return config_; }

 private:
  InverseDelayCompensatorConfig config_;
  double alpha_;
  double previous_;
};

}  // namespace hyloop::core
