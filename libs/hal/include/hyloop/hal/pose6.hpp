#pragma once
// A robot's whole TCP pose as six loop axes, shared by the wire protocols that carry it (EGM:
// egm_pose.hpp; RSI: rsi_codec.hpp): the position x, y, z (loop units) and the orientation as a
// rotation vector θ (rad, world frame, as core::relative_pose and the sits6 kind), relative to
// the pose where the robot's session started:
//   R_wire = R(θ)·R_start,   θ = log(R_wire·R_startᵀ)   (|θ| < π)
// The protocols write orientations as ZYX Euler angles in degrees: R = R_z(z)·R_y(y)·R_x(x)
// (EGM's euler x, y, z; KUKA's A = z, B = y, C = x).

#include <Eigen/Geometry>
#include <array>
#include <cstddef>

namespace hyloop::hal {

inline constexpr std::size_t kPoseAxes = 6;
/// x, y, z (loop units), rx, ry, rz (rad): a rotation vector.
using LoopPose = std::array<double, kPoseAxes>;
/// Three angles in degrees, about x, y and z.
using ZyxAngles = std::array<double, 3>;

/// R = R_z(z)·R_y(y)·R_x(x), angles in degrees. RT-safe.
[[nodiscard]] Eigen::Quaterniond zyx_rotation(const ZyxAngles& xyz_degrees) noexcept;
/// The angles (x, y, z; degrees) of R = R_z·R_y·R_x, the pitch y in [−90°, 90°]. RT-safe.
[[nodiscard]] ZyxAngles zyx_angles(const Eigen::Quaterniond& q) noexcept;
/// θ = log(R·R_startᵀ), rad. RT-safe.
[[nodiscard]] std::array<double, 3> loop_rotation(const Eigen::Quaterniond& r,
                                                  const Eigen::Quaterniond& start) noexcept;
/// R(θ)·R_start. RT-safe.
[[nodiscard]] Eigen::Quaterniond wire_rotation(const std::array<double, 3>& theta,
                                               const Eigen::Quaterniond& start) noexcept;

}  // namespace hyloop::hal
