#pragma once
// `hyloop up`: the whole stack on this machine — the loop services as separate processes over
// ipc:// endpoints (the default) or as components in this process over inproc:// (--inproc) —
// runs a scenario through the coordinator and writes the run directory, then stops everything
// (also on Ctrl-C). `--serve` starts the stack and serves the coordinator until SIGINT/SIGTERM.
// The processes' control plane is TLS with tokens: `up` makes a fresh security directory in a
// private temporary directory, gives it to every service and removes it at the end; `--serve`
// prints "hyloop-security-dir DIR" for `hyloop ctl --security-dir DIR`.
// `--emulate-wire` (a scenario whose rig.driver names a device on the wire): `up` also starts
// that device's wire-level emulator in this process (LoadedScenario::make_wire_emulator: the
// kind's plant behind a real socket on rig.driver.peer_*), with the --wire-* impairments, for
// the run, and stops it with the stack.

#include <cstdint>
#include <string>
#include <vector>

#include "hyloop/runtime/rt_setup.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct UpOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out;       ///< the run directory (run_up makes it absolute and normal)
  std::string runs_dir;  ///< the coordinator's --runs-dir: --out's parent, or --runs-dir (--serve)
  std::string mode = "lockstep";  ///< lockstep | real_time (ctl.hpp)
  bool inproc = false;
  bool force = false;  ///< replace an existing run directory (run_output.hpp)
  bool serve = false;
  bool emulate_wire = false;  ///< start the rig.driver's wire emulator for the run
  double wire_latency_ms = 0.0;
  double wire_jitter_ms = 0.0;
  double wire_loss = 0.0;
  std::uint64_t wire_seed = 1;
  std::string coordinator_address = "127.0.0.1:0";  ///< --serve: where the coordinator listens
  /// --service-config: every service's --config (absolute after run_up); "" none.
  std::string service_config;
  /// Read from it once by run_up: the input deadline (what --inproc applies) and whether it sets
  /// log_level (then up passes no --log-level of its own).
  int input_deadline_periods = 0;
  int input_deadline_floor_ms = 0;
  runtime::RtOptions rt;  ///< --service-config rt (applied in process with --inproc)
  bool service_config_sets_log_level = false;
};

// Declares the "up" subcommand of `app`, writing into `options`.
CLI::App* add_up_subcommand(CLI::App& app, UpOptions& options);

// Checks the arguments (2: SCENARIO and --out missing without --serve, or --force with --serve),
// makes --out absolute and its parent the coordinator's runs directory, then runs (or serves) the
// stack: 0 done, 1 failed. @throws std::runtime_error for an --out that may not be written.
int run_up(UpOptions options);

}  // namespace hyloop::app
