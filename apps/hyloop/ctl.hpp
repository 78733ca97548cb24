// `hyloop ctl`: drive a running coordinator (hyloop.v1.Experiment) over gRPC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hyloop::app {

struct CtlOptions {
  std::string address;                 // host:port of the coordinator
  std::string command;                 // start|stop|estop|status|watch|load|summary|runs
  std::string scenario;                // scenario file (load; start loads it first if given)
  std::vector<std::string> overrides;  // "dotted.path=value"
  std::string out;                     // run directory (start)
  std::string mode = "lockstep";       // lockstep|real_time (start)
  std::string reason;                  // estop
  std::string run_id;                  // summary (empty: the latest run)
  std::uint32_t decimation = 50;       // watch: every n-th cycle
  std::string security_dir;            // DIR/ca.crt and DIR/tokens/<role>
  std::string role = "operator";       // token of security_dir
  std::string ca_file;                 // or a CA file ...
  std::string token_file;              // ... and a token file
  bool insecure = false;               // or plaintext, no token
  double timeout_s = 0;  // unary calls: deadline (0: 10 s); watch: stop after this (0: run end)
};

// The clock modes of `ctl start` and `up`, spelled as summary.json and the journal spell them.
inline constexpr const char* kModeLockstep = "lockstep";
inline constexpr const char* kModeRealTime = "real_time";

// --mode lockstep|real_time on `sub` into `mode`; the old spelling `realtime` is read as
// real_time with a deprecation notice on stderr.
CLI::Option* add_mode_option(CLI::App& sub, std::string& mode);

// Declares the "ctl" subcommand of `app`, writing into `options`.
// Returns the subcommand, so the caller can test whether it was parsed.
CLI::App* add_ctl_subcommand(CLI::App& app, CtlOptions& options);

// Runs one ctl command. Exit codes: 0 done, 1 refused or failed, 2 coordinator unreachable.
int run_ctl(const CtlOptions& o);

}  // namespace hyloop::app
