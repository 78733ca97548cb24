#include "hyloop/runtime/service_config.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "hyloop/runtime/logging.hpp"

namespace hyloop::runtime {
namespace {

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void error(const YAML::Node& node, const std::string& what) const {
    std::string where = source_;
    if (node.Mark().line >= 0) where += ":" + std::to_string(node.Mark().line + 1);
    throw std::invalid_argument(where + ": " + what);
  }

  // Rejects keys of `map` other than `allowed` (a comma-separated list, for the message), and a
  // key given twice (yaml-cpp keeps both; the first would win silently).
  void check_keys(const YAML::Node& map, const std::string& prefix,
                  std::initializer_list<const char*> allowed) const {
    std::map<std::string, int> lines;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) error(kv.first, "a key must be a name");
      const auto key = kv.first.Scalar();
      if (const auto [it, fresh] = lines.emplace(key, kv.first.Mark().line + 1); !fresh) {
        error(kv.first, "duplicate key '" + prefix + key.substr(0, 200) + "' (lines " +
                            std::to_string(it->second) + " and " +
                            std::to_string(kv.first.Mark().line + 1) + ")");
      }
      bool known = false;
      std::string list;
      for (const char* a : allowed) {
        known = known || key == a;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!known) {
        error(kv.first,
              "unknown key '" + prefix + key.substr(0, 200) + "' (allowed: " + list + ")");
      }
    }
  }

  std::string string(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) error(node, "field '" + field + "' must be a string");
    return node.Scalar();
  }

  bool boolean(const YAML::Node& node, const std::string& field) const {
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
      error(node, "field '" + field + "' = '" + scalar(node) + "' must be true or false");
    }
    return v;
  }

  std::int64_t integer(const YAML::Node& node, const std::string& field, std::int64_t lo,
                       std::int64_t hi, const std::string& range) const {
    std::int64_t v = 0;
    if (!node.IsScalar() || !YAML::convert<std::int64_t>::decode(node, v) || v < lo || v > hi) {
      error(node, "field '" + field + "' = '" + scalar(node) +
                      "' is out of range (allowed: integer " + range + ")");
    }
    return v;
  }

 private:
  static std::string scalar(const YAML::Node& node) {
    return node.IsScalar() ? node.Scalar() : std::string("(not a scalar)");
  }

  std::string source_;
};

// The loop inputs' deadline (input_deadline.hpp): its periods and its floor.
void parse_input_deadline(const Parser& p, const YAML::Node& root, ServiceConfig& config) {
  if (root["input_deadline_periods"]) {
    config.input_deadline_periods = static_cast<int>(
        p.integer(root["input_deadline_periods"], "input_deadline_periods",
                  kMinInputDeadlinePeriods, kMaxInputDeadlinePeriods,
                  std::to_string(kMinInputDeadlinePeriods) + ".." +
                      std::to_string(kMaxInputDeadlinePeriods) + " (periods of a loop input)"));
  }
  if (root["input_deadline_floor_ms"]) {
    config.input_deadline_floor_ms = static_cast<int>(p.integer(
        root["input_deadline_floor_ms"], "input_deadline_floor_ms", 0, kMaxInputDeadlineFloorMs,
        "0.." + std::to_string(kMaxInputDeadlineFloorMs) + " (ms; 0: none)"));
  }
}

}  // namespace

ServiceConfig default_service_config(const std::string& name) {
  ServiceConfig config;
  config.name = name;
  return config;
}

ServiceConfig parse_service_config(const std::string& yaml_text, const std::string& source_name) {
  const Parser p(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument(source_name + ": not valid YAML: " + e.what());
  }
  ServiceConfig config;
  if (root.IsNull()) return config;
  if (!root.IsMap()) p.error(root, "a service configuration must be a mapping");
  p.check_keys(
      root, "",
      {"name", "grpc_address", "log_level", "metrics_address", "security_dir", "insecure",
       "reflection", "ipc_dir", "rt", "input_deadline_periods", "input_deadline_floor_ms"});

  if (root["name"]) config.name = p.string(root["name"], "name");
  if (root["grpc_address"]) {
    config.grpc_address = p.string(root["grpc_address"], "grpc_address");
    if (config.grpc_address.empty()) p.error(root["grpc_address"], "field 'grpc_address' is empty");
  }
  if (root["log_level"]) {
    config.log_level = p.string(root["log_level"], "log_level");
    try {
      (void)parse_log_level(config.log_level);
    } catch (const std::invalid_argument& e) {
      p.error(root["log_level"], std::string("field 'log_level': ") + e.what());
    }
  }
  if (root["metrics_address"]) {
    config.metrics_address = p.string(root["metrics_address"], "metrics_address");
    const auto colon = config.metrics_address.rfind(':');
    if (!config.metrics_address.empty() &&
        (colon == std::string::npos || colon == 0 || colon + 1 == config.metrics_address.size() ||
         config.metrics_address.find_first_not_of("0123456789", colon + 1) != std::string::npos)) {
      p.error(root["metrics_address"], "field 'metrics_address' = '" + config.metrics_address +
                                           "' must be HOST:PORT (e.g. 0.0.0.0:9464; port 0: a "
                                           "free one) or empty (off)");
    }
  }
  if (root["security_dir"]) {
    config.security_dir = p.string(root["security_dir"], "security_dir");
    if (config.security_dir.empty()) p.error(root["security_dir"], "field 'security_dir' is empty");
  }
  if (root["insecure"]) config.insecure = p.boolean(root["insecure"], "insecure");
  if (root["reflection"]) config.reflection = p.boolean(root["reflection"], "reflection");
  if (root["ipc_dir"]) {
    config.ipc_dir = p.string(root["ipc_dir"], "ipc_dir");
    if (config.ipc_dir.empty() || config.ipc_dir.front() != '/') {
      p.error(root["ipc_dir"], "field 'ipc_dir' = '" + config.ipc_dir.substr(0, 200) +
                                   "' must be an absolute directory path");
    }
  }
  parse_input_deadline(p, root, config);
  if (const YAML::Node rt = root["rt"]) {
    if (!rt.IsMap()) p.error(rt, "field 'rt' must be a mapping");
    p.check_keys(rt, "rt.", {"enabled", "priority", "cpu", "lock_memory", "timer_slack_ns"});
    if (rt["enabled"]) config.rt.enabled = p.boolean(rt["enabled"], "rt.enabled");
    if (rt["priority"]) {
      config.rt.priority =
          static_cast<int>(p.integer(rt["priority"], "rt.priority", 1, 99, "1..99"));
    }
    if (rt["cpu"]) {
      config.rt.cpu = static_cast<int>(
          p.integer(rt["cpu"], "rt.cpu", -1, 1023, "-1 (no pinning) or a CPU index 0..1023"));
    }
    if (rt["lock_memory"]) config.rt.lock_memory = p.boolean(rt["lock_memory"], "rt.lock_memory");
    if (rt["timer_slack_ns"]) {
      config.rt.timer_slack_ns = p.integer(rt["timer_slack_ns"], "rt.timer_slack_ns", 1,
                                           std::numeric_limits<std::int64_t>::max(), ">= 1");
    }
  }
  return config;
}

ServiceConfig load_service_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot read the service configuration");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_service_config(text.str(), path);
}

}  // namespace hyloop::runtime
