#pragma once
// The robot's whole TCP pose as six loop axes (EgmMode::kPose, pose6.hpp): the position x, y, z
// (loop units, `scale` wire mm per unit) and the orientation as a rotation vector θ (rad, world
// frame, as core::relative_pose), both relative to the pose where the session started:
//   p_wire = p_start + scale·p,      R_wire = R(θ)·R_start
//   p = (p_wire − p_start) / scale,  θ = log(R_wire·R_startᵀ)        (|θ| < π)
// A pose read takes R from the quaternion when the message carries one, else from the ZYX Euler
// angles (degrees; R = R_z·R_y·R_x, orient_from_euler's convention); a pose written carries both.

#include <Eigen/Geometry>
#include <array>
#include <cstddef>

#include "hyloop/hal/egm_codec.hpp"
#include "hyloop/hal/pose6.hpp"

namespace hyloop::hal::egm {

using hal::kPoseAxes;
using hal::LoopPose;

/// The pose's orientation (the quaternion if present, else the Euler angles).
[[nodiscard]] Eigen::Quaterniond orientation(const Pose& p) noexcept;
/// Sets both the Euler angles (ZYX, degrees) and the quaternion of `p` to `q`.
void set_orientation(Pose& p, const Eigen::Quaterniond& q) noexcept;

/// The loop's six axes of `wire`, relative to `start`. RT-safe.
[[nodiscard]] LoopPose loop_pose(const Pose& wire, const Pose& start, double scale) noexcept;
/// The wire pose of the loop's six axes `loop`, relative to `start`. RT-safe.
[[nodiscard]] Pose wire_pose(const LoopPose& loop, const Pose& start, double scale) noexcept;

}  // namespace hyloop::hal::egm
