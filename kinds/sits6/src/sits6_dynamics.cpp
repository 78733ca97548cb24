#include "hyloop/kinds/sits6/sits6_dynamics.hpp"

#include <cmath>

namespace hyloop::experiment {
namespace {

constexpr std::array<const char*, kSits6Axes> kSits6PoseName = {"x", "y", "z", "rx", "ry", "rz"};
constexpr std::array<const char*, kSits6Axes> kSits6RateName = {"v_x", "v_y", "v_z",
                                                                "w_x", "w_y", "w_z"};
constexpr std::array<const char*, kSits6Axes> kSits6WrenchName = {"f_x", "f_y", "f_z",
                                                                  "m_x", "m_y", "m_z"};

Eigen::Vector3d sits6_vector(const Sits6Vector& v) { return {v[0], v[1], v[2]}; }

}  // namespace

bool sits6_nonzero(const Sits6Vector& v) { return v[0] != 0.0 || v[1] != 0.0 || v[2] != 0.0; }

/// q0 of a rotation vector; exactly the identity for 0.
Eigen::Quaterniond sits6_attitude(const Sits6Vector& rotation) {
  const Eigen::Vector3d a = sits6_vector(rotation);
  const double angle = a.norm();
  if (angle == 0.0) return Eigen::Quaterniond::Identity();
  return Eigen::Quaterniond(Eigen::AngleAxisd(angle, a / angle));
}

core::Contact6Config sits6_contact_config(const Sits6Scenario& s) {
  const auto& c = s.rig.contact;
  core::Contact6Config k;
  k.translational_stiffness = sits6_vector(c.stiffness);
  k.translational_damping = sits6_vector(c.damping);
  k.rotational_stiffness = sits6_vector(c.rotational_stiffness);
  k.rotational_damping = sits6_vector(c.rotational_damping);
  k.contact_offset = sits6_vector(c.offset);
  return k;
}

core::RigidBodyConfig sits6_body_config(const Sits6Scenario& s) {
  core::RigidBodyConfig c;
  c.mass = s.model.mass;
  c.inertia = sits6_inertia(s);
  c.contact_offset = sits6_vector(s.model.contact_offset);
  c.step = s.timing.step;
  return c;
}

namespace {

core::Vector6 sits6_join(const Sits6Vector& a, const Sits6Vector& b) {
  core::Vector6 v;
  v << a[0], a[1], a[2], b[0], b[1], b[2];
  return v;
}

/// The CoM state whose contact frame starts at the scenario's pose and twist (exactly the
/// contact frame's position and velocity when r_c = 0).
core::RigidBodyState sits6_initial_state(const Sits6Scenario& s) {
  const Eigen::Quaterniond q0 = sits6_attitude(s.model.initial_attitude);
  const Eigen::Vector3d w0 = sits6_vector(s.model.initial_angular_velocity);
  core::RigidBodyState st;
  st.attitude = q0;
  st.angular_velocity = q0.conjugate() * w0;
  st.position = sits6_vector(s.model.initial_position);
  st.velocity = sits6_vector(s.model.initial_velocity);
  if (sits6_nonzero(s.model.contact_offset)) {
    const Eigen::Vector3d arm = q0 * sits6_vector(s.model.contact_offset);
    st.position -= arm;
    st.velocity -= w0.cross(arm);
  }
  return st;
}

std::array<core::TrackingDifferentiator, kSits6Axes> sits6_tds(const Sits6Scenario& s) {
  const core::TrackingDifferentiatorConfig& c = s.tracking_differentiator;
  std::array<core::TrackingDifferentiator, kSits6Axes> td = {
      core::TrackingDifferentiator(c), core::TrackingDifferentiator(c),
      core::TrackingDifferentiator(c), core::TrackingDifferentiator(c),
      core::TrackingDifferentiator(c), core::TrackingDifferentiator(c)};
  const core::Vector6 pose = sits6_initial_pose(s);
  const std::array<hal::ActuatorCommand, kSits6Axes> initial = sits6_initial_commands(s);
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    td[i].reset(pose[static_cast<Eigen::Index>(i)],
                s.delays.robot_response ? 0.0 : initial[i].velocity);
  }
  return td;
}

std::array<core::Compensator, kSits6Axes> sits6_compensators(const Sits6Scenario& s) {
  const double t = s.timing.step;
  const core::CompensatorConfig& c = s.compensator;
  const core::CompensatorConfig& r = s.rotational_compensator;
  return {core::Compensator(c, t), core::Compensator(c, t), core::Compensator(c, t),
          core::Compensator(r, t), core::Compensator(r, t), core::Compensator(r, t)};
}

std::string sits6_label(const std::string& name, bool rotational, const char* unit_t,
                        const char* unit_r) {
  return name + "[" + (rotational ? unit_r : unit_t) + "]";
}

}  // namespace

std::vector<std::string> sits6_dynamics_names() {
  std::vector<std::string> n = {"time[s]"};
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    const bool r = a >= 3;
    const std::string pose = kSits6PoseName[a], rate = kSits6RateName[a];
    const std::string wrench = kSits6WrenchName[a];
    n.push_back(sits6_label(pose, r, "m", "rad"));
    n.push_back(sits6_label(rate, r, "m/s", "rad/s"));
    n.push_back(sits6_label(pose + "_ideal", r, "m", "rad"));
    n.push_back(sits6_label(rate + "_ideal", r, "m/s", "rad/s"));
    n.push_back(sits6_label(pose + "_robot", r, "m", "rad"));
    n.push_back(sits6_label(wrench + "_meas", r, "N", "N*m"));
    n.push_back(sits6_label(wrench + "_ideal", r, "N", "N*m"));
    n.push_back(sits6_label(wrench + "_input", r, "N", "N*m"));
    n.push_back(sits6_label("k_h_" + pose, r, "N*s/m", "N*m*s/rad"));
    n.push_back("eps_h_" + pose + "[J]");
  }
  for (const char* e : {"energy[J]", "energy_ideal[J]", "power[W]", "power_ideal[W]"}) {
    n.emplace_back(e);
  }
  return n;
}

std::vector<std::string> sits6_truth_names() {
  std::vector<std::string> n;
  for (std::size_t a = 0; a < kSits6Axes; ++a) {
    n.push_back(sits6_label(std::string(kSits6WrenchName[a]) + "_contact", a >= 3, "N", "N*m"));
  }
  n.emplace_back("x_cmd[m]");
  return n;
}

Eigen::Matrix3d sits6_inertia(const Sits6Scenario& s) {
  const auto& m = s.model;
  Eigen::Matrix3d i;
  i << m.ixx, m.ixy, m.ixz, m.ixy, m.iyy, m.iyz, m.ixz, m.iyz, m.izz;
  return i;
}

std::int64_t sits6_engage_step(const Sits6Scenario& s) {
  return std::llround(s.rig.contact.engage_at / s.timing.step);
}

hal::Sits6RigConfig sits6_rig_config(const Sits6Scenario& s) {
  hal::Sits6RigConfig c;
  c.step = s.timing.step;
  c.engage_cycle = sits6_engage_step(s);
  if (s.delays.robot_response) {
    for (auto& g : c.robot) g = s.robot_transfer_function();
  }
  c.contact = sits6_contact_config(s);
  c.sensor_delay_steps = s.sensor_delay_steps();
  c.wrench_noise_std = sits6_join(s.rig.force_noise_std, s.rig.torque_noise_std);
  c.wrench_bias = sits6_join(s.rig.force_bias, s.rig.torque_bias);
  c.pose_noise_std = sits6_join(s.rig.position_noise_std, s.rig.angle_noise_std);
  c.seed = s.rig.seed;
  const auto& l = s.rig.limits;
  for (std::size_t i = 0; i < 3; ++i) {
    c.limits[i] = {l.position_min[i], l.position_max[i], l.velocity_max[i]};
    c.limits[3 + i] = {l.angle_min[i], l.angle_max[i], l.angular_velocity_max[i]};
  }
  return c;
}

std::array<hal::SafetyConfig, kSits6Axes> sits6_safety_configs(const Sits6Scenario& s) {
  const hal::Sits6RigConfig rig = sits6_rig_config(s);
  std::array<hal::SafetyConfig, kSits6Axes> out;
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    const bool r = i >= 3;
    hal::SafetyConfig& c = out[i];
    c.limits = rig.limits[i];
    c.limits.acceleration_max = r ? s.safety.angular_acceleration_max : s.safety.acceleration_max;
    c.step = s.timing.step * static_cast<double>(s.hold_steps());  // the control period
    c.rate_limit = r ? s.safety.angular_rate_limit : s.safety.rate_limit;
    c.watchdog_cycles = s.safety.watchdog_cycles;
    c.stop_deceleration = r ? s.safety.angular_stop_deceleration : s.safety.stop_deceleration;
  }
  return out;
}

core::Vector6 sits6_initial_pose(const Sits6Scenario& s) {
  return sits6_join(s.model.initial_position, {0.0, 0.0, 0.0});
}

std::array<hal::ActuatorCommand, kSits6Axes> sits6_initial_commands(const Sits6Scenario& s) {
  std::array<hal::ActuatorCommand, kSits6Axes> c;
  for (std::size_t i = 0; i < 3; ++i) {
    c[i] = {s.model.initial_position[i], s.model.initial_velocity[i]};
    c[3 + i] = {0.0, s.model.initial_angular_velocity[i]};
  }
  return c;
}

Sits6Dynamics::Sits6Dynamics(const Sits6Scenario& s)
    : step_(s.timing.step),
      mass_(s.model.mass),
      initial_inverse_(sits6_attitude(s.model.initial_attitude).conjugate()),
      body_offset_(sits6_nonzero(s.model.contact_offset)),
      contact_offset_(sits6_nonzero(s.rig.contact.offset)),
      contact_config_(sits6_contact_config(s)),
      limits_(sits6_rig_config(s).limits),
      target_(sits6_body_config(s), sits6_initial_state(s)),
      twin_(sits6_body_config(s), sits6_initial_state(s)),
      contact_(contact_config_),
      td_(sits6_tds(s)),
      compensator_(sits6_compensators(s)),
      body_observer_(s.body_energy_observer),
      engage_step_(sits6_engage_step(s)),
      engaged_(engage_step_ == 0),
      guard_(s.guard.config),
      guarded_(s.guard.enabled) {}

Sits6Dynamics::Frame Sits6Dynamics::frame(const core::RigidBody& body) const noexcept {
  Frame f;
  const core::RigidBodyState& st = body.state();
  if (body_offset_) {
    const core::FramePose p = body.contact_pose();
    const core::FrameTwist v = body.contact_twist();
    f.pose.head<3>() = p.position;
    f.twist.head<3>() = v.linear;
    f.twist.tail<3>() = v.angular;
  } else {  // the CoM's own values: no +0 terms (the x-reduction is bit for bit)
    f.pose.head<3>() = st.position;
    f.twist.head<3>() = st.velocity;
    f.twist.tail<3>() = st.attitude * st.angular_velocity;
  }
  const Eigen::AngleAxisd relative(st.attitude * initial_inverse_);
  f.pose.tail<3>() = relative.angle() * relative.axis();
  return f;
}

core::Vector6 Sits6Dynamics::spring_pose(const Frame& f, const core::Vector6& rest) const noexcept {
  return engage_step_ == 0 ? f.pose : core::relative_pose(f.pose, rest);
}

double Sits6Dynamics::energy(const core::RigidBody& body,
                             const core::Vector6* spring) const noexcept {
  const Eigen::Vector3d& v = body.state().velocity;
  const core::Vector3 kt = spring ? contact_config_.translational_stiffness : core::Vector3::Zero();
  const core::Vector3 kr = spring ? contact_config_.rotational_stiffness : core::Vector3::Zero();
  const core::Vector6 q = spring ? *spring : core::Vector6::Zero();
  core::Vector3 d = q.head<3>();
  if (contact_offset_) d += q.tail<3>().cross(contact_config_.contact_offset);
  // axis 0 first, as SitsDynamics: ½·m·v·v + ½·K·x·x
  double e = 0.5 * mass_ * v[0] * v[0] + 0.5 * kt[0] * d[0] * d[0];
  for (int i = 1; i < 3; ++i) e += 0.5 * mass_ * v[i] * v[i] + 0.5 * kt[i] * d[i] * d[i];
  e += 0.5 * body.state().angular_velocity.dot(body.body_angular_momentum());
  for (int i = 0; i < 3; ++i) e += 0.5 * kr[i] * q[3 + i] * q[3 + i];
  return e;
}

void Sits6Dynamics::step_axis(std::size_t i, double t, double robot, double wrench, const Frame& x,
                              const Frame& xi, double ideal, std::span<double> values) noexcept {
  const auto a = static_cast<Eigen::Index>(i);
  const double v_est = td_[i].update(robot);
  core::Compensator& c = compensator_[i];
  const double f_h = c.force(t, v_est, wrench, x.twist[a]);
  const double f_input = wrench + f_h;
  input_[a] = f_input;
  const double eps_h = body_observer_
                           ? core::EnergyObserver::epsilon(ideal, xi.pose[a], f_input, robot)
                           : c.observe(t, ideal, xi.pose[a], f_input, robot);
  eps_h_[a] = eps_h;
  values[sits6_column(i, Sits6AxisColumn::kPose)] = x.pose[a];
  values[sits6_column(i, Sits6AxisColumn::kRate)] = x.twist[a];
  values[sits6_column(i, Sits6AxisColumn::kPoseIdeal)] = xi.pose[a];
  values[sits6_column(i, Sits6AxisColumn::kRateIdeal)] = xi.twist[a];
  values[sits6_column(i, Sits6AxisColumn::kRobot)] = robot;
  values[sits6_column(i, Sits6AxisColumn::kWrenchMeas)] = wrench;
  values[sits6_column(i, Sits6AxisColumn::kWrenchIdeal)] = ideal;
  values[sits6_column(i, Sits6AxisColumn::kWrenchInput)] = f_input;
  values[sits6_column(i, Sits6AxisColumn::kGain)] = c.last_gain();
  values[sits6_column(i, Sits6AxisColumn::kEpsH)] = eps_h;
}

StopReason Sits6Dynamics::step(std::int64_t k, std::span<const double> measurement,
                               std::span<double> values,
                               std::span<hal::ActuatorCommand> next) noexcept {
  const double t = static_cast<double>(k) * step_;
  const Frame x = frame(target_);
  const Frame xi = frame(twin_);
  if (!engaged_ && k >= engage_step_) {  // the capture: each spring at rest at its body's pose
    engaged_ = true;
    target_rest_ = x.pose;
    twin_rest_ = xi.pose;
  }
  const core::Vector6 q = spring_pose(x, target_rest_);
  const core::Vector6 qi = spring_pose(xi, twin_rest_);
  const core::Vector6 ideal =
      engaged_ ? core::Vector6(contact_.wrench(qi, xi.twist)) : core::Vector6::Zero();
  const double e = energy(target_, engaged_ ? &q : nullptr);
  values[0] = t;
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    step_axis(i, t, measurement[i], measurement[kSits6Axes + i], x, xi,
              ideal[static_cast<Eigen::Index>(i)], values);
  }
  if (body_observer_) {  // every axis's observer takes the body's ε_h, once F′ of all is known
    double body = eps_h_[0];
    for (int i = 1; i < 6; ++i) body += eps_h_[i];
    for (core::Compensator& c : compensator_) c.observe_energy(t, body);
  }
  double power = input_[0] * x.twist[0];
  double power_ideal = ideal[0] * xi.twist[0];
  for (int i = 1; i < 6; ++i) {
    power += input_[i] * x.twist[i];
    power_ideal += ideal[i] * xi.twist[i];
  }
  values[kSits6Energy] = e;
  values[kSits6EnergyIdeal] = energy(twin_, engaged_ ? &qi : nullptr);
  values[kSits6Power] = power;
  values[kSits6PowerIdeal] = power_ideal;

  target_.step(input_.head<3>(), input_.tail<3>());
  twin_.step(ideal.head<3>(), ideal.tail<3>());
  const Frame after = frame(target_);
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    const auto a = static_cast<Eigen::Index>(i);
    next[i] = {after.pose[a], after.twist[a]};
  }
  return check(after, e, t);
}

StopReason Sits6Dynamics::check(const Frame& after, double e, double t) noexcept {
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(after.pose[i]) || !std::isfinite(after.twist[i]) ||
        !std::isfinite(input_[i])) {
      return StopReason::kNotFinite;
    }
  }
  for (std::size_t i = 0; i < kSits6Axes; ++i) {
    const double p = after.pose[static_cast<Eigen::Index>(i)];
    if (p < limits_[i].position_min || p > limits_[i].position_max) {
      return StopReason::kDisplacementLimit;
    }
  }
  if (guarded_ && guard_.update(t, e)) return StopReason::kStabilityGuard;
  return StopReason::kNone;
}

}  // namespace hyloop::experiment
