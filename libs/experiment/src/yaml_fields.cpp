#include "hyloop/experiment/yaml_fields.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace hyloop::experiment {

std::string format_value(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

std::string excerpt(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "... (" + std::to_string(text.size()) + " characters)";
}

std::string listed_with_or(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  }
  return out;
}

std::optional<double> infinity_spelled(std::string_view t) {
  if (t == ".inf" || t == ".Inf" || t == "inf" || t == "+.inf" || t == "+.Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (t == "-.inf" || t == "-.Inf" || t == "-inf") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::string too_long_string(std::string_view text) {
  // Appended, not "\"" + std::string&&: GCC 12's false -Wrestrict on that (GCC bug 105329).
  std::string message(1, '"');
  message += excerpt(text);
  message += "\": longer than ";
  message += std::to_string(kMaxStringChars);
  message += " characters";
  return message;
}

std::size_t invalid_utf8_at(std::string_view text) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](std::size_t i) {
    return i < text.size() && (byte(i) & 0xC0) == 0x80;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    std::size_t n = 0;
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
    } else {
      return i;  // a continuation byte first, an overlong lead (C0, C1) or above U+10FFFF
    }
    for (std::size_t k = 1; k < n; ++k) {
      if (!continuation(i + k)) return i;
    }
    // Overlong 3- and 4-byte forms, UTF-16 surrogates, code points above U+10FFFF.
    if ((c == 0xE0 && byte(i + 1) < 0xA0) || (c == 0xED && byte(i + 1) > 0x9F) ||
        (c == 0xF0 && byte(i + 1) < 0x90) || (c == 0xF4 && byte(i + 1) > 0x8F)) {
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

namespace {

// "ORIGIN: FIELD: not valid UTF-8 (byte N of the WHAT is 0xHH)" unless `text` is UTF-8.
void require_utf8(std::string_view text, const std::string& origin, const std::string& field,
                  const char* what) {
  const std::size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X",
                static_cast<unsigned>(static_cast<unsigned char>(text[at])));
  throw ScenarioError(origin + ": " + (field.empty() ? "" : field + ": ") +
                      "not valid UTF-8 (byte " + std::to_string(at) + " of the " + what + " is " +
                      hex + "); text in a scenario must be UTF-8");
}

// A key for messages: one that is not UTF-8 with its bytes above 0x7F as \xHH.
std::string printable(std::string_view key) {
  if (invalid_utf8_at(key) == std::string_view::npos) return excerpt(key);
  std::string out;
  for (const char c : excerpt(key)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned>(u));
      out += hex;
    }
  }
  return out;
}

// Depth-first over the document; `budget` counts nodes visited (an alias is visited again, so
// a document of nested aliases cannot make the walk exponential).
void check_keys_of(const YAML::Node& node, const std::string& path, const std::string& origin,
                   std::size_t& budget) {
  if (budget == 0) {
    throw ScenarioError(origin + ": more than " + std::to_string(kMaxYamlNodes) +
                        " YAML nodes (aliases counted each time they are used)");
  }
  --budget;
  const auto at = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (node.IsMap()) {
    std::map<std::string, int> lines;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        throw ScenarioError(origin + ": " + (path.empty() ? "scenario" : path) + " (line " +
                            std::to_string(kv.first.Mark().line + 1) +
                            "): a key must be a name, not a list or mapping");
      }
      const std::string& key = kv.first.Scalar();
      require_utf8(key, origin, at(printable(key)), "key");
      const int line = kv.first.Mark().line + 1;
      const auto [it, inserted] = lines.emplace(key, line);
      if (!inserted) {
        throw ScenarioError(origin + ": " + at(excerpt(key)) + ": duplicate key (lines " +
                            std::to_string(it->second) + " and " + std::to_string(line) +
                            "; a key may appear once in a mapping)");
      }
      check_keys_of(kv.second, at(excerpt(key)), origin, budget);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_keys_of(node[i], path + "[" + std::to_string(i) + "]", origin, budget);
    }
  } else if (node.IsScalar()) {
    require_utf8(node.Scalar(), origin, path, "value");
  }
}

}  // namespace

void check_unique_keys(const YAML::Node& root, const std::string& origin) {
  std::size_t budget = kMaxYamlNodes;
  check_keys_of(root, "", origin, budget);
}

void apply_override(YAML::Node& root, const std::string& assignment, const std::string& origin) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ScenarioError(origin + ": --set " + excerpt(assignment) + ": expected dotted.path=value");
  }
  if (assignment.size() > kMaxOverrideBytes) {
    throw ScenarioError(origin + ": --set " + excerpt(assignment) + ": longer than " +
                        std::to_string(kMaxOverrideBytes) + " characters");
  }
  require_utf8(assignment, origin, "--set " + printable(assignment.substr(0, eq)), "override");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ScenarioError(origin + ": --set " + excerpt(path) +
                        ": value is not valid YAML: " + excerpt(e.msg));
  }
  check_unique_keys(value, origin + ": --set " + excerpt(path));
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) {
      throw ScenarioError(origin + ": --set " + excerpt(path) + ": empty path component");
    }
    keys.push_back(part);
  }
  if (root.IsScalar() || root.IsSequence()) {  // (yaml-cpp's operator[] would throw BadSubscript)
    throw ScenarioError(origin + ": --set " + excerpt(path) + ": the scenario is not a mapping");
  }
  // yaml-cpp nodes are handles: walk with fresh handles and assign at the leaf.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (!next || next.IsNull()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    } else if (!next.IsMap()) {
      throw ScenarioError(origin + ": --set " + excerpt(path) + ": " + excerpt(keys[i]) +
                          " is not a mapping");
    }
    chain.push_back(next);
  }
  chain.back()[keys.back()] = value;
}

[[noreturn]] void invalid(const std::string& field, double value, const std::string& allowed) {
  throw ScenarioError(field + " = " + format_value(value) + ": " + allowed);
}

void require(bool ok, const std::string& field, double value, const std::string& allowed) {
  if (!ok) invalid(field, value, allowed);
}

bool is_integer_ratio(double a, double b, double& ratio) {
  ratio = a / b;
  return std::abs(ratio - std::round(ratio)) <= 1e-9 * std::max(1.0, std::abs(ratio));
}

void require_progress_mode(const std::string& field, const std::string& mode) {
  if (mode != "auto" && mode != "on" && mode != "off") {
    throw ScenarioError(field + " = \"" + excerpt(mode) + "\": must be auto, on or off");
  }
}

void require_output_format(const std::string& field, const std::string& format) {
  if (format != "csv" && format != "hdf5") {
    throw ScenarioError(field + " = \"" + excerpt(format) + "\": must be csv or hdf5");
  }
}

std::string read_scenario_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path + ": cannot open the scenario file");
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxScenarioBytes) {
    throw ScenarioError(path + ": larger than the limit of " + std::to_string(kMaxScenarioBytes) +
                        " bytes for a scenario");
  }
  return text;
}

namespace {
std::atomic<std::uint64_t> own_parse_count{0};
// A plug-in's copy of this file counts in the host's counter once attached.
std::atomic<std::atomic<std::uint64_t>*> yaml_parse_count{&own_parse_count};
}  // namespace

std::uint64_t yaml_parses() noexcept {
  return yaml_parse_count.load()->load(std::memory_order_relaxed);
}

void* yaml_parse_counter_handle() noexcept { return yaml_parse_count.load(); }

void attach_yaml_parse_counter(void* host_counter) noexcept {
  yaml_parse_count.store(static_cast<std::atomic<std::uint64_t>*>(host_counter));
}

YAML::Node load_yaml(const std::string& text, const std::string& origin,
                     const std::vector<std::string>& overrides) {
  yaml_parse_count.load()->fetch_add(1, std::memory_order_relaxed);
  if (text.size() > kMaxScenarioBytes) {
    throw ScenarioError(origin + ": " + std::to_string(text.size()) +
                        " bytes, larger than the limit of " + std::to_string(kMaxScenarioBytes) +
                        " bytes for a scenario");
  }
  if (overrides.size() > kMaxOverrides) {
    throw ScenarioError(origin + ": " + std::to_string(overrides.size()) + " overrides, at most " +
                        std::to_string(kMaxOverrides) + " allowed");
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(origin + ": not valid YAML: " + excerpt(e.what()));
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  check_unique_keys(root, origin);
  // Outside keys and values (comments): the text goes to the journal and run directory as is.
  if (const std::size_t at = invalid_utf8_at(text); at != std::string_view::npos) {
    const std::size_t line =
        1 + static_cast<std::size_t>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    throw ScenarioError(origin + ": line " + std::to_string(line) + ": not valid UTF-8 (byte " +
                        std::to_string(at) + " of the text); a scenario must be UTF-8");
  }
  for (const std::string& o : overrides) apply_override(root, o, origin);
  return root;
}

}  // namespace hyloop::experiment
