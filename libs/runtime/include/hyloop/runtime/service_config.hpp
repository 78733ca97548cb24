#pragma once
// The `--config FILE` of a service binary (YAML):
//
//   name: sensor                 # instance name in logs (default: the service's name)
//   grpc_address: 127.0.0.1:0    # or host:port, unix:/path; port 0 picks a free port
//   log_level: info              # trace, debug, info, warn, error, off
//   metrics_address: ""          # HOST:PORT serving Prometheus /metrics; "" (default): off
//   security_dir: /etc/hyloop/lab   # `hyloop certs` output: TLS, tokens, CURVE keys
//   insecure: false              # plaintext gRPC, no tokens (development only)
//   reflection: false            # serve grpc.reflection
//   ipc_dir: /run/user/1000/hyloop  # ipc:// loop sockets (default $XDG_RUNTIME_DIR/hyloop or
//                                   # /tmp/hyloop-<uid>; made 0700; docs/security.md)
//   rt: {enabled: false, priority: 80, cpu: -1, lock_memory: true, timer_slack_ns: 1}
//   input_deadline_periods: 2    # real time: a loop input silent for this many of its periods
//                                # has lost its upstream (2..10; runtime/input_deadline.hpp)
//   input_deadline_floor_ms: 20  # ... but never for less than this (0..1000; 0 on an RT host)
//
// Strict: an unknown key or a value out of range is an error (std::invalid_argument) naming the
// file, the field, the value and what is allowed. Every field is optional.

#include <string>

#include "hyloop/runtime/input_deadline.hpp"
#include "hyloop/runtime/rt_setup.hpp"

namespace hyloop::runtime {

struct ServiceConfig {
  std::string name;
  std::string grpc_address = "127.0.0.1:0";
  std::string log_level = "info";
  /// Where /metrics is served (HOST:PORT, port 0 for a free one); empty: not served.
  std::string metrics_address;
  /// The security directory (security.hpp); empty: none given.
  std::string security_dir;
  /// Serve without TLS and tokens (development only); a service refuses to start with neither
  /// security_dir nor insecure.
  bool insecure = false;
  bool reflection = false;
  /// Directory of the ipc:// loop sockets (transport/ipc_dir.hpp); empty: the default.
  std::string ipc_dir;
  RtOptions rt;
  /// Real time: the silence, in periods of an input, after which its upstream counts as lost.
  int input_deadline_periods = kDefaultInputDeadlinePeriods;
  /// The least silence, ms, that counts as a lost upstream whatever the period (0: none).
  int input_deadline_floor_ms = kDefaultInputDeadlineFloorMs;
};

/// Defaults, with `name` set.
[[nodiscard]] ServiceConfig default_service_config(const std::string& name);

/// Parses YAML text; `source_name` (the file name) prefixes error messages.
[[nodiscard]] ServiceConfig parse_service_config(const std::string& yaml_text,
                                                 const std::string& source_name);

/// Reads and parses a file; throws std::invalid_argument if it cannot be read or is invalid.
[[nodiscard]] ServiceConfig load_service_config(const std::string& path);

}  // namespace hyloop::runtime
