#include "hyloop/hal/egm_pose.hpp"

namespace hyloop::hal::egm {

Eigen::Quaterniond orientation(const Pose& p) noexcept {
  const std::array<double, 4> o = p.has_orient ? p.orient : orient_from_euler(p.euler);
  return Eigen::Quaterniond(o[0], o[1], o[2], o[3]).normalized();
}

void set_orientation(Pose& p, const Eigen::Quaterniond& q) noexcept {
  p.euler = zyx_angles(q);
  const Eigen::Quaterniond u = q.normalized();
  p.orient = {u.w(), u.x(), u.y(), u.z()};
  p.has_orient = true;
}

LoopPose loop_pose(const Pose& wire, const Pose& start, double scale) noexcept {
  LoopPose out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = (wire.pos[i] - start.pos[i]) / scale;
  const std::array<double, 3> theta = loop_rotation(orientation(wire), orientation(start));
  for (std::size_t i = 0; i < 3; ++i) out[3 + i] = theta[i];
  return out;
}

Pose wire_pose(const LoopPose& loop, const Pose& start, double scale) noexcept {
  Pose out = start;
  for (std::size_t i = 0; i < 3; ++i) out.pos[i] = start.pos[i] + scale * loop[i];
  set_orientation(out, wire_rotation({loop[3], loop[4], loop[5]}, orientation(start)));
  return out;
}

}  // namespace hyloop::hal::egm
