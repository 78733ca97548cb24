// The sits6 kind's `hyloop analyze`: the 1-D SITS loop's two analyses on each axis taken alone,
// with the axis's own mass and contact:
//
//   x, y, z:     m_e = m,      K_tc = K_t,i (N/m),      B_tc = B_t,i (N·s/m),    K_h of compensator
//   rx, ry, rz:  m_e = I_ii,   K_tc = K_r,i (N·m/rad),  B_tc = B_r,i (N·m·s/rad), K_h of
//                rotational_compensator (at t = 0)
//
// the same G_R, hold, force delay and tracking differentiator on every axis: the Routh test of
// Eq. 34 (core::sits_characteristic_polynomial, core::routh) and the exact sampled loop
// (core::analyse_sampled_loop: Floquet multipliers over one control period). An axis is that loop
// exactly when nothing couples it to another: no offset of the contact frame from the CoM (r_c)
// and none of the spring's point, a diagonal inertia tensor, no initial attitude (the body's axes
// the contact frame's), and at most one axis turning (Euler's (I_j − I_k)·ω_j·ω_k and the
// rotation vector's composition are second order in the angles: Sits6Growth measures them). The
// report lists each coupling it finds, with the field; the per-axis figures are then those of
// the decoupled axes only. What replaces them is the coupled modes (core/coupled_modes.hpp): the
// eigenpairs of A·K6, A the contact frame's inverse inertia at the initial attitude, K6 the
// contact's stiffness matrix; undamped with the force delay alone (no hold, no robot, no
// compensation: "exact_for_the_run") each mode grows at its delay-equation root.
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/core/compensator.hpp"
#include "hyloop/core/contact6_model.hpp"
#include "hyloop/core/coupled_modes.hpp"
#include "hyloop/core/sampled_loop_stability.hpp"
#include "hyloop/core/stability.hpp"
#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits6/sits6_dynamics.hpp"
#include "hyloop/kinds/sits6/sits6_runner.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"

namespace hyloop::experiment {
namespace {

using json = nlohmann::json;

constexpr std::array<const char*, kSits6Axes> kAxisKey = {"x", "y", "z", "rx", "ry", "rz"};

std::string vector_text(const Sits6Vector& v) {
  return "[" + format_value(v[0]) + ", " + format_value(v[1]) + ", " + format_value(v[2]) + "]";
}

// What couples the axes, each naming its field and how.
std::vector<std::string> couplings(const Sits6Scenario& s) {
  std::vector<std::string> c;
  const auto& m = s.model;
  if (sits6_nonzero(m.contact_offset)) {
    c.push_back("model.contact_offset_m = " + vector_text(m.contact_offset) +
                ": the contact force's moment about the CoM (r_c x F) turns the body and the turn "
                "moves the contact frame (translation and rotation couple)");
  }
  if (sits6_nonzero(s.rig.contact.offset)) {
    c.push_back("rig.contact.offset_m = " + vector_text(s.rig.contact.offset) +
                ": the spring acts at a point off the frame, so its force has a moment");
  }
  if (m.ixy != 0.0 || m.ixz != 0.0 || m.iyz != 0.0) {
    c.push_back(
        "model.inertia has products of inertia: the principal axes are not the contact "
        "frame's, so the rotational axes couple through I");
  }
  if (sits6_nonzero(m.initial_attitude)) {
    c.push_back("model.initial_attitude_rad = " + vector_text(m.initial_attitude) +
                ": the body's axes are turned from the contact frame's");
  }
  int turning = 0;
  for (double w : m.initial_angular_velocity) turning += w != 0.0 ? 1 : 0;
  if (turning > 1) {
    c.push_back(
        "model.initial_angular_velocity_rad_s = " + vector_text(m.initial_angular_velocity) +
        ": several axes turning couple through Euler's (I_j - I_k) w_j w_k and the "
        "rotation vector's composition (second order in the angles)");
  }
  return c;
}

core::SitsLoopParameters axis_parameters(const Sits6Scenario& s, std::size_t a) {
  const bool rot = a >= 3;
  const std::size_t i = a % 3;
  const std::array<double, 3> inertia = {s.model.ixx, s.model.iyy, s.model.izz};
  core::SitsLoopParameters p;
  p.m_e = rot ? inertia[i] : s.model.mass;
  p.k_tc = rot ? s.rig.contact.rotational_stiffness[i] : s.rig.contact.stiffness[i];
  p.b_tc = rot ? s.rig.contact.rotational_damping[i] : s.rig.contact.damping[i];
  core::set_sits_delays(p, s.delays.force_measurement, s.rig.sensor_delay, s.delays.control_cycle,
                        s.timing.control_period, s.delays.robot_response);
  return p;
}

json axis_analysis(const Sits6Scenario& s, std::size_t a) {
  const core::SitsLoopParameters p = axis_parameters(s, a);
  const core::CompensatorConfig& c = a >= 3 ? s.rotational_compensator : s.compensator;
  const double k_h = core::Compensator(c, s.timing.step).gain(0.0);
  const core::ZeroPoleGain robot = s.delays.robot_response
                                       ? core::to_zero_pole_gain(s.robot_transfer_function())
                                       : core::ZeroPoleGain{{}, {}, 1.0};
  const core::Polynomial poly = core::sits_characteristic_polynomial(p, robot, k_h);
  const core::RouthResult routh = core::routh(poly);
  core::SampledSitsLoop loop;
  loop.step = s.timing.step;
  loop.hold_steps = static_cast<int>(s.hold_steps());
  loop.force_delay_steps = s.sensor_delay_steps();
  loop.m_e = p.m_e;
  loop.k_tc = p.k_tc;
  loop.b_tc = p.b_tc;
  if (s.delays.robot_response) loop.robot = s.robot_transfer_function();
  loop.td = s.tracking_differentiator;
  loop.k_h = k_h;
  const core::SampledLoopAnalysis sampled = core::analyse_sampled_loop(loop);
  const double f_hz = sampled.modes.empty() ? 0.0 : sampled.modes.front().frequency_hz;
  return {{"m_e", p.m_e},
          {"k_tc", p.k_tc},
          {"b_tc", p.b_tc},
          {"k_h", k_h},
          {"units", a >= 3 ? "kg*m^2, N*m/rad, N*m*s/rad, N*m*s/rad" : "kg, N/m, N*s/m, N*s/m"},
          {"routh", {{"stable", routh.stable()}, {"sign_changes", routh.sign_changes}}},
          {"sampled_loop",
           {{"stable", sampled.stable()},
            {"spectral_radius", sampled.spectral_radius},
            {"growth_rate_per_s", fields::json_number(sampled.growth_rate)},
            {"dominant_frequency_hz", f_hz}}}};
}

bool undamped_force_delay_alone(const Sits6Scenario& s) {
  const auto& c = s.rig.contact;
  return !sits6_nonzero(c.damping) && !sits6_nonzero(c.rotational_damping) &&
         s.delays.force_measurement && !s.delays.control_cycle && !s.delays.robot_response &&
         s.compensator.kind == core::CompensatorKind::kNone &&
         s.rotational_compensator.kind == core::CompensatorKind::kNone;
}

// The coupled modes, ω² ascending, with the growth rate of each under the force delay alone.
json modes_json(const Sits6Scenario& s) {
  const core::Matrix6d a =
      core::contact_inverse_inertia(sits6_body_config(s), sits6_attitude(s.model.initial_attitude));
  const core::Matrix6d k = core::Contact6Model(sits6_contact_config(s)).stiffness_matrix();
  const double tau = s.delays.force_measurement ? s.rig.sensor_delay : 0.0;
  json modes = json::array();
  for (const core::CoupledMode& m : core::coupled_modes(a, k)) {
    json shape;
    for (std::size_t i = 0; i < kSits6Axes; ++i) {
      shape[kAxisKey[i]] = m.shape(static_cast<Eigen::Index>(i));
    }
    const double w = std::sqrt(m.omega_n2);
    modes.push_back({{"omega_n2", m.omega_n2},
                     {"frequency_hz", w / (2.0 * std::numbers::pi)},
                     {"shape", shape},
                     {"delay_equation_growth_rate_per_s",
                      w * tau < 1.0 ? json(core::delay_equation_root(m.omega_n2, tau).real())
                                    : json(nullptr)}});
  }
  return {{"exact_for_the_run", undamped_force_delay_alone(s)},
          {"force_delay_s", tau},
          {"modes", modes},
          {"note",
           "eigenpairs of A*K6 (A: the contact frame's inverse inertia at the initial attitude, "
           "K6: the contact's stiffness matrix; shape in m and rad, largest entry 1); each mode's "
           "delay_equation_growth_rate_per_s is the root of s^2 + omega_n2*exp(-s*tau) = 0, the "
           "run's growth when exact_for_the_run (undamped, force delay alone, no hold, robot or "
           "compensation)"}};
}

class Sits6Analysis final : public Analysis {
 public:
  json analyze(const std::string& text, const std::string& origin,
               const std::vector<std::string>& overrides,
               const AnalyzeRequest& request) const override {
    if (request.k_h || request.k_x || request.simulate) {
      throw std::invalid_argument(
          "sits6: --k-h, --k-x and --simulate are not offered (each axis uses its compensator's "
          "K_h at t = 0: set compensator.* or rotational_compensator.*)");
    }
    const Sits6Scenario s = parse_sits6_scenario(text, origin, overrides);
    const std::vector<std::string> c = couplings(s);
    json j;
    j["decoupled"] = c.empty();
    j["couplings"] = c;
    for (std::size_t a = 0; a < kSits6Axes; ++a) j["axes"][kAxisKey[a]] = axis_analysis(s, a);
    j["coupled"] = modes_json(s);
    j["robot_source"] =
        s.delays.robot_response ? "configured (sits6 identifies no G_R)" : "bypassed";
    j["note"] =
        "each axis alone as the 1-D SITS loop (its mass or principal moment, its contact, its "
        "compensator's K_h at t = 0): \"routh\" is the Routh test of Eq. 34, \"sampled_loop\" the "
        "exact sampled loop; they describe the run only when \"decoupled\" is true";
    return j;
  }
};

}  // namespace

const Analysis& sits6_analysis() {
  static const Sits6Analysis analysis;
  return analysis;
}

}  // namespace hyloop::experiment
