#include "hyloop/kinds/sits6/sits6_scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "hyloop/core/rigid_body.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/rig_driver_fields.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/stability_guard_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits6/sits6_dynamics.hpp"

namespace hyloop::experiment {
namespace {

namespace f = fields;
using S6 = Sits6Scenario;
using Fields6 = std::vector<BoundField<S6>>;

// A vector of three numbers [x, y, z], each within `range` (the table checks the items).
template <typename Get>
BoundField<S6> vec3(std::string name, std::string unit, FieldRange range, std::string help,
                    Get get) {
  return {f::spec(std::move(name), std::move(unit), FieldType::kNumberList, range,
                  std::move(help) + " ([x, y, z])"),
          [get](MapReader& r, const std::string& k, S6& s) {
            std::vector<double> v(get(s).begin(), get(s).end());
            r.numbers(k, v);
            if (v.size() != 3) {
              r.fail(r.field(k), std::to_string(v.size()) + " values: must hold 3 ([x, y, z])");
            }
            std::copy(v.begin(), v.end(), get(s).begin());
          },
          [get](YAML::Emitter& e, const std::string& k, const S6& s) {
            const std::vector<double> v(get(s).begin(), get(s).end());
            e << YAML::Key << k << YAML::Value << YAML::Flow << v;
          },
          [get](const S6& s) { return nlohmann::json(get(s)); }};
}

// PREFIX.type of a compensator block: an enum held as a C++ enum.
template <typename Get>
BoundField<S6> compensator_kind(const std::string& prefix, Get get) {
  BoundField<S6> b{
      f::spec(prefix + ".type", "", FieldType::kEnum, {}, "the schedule of K_h on these axes"),
      [get](MapReader& r, const std::string& k, S6& s) {
        std::string type(core::to_string(get(s).kind));
        r.string(k, type);
        try {
          get(s).kind = core::parse_compensator_kind(type);
        } catch (const std::invalid_argument& e) {
          r.fail(r.field(k), excerpt(e.what()));
        }
      },
      [get](YAML::Emitter& e, const std::string& k, const S6& s) {
        e << YAML::Key << k << YAML::Value << std::string(core::to_string(get(s).kind));
      },
      [get](const S6& s) { return nlohmann::json(std::string(core::to_string(get(s).kind))); }};
  b.spec.values = {"none", "fgc", "lgc", "scvg", "tdpa"};
  return b;
}

// energy_observer: axis | body, held as a bool (body_energy_observer).
BoundField<S6> energy_observer_field() {
  const auto text = [](const S6& s) {
    return std::string(s.body_energy_observer ? "body" : "axis");
  };
  BoundField<S6> b{
      f::spec("energy_observer", "", FieldType::kEnum, {},
              "SCVG's energy observer: axis (each axis's K_h follows its own sum of |eps_h|*T) or "
              "body (every axis's K_h follows the sum over the six axes, the whole body's "
              "wrench-pose energy)"),
      [text](MapReader& r, const std::string& k, S6& s) {
        std::string v = text(s);
        r.string(k, v);
        s.body_energy_observer = v == "body";
      },
      [text](YAML::Emitter& e, const std::string& k, const S6& s) {
        e << YAML::Key << k << YAML::Value << text(s);
      },
      [text](const S6& s) { return nlohmann::json(text(s)); }};
  b.spec.values = {"axis", "body"};
  return b;
}

// The fields of one compensator block; `gain` is its unit of K_h (N*s/m or N*m*s/rad), `unit`
// the same as a key suffix (ns_per_m, as the 1-D kind's max_damping_ns_per_m, or nms_per_rad).
template <typename Get>
void add_compensator_fields(Fields6& b, const std::string& prefix, const std::string& gain,
                            const std::string& unit, Get get) {
  b.push_back(compensator_kind(prefix, get));
  b.push_back(f::used_when(f::number<S6>(
                               prefix + ".k_eps0", gain, {},
                               "K_eps0", [get](auto& s) -> auto& { return get(s).k_eps0; }),
                           "type", {"fgc", "lgc", "scvg"}));
  b.push_back(f::used_when(f::number<S6>(
                               prefix + ".k_eps1", gain + " per s", {},
                               "K_eps1", [get](auto& s) -> auto& { return get(s).k_eps1; }),
                           "type", {"lgc", "scvg"}));
  b.push_back(f::used_when(f::number<S6>(
                               prefix + ".k_eps2", gain + " per J*s", {},
                               "K_eps2", [get](auto& s) -> auto& { return get(s).k_eps2; }),
                           "type", {"scvg"}));
  b.push_back(
      f::used_when(f::number<S6>(
                       prefix + ".switch_time_s", "s", at_least(0),
                       "t_eps of SCVG", [get](auto& s) -> auto& { return get(s).switch_time; }),
                   "type", {"scvg"}));
  b.push_back(f::used_when(f::boolean<S6>(
                               prefix + ".bumpless", "SCVG continues from K_eps0 + K_eps1*t_eps",
                               [get](auto& s) -> auto& { return get(s).bumpless; }),
                           "type", {"scvg"}));
  b.push_back(f::emitted_if(
      f::used_when(f::number<S6>(
                       prefix + ".max_damping_" + unit, gain, above(0),
                       "TDPA: the passivity controller's largest damping alpha",
                       [get](auto& s) -> auto& { return get(s).max_damping; }),
                   "type", {"tdpa"}),
      [get](const S6& s) { return get(s).kind == core::CompensatorKind::kPassivity; }));
}

void add_sits6_model_fields(Fields6& b) {
  b.push_back(f::integer<S6>(
      "schema_version", "", closed(1, 1), "the scenario format; this hyloop reads 1",
      [](auto& s) -> auto& { return s.schema_version; }));
  b.push_back(f::text<S6>(
      "name", FieldType::kString, {}, "names the run (non-empty)",
      [](auto& s) -> auto& { return s.name; }));
  b.push_back(f::text<S6>(
      "description", FieldType::kString, {}, "one line for the report",
      [](auto& s) -> auto& { return s.description; }));
  b.push_back(f::kind<S6>("sits6", true));
  b.push_back(f::number<S6>(
      "model.mass_kg", "kg", closed(1e-3, 1e7), "m of the rigid body",
      [](auto& s) -> auto& { return s.model.mass; }));
  const std::string moment = "principal-moment part of I about the CoM (body frame)";
  b.push_back(f::number<S6>(
      "model.inertia.ixx_kg_m2", "kg*m^2", left_open(0, 1e9), moment,
      [](auto& s) -> auto& { return s.model.ixx; }));
  b.push_back(f::number<S6>(
      "model.inertia.iyy_kg_m2", "kg*m^2", left_open(0, 1e9), moment,
      [](auto& s) -> auto& { return s.model.iyy; }));
  b.push_back(f::number<S6>(
      "model.inertia.izz_kg_m2", "kg*m^2", left_open(0, 1e9), moment,
      [](auto& s) -> auto& { return s.model.izz; }));
  const std::string product =
      "product of inertia (I must be positive definite, its principal "
      "moments satisfying the triangle inequality)";
  b.push_back(f::number<S6>(
      "model.inertia.ixy_kg_m2", "kg*m^2", {}, product,
      [](auto& s) -> auto& { return s.model.ixy; }));
  b.push_back(f::number<S6>(
      "model.inertia.ixz_kg_m2", "kg*m^2", {}, product,
      [](auto& s) -> auto& { return s.model.ixz; }));
  b.push_back(f::number<S6>(
      "model.inertia.iyz_kg_m2", "kg*m^2", {}, product,
      [](auto& s) -> auto& { return s.model.iyz; }));
  b.push_back(vec3(
      "model.contact_offset_m", "m", closed(-100, 100),
      "r_c, the contact frame's origin from the CoM, body frame",
      [](auto& s) -> auto& { return s.model.contact_offset; }));
  b.push_back(vec3(
      "model.initial_position_m", "m", {},
      "the contact frame's origin at t = 0, world; within rig.limits",
      [](auto& s) -> auto& { return s.model.initial_position; }));
  b.push_back(vec3(
      "model.initial_velocity_mps", "m/s", {},
      "the contact frame's velocity at t = 0, world (V0 on x)",
      [](auto& s) -> auto& { return s.model.initial_velocity; }));
  b.push_back(vec3(
      "model.initial_attitude_rad", "rad", closed(-10, 10),
      "the body's attitude q0 at t = 0 as a rotation vector (world); the rotational "
      "pose is measured from it",
      [](auto& s) -> auto& { return s.model.initial_attitude; }));
  b.push_back(vec3(
      "model.initial_angular_velocity_rad_s", "rad/s", closed(-100, 100), "omega at t = 0, world",
      [](auto& s) -> auto& { return s.model.initial_angular_velocity; }));
}

void add_sits6_contact_fields(Fields6& b) {
  b.push_back(vec3(
      "rig.contact.stiffness_n_per_m", "N/m", left_open(0, 1e10),
      "K_t, the translational contact stiffness",
      [](auto& s) -> auto& { return s.rig.contact.stiffness; }));
  b.push_back(vec3(
      "rig.contact.damping_ns_per_m", "N*s/m", closed(0, 1e10),
      "B_t, the translational contact damping",
      [](auto& s) -> auto& { return s.rig.contact.damping; }));
  b.push_back(vec3(
      "rig.contact.rotational_stiffness_nm_per_rad", "N*m/rad", closed(0, 1e10),
      "K_r, the rotational contact stiffness",
      [](auto& s) -> auto& { return s.rig.contact.rotational_stiffness; }));
  b.push_back(vec3(
      "rig.contact.rotational_damping_nms_per_rad", "N*m*s/rad", closed(0, 1e10),
      "B_r, the rotational contact damping",
      [](auto& s) -> auto& { return s.rig.contact.rotational_damping; }));
  b.push_back(vec3(
      "rig.contact.offset_m", "m", closed(-100, 100),
      "r, the spring's point of action from the contact frame (couples force and "
      "torque)",
      [](auto& s) -> auto& { return s.rig.contact.offset; }));
  b.push_back(f::number<S6>(
      "rig.contact.engage_at_s", "s", at_least(0),
      "the capture: the contact acts from this time on, its spring at rest at the pose of that "
      "instant (before it the target floats free); 0: in contact from the start, at rest at 0",
      [](auto& s) -> auto& { return s.rig.contact.engage_at; }));
  b.push_back(f::text<S6>(
      "rig.robot.preset", FieldType::kEnum, {"default", "paper", "second_order"},
      "G_R(s) of every axis: default (omega_n = 2*pi*40, zeta = 0.6, "
      "omega_z = 300), paper (2*pi*30, 0.35, 299.76), second_order (the "
      "given omega_n, zeta, omega_z)",
      [](auto& s) -> auto& { return s.rig.robot.preset; }));
  const auto second_order = [](const S6& s) { return s.rig.robot.preset == "second_order"; };
  b.push_back(
      f::emitted_if(f::used_when(f::number<S6>(
                                     "rig.robot.omega_n_rad_s", "rad/s", above(0), "omega_n",
                                     [](auto& s) -> auto& { return s.rig.robot.omega_n; }),
                                 "preset", {"second_order"}),
                    second_order));
  b.push_back(f::emitted_if(f::used_when(f::number<S6>(
                                             "rig.robot.zeta", "", above(0), "zeta",
                                             [](auto& s) -> auto& { return s.rig.robot.zeta; }),
                                         "preset", {"second_order"}),
                            second_order));
  b.push_back(
      f::emitted_if(f::used_when(f::number<S6>(
                                     "rig.robot.omega_z_rad_s", "rad/s", above(0), "omega_z",
                                     [](auto& s) -> auto& { return s.rig.robot.omega_z; }),
                                 "preset", {"second_order"}),
                    second_order));
}

void add_sits6_sensor_fields(Fields6& b) {
  b.push_back(f::number<S6>(
      "rig.sensor.delay_s", "s", at_least(0), "tau_s of the wrench measurement, at most 1e6 steps",
      [](auto& s) -> auto& { return s.rig.sensor_delay; }));
  b.push_back(vec3(
      "rig.sensor.force_noise_std_n", "N", closed(0, 1e6), "white noise on the measured force",
      [](auto& s) -> auto& { return s.rig.force_noise_std; }));
  b.push_back(vec3(
      "rig.sensor.torque_noise_std_nm", "N*m", closed(0, 1e6), "white noise on the measured moment",
      [](auto& s) -> auto& { return s.rig.torque_noise_std; }));
  b.push_back(vec3(
      "rig.sensor.force_bias_n", "N", closed(-1e6, 1e6), "constant offset of the measured force",
      [](auto& s) -> auto& { return s.rig.force_bias; }));
  b.push_back(vec3(
      "rig.sensor.torque_bias_nm", "N*m", closed(-1e6, 1e6),
      "constant offset of the measured moment",
      [](auto& s) -> auto& { return s.rig.torque_bias; }));
  b.push_back(vec3(
      "rig.sensor.position_noise_std_m", "m", closed(0, 1), "white noise on the measured position",
      [](auto& s) -> auto& { return s.rig.position_noise_std; }));
  b.push_back(vec3(
      "rig.sensor.angle_noise_std_rad", "rad", closed(0, 1),
      "white noise on the measured rotation vector",
      [](auto& s) -> auto& { return s.rig.angle_noise_std; }));
  b.push_back(f::seed<S6>(
      "rig.sensor.seed", "seed of the x axis's noise (axis i: + i*stride)",
      [](auto& s) -> auto& { return s.rig.seed; }));
}

void add_sits6_limit_fields(Fields6& b) {
  b.push_back(vec3(
      "rig.limits.position_min_m", "m", {},
      "lower end of each stroke, < position_max_m; leaving it stops the run",
      [](auto& s) -> auto& { return s.rig.limits.position_min; }));
  b.push_back(vec3(
      "rig.limits.position_max_m", "m", {}, "upper end of each stroke",
      [](auto& s) -> auto& { return s.rig.limits.position_max; }));
  b.push_back(vec3(
      "rig.limits.velocity_max_mps", "m/s", above(0),
      "|v| bound per axis; faster commands are rejected",
      [](auto& s) -> auto& { return s.rig.limits.velocity_max; }));
  b.push_back(vec3(
      "rig.limits.angle_min_rad", "rad", closed(-3.15, 0),
      "lower end of each rotational window (<= 0: the run starts at 0)",
      [](auto& s) -> auto& { return s.rig.limits.angle_min; }));
  b.push_back(vec3(
      "rig.limits.angle_max_rad", "rad", closed(0, 3.15),
      "upper end of each rotational window (>= 0), > angle_min_rad",
      [](auto& s) -> auto& { return s.rig.limits.angle_max; }));
  b.push_back(vec3(
      "rig.limits.angular_velocity_max_rad_s", "rad/s", above(0),
      "|omega| bound per axis; faster commands are rejected",
      [](auto& s) -> auto& { return s.rig.limits.angular_velocity_max; }));
  b.push_back(f::limit<S6>(
      "rig.limits.acceleration_max_mps2", "m/s^2", above(0),
      "the safety window's bound on a translational command's implied "
      "acceleration (.inf: no limit)",
      [](auto& s) -> auto& { return s.safety.acceleration_max; }));
  b.push_back(f::limit<S6>(
      "rig.limits.angular_acceleration_max_rad_s2", "rad/s^2", above(0),
      "the same for a rotational command (.inf: no limit)",
      [](auto& s) -> auto& { return s.safety.angular_acceleration_max; }));
}

void add_sits6_loop_fields(Fields6& b) {
  b.push_back(f::limit<S6>(
      "safety.rate_limit_mps", "m/s", above(0), "the actuator's bound on |dx|/T (.inf: no limit)",
      [](auto& s) -> auto& { return s.safety.rate_limit; }));
  b.push_back(f::limit<S6>(
      "safety.angular_rate_limit_rad_s", "rad/s", above(0),
      "the actuator's bound on |dtheta|/T (.inf: no limit)",
      [](auto& s) -> auto& { return s.safety.angular_rate_limit; }));
  b.push_back(f::integer<S6>(
      "safety.watchdog_cycles", "", closed(1, 100000),
      "cycles without a valid command before the watchdog trips",
      [](auto& s) -> auto& { return s.safety.watchdog_cycles; }));
  b.push_back(f::number<S6>(
      "safety.stop_deceleration_mps2", "m/s^2", above(0),
      "the translational ramp to rest; it must reach rest within 1 s",
      [](auto& s) -> auto& { return s.safety.stop_deceleration; }));
  b.push_back(f::number<S6>(
      "safety.angular_stop_deceleration_rad_s2", "rad/s^2", above(0),
      "the rotational ramp to rest; it must reach rest within 1 s",
      [](auto& s) -> auto& { return s.safety.angular_stop_deceleration; }));
  b.push_back(f::boolean<S6>(
      "delays.force_measurement", "the sensor delay is on (off: d = 0)",
      [](auto& s) -> auto& { return s.delays.force_measurement; }));
  b.push_back(f::boolean<S6>(
      "delays.control_cycle", "the command is held for control_period_s (off: h = 1)",
      [](auto& s) -> auto& { return s.delays.control_cycle; }));
  b.push_back(f::boolean<S6>(
      "delays.robot_response", "G_R is on (off: the robot is bypassed)",
      [](auto& s) -> auto& { return s.delays.robot_response; }));
  b.push_back(f::number<S6>(
      "timing.step_s", "s", closed(1e-6, 1), "T, the step",
      [](auto& s) -> auto& { return s.timing.step; }));
  b.push_back(f::number<S6>(
      "timing.control_period_s", "s", closed(1e-6, 10), "Tc, a whole multiple (>= 1) of step_s",
      [](auto& s) -> auto& { return s.timing.control_period; }));
  b.push_back(f::number<S6>(
      "timing.duration_s", "s", closed(1e-6, 1e6), "the run, >= step_s and at most 5e7 steps",
      [](auto& s) -> auto& { return s.timing.duration; }));
}

void add_sits6_output_fields(Fields6& b) {
  b.push_back(f::number<S6>(
      "compensator.tracking_differentiator.r", "", above(0),
      "velocity factor r of every axis's tracking differentiator",
      [](auto& s) -> auto& { return s.tracking_differentiator.r; }));
  b.push_back(f::number<S6>(
      "compensator.tracking_differentiator.h_s", "s", above(0),
      "filtering factor h, >= timing.step_s",
      [](auto& s) -> auto& { return s.tracking_differentiator.h; }));
  for (auto& x : f::energy_guard<S6>(
           [](auto& s) -> auto& { return s.guard; }, "energy")) {
    b.push_back(std::move(x));
  }
  b.push_back(f::boolean<S6>(
      "outputs.samples", "keep samples.csv", [](auto& s) -> auto& { return s.outputs.samples; }));
  b.push_back(f::integer<S6>(
      "outputs.decimation", "", at_least(1), "record every n-th step",
      [](auto& s) -> auto& { return s.outputs.decimation; }));
  b.push_back(f::text<S6>(
      "outputs.progress", FieldType::kEnum, {"auto", "on", "off"},
      "progress line on stderr (auto: when a terminal)",
      [](auto& s) -> auto& { return s.outputs.progress; }));
  b.push_back(f::text<S6>(
      "outputs.format", FieldType::kEnum, {"csv", "hdf5"},
      "csv (samples.csv) or hdf5 (also run.h5)",
      [](auto& s) -> auto& { return s.outputs.format; }));
  b.push_back(f::with_default(
      BoundField<S6>{f::spec("metrics.window_s", "s", FieldType::kNumber, above(0),
                             "final window of the summary metrics, in (0, timing.duration_s]"),
                     [](MapReader& r, const std::string& k, S6& s) {
                       s.metrics.window = std::numeric_limits<double>::quiet_NaN();  // left out
                       r.number(k, s.metrics.window);
                     },
                     [](YAML::Emitter& e, const std::string& k, const S6& s) {
                       e << YAML::Key << k << YAML::Value << s.metrics.window;
                     },
                     {}},
      kSits6DefaultMetricsWindow, "5, or the whole run when shorter"));
  b.push_back(f::number<S6>(
      "metrics.diverged_energy_ratio", "", above(1),
      "diverged when an axis's energy_ratio exceeds it",
      [](auto& s) -> auto& { return s.metrics.diverged_energy_ratio; }));
}

const BoundTable<S6>& sits6_table() {
  static const BoundTable<S6> table = [] {
    Fields6 b;
    add_sits6_model_fields(b);
    add_sits6_contact_fields(b);
    add_sits6_sensor_fields(b);
    add_sits6_limit_fields(b);
    // The rig driver's block for a robot's whole pose (egm, rsi): no udp or openfresco part.
    for (auto& x : f::rig_driver<S6>([](auto& s) -> auto& { return s.rig.driver; })) {
      const std::string& n = x.spec.name;
      if (n.starts_with("rig.driver.udp.") || n.starts_with("rig.driver.openfresco.")) {
        continue;
      }
      b.push_back(std::move(x));
    }
    add_sits6_loop_fields(b);
    add_compensator_fields(
        b, "compensator", "N*s/m", "ns_per_m", [](auto& s) -> auto& { return s.compensator; });
    add_compensator_fields(
        b, "rotational_compensator", "N*m*s/rad", "nms_per_rad",
        [](auto& s) -> auto& { return s.rotational_compensator; });
    b.push_back(energy_observer_field());
    add_sits6_output_fields(b);
    return BoundTable<S6>("sits6",
                          "The six-axis space target: a free-floating rigid body in contact with "
                          "a rig through a robot and a six-axis force/torque sensor",
                          std::move(b));
  }();
  return table;
}

const char* const kSits6Axis[3] = {"[0]", "[1]", "[2]"};

// The body's inertia as RigidBody checks it (symmetric, positive definite, triangle inequality).
void validate_sits6_body(const Sits6Scenario& s) {
  core::RigidBodyConfig c;
  c.mass = s.model.mass;
  c.inertia = sits6_inertia(s);
  c.step = s.timing.step;
  try {
    core::validate(c);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError("model.inertia (ixx_kg_m2 = " + format_value(s.model.ixx) +
                        ", iyy_kg_m2 = " + format_value(s.model.iyy) + ", izz_kg_m2 = " +
                        format_value(s.model.izz) + ", ixy_kg_m2 = " + format_value(s.model.ixy) +
                        ", ixz_kg_m2 = " + format_value(s.model.ixz) +
                        ", iyz_kg_m2 = " + format_value(s.model.iyz) + "): " + e.what());
  }
}

void validate_sits6_limits(const Sits6Scenario& s) {
  const auto& l = s.rig.limits;
  for (int i = 0; i < 3; ++i) {
    const std::string at = kSits6Axis[i];
    require(l.position_min[i] < l.position_max[i], "rig.limits.position_min_m" + at,
            l.position_min[i], "must be < position_max_m" + at);
    require(l.angle_min[i] < l.angle_max[i], "rig.limits.angle_min_rad" + at, l.angle_min[i],
            "must be < angle_max_rad" + at);
    const double p = s.model.initial_position[i];
    require(p >= l.position_min[i] && p <= l.position_max[i], "model.initial_position_m" + at, p,
            "must lie within rig.limits [" + format_value(l.position_min[i]) + ", " +
                format_value(l.position_max[i]) + "] m");
  }
  const std::array<hal::SafetyConfig, 6> safety = sits6_safety_configs(s);
  const std::string speed = "min(rig.limits velocity bound, safety rate limit)";
  require_stop_deceleration(safety[0], "safety.stop_deceleration_mps2", s.safety.stop_deceleration,
                            "m/s^2", speed, "the stroke");
  require_stop_deceleration(safety[0], "rig.limits.acceleration_max_mps2",
                            s.safety.acceleration_max, "m/s^2", speed, "the stroke");
  for (int i = 1; i < 3; ++i) {
    require_stop_deceleration(safety[i], "safety.stop_deceleration_mps2",
                              s.safety.stop_deceleration, "m/s^2", speed, "the stroke");
  }
  for (int i = 3; i < 6; ++i) {
    require_stop_deceleration(safety[i], "safety.angular_stop_deceleration_rad_s2",
                              s.safety.angular_stop_deceleration, "rad/s^2", speed, "the window");
    require_stop_deceleration(safety[i], "rig.limits.angular_acceleration_max_rad_s2",
                              s.safety.angular_acceleration_max, "rad/s^2", speed, "the window");
  }
}

void validate_sits6_timing(const Sits6Scenario& s) {
  require(s.timing.duration >= s.timing.step, "timing.duration_s", s.timing.duration,
          "must be >= timing.step_s = " + format_value(s.timing.step));
  require(s.timing.duration / s.timing.step <= 5e7, "timing.duration_s", s.timing.duration,
          "duration/step must be <= 5e7 steps");
  double ratio = 0.0;
  require(s.timing.control_period >= s.timing.step &&
              is_integer_ratio(s.timing.control_period, s.timing.step, ratio),
          "timing.control_period_s", s.timing.control_period,
          "must be a whole multiple (>= 1) of timing.step_s = " + format_value(s.timing.step));
  require(s.rig.sensor_delay / s.timing.step <= 1e6, "rig.sensor.delay_s", s.rig.sensor_delay,
          "must be at most 1e6 steps");
  require(s.rig.contact.engage_at == 0.0 ||
              (s.rig.contact.engage_at < s.timing.duration &&
               is_integer_ratio(s.rig.contact.engage_at, s.timing.step, ratio)),
          "rig.contact.engage_at_s", s.rig.contact.engage_at,
          "must be 0 or a whole multiple of timing.step_s = " + format_value(s.timing.step) +
              " below timing.duration_s = " + format_value(s.timing.duration));
  require(s.tracking_differentiator.h >= s.timing.step, "compensator.tracking_differentiator.h_s",
          s.tracking_differentiator.h, "must be >= timing.step_s = " + format_value(s.timing.step));
  if (s.metrics.window > s.timing.duration) {
    invalid("metrics.window_s", s.metrics.window,
            "longer than the run (timing.duration_s = " + format_value(s.timing.duration) +
                "): give at most that, or leave metrics.window_s out");
  }
}

}  // namespace

std::int64_t Sits6Scenario::steps() const {
  return static_cast<std::int64_t>(std::llround(timing.duration / timing.step));
}

std::int64_t Sits6Scenario::hold_steps() const {
  return delays.control_cycle
             ? static_cast<std::int64_t>(std::llround(timing.control_period / timing.step))
             : 1;
}

double Sits6Scenario::sensor_delay_steps() const {
  return delays.force_measurement ? rig.sensor_delay / timing.step : 0.0;
}

core::TransferFunction Sits6Scenario::robot_transfer_function() const {
  double wn = 2.0 * std::numbers::pi * 40.0, z = 0.6, wz = 300.0;
  if (rig.robot.preset == "paper") {
    wn = 2.0 * std::numbers::pi * 30.0;
    z = 0.35;
    wz = 299.76;
  } else if (rig.robot.preset == "second_order") {
    wn = rig.robot.omega_n;
    z = rig.robot.zeta;
    wz = rig.robot.omega_z;
  }
  const double wn2 = wn * wn;
  return {{wn2 / wz, wn2}, {1.0, 2.0 * z * wn, wn2}};
}

void validate(const Sits6Scenario& s) {
  require(s.schema_version == kSchemaVersion, "schema_version", s.schema_version,
          "this hyloop reads schema_version " + std::to_string(kSchemaVersion));
  if (s.name.empty()) throw ScenarioError("name: must not be empty");
  validate_sits6_timing(s);
  validate_sits6_body(s);
  validate_sits6_limits(s);
  validate_rig_driver(s.rig.driver, s.timing.step, kSits6Axes);
  if (s.rig.driver.type == "egm" || s.rig.driver.type == "rsi") {
    for (std::size_t i = 0; i < 3; ++i) {
      require(s.model.initial_position[i] == 0.0,
              "model.initial_position_m" + std::string(kSits6Axis[i]), s.model.initial_position[i],
              "must be 0 over a robot (its pose is relative to the session's start)");
    }
  }
  require(s.outputs.decimation >= 1, "outputs.decimation", s.outputs.decimation, "must be >= 1");
  require_progress_mode("outputs.progress", s.outputs.progress);
  require_output_format("outputs.format", s.outputs.format);
  validate_energy_guard(s.guard.config);
}

Sits6Scenario parse_sits6_scenario(const std::string& yaml_text, const std::string& origin,
                                   const std::vector<std::string>& overrides) {
  return parse_sits6_scenario(load_yaml(yaml_text, origin, overrides), origin);
}

Sits6Scenario parse_sits6_scenario(const YAML::Node& root, const std::string& origin) {
  Sits6Scenario s;
  sits6_table().parse(root, origin, s);
  s.tracking_differentiator.step = s.timing.step;
  if (std::isnan(s.metrics.window)) {
    s.metrics.window = std::min(kSits6DefaultMetricsWindow, s.timing.duration);
    if (s.metrics.window < kSits6DefaultMetricsWindow) {
      s.notices.push_back(
          "metrics.window_s: the run (timing.duration_s = " + format_value(s.timing.duration) +
          ") is shorter than the default " + format_value(kSits6DefaultMetricsWindow) +
          " s: the summary metrics use the whole run");
    }
  }
  validate_with_origin(origin, [&] { validate(s); });
  return s;
}

std::string to_yaml(const Sits6Scenario& s) { return sits6_table().emit(s); }

const FieldTable& sits6_field_table() { return sits6_table().table(); }

}  // namespace hyloop::experiment
