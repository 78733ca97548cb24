#include "hyloop/core/ground_motion.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace hyloop::core {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.push_back(line);
    if (end == text.size()) {
      break;
    }
    start = end + 1;
  }
  return lines;
}

bool is_separator(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 || c == ',' || c == ';';
}

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_separator(line[i])) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && !is_separator(line[i])) {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

/// Parses the whole token as a double (Fortran 'D' exponents accepted); false if malformed.
bool parse_number(std::string_view token, double& value) {
  std::string s(token);
  std::replace(s.begin(), s.end(), 'D', 'E');
  std::replace(s.begin(), s.end(), 'd', 'e');
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

// Number right after "KEY=" (spaces allowed), or false.
bool value_after(const std::string& line, const std::string& key, double& value) {
  const std::size_t k = line.find(key);
  if (k == std::string::npos) {
    return false;
  }
  std::size_t i = k + key.size();
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  if (i >= line.size() || line[i] != '=') {
    return false;
  }
  ++i;
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  std::size_t j = i;
  while (j < line.size() &&
         std::string_view("0123456789+-.EeDd").find(line[j]) != std::string_view::npos) {
    ++j;
  }
  return parse_number(std::string_view(line).substr(i, j - i), value);
}

// At most kMaxQuotedRecordChars characters of a line or token of the record.
std::string quote(std::string_view text) {
  if (text.size() <= kMaxQuotedRecordChars) return std::string(text);
  return std::string(text.substr(0, kMaxQuotedRecordChars)) + "... (" +
         std::to_string(text.size()) + " characters)";
}

std::string format_double(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

GroundMotionFormat parse_ground_motion_format(std::string_view name) {
  if (name == "auto") {
    return GroundMotionFormat::kAuto;
  }
  if (name == "at2") {
    return GroundMotionFormat::kPeerAt2;
  }
  if (name == "two_column") {
    return GroundMotionFormat::kTwoColumn;
  }
  fail("format = \"" + std::string(name) + "\": must be auto, at2 or two_column");
}

AccelerationUnit parse_acceleration_unit(std::string_view name) {
  if (name == "g") {
    return AccelerationUnit::kG;
  }
  if (name == "m/s2" || name == "m/s^2") {
    return AccelerationUnit::kMetrePerSecondSquared;
  }
  fail("unit = \"" + std::string(name) + "\": must be g or m/s2");
}

double GroundMotion::duration() const noexcept {
  return acceleration.empty() ? 0.0 : static_cast<double>(acceleration.size() - 1) * step;
}

double GroundMotion::peak() const noexcept {
  double p = 0.0;
  for (double a : acceleration) {
    p = std::max(p, std::abs(a));
  }
  return p;
}

std::size_t GroundMotion::peak_index() const noexcept {
  const double p = peak();
  for (std::size_t i = 0; i < acceleration.size(); ++i) {
    if (std::abs(acceleration[i]) == p) {
      return i;
    }
  }
  return 0;
}

double GroundMotion::at(double t) const noexcept {
  if (acceleration.empty() || !(step > 0.0)) {
    return 0.0;
  }
  const double x = (t - start_time) / step;
  const double last = static_cast<double>(acceleration.size() - 1);
  if (!(x >= 0.0) || x > last) {
    return 0.0;
  }
  const auto i = static_cast<std::size_t>(std::floor(x));
  if (i >= acceleration.size() - 1) {
    return acceleration.back();
  }
  const double f = x - static_cast<double>(i);
  return (1.0 - f) * acceleration[i] + f * acceleration[i + 1];
}

GroundMotion parse_peer_at2(std::string_view text, std::string_view name) {
  const std::vector<std::string_view> lines = split_lines(text);
  const std::string where(name);
  if (lines.size() < 4) {
    fail(where + ": an AT2 file needs 4 header lines, found " + std::to_string(lines.size()));
  }
  double npts = -1.0;
  double dt = -1.0;
  for (std::size_t l = 0; l < 4 && npts < 0.0; ++l) {
    const std::string up = upper(lines[l]);
    if (up.find("NPTS") == std::string::npos) {
      continue;
    }
    if (!value_after(up, "NPTS", npts) || !value_after(up, "DT", dt)) {
      // Older form: "1559  0.0200  NPTS, DT".
      const auto t = tokens(up);
      if (t.size() < 2 || !parse_number(t[0], npts) || !parse_number(t[1], dt)) {
        fail(where + ": header line " + std::to_string(l + 1) + " \"" + quote(lines[l]) +
             "\": cannot read NPTS and DT");
      }
    }
  }
  if (npts < 0.0) {
    fail(where + ": no NPTS in the 4 header lines");
  }
  if (npts < 2.0 || npts != std::floor(npts) || npts > 1e9) {
    fail(where + ": NPTS = " + format_double(npts) + ": must be an integer >= 2");
  }
  if (!std::isfinite(dt) || dt <= 0.0) {
    fail(where + ": DT = " + format_double(dt) + ": must be finite and > 0 s");
  }
  GroundMotion motion;
  motion.step = dt;
  motion.source = where;
  // Never more values than the text can hold (a header may claim 1e9).
  motion.acceleration.reserve(std::min(static_cast<std::size_t>(npts), text.size() / 2 + 1));
  for (std::size_t l = 4; l < lines.size(); ++l) {
    for (std::string_view token : tokens(lines[l])) {
      double v = 0.0;
      if (!parse_number(token, v)) {
        fail(where + ": line " + std::to_string(l + 1) + ": \"" + quote(token) +
             "\" is not a number");
      }
      if (!std::isfinite(v)) {
        fail(where + ": line " + std::to_string(l + 1) + ": value " + quote(token) +
             " is not finite");
      }
      motion.acceleration.push_back(v * kStandardGravity);
    }
  }
  if (motion.acceleration.size() != static_cast<std::size_t>(npts)) {
    fail(where + ": NPTS = " + std::to_string(static_cast<long long>(npts)) +
         " in the header but " + std::to_string(motion.acceleration.size()) + " values found");
  }
  return motion;
}

GroundMotion parse_two_column(std::string_view text, AccelerationUnit unit, std::string_view name,
                              double time_tolerance) {
  const std::string where(name);
  const double scale = unit == AccelerationUnit::kG ? kStandardGravity : 1.0;
  std::vector<double> times;
  GroundMotion motion;
  motion.source = where;
  bool header_allowed = true;
  const std::vector<std::string_view> lines = split_lines(text);
  for (std::size_t l = 0; l < lines.size(); ++l) {
    const auto t = tokens(lines[l]);
    if (t.empty() || t[0].front() == '#') {
      continue;
    }
    double time = 0.0;
    double a = 0.0;
    const bool numeric = t.size() >= 2 && parse_number(t[0], time) && parse_number(t[1], a);
    if (!numeric && header_allowed) {
      header_allowed = false;
      continue;
    }
    header_allowed = false;
    const std::string at = where + ": line " + std::to_string(l + 1);
    if (!numeric || t.size() != 2) {
      fail(at + " \"" + quote(lines[l]) + "\": must hold two numbers, time and acceleration");
    }
    if (!std::isfinite(time) || !std::isfinite(a)) {
      fail(at + ": values must be finite");
    }
    if (times.size() >= 2) {
      const double expected = times[1] - times[0];
      const double dt = time - times.back();
      if (std::abs(dt - expected) > time_tolerance * expected) {
        fail(at + ": time step " + format_double(dt) + " s differs from the first step " +
             format_double(expected) + " s (a uniform time step is required)");
      }
    } else if (times.size() == 1 && !(time > times[0])) {
      fail(at + ": time " + format_double(time) + " s must be after " + format_double(times[0]) +
           " s");
    }
    times.push_back(time);
    motion.acceleration.push_back(a * scale);
  }
  if (times.size() < 2) {
    fail(where + ": " + std::to_string(times.size()) + " samples found: at least 2 are needed");
  }
  motion.start_time = times.front();
  motion.step = (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  return motion;
}

GroundMotion parse_ground_motion(std::string_view text, GroundMotionFormat format,
                                 AccelerationUnit unit, std::string_view name) {
  if (format == GroundMotionFormat::kAuto) {
    const auto lines = split_lines(text.substr(0, std::min<std::size_t>(text.size(), 4096)));
    format = GroundMotionFormat::kTwoColumn;
    for (std::size_t l = 0; l < std::min<std::size_t>(4, lines.size()); ++l) {
      if (upper(lines[l]).find("NPTS") != std::string::npos) {
        format = GroundMotionFormat::kPeerAt2;
      }
    }
  }
  if (format == GroundMotionFormat::kPeerAt2) {
    return parse_peer_at2(text, name);
  }
  return parse_two_column(text, unit, name);
}

GroundMotion read_ground_motion(const std::filesystem::path& path, GroundMotionFormat format,
                                AccelerationUnit unit) {
  const std::string where = "path = \"" + quote(path.string()) + "\"";
  // O_NONBLOCK: opening a FIFO must not wait for a writer; then only a regular file is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    fail(where + ": cannot be opened: " + std::strerror(errno));
  }
  std::string text;
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const bool small = regular && static_cast<std::uint64_t>(st.st_size) <= kMaxRecordBytes;
  if (small) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (!regular) {
    fail(where + ": not a regular file");
  }
  if (!small) {
    fail(where + ": larger than " + std::to_string(kMaxRecordBytes) + " bytes");
  }
  return parse_ground_motion(text, format, unit, path.string());
}

GroundMotion scale_to_peak(const GroundMotion& motion, double target_peak) {
  if (!std::isfinite(target_peak) || target_peak <= 0.0) {
    fail("target_peak = " + format_double(target_peak) + ": must be finite and > 0 m/s^2");
  }
  const double peak = motion.peak();
  if (!(peak > 0.0)) {
    fail(motion.source + ": the record is all zero and cannot be scaled");
  }
  GroundMotion out = motion;
  const double factor = target_peak / peak;
  for (double& a : out.acceleration) {
    a *= factor;
  }
  out.source += " scaled x" + format_double(factor);
  return out;
}

GroundMotion resample(const GroundMotion& motion, double step) {
  if (!std::isfinite(step) || step <= 0.0) {
    fail("step = " + format_double(step) + ": must be finite and > 0 s");
  }
  const double duration = motion.duration();
  const auto n = static_cast<std::size_t>(std::floor(duration / step + 1e-9)) + 1;
  GroundMotion out;
  out.step = step;
  out.start_time = motion.start_time;
  out.source = motion.source + " resampled to " + format_double(step) + " s";
  out.acceleration.resize(n);
  const double ratio = step / motion.step;
  for (std::size_t k = 0; k < n; ++k) {
    // Interpolate on the index grid directly (avoids t0 + k·step round-off at the ends).
    const double x =
        std::min(static_cast<double>(k) * ratio, static_cast<double>(motion.size() - 1));
    const auto i = std::min(static_cast<std::size_t>(std::floor(x)), motion.size() - 1);
    const double f = x - static_cast<double>(i);
    out.acceleration[k] = f > 0.0 && i + 1 < motion.size()
                              ? (1.0 - f) * motion.acceleration[i] + f * motion.acceleration[i + 1]
                              : motion.acceleration[i];
  }
  return out;
}

}  // namespace hyloop::core
