#pragma once
// Reduced models of the FCU hardware-in-the-loop test (FCU paper, Figure 2; DESIGN.md §3.3): a
// single-spool turbojet, its electronic control unit (ECU) and the fuel control unit (FCU). The
// paper does not give any of them; these are simple published-form models with REPRESENTATIVE
// numbers of a small turbojet, chosen by us (not the paper's): see docs/fcu.md.
//
// TurbojetModel — first-order spool dynamics with an operating-point time constant. Near a
// steady operating point the spool acceleration is linear in fuel flow and speed (Otto & Taylor,
// "Dynamics of a turbojet engine considered as a quasi-static system", NACA, 1951; the torque
// balance I·dω/dt = Q_turbine − Q_compressor of Saravanamuttoo et al., "Gas Turbine Theory",
// chapter on transient behaviour), i.e. a first-order lag whose gain and time constant are
// scheduled with speed:
//
//   τ(n)·dn/dt = n_ss(w_f) − n                                                 (1/s · s = 1)
//   n_ss(w_f)  = n_idle + (1 − n_idle)·(w_f − w_idle)/(w_design − w_idle)    steady-state line
//   τ(n)       = τ_idle + (τ_design − τ_idle)·(n − n_idle)/(1 − n_idle),  clamped to
//                [min(τ_idle, τ_design), max(τ_idle, τ_design)]
//
// n is the spool speed normalised by the design speed (1 = 100 %), w_f the fuel flow in kg/s,
// τ in s. The steady-state line is the fuel–speed characteristic linearised between idle
// (n_idle, w_idle) and design (1, w_design); the time constant falls with speed (a spool is
// slow at idle and fast near full power). Defaults: n_idle = 0.6, w_idle = 0.02 kg/s,
// w_design = 0.10 kg/s, τ_idle = 1.5 s, τ_design = 0.4 s. The speed is advanced by classical
// fourth-order Runge–Kutta over each step with the fuel flow held (the paper's solver).
//
// EngineControlUnit — a PI speed governor. The power-lever angle (PLA, deg) sets the speed
// demand linearly between (PLA_idle, n_idle) and (PLA_max, n_max), clamped to that range; in
// step k with e[k] = n_dem[k] − n[k]:
//
//   u[k]   = K_p·e[k] + I[k]                                        unlimited fuel demand, kg/s
//   w_c[k] = clamp(u[k], r_dec·w_ss(n[k]), r_acc·w_ss(n[k]))        acceleration/deceleration
//   I[k+1] = I[k] + K_i·Δt·e[k]   unless u[k] is limited and e[k] pushes it further out
//                                 (conditional integration: no wind-up)
//
// w_ss(n) = w_idle + (w_design − w_idle)(n − n_idle)/(1 − n_idle) is the ECU's copy of the
// steady-state fuel schedule; r_acc > 1 keeps the compressor off surge, r_dec < 1 keeps the
// flame alight. K_p in kg/s per unit speed error, K_i in kg/s² per unit speed error.
//
// FuelControlUnit — the physical substructure: a metering valve whose position follows its
// command through a first-order lag (the servo-driven spool), the fuel flow proportional to the
// position (the pressure-regulating valve holds the pressure drop across it constant: paper §2):
//
//   x_v[k+1] = a·x_v[k] + (1 − a)·clamp(u[k], 0, 1),   a = exp(−Δt/τ_v)   (exact under a hold)
//   w_f[k]   = K_v·x_v[k+1]                                              (flow at the step's end)
//
// u and x_v are normalised valve positions (0 closed, 1 fully open), K_v is the flow at full
// opening (kg/s), τ_v in s (0: the valve follows its command within the step).
//
// All step() functions are RT-safe: no allocation, no exception, no lock. Constructors validate
// and throw std::invalid_argument naming the parameter.

namespace hyloop::core {

struct TurbojetConfig {
  double idle_speed = 0.6;            ///< n_idle, normalised, in (0, 1)
  double idle_fuel = 0.02;            ///< w_idle, kg/s, ≥ 0
  double design_fuel = 0.10;          ///< w_design, kg/s, > w_idle
  double idle_time_constant = 1.5;    ///< τ_idle, s, > 0
  double design_time_constant = 0.4;  ///< τ_design, s, > 0
};

/// @throws std::invalid_argument naming the field when a TurbojetConfig is out of range.
void validate(const TurbojetConfig& config);

class TurbojetModel {
 public:
  /// @param step Δt in s (> 0); @param initial_speed n(0).
  /// @throws std::invalid_argument naming the parameter.
  TurbojetModel(const TurbojetConfig& config, double step, double initial_speed);

  /// Holds the fuel flow w_f (kg/s) over [t_k, t_k + Δt) and returns n(t_k + Δt) (RK4). RT-safe.
  double step(double fuel_flow) noexcept;

  [[nodiscard]] double speed() const noexcept { return speed_; }
  void reset(double speed) noexcept { speed_ = speed; }

  /// dn/dt = (n_ss(w_f) − n)/τ(n), 1/s.
  [[nodiscard]] double derivative(double speed, double fuel_flow) const noexcept;
  /// n_ss(w_f): the speed the engine settles at under a constant fuel flow.
  [[nodiscard]] double steady_speed(double fuel_flow) const noexcept;
  /// w_ss(n): the fuel flow that holds speed n (kg/s).
  [[nodiscard]] double steady_fuel(double speed) const noexcept;
  /// τ(n), s.
  [[nodiscard]] double time_constant(double speed) const noexcept;

  [[nodiscard]] const TurbojetConfig& config() const noexcept { return config_; }
  [[nodiscard]] double step_size() const noexcept { return step_; }

 private:
  TurbojetConfig config_;
  double step_;
  double speed_;
};

struct EngineControlUnitConfig {
  double pla_idle = 20.0;    ///< PLA at idle demand, deg
  double pla_max = 90.0;     ///< PLA at maximum demand, deg, > pla_idle
  double max_speed = 1.0;    ///< n_max demanded at pla_max, > engine idle_speed
  double kp = 0.04;          ///< K_p, kg/s per unit speed error, ≥ 0
  double ki = 0.4;           ///< K_i, kg/s² per unit speed error, ≥ 0
  double accel_ratio = 1.5;  ///< r_acc ≥ 1: acceleration limit r_acc·w_ss(n)
  double decel_ratio = 0.5;  ///< r_dec in (0, 1]: deceleration limit r_dec·w_ss(n)
};

/// What limited the ECU's output in its last step.
enum class EcuLimit : unsigned char { kNone, kAcceleration, kDeceleration };

class EngineControlUnit {
 public:
  /// @param engine the engine the ECU is designed for (idle speed and steady fuel schedule).
  /// @throws std::invalid_argument naming the parameter.
  EngineControlUnit(const EngineControlUnitConfig& config, const TurbojetConfig& engine,
                    double step);

  /// Speed demand n_dem(PLA), clamped to [n_idle, n_max].
  [[nodiscard]] double speed_demand(double pla_deg) const noexcept;

  /// One control step: returns the fuel-flow demand w_c[k] (kg/s). RT-safe.
  double step(double pla_deg, double speed) noexcept;

  /// Bumpless start: the integrator set so that a zero speed error demands `fuel` (kg/s).
  void reset(double fuel) noexcept { integrator_ = fuel; }

  [[nodiscard]] double integrator() const noexcept { return integrator_; }
  [[nodiscard]] EcuLimit last_limit() const noexcept { return last_limit_; }
  [[nodiscard]] double last_demand() const noexcept { return last_demand_; }  ///< n_dem[k]
  [[nodiscard]] const EngineControlUnitConfig& config() const noexcept { return config_; }

 private:
  EngineControlUnitConfig config_;
  TurbojetModel schedule_;  // the ECU's copy of the steady-state fuel schedule
  double step_;
  double integrator_ = 0.0;
  double last_demand_ = 0.0;
  EcuLimit last_limit_ = EcuLimit::kNone;
};

struct FuelControlUnitConfig {
  double valve_time_constant = 0.005;  ///< τ_v, s, ≥ 0
  double flow_gain = 0.15;             ///< K_v, kg/s at full opening, > 0
};

class FuelControlUnit {
 public:
  /// @throws std::invalid_argument naming the parameter.
  FuelControlUnit(const FuelControlUnitConfig& config, double step, double initial_position);

  /// Holds the valve command u[k] (normalised, clamped to [0, 1]) over the step and returns the
  /// fuel flow at its end, w_f[k] = K_v·x_v[k+1] (kg/s). RT-safe.
  double step(double position_command) noexcept;

  /// The valve command that meters `fuel` kg/s in steady state (not clamped).
  [[nodiscard]] double command_for(double fuel) const noexcept { return fuel / config_.flow_gain; }

  void reset(double position) noexcept { position_ = position; }
  [[nodiscard]] double position() const noexcept { return position_; }
  [[nodiscard]] double flow() const noexcept { return config_.flow_gain * position_; }
  /// Whether the last command was outside [0, 1] (and clamped).
  [[nodiscard]] bool saturated() const noexcept { return saturated_; }
  [[nodiscard]] const FuelControlUnitConfig& config() const noexcept { return config_; }

 private:
  FuelControlUnitConfig config_;
  double decay_;  // a = exp(−Δt/τ_v)
  double position_;
  bool saturated_ = false;
};

}  // namespace hyloop::core
