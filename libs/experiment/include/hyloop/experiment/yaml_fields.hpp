#pragma once
// Strict reading of scenario YAML, shared by every experiment kind: MapReader reads one mapping
// field by field, validates each value and reports anything left over as an unknown field;
// `--set dotted.path=value` overrides are applied before reading. Errors are ScenarioError
// with one line: "ORIGIN: field: what is wrong".
//
// Rules for every kind (docs/scenarios.md, "Numbers" and "Duplicate keys"):
//   - the text is at most kMaxScenarioBytes, with at most kMaxOverrides overrides of at most
//     kMaxOverrideBytes each, and at most kMaxYamlNodes nodes (aliases counted each time);
//   - a key appears at most once in a mapping (error: the key path and both line numbers);
//   - a number is a plain scalar (a quoted "1.0" is refused; yaml-cpp tags quoted scalars "!"),
//     finite, normal or exactly zero (no subnormals), and |v| <= kMaxNumberMagnitude unless the
//     field documents a narrower range; true/false are plain scalars too;
//   - a string field holds at most kMaxStringChars characters;
//   - the text, every key and every value is valid UTF-8 (no overlong forms, surrogates or
//     code points above U+10FFFF): the error names the field and the byte offset;
//   - a message quotes at most kMaxQuotedChars characters of any value (excerpt()).

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/experiment/scenario_error.hpp"

namespace hyloop::experiment {

inline constexpr std::size_t kMaxQuotedChars = 200;
inline constexpr std::size_t kMaxOverrides = 256;
inline constexpr std::size_t kMaxOverrideBytes = 4096;
inline constexpr std::size_t kMaxStringChars = 4096;
inline constexpr std::size_t kMaxYamlNodes = 100000;
inline constexpr double kMaxNumberMagnitude = 1e15;

/// A number for messages (10 significant digits).
std::string format_value(double v);

/// At most `max` characters of `text`; a longer one is cut and says how long it was.
std::string excerpt(std::string_view text, std::size_t max = kMaxQuotedChars);

/// "\"EXCERPT\": longer than kMaxStringChars characters" (out of line: GCC 12 reports a false
/// -Wrestrict when this concatenation is inlined into a caller, GCC bug 105329).
std::string too_long_string(std::string_view text);
/// "a", "a or b", "a, b or c": the allowed values as a message lists them.
std::string listed_with_or(const std::vector<std::string>& items);
/// +inf for ".inf", ".Inf", "inf", "+.inf", "+.Inf"; -inf for "-.inf", "-.Inf", "-inf"; else none.
std::optional<double> infinity_spelled(std::string_view text);

/// The offset of the first byte of `text` that is not part of valid UTF-8, or npos.
std::size_t invalid_utf8_at(std::string_view text) noexcept;

/// @throws ScenarioError "ORIGIN: key.path: duplicate key (lines A and B)" for the first key
/// that appears twice in one mapping, "ORIGIN: key.path: not valid UTF-8 (byte N of the value
/// is 0xHH)" for the first key or scalar that is not UTF-8, or when the document has more than
/// kMaxYamlNodes nodes.
void check_unique_keys(const YAML::Node& root, const std::string& origin);

/// The text of a scenario file. @throws ScenarioError if it cannot be read.
std::string read_scenario_text(const std::string& path);

/// How many times this process has parsed a scenario's YAML (load_yaml): the tests hold a run
/// and a service's Configure to one parse each (issue 23).
std::uint64_t yaml_parses() noexcept;
/// The counter behind yaml_parses(), for a plug-in's copy of the framework to count in the host's
/// (attach_yaml_parse_counter, called through KindPluginInfo::attach_registry).
void* yaml_parse_counter_handle() noexcept;
void attach_yaml_parse_counter(void* host_counter) noexcept;

/// Parses YAML text (an empty document is an empty map) and applies the overrides.
YAML::Node load_yaml(const std::string& text, const std::string& origin,
                     const std::vector<std::string>& overrides);

/// Applies one "dotted.path=value" override (value read as YAML) to root.
void apply_override(YAML::Node& root, const std::string& assignment, const std::string& origin);

/// @throws ScenarioError "field = value: allowed" unless ok.
void require(bool ok, const std::string& field, double value, const std::string& allowed);
[[noreturn]] void invalid(const std::string& field, double value, const std::string& allowed);
/// True when a/b is a whole number (relative tolerance 1e-9); ratio receives a/b.
bool is_integer_ratio(double a, double b, double& ratio);

/// outputs.progress: auto | on | off. @throws ScenarioError naming `field`.
void require_progress_mode(const std::string& field, const std::string& mode);

/// outputs.format: csv (samples.csv only) or hdf5 (also run.h5, recorded while the run runs).
/// @throws ScenarioError "FIELD = \"VALUE\": must be csv or hdf5".
void require_output_format(const std::string& field, const std::string& format);

/// Runs `validate`; a ScenarioError it throws is rethrown prefixed with "ORIGIN: " (once).
template <typename Validate>
void validate_with_origin(const std::string& origin, Validate&& validate) {
  try {
    validate();
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    if (what.rfind(origin + ":", 0) == 0) throw;
    throw ScenarioError(origin + ": " + what);
  }
}

// Reads one YAML map, remembering which keys were used, so that anything left over is reported
// as an unknown field with the list of allowed ones.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string path, std::string origin)
      : node_(node), path_(std::move(path)), origin_(std::move(origin)) {
    if (node_ && !node_.IsNull() && !node_.IsMap()) {
      fail(path_.empty() ? "scenario" : path_, "must be a mapping of fields");
    }
  }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ScenarioError(origin_ + ": " + field + ": " + what);
  }

  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }

  std::string field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  YAML::Node get(const std::string& key) {
    allowed_.insert(key);
    if (!node_ || node_.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& map = node_;  // const access: a missing key must not be inserted
    return map[key];
  }

  /// A limit: a number or .inf ("no limit"); NaN is refused, and −inf unless `lower` (the lower
  /// bound of a window, where −.inf means "no limit").
  double limit(const std::string& key, double& out, bool lower = false) {
    const YAML::Node n = get(key);
    if (n && n.IsScalar() && n.Tag() != "!") {
      if (const std::optional<double> inf = infinity_spelled(n.Scalar());
          inf && (*inf > 0.0 || lower)) {
        out = *inf;
        return out;
      }
    }
    return number(key, out);
  }

  double number(const std::string& key, double& out) {
    const YAML::Node n = get(key);
    if (!n) return out;
    out = scalar_number(n, field(key));
    return out;
  }

  void integer(const std::string& key, int& out) {
    double v = out;
    number(key, v);
    if (v != std::floor(v) || std::abs(v) > 1e9)
      fail(field(key), format_value(v) + " must be an integer");
    out = static_cast<int>(v);
  }

  void unsigned64(const std::string& key, std::uint64_t& out) {
    const YAML::Node n = get(key);
    if (!n) return;
    plain_scalar(n, field(key), "a non-negative integer");
    try {
      out = n.as<std::uint64_t>();
    } catch (const YAML::Exception&) {
      fail(field(key), "\"" + excerpt(n.Scalar()) + "\" must be a non-negative integer");
    }
  }

  void boolean(const std::string& key, bool& out) {
    const YAML::Node n = get(key);
    if (!n) return;
    plain_scalar(n, field(key), "true or false");
    try {
      out = n.as<bool>();
    } catch (const YAML::Exception&) {
      fail(field(key), "\"" + excerpt(n.Scalar()) + "\" must be true or false");
    }
  }

  void string(const std::string& key, std::string& out) {
    const YAML::Node n = get(key);
    if (!n) return;
    if (!n.IsScalar()) fail(field(key), "must be a string");
    if (n.Scalar().size() > kMaxStringChars) fail(field(key), too_long_string(n.Scalar()));
    out = n.Scalar();
  }

  void numbers(const std::string& key, std::vector<double>& out) {
    const YAML::Node n = get(key);
    if (!n) return;
    if (!n.IsSequence()) fail(field(key), "must be a list of numbers");
    if (n.size() > 1024) fail(field(key), std::to_string(n.size()) + " values, at most 1024");
    out.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
      out.push_back(scalar_number(n[i], field(key) + "[" + std::to_string(i) + "]"));
    }
  }

  MapReader child(const std::string& key) { return MapReader(get(key), field(key), origin_); }

  void finish() const {
    if (!node_ || !node_.IsMap()) return;
    for (const auto& kv : node_) {
      if (!kv.first.IsScalar()) fail(path_.empty() ? "scenario" : path_, "a key must be a name");
      const std::string& key = kv.first.Scalar();
      if (allowed_.count(key) == 0) {
        std::string list;
        for (const std::string& a : allowed_) list += (list.empty() ? "" : ", ") + a;
        fail(field(excerpt(key)), "unknown field (allowed here: " + list + ")");
      }
    }
  }

 private:
  // A scalar as written, not quoted ("1.0" with quotes is a string) and without a non-standard
  // tag.
  void plain_scalar(const YAML::Node& n, const std::string& at, const std::string& what) const {
    if (!n.IsScalar()) fail(at, "must be " + what);
    const std::string& tag = n.Tag();
    if (tag == "?" || tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:int" ||
        tag == "tag:yaml.org,2002:bool") {
      return;
    }
    fail(at, "\"" + excerpt(n.Scalar()) + "\" is " + (tag == "!" ? "quoted" : "tagged " + tag) +
                 ": write " + what + " without quotes");
  }

  double scalar_number(const YAML::Node& n, const std::string& at) const {
    plain_scalar(n, at, "a number");
    const std::string& text = n.Scalar();
    double v = 0.0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      fail(at, "\"" + excerpt(text) + "\" is not a number");
    }
    if (!std::isfinite(v)) fail(at, excerpt(text) + " is not finite");
    if (v != 0.0 && !std::isnormal(v)) {
      fail(at, excerpt(text) + " is subnormal: a number is 0 or of magnitude >= " +
                   format_value(std::numeric_limits<double>::min()));
    }
    if (std::abs(v) > kMaxNumberMagnitude) {
      fail(at, excerpt(text) + ": magnitude above the limit " + format_value(kMaxNumberMagnitude));
    }
    return v;
  }

  YAML::Node node_;
  std::string path_;
  std::string origin_;
  std::set<std::string> allowed_;
};

}  // namespace hyloop::experiment
