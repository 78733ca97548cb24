#include "hyloop/hal/egm_codec.hpp"

#include <hyloop/egm/egm.pb.h>

#include <cmath>

namespace hyloop::hal::egm {

namespace pb = hyloop::egm;

struct EgmCodec::Messages {
  pb::EgmRobot robot;
  pb::EgmSensor sensor;
};

namespace {

bool all_finite(std::span<const double> v) noexcept {
  for (double x : v) {
    if (!std::isfinite(x)) {
      return false;
    }
  }
  return true;
}

void put_pose(const Pose& p, pb::EgmPose& out) {
  pb::EgmCartesian& pos = *out.mutable_pos();
  pos.set_x(p.pos[0]);
  pos.set_y(p.pos[1]);
  pos.set_z(p.pos[2]);
  if (p.has_orient) {
    pb::EgmQuaternion& q = *out.mutable_orient();
    q.set_u0(p.orient[0]);
    q.set_u1(p.orient[1]);
    q.set_u2(p.orient[2]);
    q.set_u3(p.orient[3]);
  }
  pb::EgmEuler& e = *out.mutable_euler();
  e.set_x(p.euler[0]);
  e.set_y(p.euler[1]);
  e.set_z(p.euler[2]);
}

bool get_pose(const pb::EgmPose& in, Pose& p) {
  if (!in.has_pos()) {
    return false;
  }
  p.pos = {in.pos().x(), in.pos().y(), in.pos().z()};
  if (in.has_euler()) {
    p.euler = {in.euler().x(), in.euler().y(), in.euler().z()};
  }
  if (in.has_orient()) {
    p.has_orient = true;
    p.orient = {in.orient().u0(), in.orient().u1(), in.orient().u2(), in.orient().u3()};
  }
  return all_finite(p.pos) && all_finite(p.euler) && all_finite(p.orient);
}

void put_joints(std::span<const double> joints, pb::EgmJoints& out) {
  out.clear_joints();
  for (double j : joints) {
    out.add_joints(j);
  }
}

bool get_joints(const pb::EgmJoints& in, std::array<double, kJoints>& out) {
  if (in.joints_size() != static_cast<int>(kJoints)) {
    return false;
  }
  for (std::size_t i = 0; i < kJoints; ++i) {
    out[i] = in.joints(static_cast<int>(i));
  }
  return all_finite(out);
}

std::size_t serialise(const google::protobuf::MessageLite& m, std::span<std::uint8_t> out) {
  const std::size_t size = m.ByteSizeLong();
  if (size > out.size() || !m.SerializeToArray(out.data(), static_cast<int>(size))) {
    return 0;
  }
  return size;
}

}  // namespace

std::array<double, 4> orient_from_euler(const std::array<double, 3>& euler) {
  constexpr double kHalfRadian = 3.14159265358979323846 / 360.0;  // half a degree, in rad
  const double cx = std::cos(euler[0] * kHalfRadian), sx = std::sin(euler[0] * kHalfRadian);
  const double cy = std::cos(euler[1] * kHalfRadian), sy = std::sin(euler[1] * kHalfRadian);
  const double cz = std::cos(euler[2] * kHalfRadian), sz = std::sin(euler[2] * kHalfRadian);
  return {cx * cy * cz + sx * sy * sz, sx * cy * cz - cx * sy * sz, cx * sy * cz + sx * cy * sz,
          cx * cy * sz - sx * sy * cz};
}

EgmCodec::EgmCodec() : messages_(std::make_unique<Messages>()) {}
EgmCodec::~EgmCodec() = default;

ParseResult EgmCodec::parse_robot(std::span<const std::uint8_t> datagram, RobotMessage& out) {
  pb::EgmRobot& r = messages_->robot;
  // Partial parse + IsInitialized: the same check as ParseFromArray without protobuf logging
  // every malformed datagram a peer sends.
  if (!r.ParsePartialFromArray(datagram.data(), static_cast<int>(datagram.size())) ||
      !r.IsInitialized()) {
    return ParseResult::kMalformed;
  }
  if (!r.has_header() || r.header().mtype() != pb::EgmHeader::MSGTYPE_DATA) {
    return ParseResult::kWrongType;
  }
  out = {};
  out.seqno = r.header().seqno();
  out.tm = r.header().tm();
  const pb::EgmFeedBack& fb = r.feedback();
  // A feedback value that is present but not finite makes the whole message malformed.
  if (fb.has_joints()) {
    out.has_joints = get_joints(fb.joints(), out.joints);
    if (!out.has_joints && fb.joints().joints_size() == static_cast<int>(kJoints)) {
      return ParseResult::kMalformed;
    }
  }
  if (fb.has_cartesian() && fb.cartesian().has_pos()) {
    out.has_pose = get_pose(fb.cartesian(), out.pose);
    if (!out.has_pose) {
      return ParseResult::kMalformed;
    }
  }
  out.has_planned = r.planned().has_cartesian() && get_pose(r.planned().cartesian(), out.planned);
  if (r.planned().has_joints()) {
    out.has_planned_joints = get_joints(r.planned().joints(), out.planned_joints);
  }
  out.has_planned_clock = r.planned().has_time();
  out.planned_clock_sec = r.planned().time().sec();
  out.planned_clock_usec = r.planned().time().usec();
  out.has_clock = fb.has_time();
  out.clock_sec = fb.time().sec();
  out.clock_usec = fb.time().usec();
  out.motor = static_cast<MotorState>(r.motorstate().state());
  out.mci = static_cast<MciState>(r.mcistate().state());
  out.rapid = static_cast<RapidState>(r.rapidexecstate().state());
  out.convergence_met = r.mciconvergencemet();
  if (r.has_measuredforce()) {
    const pb::EgmMeasuredForce& f = r.measuredforce();
    if (f.force_size() != static_cast<int>(kJoints)) {
      return ParseResult::kMalformed;
    }
    for (std::size_t i = 0; i < kJoints; ++i) {
      out.force[i] = f.force(static_cast<int>(i));
    }
    if (!all_finite(out.force)) {
      return ParseResult::kMalformed;
    }
    out.has_force = true;
  }
  return out.has_joints || out.has_pose ? ParseResult::kOk : ParseResult::kIncomplete;
}

std::size_t EgmCodec::encode_robot(const RobotMessage& m, std::span<std::uint8_t> out) {
  pb::EgmRobot& r = messages_->robot;
  r.Clear();
  pb::EgmHeader& h = *r.mutable_header();
  h.set_seqno(m.seqno);
  h.set_tm(m.tm);
  h.set_mtype(pb::EgmHeader::MSGTYPE_DATA);
  pb::EgmFeedBack& fb = *r.mutable_feedback();
  if (m.has_joints) {
    put_joints(m.joints, *fb.mutable_joints());
  }
  if (m.has_pose) {
    put_pose(m.pose, *fb.mutable_cartesian());
  }
  if (m.has_clock) {
    fb.mutable_time()->set_sec(m.clock_sec);
    fb.mutable_time()->set_usec(m.clock_usec);
  }
  if (m.has_planned_joints) {
    put_joints(m.planned_joints, *r.mutable_planned()->mutable_joints());
  }
  if (m.has_planned) {
    put_pose(m.planned, *r.mutable_planned()->mutable_cartesian());
  }
  if (m.has_planned_clock) {
    r.mutable_planned()->mutable_time()->set_sec(m.planned_clock_sec);
    r.mutable_planned()->mutable_time()->set_usec(m.planned_clock_usec);
  }
  r.mutable_motorstate()->set_state(static_cast<pb::EgmMotorState::MotorStateType>(m.motor));
  r.mutable_mcistate()->set_state(static_cast<pb::EgmMCIState::MCIStateType>(m.mci));
  r.set_mciconvergencemet(m.convergence_met);
  r.mutable_rapidexecstate()->set_state(
      static_cast<pb::EgmRapidCtrlExecState::RapidCtrlExecStateType>(m.rapid));
  if (m.has_force) {
    pb::EgmMeasuredForce& f = *r.mutable_measuredforce();
    for (double v : m.force) {
      f.add_force(v);
    }
  }
  return serialise(r, out);
}

ParseResult EgmCodec::parse_correction(std::span<const std::uint8_t> datagram, Correction& out) {
  pb::EgmSensor& s = messages_->sensor;
  if (!s.ParsePartialFromArray(datagram.data(), static_cast<int>(datagram.size())) ||
      !s.IsInitialized()) {
    return ParseResult::kMalformed;
  }
  if (!s.has_header() || s.header().mtype() != pb::EgmHeader::MSGTYPE_CORRECTION) {
    return ParseResult::kWrongType;
  }
  out = {};
  out.seqno = s.header().seqno();
  out.tm = s.header().tm();
  const pb::EgmPlanned& p = s.planned();
  if (p.has_joints()) {
    if (!get_joints(p.joints(), out.joints)) {
      return ParseResult::kMalformed;
    }
    out.has_joints = true;
    out.joint_mode = true;
  }
  if (p.has_cartesian() && p.cartesian().has_pos()) {
    if (!get_pose(p.cartesian(), out.pose)) {
      return ParseResult::kMalformed;
    }
    out.has_pose = true;
  }
  return out.has_joints || out.has_pose ? ParseResult::kOk : ParseResult::kIncomplete;
}

std::size_t EgmCodec::encode_correction(const Correction& c, std::span<std::uint8_t> out) {
  pb::EgmSensor& s = messages_->sensor;
  s.Clear();
  pb::EgmHeader& h = *s.mutable_header();
  h.set_seqno(c.seqno);
  h.set_tm(c.tm);
  h.set_mtype(pb::EgmHeader::MSGTYPE_CORRECTION);
  if (c.joint_mode) {
    put_joints(c.joints, *s.mutable_planned()->mutable_joints());
  } else {
    put_pose(c.pose, *s.mutable_planned()->mutable_cartesian());
  }
  return serialise(s, out);
}

}  // namespace hyloop::hal::egm
