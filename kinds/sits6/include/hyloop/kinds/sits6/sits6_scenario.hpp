#pragma once
// The SITS6 scenario (issue 28): the six-axis space target. A free-floating rigid body (the
// numerical substructure: mass, full inertia tensor about the CoM, the contact frame's offset from
// the CoM, initial pose and twist) whose contact frame a robot tracks per axis through G_R while
// a six-axis force/torque sensor measures the wrench of a six-axis contact (Contact6Model).
//
// Axes i = 0..5: x, y, z (m, m/s, N) and rx, ry, rz (rad, rad/s, N*m) of the contact frame, in
// the world frame. The rotational pose is the rotation vector θ = angle·axis of the contact
// frame's attitude relative to the scenario's initial attitude (world frame: q·q0⁻¹), θ ∈ [0, π]
// in magnitude: the small/moderate-angle representation the rig tracks per axis (its rate
// command is the world angular velocity, dθ/dt ≈ ω for small θ).
//
// Every field has a default (SITS paper Table 1 on the translational axes, the scene at rest on
// the others); every field read is validated naming the field, the value and the range; an
// unknown field is an error. The fields are declared once, in the field table of
// sits6_scenario.cpp (sits6_field_table()), which parse_sits6_scenario and to_yaml walk.
//
// rig.driver: the emulator, or a robot's whole pose over EGM (type egm, egm.axis pose,
// egm.force wrench) or RSI (type rsi, rsi.axis pose, rsi.force_tag; rig_driver_fields.hpp). Left
// out against the 1-D SITS kind: the phase correction, the identification sweep, a udp target
// (one axis per packet map), the
// sensor's tare and filter (acquisition.*), rig fault injection, and a custom G_R (num/den). One
// G_R for every axis; one tracking differentiator configuration for every axis.

#include <array>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "hyloop/core/compensator.hpp"
#include "hyloop/core/energy_guard.hpp"
#include "hyloop/core/lti.hpp"
#include "hyloop/core/tracking_differentiator.hpp"
#include "hyloop/experiment/rig_driver_fields.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/hal/actuator_limits.hpp"

namespace YAML {
class Node;
}  // namespace YAML

namespace hyloop::experiment {

struct FieldTable;

/// Three components (x, y, z) of a vector field.
using Sits6Vector = std::array<double, 3>;

/// metrics.window_s when the scenario leaves it out: the final 5 s.
inline constexpr double kSits6DefaultMetricsWindow = 5.0;

struct Sits6Scenario {
  int schema_version = kSchemaVersion;
  std::string name = "sits6";
  std::string description;

  struct Model {
    double mass = 500.0;  ///< m, kg
    /// I about the CoM, body frame, kg*m^2 (symmetric: the three products of inertia).
    double ixx = 50.0, iyy = 60.0, izz = 70.0;
    double ixy = 0.0, ixz = 0.0, iyz = 0.0;
    Sits6Vector contact_offset{0.0, 0.0, 0.0};            ///< r_c, CoM → contact frame, body, m
    Sits6Vector initial_position{0.0, 0.0, 0.0};          ///< contact frame origin, world, m
    Sits6Vector initial_velocity{0.05, 0.0, 0.0};         ///< its velocity, world, m/s
    Sits6Vector initial_attitude{0.0, 0.0, 0.0};          ///< q0 as a rotation vector, rad
    Sits6Vector initial_angular_velocity{0.0, 0.0, 0.0};  ///< ω(0), world, rad/s
  } model;

  struct Rig {
    struct Contact {
      Sits6Vector stiffness{20000.0, 20000.0, 20000.0};       ///< K_t, N/m
      Sits6Vector damping{50.0, 50.0, 50.0};                  ///< B_t, N*s/m
      Sits6Vector rotational_stiffness{200.0, 200.0, 200.0};  ///< K_r, N*m/rad
      Sits6Vector rotational_damping{0.5, 0.5, 0.5};          ///< B_r, N*m*s/rad
      Sits6Vector offset{0.0, 0.0, 0.0};  ///< r, the spring's point from the frame, m
      /// The capture: the contact acts from this time on, at rest at the pose of that instant
      /// (before it the target floats free); 0: in contact from the start, at rest at 0. s
      double engage_at = 0.0;
    } contact;
    struct Robot {
      std::string preset = "default";                  ///< default | paper | second_order
      double omega_n = 2.0 * std::numbers::pi * 40.0;  ///< rad/s (second_order)
      double zeta = 0.6;                               ///< (second_order)
      double omega_z = 300.0;                          ///< rad/s (second_order)
    } robot;
    double sensor_delay = 0.002;                    ///< τs, s
    Sits6Vector force_noise_std{0.0, 0.0, 0.0};     ///< N
    Sits6Vector torque_noise_std{0.0, 0.0, 0.0};    ///< N*m
    Sits6Vector force_bias{0.0, 0.0, 0.0};          ///< N
    Sits6Vector torque_bias{0.0, 0.0, 0.0};         ///< N*m
    Sits6Vector position_noise_std{0.0, 0.0, 0.0};  ///< m
    Sits6Vector angle_noise_std{0.0, 0.0, 0.0};     ///< rad
    std::uint64_t seed = 1;
    /// rig.driver: the device standing for the robot and its F/T sensor (emulator: Sits6Rig).
    RigDriverSettings driver;
    struct Limits {
      Sits6Vector position_min{-0.5, -0.5, -0.5};       ///< m
      Sits6Vector position_max{0.5, 0.5, 0.5};          ///< m
      Sits6Vector velocity_max{2.0, 2.0, 2.0};          ///< m/s
      Sits6Vector angle_min{-1.0, -1.0, -1.0};          ///< rad
      Sits6Vector angle_max{1.0, 1.0, 1.0};             ///< rad
      Sits6Vector angular_velocity_max{2.0, 2.0, 2.0};  ///< rad/s
    } limits;
  } rig;

  /// The actuator service's safety layer, per group of axes (translational: m; rotational: rad).
  struct Safety {
    double acceleration_max = hal::kIndustrialRobotAccelerationMax;       ///< m/s^2
    double angular_acceleration_max = 50.0;                               ///< rad/s^2
    double rate_limit = std::numeric_limits<double>::infinity();          ///< m/s
    double angular_rate_limit = std::numeric_limits<double>::infinity();  ///< rad/s
    int watchdog_cycles = 10;
    double stop_deceleration = 2.0;          ///< m/s^2
    double angular_stop_deceleration = 4.0;  ///< rad/s^2
  } safety;

  struct Delays {
    bool force_measurement = true;
    bool control_cycle = true;
    bool robot_response = true;
  } delays;

  struct Timing {
    double step = 0.002;            ///< T, s
    double control_period = 0.004;  ///< Tc, s
    double duration = 60.0;         ///< s
  } timing;

  /// The translational axes' compensator (gains in N*s/m) and the rotational axes' (N*m*s/rad).
  core::CompensatorConfig compensator;
  core::CompensatorConfig rotational_compensator;
  /// energy_observer: axis (false: each axis's K_h follows its own Σ|ε_h|·T) or body (true:
  /// every axis's K_h follows the sum over the six axes, ε_h = E·x_i − F′·X_R of the body, J).
  bool body_energy_observer = false;
  core::TrackingDifferentiatorConfig tracking_differentiator;

  /// guard.*: the energy guard on the body's mechanical energy (the `energy` column).
  struct Guard {
    bool enabled = true;
    core::EnergyGuardConfig config{.max_energy_ratio = 1.2, .energy_floor = 1e-3, .hold = 1};
  } guard;

  struct Outputs {
    bool samples = true;
    int decimation = 1;
    std::string progress = "auto";
    std::string format = "csv";
  } outputs;

  struct Metrics {
    double window = kSits6DefaultMetricsWindow;  ///< s
    double diverged_energy_ratio = 1.01;
  } metrics;

  /// Set by the parse, not part of the scenario.
  std::vector<std::string> notices;

  [[nodiscard]] std::int64_t steps() const;         ///< duration / step
  [[nodiscard]] std::int64_t hold_steps() const;    ///< h = Tc/T, 1 if the hold is off
  [[nodiscard]] double sensor_delay_steps() const;  ///< d = τs/T, 0 if off
  /// G_R(s) = (ω_n²/ω_z)(s + ω_z)/(s² + 2ζω_n s + ω_n²) of the preset.
  [[nodiscard]] core::TransferFunction robot_transfer_function() const;
};

/// Parses and validates (overrides applied to the YAML first). @throws ScenarioError.
Sits6Scenario parse_sits6_scenario(const std::string& yaml_text, const std::string& origin,
                                   const std::vector<std::string>& overrides = {});
/// The same from the parsed YAML: Kind::load's one parse.
Sits6Scenario parse_sits6_scenario(const YAML::Node& root, const std::string& origin);
/// The fully resolved scenario as YAML; parse_sits6_scenario() reads it back.
std::string to_yaml(const Sits6Scenario& scenario);
const FieldTable& sits6_field_table();
/// The rules between fields. @throws ScenarioError naming the field.
void validate(const Sits6Scenario& scenario);

}  // namespace hyloop::experiment
