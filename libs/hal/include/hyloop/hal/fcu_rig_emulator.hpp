#pragma once
// The FCU test rig (FCU paper; DESIGN.md §3.3): the physical substructure and the transfer
// system of the jet-engine HIL test. The command x_a (a fuel-flow demand, kg/s) drives
//   AC motor     x_motor[k] = x_a[k − d_A],               d_A = τ_A/Δt steps (τ_A = 0.169 s)
//   FCU valve    u[k] = x_motor[k]/K_v clamped to [0, 1];  x_v[k+1] = a·x_v[k] + (1 − a)·u[k],
//                a = exp(−Δt/τ_v);  metered flow w_f[k] = K_v·x_v[k+1]           (kg/s)
//   flow meter   x_m[k] = w_f[k − d_F] + n[k],             d_F = τ_F/Δt steps (τ_F = 0.008 s)
// with n[k] white Gaussian noise of standard deviation `noise_std` (std::mt19937_64 seeded with
// `seed`, one draw per step only when noise_std > 0). Delays of 0 are off; otherwise at least
// one step. reset(w0) starts bumpless: every delay line and the valve at the steady flow w0.
// step() is RT-safe: no allocation after construction.

#include <cstdint>
#include <random>

#include "hyloop/core/delay_line.hpp"
#include "hyloop/core/turbojet_model.hpp"

namespace hyloop::hal {

struct FcuRigConfig {
  double step = 0.001;              ///< Δt, s; > 0
  double motor_delay = 0.169;       ///< τ_A, s
  double flow_meter_delay = 0.008;  ///< τ_F, s
  double noise_std = 0.0;           ///< σ of the flow meter's noise, kg/s; ≥ 0
  std::uint64_t seed = 1;
  core::FuelControlUnitConfig fcu;
};

/// One step of the rig, measured at its end.
struct FcuRigSample {
  double x_motor = 0.0;         ///< the motor's output, the FCU's command, kg/s
  double valve_position = 0.0;  ///< x_v[k+1], normalised
  double fuel_flow = 0.0;       ///< w_f[k], kg/s
  double x_m = 0.0;             ///< the flow meter's reading, kg/s
  bool saturated = false;       ///< the valve command was outside [0, 1] (clamped)
};

class FcuRigEmulator {
 public:
  /// @throws std::invalid_argument naming the parameter.
  explicit FcuRigEmulator(const FcuRigConfig& config);

  /// At rest at the steady flow `fuel` (kg/s).
  void reset(double fuel) noexcept;
  /// Applies the command x_a[k] (kg/s) over one step. RT-safe.
  const FcuRigSample& step(double command) noexcept;

  [[nodiscard]] const FcuRigSample& last() const noexcept { return sample_; }
  [[nodiscard]] const FcuRigConfig& config() const noexcept { return config_; }

 private:
  FcuRigConfig config_;
  core::DelayLine motor_;
  core::DelayLine flow_meter_;
  core::FuelControlUnit valve_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_{0.0, 1.0};
  FcuRigSample sample_{};
};

}  // namespace hyloop::hal
