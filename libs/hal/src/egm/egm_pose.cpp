#include "hyloop/hal/egm_pose.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "hyloop/core/contact6_model.hpp"

namespace hyloop::hal::egm {
namespace {

constexpr double kDegree = std::numbers::pi / 180.0;

}  // namespace

Eigen::Quaterniond orientation(const Pose& p) noexcept {
  const std::array<double, 4> o = p.has_orient ? p.orient : orient_from_euler(p.euler);
  return Eigen::Quaterniond(o[0], o[1], o[2], o[3]).normalized();
}

std::array<double, 3> euler_from_orient(const Eigen::Quaterniond& q) noexcept {
  const Eigen::Matrix3d r = q.normalized().toRotationMatrix();
  return {std::atan2(r(2, 1), r(2, 2)) / kDegree,
          std::asin(std::clamp(-r(2, 0), -1.0, 1.0)) / kDegree,
          std::atan2(r(1, 0), r(0, 0)) / kDegree};
}

void set_orientation(Pose& p, const Eigen::Quaterniond& q) noexcept {
  p.euler = euler_from_orient(q);
  const Eigen::Quaterniond u = q.normalized();
  p.orient = {u.w(), u.x(), u.y(), u.z()};
  p.has_orient = true;
}

LoopPose loop_pose(const Pose& wire, const Pose& start, double scale) noexcept {
  LoopPose out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = (wire.pos[i] - start.pos[i]) / scale;
  const Eigen::Matrix3d relative =
      orientation(wire).toRotationMatrix() * orientation(start).toRotationMatrix().transpose();
  const core::Vector3 theta = core::rotation_vector(relative);
  for (std::size_t i = 0; i < 3; ++i) out[3 + i] = theta[static_cast<Eigen::Index>(i)];
  return out;
}

Pose wire_pose(const LoopPose& loop, const Pose& start, double scale) noexcept {
  Pose out = start;
  for (std::size_t i = 0; i < 3; ++i) out.pos[i] = start.pos[i] + scale * loop[i];
  const core::Vector3 theta(loop[3], loop[4], loop[5]);
  set_orientation(out, Eigen::Quaterniond(core::rotation_of(theta)) * orientation(start));
  return out;
}

}  // namespace hyloop::hal::egm
