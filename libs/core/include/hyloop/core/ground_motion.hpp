#pragma once
// Ground-motion records: reading, validation, scaling and resampling (RHT paper: El Centro 1940
// NS scaled to a peak of 0.263 g, integrated at Δt = 0.01 s).
//
// Formats:
//   PEER AT2   four header lines, one of which carries the point count and step, either
//              "NPTS=  1559, DT= .02000 SEC" (PEER NGA) or "1559  0.0200  NPTS, DT" (older);
//              then the NPTS values (any number per line) in g.
//   two-column "time acceleration" per line (whitespace, comma or semicolon separated); blank
//              lines and lines starting with '#' are skipped, and so is a first non-numeric
//              line (a column header). Times must be increasing with a uniform step.
//
// Internally the acceleration is in m/s² (g = 9.80665 m/s²). Loading is not real-time; reading
// a prepared record (at(), operator[]) is. Error messages name the record and the line and quote
// at most kMaxQuotedRecordChars characters of it. Where a record file may be read from is the
// caller's policy (experiment/data_source.hpp); read_ground_motion() reads only a regular file of
// at most kMaxRecordBytes and never blocks on a FIFO.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hyloop::core {

inline constexpr double kStandardGravity = 9.80665;  ///< m/s² per g
inline constexpr std::size_t kMaxRecordBytes = 64u * 1024u * 1024u;
inline constexpr std::size_t kMaxQuotedRecordChars = 200;

enum class AccelerationUnit { kG, kMetrePerSecondSquared };
enum class GroundMotionFormat { kAuto, kPeerAt2, kTwoColumn };

/// "auto", "at2", "two_column". @throws std::invalid_argument listing the allowed names.
GroundMotionFormat parse_ground_motion_format(std::string_view name);
/// "g", "m/s2". @throws std::invalid_argument listing the allowed names.
AccelerationUnit parse_acceleration_unit(std::string_view name);

struct GroundMotion {
  double step = 0.0;                 ///< s
  double start_time = 0.0;           ///< time of the first sample, s
  std::vector<double> acceleration;  ///< m/s²
  std::string source;                ///< where it came from (file, and what was done to it)

  [[nodiscard]] std::size_t size() const noexcept { return acceleration.size(); }
  /// (N − 1)·step, s.
  [[nodiscard]] double duration() const noexcept;
  /// max |a|, m/s².
  [[nodiscard]] double peak() const noexcept;
  /// Index of the first sample with |a| = peak().
  [[nodiscard]] std::size_t peak_index() const noexcept;
  /// a(t) by linear interpolation, 0 before the first and after the last sample (free
  /// vibration after the record). RT-safe.
  [[nodiscard]] double at(double t) const noexcept;
};

/// Parses AT2 text (values in g). `name` appears in error messages.
/// @throws std::invalid_argument naming NPTS and the count found when they differ, or the
/// header/value that is missing, malformed or not finite.
GroundMotion parse_peer_at2(std::string_view text, std::string_view name = "AT2 text");

/// Parses two-column text. @param time_tolerance relative tolerance on the uniform step.
/// @throws std::invalid_argument naming the line of a malformed or non-finite value, or of a
/// step that differs from the first one.
GroundMotion parse_two_column(std::string_view text, AccelerationUnit unit = AccelerationUnit::kG,
                              std::string_view name = "two-column text",
                              double time_tolerance = 1e-4);

/// Parses a record's text; kAuto picks AT2 when one of the first four lines mentions NPTS.
/// @throws std::invalid_argument as the parsers above.
GroundMotion parse_ground_motion(std::string_view text, GroundMotionFormat format,
                                 AccelerationUnit unit, std::string_view name);

/// Reads a file and parses it as parse_ground_motion().
/// @throws std::invalid_argument if the file cannot be opened, is not a regular file, is larger
/// than kMaxRecordBytes or does not parse.
GroundMotion read_ground_motion(const std::filesystem::path& path,
                                GroundMotionFormat format = GroundMotionFormat::kAuto,
                                AccelerationUnit unit = AccelerationUnit::kG);

/// The record multiplied so that its peak is `target_peak` (m/s², > 0).
/// @throws std::invalid_argument naming target_peak, or if the record is all zero.
GroundMotion scale_to_peak(const GroundMotion& motion, double target_peak);

/// The record on a grid of `step` (s, > 0) from its start time to its end, by linear
/// interpolation: floor(duration/step) + 1 samples. @throws std::invalid_argument naming step.
GroundMotion resample(const GroundMotion& motion, double step);

}  // namespace hyloop::core
