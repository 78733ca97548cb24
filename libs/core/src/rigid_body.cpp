#include "hyloop/core/rigid_body.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {

using detail::require;
using detail::str;

namespace {

struct RigidBodyPrincipalFrame {
  Eigen::Matrix3d axes;     // columns: principal axes in the body frame
  Eigen::Vector3d moments;  // principal moments, kg·m²
};

std::string principal_moment_name(int k) { return "I" + std::to_string(k + 1); }

// Checks that I is finite and symmetric; returns its principal frame (identity when diagonal).
RigidBodyPrincipalFrame principal_frame_of(const Eigen::Matrix3d& inertia) {
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (!std::isfinite(inertia(r, c))) {
        throw std::invalid_argument("inertia: element (" + std::to_string(r) + ", " +
                                    std::to_string(c) + ") = " + str(inertia(r, c)) +
                                    ": must be finite");
      }
    }
  }
  const double scale = inertia.cwiseAbs().maxCoeff();
  const double asymmetry = (inertia - inertia.transpose()).cwiseAbs().maxCoeff();
  if (!(asymmetry <= RigidBody::kSymmetryTolerance * scale)) {
    throw std::invalid_argument("inertia: max |I - I^T| = " + str(asymmetry) +
                                " with max |I| = " + str(scale) + ": must be symmetric (within " +
                                str(RigidBody::kSymmetryTolerance) + " relative)");
  }
  const bool diagonal = inertia(0, 1) == 0.0 && inertia(0, 2) == 0.0 && inertia(1, 0) == 0.0 &&
                        inertia(1, 2) == 0.0 && inertia(2, 0) == 0.0 && inertia(2, 1) == 0.0;
  if (diagonal) return {Eigen::Matrix3d::Identity(), inertia.diagonal()};
  const Eigen::Matrix3d symmetric = 0.5 * (inertia + inertia.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(symmetric);
  RigidBodyPrincipalFrame p{solver.eigenvectors(), solver.eigenvalues()};
  if (p.axes.determinant() < 0.0) p.axes.col(2) = -p.axes.col(2);  // right-handed
  return p;
}

// Positive definite and the triangle inequality I_a + I_b ≥ I_c (within rounding).
void check_principal_moments(const Eigen::Vector3d& moments) {
  for (int k = 0; k < 3; ++k) {
    if (!(moments[k] > 0.0)) {
      throw std::invalid_argument("inertia: principal moment " + principal_moment_name(k) + " = " +
                                  str(moments[k]) + ": must be > 0 kg*m^2 (positive definite)");
    }
  }
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    const double sum = moments[lo] + moments[hi];
    if (!(sum >= moments[k] * (1.0 - RigidBody::kTriangleTolerance))) {
      throw std::invalid_argument("inertia: " + principal_moment_name(lo) + " + " +
                                  principal_moment_name(hi) + " = " + str(sum) + " < " +
                                  principal_moment_name(k) + " = " + str(moments[k]) +
                                  ": the principal moments must satisfy the triangle inequality");
    }
  }
}

template <typename Vector>
void require_finite_components(const Vector& v, const char* field) {
  for (int k = 0; k < v.size(); ++k) {
    require(std::isfinite(v[k]), field, v[k], "each component must be finite");
  }
}

void check_rigid_body_scalars(const RigidBodyConfig& c) {
  require(std::isfinite(c.mass) && c.mass > 0.0, "mass", c.mass, "must be finite and > 0 kg");
  require(std::isfinite(c.step) && c.step > 0.0, "step", c.step, "must be finite and > 0 s");
  require_finite_components(c.contact_offset, "contact_offset");
}

RigidBodyPrincipalFrame checked_rigid_body_frame(const RigidBodyConfig& config) {
  check_rigid_body_scalars(config);
  RigidBodyPrincipalFrame p = principal_frame_of(config.inertia);
  check_principal_moments(p.moments);
  return p;
}

// q ← q·(1/|q|): the identity stays exact. Multiplying by the reciprocal, unlike Eigen's
// normalize() (a division), leaves a quaternion already unit to rounding alone: dividing drifted
// the direction of L_w by 6e-13 over 300 000 steps, this by 1e-13.
void renormalise_attitude(Eigen::Quaterniond& q) noexcept {
  q.coeffs() *= 1.0 / std::sqrt(q.squaredNorm());
}

}  // namespace

void validate(const RigidBodyConfig& config) { (void)checked_rigid_body_frame(config); }

RigidBody::RigidBody(const RigidBodyConfig& config, const RigidBodyState& initial)
    : config_(config) {
  const RigidBodyPrincipalFrame p = checked_rigid_body_frame(config);
  axes_ = p.axes;
  moments_ = p.moments;
  require_finite_components(initial.position, "initial.position");
  require_finite_components(initial.velocity, "initial.velocity");
  require_finite_components(initial.attitude.coeffs(), "initial.attitude");
  require_finite_components(initial.angular_velocity, "initial.angular_velocity");
  const double norm = initial.attitude.norm();
  require(norm > 0.0, "initial.attitude |q|", norm, "must be > 0 (it is normalised)");
  reset(initial);
}

void RigidBody::reset(const RigidBodyState& state) noexcept {
  state_ = state;
  renormalise_attitude(state_.attitude);
  momentum_ = moments_.cwiseProduct(axes_.transpose() * state.angular_velocity);
}

// Φ_axis(h): the exact flow of L_axis²/(2·I_axis): L rotates by −θ, the body by +θ about the axis.
void RigidBody::rotate_about(int axis, double duration) noexcept {
  const double angle = momentum_[axis] / moments_[axis] * duration;  // θ; 0 gives cos 1, sin 0
  // cos θ and sin θ themselves: cos² − sin² of θ/2 would shrink |L| by ~2e-17 per step
  const double c = std::cos(angle);
  const double s = std::sin(angle);
  const int j = (axis + 1) % 3;
  const int k = (axis + 2) % 3;
  const double lj = momentum_[j];
  const double lk = momentum_[k];
  momentum_[j] = c * lj + s * lk;
  momentum_[k] = c * lk - s * lj;
  const Eigen::Vector3d v = std::sin(0.5 * angle) * axes_.col(axis);
  state_.attitude =
      state_.attitude * Eigen::Quaterniond(std::cos(0.5 * angle), v.x(), v.y(), v.z());
}

void RigidBody::step(const Eigen::Vector3d& force, const Eigen::Vector3d& moment) noexcept {
  const double t = config_.step;
  // kick with the torque about the CoM, R at the start of the step
  const Eigen::Vector3d arm = state_.attitude * config_.contact_offset;
  const Eigen::Vector3d torque = moment + arm.cross(force);
  momentum_ += t * (axes_.transpose() * (state_.attitude.conjugate() * torque));
  // translation: PointMass per component, the same operations in the same order
  for (int i = 0; i < 3; ++i) {
    state_.velocity[i] += t * force[i] / config_.mass;
    state_.position[i] += t * state_.velocity[i];
  }
  // torque-free drift: Φ₁(T/2) Φ₂(T/2) Φ₃(T) Φ₂(T/2) Φ₁(T/2)
  rotate_about(0, 0.5 * t);
  rotate_about(1, 0.5 * t);
  rotate_about(2, t);
  rotate_about(1, 0.5 * t);
  rotate_about(0, 0.5 * t);
  renormalise_attitude(state_.attitude);
  state_.angular_velocity = axes_ * momentum_.cwiseQuotient(moments_);
}

Eigen::Vector3d RigidBody::body_angular_momentum() const noexcept { return axes_ * momentum_; }

Eigen::Vector3d RigidBody::world_angular_momentum() const noexcept {
  return state_.attitude * (axes_ * momentum_);
}

double RigidBody::kinetic_energy() const noexcept {
  const double rotation = 0.5 * momentum_.cwiseProduct(momentum_).cwiseQuotient(moments_).sum();
  return 0.5 * config_.mass * state_.velocity.squaredNorm() + rotation;
}

FramePose RigidBody::contact_pose() const noexcept {
  return {state_.position + state_.attitude * config_.contact_offset, state_.attitude};
}

FrameTwist RigidBody::contact_twist() const noexcept {
  const Eigen::Vector3d spin = state_.attitude * state_.angular_velocity;
  const Eigen::Vector3d arm = state_.attitude * config_.contact_offset;
  return {state_.velocity + spin.cross(arm), spin};
}

}  // namespace hyloop::core
