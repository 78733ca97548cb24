#pragma once
// The `--config FILE` of a service binary (YAML):
//
//   name: sensor                 # instance name in logs (default: the service's name)
//   grpc_address: 127.0.0.1:0    # or host:port, unix:/path; port 0 picks a free port
//   log_level: info              # trace, debug, info, warn, error, off
//   metrics_address: ""          # HOST:PORT serving Prometheus /metrics; "" (default): off
//   rt: {enabled: false, priority: 80, cpu: -1, lock_memory: true, timer_slack_ns: 1}
//
// Strict: an unknown key or a value out of range is an error (std::invalid_argument) naming the
// file, the field, the value and what is allowed. Every field is optional.

#include <string>

#include "hyloop/runtime/rt_setup.hpp"

namespace hyloop::runtime {

struct ServiceConfig {
  std::string name;
  std::string grpc_address = "127.0.0.1:0";
  std::string log_level = "info";
  /// Where /metrics is served (HOST:PORT, port 0 for a free one); empty: not served.
  std::string metrics_address;
  RtOptions rt;
};

/// Defaults, with `name` set.
[[nodiscard]] ServiceConfig default_service_config(const std::string& name);

/// Parses YAML text; `source_name` (the file name) prefixes error messages.
[[nodiscard]] ServiceConfig parse_service_config(const std::string& yaml_text,
                                                 const std::string& source_name);

/// Reads and parses a file; throws std::invalid_argument if it cannot be read or is invalid.
[[nodiscard]] ServiceConfig load_service_config(const std::string& path);

}  // namespace hyloop::runtime
