#include "hyloop/experiment/yaml_fields.hpp"

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

std::string too_long_string(std::string_view text) {
  // Appended, not "\"" + std::string&&: GCC 12's false -Wrestrict on that (GCC bug 105329).
  std::string message(1, '"');
  message += excerpt(text);
  message += "\": longer than ";
  message += std::to_string(kMaxStringChars);
  message += " characters";
  return message;
}

namespace {

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

YAML::Node load_yaml(const std::string& text, const std::string& origin,
                     const std::vector<std::string>& overrides) {
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
  for (const std::string& o : overrides) apply_override(root, o, origin);
  return root;
}

}  // namespace hyloop::experiment
