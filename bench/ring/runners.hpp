#pragma once
// The measurement loops of the ring benchmark: node 0 (the rig: stamps, sends, measures the
// round trip when its message comes back) and the forwarders, run as threads of one process
// (ZeroMQ over inproc://, UDS over socketpairs) or as forked processes (ZeroMQ over ipc://
// abstract names, UDS via abstract listening sockets connected before the fork).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends.hpp"

namespace hyloop::bench {

enum class Placement : std::uint8_t { kProcess, kThread };

std::string_view name_of(Placement p);
/// "process" or "thread"; throws std::invalid_argument naming anything else.
Placement parse_placement(std::string_view s);

struct RunSpec {
  int rate_hz = 0;  ///< 0: back to back
  std::uint64_t roundtrips = 0;
  double seconds = 0.0;
  std::uint64_t warmup = 0;
  nanoseconds spin_margin{0};
};

struct RunResult {
  std::vector<std::int64_t> latency_ns;  ///< completed round trips (measured phase)
  std::uint64_t lost = 0;                ///< round trips not back within kRoundTripTimeout
  std::uint64_t deadlines = 0;           ///< paced: grid deadlines (served + skipped)
  std::uint64_t missed = 0;  ///< paced: late wake-up, ring not back by the next deadline, skipped
  std::uint64_t clock_misses = 0;
  std::uint64_t clock_skipped = 0;
  std::int64_t lateness_p50_ns = 0;
  std::int64_t lateness_p99_ns = 0;
  std::int64_t lateness_max_ns = 0;
  bool timer_slack_set = false;
  std::uint64_t rejected = 0;
  std::uint64_t child_failures = 0;
  double elapsed_s = 0.0;
  std::string error;
};

/// Node 0. `io == nullptr`: the bare timer (the clock with no ring).
RunResult run_origin(NodeIo* io, const RunSpec& spec);
/// Nodes 1..3 of `ring` as threads; node 0 on the calling thread. `tag` names the endpoints.
RunResult run_threads(RingSetup ring, const RunSpec& spec, const std::string& tag);
/// Nodes 1..3 of `ring` as forked processes; node 0 in this process.
RunResult run_processes(RingSetup ring, const RunSpec& spec, const std::string& tag);

}  // namespace hyloop::bench
