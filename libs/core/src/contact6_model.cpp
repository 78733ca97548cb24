#include "hyloop/core/contact6_model.hpp"

#include <cmath>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {
namespace {

using Matrix3 = Eigen::Matrix<double, 3, 3>;

/// Each entry finite and > 0 (positive) or ≥ 0; the message names `field[i]`.
void require_axes(const Vector3& v, const char* field, bool positive, const char* allowed) {
  for (int i = 0; i < 3; ++i) {
    const bool ok = std::isfinite(v[i]) && (positive ? v[i] > 0.0 : v[i] >= 0.0);
    const std::string name = std::string(field) + "[" + std::to_string(i) + "]";
    detail::require(ok, name.c_str(), v[i], allowed);
  }
}

/// S = [r]×, S·x = r × x.
Matrix3 skew(const Vector3& r) {
  Matrix3 s;
  s << 0.0, -r.z(), r.y(), r.z(), 0.0, -r.x(), -r.y(), r.x(), 0.0;
  return s;
}

/// [[D, −D·S], [S·D, −S·D·S + E]] for diagonal D, E.
Matrix6 coupled(const Vector3& d, const Vector3& e, const Matrix3& s) {
  const Matrix3 dm = d.asDiagonal();
  Matrix6 m;
  m.topLeftCorner<3, 3>() = dm;
  m.topRightCorner<3, 3>() = -dm * s;
  m.bottomLeftCorner<3, 3>() = s * dm;
  m.bottomRightCorner<3, 3>() = -s * dm * s;
  m.bottomRightCorner<3, 3>().diagonal() += e;
  // −S·D·S is symmetric only up to rounding (products associate differently): make it exact.
  const Matrix6 symmetric = 0.5 * (m + m.transpose());
  return symmetric;
}

}  // namespace

Contact6Model::Contact6Model(const Contact6Config& config) : config_(config) {
  require_axes(config.translational_stiffness, "translational_stiffness", true,
               "must be finite and > 0 N/m");
  require_axes(config.rotational_stiffness, "rotational_stiffness", false,
               "must be finite and >= 0 N*m/rad");
  require_axes(config.translational_damping, "translational_damping", false,
               "must be finite and >= 0 N*s/m");
  require_axes(config.rotational_damping, "rotational_damping", false,
               "must be finite and >= 0 N*m*s/rad");
  for (int i = 0; i < 3; ++i) {
    const std::string name = "contact_offset[" + std::to_string(i) + "]";
    detail::require(std::isfinite(config.contact_offset[i]), name.c_str(), config.contact_offset[i],
                    "must be finite (m)");
  }
  has_offset_ = (config.contact_offset.array() != 0.0).any();
  const Matrix3 s = skew(config.contact_offset);
  stiffness_ = coupled(config.translational_stiffness, config.rotational_stiffness, s);
  damping_ = coupled(config.translational_damping, config.rotational_damping, s);
}

Vector3 Contact6Model::contact_point(const Vector3& p, const Vector3& theta) const noexcept {
  if (!has_offset_) {
    return p;  // exactly p: no +0 terms that could change a −0 or reorder anything
  }
  return p + theta.cross(config_.contact_offset);
}

Vector6 Contact6Model::wrench(const Vector6& pose, const Vector6& twist) const noexcept {
  const Vector3 d = contact_point(pose.head<3>(), pose.tail<3>());
  const Vector3 u = contact_point(twist.head<3>(), twist.tail<3>());
  const Vector3& kt = config_.translational_stiffness;
  const Vector3& bt = config_.translational_damping;
  const Vector3& kr = config_.rotational_stiffness;
  const Vector3& br = config_.rotational_damping;
  Vector3 f;
  for (int i = 0; i < 3; ++i) {
    f[i] = -kt[i] * d[i] - bt[i] * u[i];  // as ContactModel::force
  }
  const Vector3 rf = has_offset_ ? Vector3(config_.contact_offset.cross(f)) : Vector3::Zero();
  Vector6 w;
  w.head<3>() = f;
  for (int i = 0; i < 3; ++i) {
    w[3 + i] = rf[i] - kr[i] * pose[3 + i] - br[i] * twist[3 + i];
  }
  return w;
}

double Contact6Model::potential_energy(const Vector6& pose) const noexcept {
  const Vector3 d = contact_point(pose.head<3>(), pose.tail<3>());
  const Vector3& kt = config_.translational_stiffness;
  const Vector3& kr = config_.rotational_stiffness;
  double e = 0.5 * kt[0] * d[0] * d[0];  // as ContactModel::potential_energy
  for (int i = 1; i < 3; ++i) {
    e += 0.5 * kt[i] * d[i] * d[i];
  }
  for (int i = 0; i < 3; ++i) {
    e += 0.5 * kr[i] * pose[3 + i] * pose[3 + i];
  }
  return e;
}

Eigen::AngleAxisd rotation_of(const Vector3& theta) noexcept {
  const double angle = theta.norm();
  if (angle == 0.0) return Eigen::AngleAxisd(0.0, Vector3::UnitX());
  return Eigen::AngleAxisd(angle, theta / angle);
}

Vector3 rotation_vector(const Eigen::Matrix3d& r) noexcept {
  const Eigen::AngleAxisd phi(r);
  return phi.angle() * phi.axis();
}

Vector6 relative_pose(const Vector6& pose, const Vector6& rest) noexcept {
  Vector6 q;
  q.head<3>() = pose.head<3>() - rest.head<3>();
  q.tail<3>() = rotation_vector(rotation_of(pose.tail<3>()).toRotationMatrix() *
                                rotation_of(rest.tail<3>()).toRotationMatrix().transpose());
  return q;
}

}  // namespace hyloop::core
