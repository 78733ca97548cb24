#include "hyloop/experiment/yaml_fields.hpp"

#include <fstream>
#include <sstream>

namespace hyloop::experiment {

std::string format_value(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

void apply_override(YAML::Node& root, const std::string& assignment, const std::string& origin) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ScenarioError(origin + ": --set " + assignment + ": expected dotted.path=value");
  }
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ScenarioError(origin + ": --set " + path + ": value is not valid YAML: " + e.msg);
  }
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty()) throw ScenarioError(origin + ": --set " + path + ": empty path component");
    keys.push_back(part);
  }
  // yaml-cpp nodes are handles: walk with fresh handles and assign at the leaf.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (!next || next.IsNull()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    } else if (!next.IsMap()) {
      throw ScenarioError(origin + ": --set " + path + ": " + keys[i] + " is not a mapping");
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
    throw ScenarioError(field + " = \"" + mode + "\": must be auto, on or off");
  }
}

std::string read_scenario_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path + ": cannot open the scenario file");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

YAML::Node load_yaml(const std::string& text, const std::string& origin,
                     const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(origin + ": not valid YAML: " + e.what());
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const std::string& o : overrides) apply_override(root, o, origin);
  return root;
}

}  // namespace hyloop::experiment
