#include "hyloop/hal/pose6.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "hyloop/core/contact6_model.hpp"

namespace hyloop::hal {
namespace {

constexpr double kDegree = std::numbers::pi / 180.0;

}  // namespace

Eigen::Quaterniond zyx_rotation(const ZyxAngles& a) noexcept {
  return Eigen::Quaterniond(Eigen::AngleAxisd(a[2] * kDegree, Eigen::Vector3d::UnitZ()) *
                            Eigen::AngleAxisd(a[1] * kDegree, Eigen::Vector3d::UnitY()) *
                            Eigen::AngleAxisd(a[0] * kDegree, Eigen::Vector3d::UnitX()));
}

ZyxAngles zyx_angles(const Eigen::Quaterniond& q) noexcept {
  const Eigen::Matrix3d r = q.normalized().toRotationMatrix();
  return {std::atan2(r(2, 1), r(2, 2)) / kDegree,
          std::asin(std::clamp(-r(2, 0), -1.0, 1.0)) / kDegree,
          std::atan2(r(1, 0), r(0, 0)) / kDegree};
}

std::array<double, 3> loop_rotation(const Eigen::Quaterniond& r,
                                    const Eigen::Quaterniond& start) noexcept {
  const core::Vector3 theta = core::rotation_vector(
      r.normalized().toRotationMatrix() * start.normalized().toRotationMatrix().transpose());
  return {theta[0], theta[1], theta[2]};
}

Eigen::Quaterniond wire_rotation(const std::array<double, 3>& theta,
                                 const Eigen::Quaterniond& start) noexcept {
  return Eigen::Quaterniond(core::rotation_of(core::Vector3(theta[0], theta[1], theta[2]))) *
         start.normalized();
}

}  // namespace hyloop::hal
