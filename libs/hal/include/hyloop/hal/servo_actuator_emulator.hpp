#pragma once
// Servo-hydraulic actuator emulator (RHT paper §2: ω = 50 rad/s, ζ = 0.8, about 27 ms delay;
// time-varying case ω between 44 and 54 rad/s with ζ = 0.78), with a specimen whose restoring
// force is measured.
//
//   G(s) = ω²/(s² + 2ζω·s + ω²),   ẍ = ω²·(u − x) − 2ζω·ẋ          state [x, ẋ] (m, m/s)
//
// The command u is held over each step (zero-order hold) and the state advanced exactly:
//
//   [x, ẋ](t_{i+1}) = A_d·[x, ẋ](t_i) + B_d·u(i),   A_d = e^{A·Δt},   B_d = A⁻¹(A_d − I)·B
//
// in closed form for the 2×2 matrix (under-, critically and over-damped), so a varying ω is
// re-discretised every step without allocation. With a variation, ω is constant over a step at
//
//   ω(t) = (ω_max + ω_min)/2 + (ω_max − ω_min)/2 · sin(2π·t/period + phase),   t = t_i + Δt/2,
//
// and the state [x, ẋ] stays continuous across the change.
//
// Measurement of step i at its end t_{i+1} (DESIGN.md §6): displacement d_m(i) = x(t_{i+1}) + n_i
// with n_i white Gaussian noise of standard deviation `noise_std` (m; the paper's "variance
// 0.01 mm" read as σ = 0.01 mm = 1e-5 m, DESIGN.md §8), std::mt19937_64 seeded with `seed`; the
// specimen's restoring force F = k·x + c·ẋ (N) of the true motion (noise-free).

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <random>

namespace hyloop::hal {

struct ServoActuatorConfig {
  double step = 0.01;   ///< Δt, s; > 0
  double omega = 50.0;  ///< ω, rad/s; > 0 (unused when the variation is enabled)
  double zeta = 0.8;    ///< ζ ≥ 0

  struct OmegaVariation {
    bool enabled = false;
    double omega_min = 44.0;  ///< rad/s; > 0
    double omega_max = 54.0;  ///< rad/s; ≥ omega_min
    double period = 10.0;     ///< s; > 0
    double phase = 0.0;       ///< rad
  } omega_variation;

  double noise_std = 0.0;           ///< σ of the displacement measurement noise, m; ≥ 0
  std::uint64_t seed = 1;           ///< noise generator seed
  double specimen_stiffness = 0.0;  ///< k, N/m
  double specimen_damping = 0.0;    ///< c, N·s/m
};

/// Measurement of one step, taken at its end.
struct ServoMeasurement {
  double time = 0.0;               ///< t_{i+1}, s
  double displacement = 0.0;       ///< d_m(i) = x + noise, m
  double true_displacement = 0.0;  ///< x(t_{i+1}), m
  double velocity = 0.0;           ///< ẋ(t_{i+1}), m/s
  double force = 0.0;              ///< k·x + c·ẋ, N
  double omega = 0.0;              ///< ω used over the step, rad/s
};

/// One axis a wire emulator moves (the udp target, the EGM robot, the RSI controller): a held
/// command per step of the device's cycle, the measurement at the step's end, in loop units.
/// The servo below is one; the SITS rig (robot, contact, force sensor: sits_rig_emulator.hpp)
/// another. RT-safe: step() and measurement() allocate nothing and never throw.
class AxisPlant {
 public:
  AxisPlant() = default;
  AxisPlant(const AxisPlant&) = default;
  AxisPlant& operator=(const AxisPlant&) = default;
  virtual ~AxisPlant() = default;
  /// At rest at `position`, time 0 (a reset run repeats exactly).
  virtual void reset(double position) noexcept = 0;
  virtual const ServoMeasurement& step(double command) noexcept = 0;
  [[nodiscard]] virtual const ServoMeasurement& measurement() const noexcept = 0;
};

class ServoActuatorEmulator final : public AxisPlant {
 public:
  using Matrix2 = Eigen::Matrix2d;
  using Vector2 = Eigen::Vector2d;

  /// @throws std::invalid_argument naming the field out of range.
  explicit ServoActuatorEmulator(const ServoActuatorConfig& config);

  /// At rest at `position` (m), time 0, noise generator re-seeded: a reset run repeats exactly.
  /// RT-safe.
  void reset(double position) noexcept override;

  /// Holds `command` (m) over [t_i, t_i + Δt), advances, and returns the measurement at the end
  /// of the step. RT-safe: no allocation, no exception, no lock.
  const ServoMeasurement& step(double command) noexcept override;

  [[nodiscard]] const ServoMeasurement& measurement() const noexcept override {
    return measurement_;
  }
  [[nodiscard]] double time() const noexcept { return time_; }
  /// ω(t) in rad/s (the constant ω without a variation).
  [[nodiscard]] double omega_at(double t) const noexcept;
  [[nodiscard]] const ServoActuatorConfig& config() const noexcept { return config_; }

  /// Exact zero-order-hold discretisation of G for (ω, ζ, Δt), closed form. RT-safe.
  static void discretise(double omega, double zeta, double step, Matrix2& a_d,
                         Vector2& b_d) noexcept;

 private:
  void measure(double omega) noexcept;

  ServoActuatorConfig config_;
  Matrix2 a_d_;
  Vector2 b_d_;
  Vector2 state_;
  double time_ = 0.0;
  std::int64_t steps_ = 0;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_;
  ServoMeasurement measurement_;
};

/// What a wire emulator steps: `axis` when given (its step must be `servo.step`, the device's
/// cycle), else a servo of `servo`. Not RT (it allocates): at construction.
[[nodiscard]] std::shared_ptr<AxisPlant> axis_or_servo(std::shared_ptr<AxisPlant> axis,
                                                       const ServoActuatorConfig& servo);

}  // namespace hyloop::hal
