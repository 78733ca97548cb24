#pragma once
// ABB Externally Guided Motion (EGM) messages as plain structs, and their protobuf wire form
// (proto/hyloop/egm/egm.proto). EgmRobot goes robot controller → sensor every cycle (≥ 4 ms),
// EgmSensor answers it (position guidance). Units are the protocol's: joints and Euler angles in
// degrees, positions in mm, header.tm in ms; drivers convert at their boundary.
//
// EgmCodec owns the protobuf scratch messages (one codec per thread). Parsing and serialising
// run on a driver's I/O thread, never in the loop: protobuf may allocate while its messages grow
// to their working size. The structs are trivially copyable (seqlock hand-over).

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace hyloop::hal::egm {

inline constexpr std::size_t kJoints = 6;
/// libegm's receive buffer; no EGM message of ours comes near it.
inline constexpr std::size_t kMaxDatagram = 1024;

enum class MotorState : std::uint8_t { kUndefined = 0, kOn = 1, kOff = 2 };
enum class MciState : std::uint8_t { kUndefined = 0, kError = 1, kStopped = 2, kRunning = 3 };
enum class RapidState : std::uint8_t { kUndefined = 0, kStopped = 1, kRunning = 2 };

struct Pose {
  std::array<double, 3> pos{};    ///< x, y, z, mm
  std::array<double, 3> euler{};  ///< x, y, z, degrees
  bool has_orient = false;
  std::array<double, 4> orient{};  ///< the same orientation as a unit quaternion u0 (w), u1..u3
};

/// The unit quaternion (u0 = w, u1, u2, u3) of ZYX Euler angles in degrees (rotation about z,
/// then y, then x), the convention EGM's euler and orient share.
[[nodiscard]] std::array<double, 4> orient_from_euler(const std::array<double, 3>& euler);

/// EgmRobot: what the controller reports (the fields a guidance sensor uses).
struct RobotMessage {
  std::uint32_t seqno = 0;
  std::uint32_t tm = 0;  ///< ms
  bool has_joints = false;
  std::array<double, kJoints> joints{};  ///< feedBack.joints, degrees
  bool has_pose = false;
  Pose pose;  ///< feedBack.cartesian
  bool has_planned = false;
  Pose planned;  ///< planned.cartesian
  bool has_planned_joints = false;
  std::array<double, kJoints> planned_joints{};  ///< planned.joints, degrees
  bool has_planned_clock = false;
  std::uint64_t planned_clock_sec = 0;  ///< planned.time
  std::uint64_t planned_clock_usec = 0;
  bool has_clock = false;
  std::uint64_t clock_sec = 0;  ///< feedBack.time
  std::uint64_t clock_usec = 0;
  MotorState motor = MotorState::kUndefined;
  MciState mci = MciState::kUndefined;
  RapidState rapid = RapidState::kUndefined;
  bool convergence_met = false;
  bool has_force = false;
  std::array<double, kJoints> force{};  ///< measuredForce: Fx, Fy, Fz (N), Tx, Ty, Tz (N·m)
};

/// EgmSensor: a position-guidance correction, in joints or Cartesian (pos + Euler). A sensor may
/// send both (ABB's libegm does, for a six-axis robot); which one the robot follows is its
/// motion's (EGMActJoint or EGMActPose), not the message's.
struct Correction {
  std::uint32_t seqno = 0;
  std::uint32_t tm = 0;                  ///< ms
  bool joint_mode = false;               ///< encode: planned.joints, else planned.cartesian
  bool has_joints = false;               ///< parsed: planned.joints (6) present
  bool has_pose = false;                 ///< parsed: planned.cartesian.pos present
  std::array<double, kJoints> joints{};  ///< degrees
  Pose pose;                             ///< mm, degrees
};

enum class ParseResult : std::uint8_t {
  kOk,
  kMalformed,   ///< not a protobuf message of that type, a required field missing, or not finite
  kWrongType,   ///< header.mtype is not the one this direction carries
  kIncomplete,  ///< parses, but lacks what guidance needs (feedback / planned position)
};

class EgmCodec {
 public:
  EgmCodec();
  ~EgmCodec();
  EgmCodec(const EgmCodec&) = delete;
  EgmCodec& operator=(const EgmCodec&) = delete;

  /// An EgmRobot of mtype DATA with feedBack joints (6) or cartesian.pos.
  ParseResult parse_robot(std::span<const std::uint8_t> datagram, RobotMessage& out);
  /// Serialises `m` as EgmRobot (every field a controller sends; required ones complete).
  /// Returns the size, 0 when `out` is too small.
  std::size_t encode_robot(const RobotMessage& m, std::span<std::uint8_t> out);
  /// An EgmSensor of mtype CORRECTION with planned joints (6), cartesian.pos or both (each
  /// present one finite; joint_mode set when joints are present).
  ParseResult parse_correction(std::span<const std::uint8_t> datagram, Correction& out);
  std::size_t encode_correction(const Correction& c, std::span<std::uint8_t> out);

 private:
  struct Messages;
  std::unique_ptr<Messages> messages_;
};

}  // namespace hyloop::hal::egm
