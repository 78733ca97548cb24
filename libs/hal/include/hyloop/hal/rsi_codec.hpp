#pragma once
// KUKA RobotSensorInterface (RSI) over Ethernet: one XML document per UDP datagram, no framing,
// no declaration. The controller (client) sends every cycle (4 ms, or 12 ms) a
//   <Rob Type="KUKA">
//     <RIst X=".." Y=".." Z=".." A=".." B=".." C=".."/>   actual TCP pose, mm and degrees
//     <RSol X=".." .. C=".."/>                             set-point TCP pose, mm and degrees
//     <AIPos A1=".." .. A6=".."/>                          actual axis angles, degrees
//     <ASPos A1=".." .. A6=".."/>                          set-point axis angles, degrees
//     <Delay D=".."/>                                      late sensor packets so far
//     <IPOC>3393226</IPOC>                                 the cycle's timestamp, ms
//   </Rob>
// (which elements come is the SEND section of the controller's config; others, e.g. Tech, DiL,
// user tags, are skipped, but one value of a user tag, e.g. a force routed through the
// controller as <FT Fz=".."/>, can be read: an Extra), and the sensor PC answers within the
// cycle with
//   <Sen Type="ImFree"><RKorr X=".." .. C=".."/><IPOC>3393226</IPOC></Sen>   or  <AK A1=".." ../>
// where Type is the controller's SENTYPE, the correction element (RKorr: X Y Z mm, A B C
// degrees; AK: A1..A6 degrees) is named by its RECEIVE section, and IPOC echoes the Rob's.
// Sources: kuka_experimental's ros_rsi_ethernet.xml, rsi_state.h and kuka_rsi_simulator;
// kroshu/kuka_drivers doc/wiki/2_RSI.md; a KR C4 IPOC log (erensezener/kuka-rsi3-communicator).
//
// The parser reads exactly this subset of XML: elements, attributes in ' or ", text, comments
// and a leading <?xml ..?>; no DOCTYPE, CDATA, control characters or entity decoding. Bounded:
// kMaxDatagram bytes, kMaxDepth levels, kMaxElements elements, kMaxAttributes per element, kMaxName
// characters per name. Each known element must carry all six values, each finite, once; IPOC is a
// decimal integer. Anything else is refused. The writers use fixed precision (Rob 4 decimals, Sen
// 6) and refuse |value| ≥ 1e9. All functions are RT-safe: no allocation, no exception.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "hyloop/hal/pose6.hpp"

namespace hyloop::hal::rsi {

inline constexpr std::size_t kMaxDatagram = 1472;
inline constexpr std::size_t kMaxDepth = 8;
inline constexpr std::size_t kMaxElements = 64;
inline constexpr std::size_t kMaxAttributes = 16;
inline constexpr std::size_t kMaxName = 32;
inline constexpr std::size_t kValues = 6;

using Values = std::array<double, kValues>;

/// X Y Z (mm) A B C (degrees): RIst, RSol, RKorr.
inline constexpr std::array<std::string_view, kValues> kPoseNames{"X", "Y", "Z", "A", "B", "C"};
/// A1..A6 (degrees): AIPos, ASPos, AK.
inline constexpr std::array<std::string_view, kValues> kAxisNames{"A1", "A2", "A3",
                                                                  "A4", "A5", "A6"};

/// Fx Fy Fz (N) Tx Ty Tz (N·m): a force/torque sensor's six values under one user tag (the SEND
/// section's TAG="FT.Fx" … "FT.Tz" → <FT Fx=".." .. Tz=".."/>).
inline constexpr std::array<std::string_view, kValues> kWrenchNames{"Fx", "Fy", "Fz",
                                                                    "Tx", "Ty", "Tz"};

enum class ParseResult : std::uint8_t {
  kOk,
  kMalformed,   ///< not the XML subset, a bad or non-finite number, a duplicate
  kWrongType,   ///< another root element, or a Sen of another Type
  kIncomplete,  ///< a required element is missing
};

struct RobotFrame {
  std::uint64_t ipoc = 0;
  bool has_rist = false, has_rsol = false, has_aipos = false, has_aspos = false;
  bool has_delay = false;
  Values rist{}, rsol{}, aipos{}, aspos{};
  std::uint64_t delay = 0;
  bool has_extra = false;
  double extra = 0.0;  ///< the Extra's value, as sent
  bool has_wrench = false;
  Values wrench{};  ///< the Extra's six values (Extra::wrench), as sent
};

/// One attribute of a user element of the <Rob> (the SEND section's TAG="FT.Fz": <FT Fz=".."/>).
struct Extra {
  std::string_view tag;  ///< "" = none
  std::string_view attribute;
  bool wrench = false;  ///< the tag's six attributes kWrenchNames instead of `attribute`
};

struct SensorFrame {
  std::uint64_t ipoc = 0;
  Values correction{};  ///< RKorr (mm, degrees) or AK (degrees)
};

/// How the answer looks: the controller's SENTYPE and its correction element.
struct SensorFormat {
  std::string_view type = "ImFree";
  std::string_view tag = "RKorr";
  bool axis = false;  ///< the tag's attributes are A1..A6 (else X..C)
};

/// Parses a <Rob>; IPOC is required, the rest as sent.
/// With `extra`, its element (once, the attribute present and finite) sets has_extra (or, with
/// Extra::wrench, all six present and finite, has_wrench).
ParseResult parse_robot(std::span<const std::uint8_t> datagram, RobotFrame& out,
                        const Extra& extra = {}) noexcept;
/// Writes a <Rob Type="KUKA"> with the elements flagged has_*, then IPOC. 0 when it does not fit.
std::size_t write_robot(const RobotFrame& frame, std::span<std::uint8_t> out,
                        const Extra& extra = {}) noexcept;
/// Whether `name` can stand as an element or attribute name in the writers' output.
[[nodiscard]] bool is_name(std::string_view name) noexcept;
/// Parses a <Sen> of `format`: its correction element and IPOC are required.
ParseResult parse_sensor(std::span<const std::uint8_t> datagram, const SensorFormat& format,
                         SensorFrame& out) noexcept;
/// Writes the <Sen>. 0 when it does not fit or a value is out of range.
std::size_t write_sensor(const SensorFrame& frame, const SensorFormat& format,
                         std::span<std::uint8_t> out) noexcept;

/// The loop's whole pose (pose6.hpp) of a Cartesian pose X Y Z A B C (mm, degrees; R =
/// R_z(A)·R_y(B)·R_x(C)) relative to `start`, `scale` mm per loop unit. With a zero start it
/// reads an absolute correction (RKorr: the offset from the session's start). RT-safe.
[[nodiscard]] LoopPose loop_pose(const Values& wire, const Values& start, double scale) noexcept;
/// The Cartesian pose X..C of the loop's `loop` relative to `start`; with a zero start, the
/// absolute correction RKorr that moves the robot there. RT-safe.
[[nodiscard]] Values wire_pose(const LoopPose& loop, const Values& start, double scale) noexcept;

}  // namespace hyloop::hal::rsi
