#include "runners.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "hyloop/transport/clock.hpp"

namespace hyloop::bench {

namespace {

namespace tr = hyloop::transport;

constexpr milliseconds kConnectProbe{50};
constexpr std::int64_t kConnectLimitNs = 10'000'000'000;
constexpr int kForwarderIdleLimit = 30;  // receive timeouts in a row before a forwarder quits
constexpr std::int64_t kChildExitLimitNs = 5'000'000'000;

struct Arrival {
  std::int64_t origin_ns = 0;
  std::int64_t arrival_ns = 0;
};

/// Waits for the message of `cycle` (older ones, from round trips that timed out, are dropped).
std::optional<Arrival> await_cycle(NodeIo& io, std::uint64_t cycle, milliseconds timeout) {
  const std::int64_t give_up = now_ns() + nanoseconds(timeout).count();
  for (;;) {
    const std::int64_t left = give_up - now_ns();
    if (left <= 0) {
      return std::nullopt;
    }
    const auto s = io.receive(milliseconds((left + 999'999) / 1'000'000));
    if (!s) {
      if (io.closed()) {
        return std::nullopt;
      }
      continue;
    }
    if (s->cycle == cycle) {
      return Arrival{s->origin_ns, now_ns()};
    }
  }
}

/// Probes until a message comes back, then warms up. Returns false if the ring never closed.
bool connect_and_warm_up(NodeIo& io, const RunSpec& spec, std::uint64_t& cycle) {
  const std::int64_t start = now_ns();
  bool up = false;
  while (!up && now_ns() - start < kConnectLimitNs) {
    io.send_origin(cycle, now_ns());
    up = await_cycle(io, cycle, kConnectProbe).has_value();
    ++cycle;
  }
  if (!up) {
    return false;
  }
  for (std::uint64_t i = 0; i < spec.warmup; ++i, ++cycle) {
    io.send_origin(cycle, now_ns());
    (void)await_cycle(io, cycle, kRoundTripTimeout);
  }
  return true;
}

void run_back_to_back(NodeIo& io, std::uint64_t target, std::uint64_t& cycle, RunResult& res) {
  for (std::uint64_t i = 0; i < target; ++i, ++cycle) {
    io.send_origin(cycle, now_ns());
    if (const auto a = await_cycle(io, cycle, kRoundTripTimeout)) {
      res.latency_ns.push_back(a->arrival_ns - a->origin_ns);
    } else {
      ++res.lost;
    }
  }
}

/// One round trip per deadline of a PeriodicClock at spec.rate_hz (`io == nullptr`: none).
void run_paced(NodeIo* io, const RunSpec& spec, std::uint64_t target, std::uint64_t& cycle,
               RunResult& res) {
  const std::int64_t period_ns = 1'000'000'000 / spec.rate_hz;
  tr::PeriodicClock clock({.period = nanoseconds(period_ns), .spin_margin = spec.spin_margin});
  clock.start();
  while (res.deadlines < target) {
    const tr::Tick tick = clock.wait_next();
    bool late = tick.missed;
    if (io != nullptr) {
      io->send_origin(cycle, now_ns());
      if (const auto a = await_cycle(*io, cycle, kRoundTripTimeout)) {
        res.latency_ns.push_back(a->arrival_ns - a->origin_ns);
      } else {
        ++res.lost;
        late = true;
      }
    }
    if (now_ns() >= tick.deadline_ns + period_ns) {
      late = true;  // the ring was not back before the next deadline
    }
    res.deadlines += 1 + tick.skipped;
    res.missed += tick.skipped + (late ? 1 : 0);
    ++cycle;
  }
  res.clock_misses = clock.misses();
  res.clock_skipped = clock.skipped();
  res.lateness_p50_ns = clock.lateness().percentile_ns(0.50);
  res.lateness_p99_ns = clock.lateness().percentile_ns(0.99);
  res.lateness_max_ns = clock.lateness().max_ns();
  res.timer_slack_set = clock.timer_slack_set();
}

void run_forwarder(NodeIo& io, const std::atomic<bool>* abort) {
  int idle = 0;
  while (idle < kForwarderIdleLimit) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) {
      return;
    }
    const auto s = io.receive(kRoundTripTimeout);
    if (!s) {
      if (io.closed()) {
        return;
      }
      ++idle;
      continue;
    }
    idle = 0;
    io.forward();
    if (s->cycle == kStopCycle) {
      return;
    }
  }
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// Connected SOCK_SEQPACKET pair through an abstract-namespace listening socket.
std::array<int, 2> connect_abstract(const std::string& name) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), std::min(name.size(), sizeof addr.sun_path - 2));
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                                          std::min(name.size(), sizeof addr.sun_path - 2));
  const int listener = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  if (listener < 0) throw_errno("socket");
  if (::bind(listener, reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
      ::listen(listener, 1) != 0) {
    ::close(listener);
    throw_errno("bind/listen " + name);
  }
  const int sender = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  if (sender < 0 || ::connect(sender, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    ::close(listener);
    throw_errno("connect " + name);
  }
  const int receiver = ::accept(listener, nullptr, nullptr);
  ::close(listener);
  if (receiver < 0) throw_errno("accept " + name);
  return {sender, receiver};
}

void close_other_fds(const RingSetup& ring, int node) {
  for (int link = 0; link < kNodes; ++link) {
    const auto i = static_cast<std::size_t>(link);
    if (link != node) ::close(ring.send_fd[i]);
    if (link != input_link(node)) ::close(ring.recv_fd[i]);
  }
}

[[noreturn]] void child_main(const RingSetup& ring, int node, pid_t parent) {
  int code = 0;
  try {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) std::_Exit(3);
    if (ring.transport == Transport::kUds) close_other_fds(ring, node);
    std::optional<zmq::context_t> context;
    if (ring.transport != Transport::kUds) context.emplace();
    {
      auto io = make_node(ring, context ? &*context : nullptr, node);
      io->connect_output();
      run_forwarder(*io, nullptr);
      if (io->rejected() != 0) code = 1;
    }
  } catch (...) {
    code = 2;
  }
  std::_Exit(code);  // no atexit handlers, no destructors of the parent's objects
}

/// Waits for the forwarder processes (killing any still there after kChildExitLimitNs).
std::uint64_t reap_children(const std::array<pid_t, kNodes>& children) {
  std::uint64_t failures = 0;
  const std::int64_t give_up = now_ns() + kChildExitLimitNs;
  for (int node = 1; node < kNodes; ++node) {
    const pid_t pid = children[static_cast<std::size_t>(node)];
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < give_up) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ++failures;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failures;
    }
  }
  return failures;
}

}  // namespace

std::string_view name_of(Placement p) { return p == Placement::kProcess ? "process" : "thread"; }

Placement parse_placement(std::string_view s) {
  if (s == "process") return Placement::kProcess;
  if (s == "thread") return Placement::kThread;
  throw std::invalid_argument("unknown placement: " + std::string(s));
}

RunResult run_origin(NodeIo* io, const RunSpec& spec) {
  RunResult res;
  std::uint64_t cycle = 1;
  if (io != nullptr && !connect_and_warm_up(*io, spec, cycle)) {
    res.error = "ring did not connect";
    return res;
  }
  const auto target = spec.rate_hz == 0
                          ? spec.roundtrips
                          : static_cast<std::uint64_t>(std::llround(spec.rate_hz * spec.seconds));
  res.latency_ns.reserve(target + 16);
  const std::int64_t t_start = now_ns();
  if (spec.rate_hz == 0) {
    run_back_to_back(*io, target, cycle, res);
  } else {
    run_paced(io, spec, target, cycle, res);
  }
  res.elapsed_s = 1e-9 * static_cast<double>(now_ns() - t_start);
  if (io != nullptr) {
    io->send_origin(kStopCycle, now_ns());
    (void)await_cycle(*io, kStopCycle, kRoundTripTimeout);
    res.rejected = io->rejected();
  }
  return res;
}

RunResult run_threads(RingSetup ring, const RunSpec& spec, const std::string& tag) {
  std::optional<zmq::context_t> context;
  if (ring.transport == Transport::kUds) {
    for (std::size_t i = 0; i < kNodes; ++i) {
      std::array<int, 2> fds{};
      if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds.data()) != 0) throw_errno("socketpair");
      ring.send_fd[i] = fds[0];
      ring.recv_fd[i] = fds[1];
    }
  } else {
    context.emplace();
    for (std::size_t i = 0; i < kNodes; ++i) {
      ring.endpoints[i] = "inproc://ring-" + tag + "-" + std::to_string(i);
    }
  }
  std::atomic<bool> abort{false};
  std::barrier bound(kNodes);  // every input bound before any output connects
  std::array<std::string, kNodes> errors;
  RunResult result;
  auto node_main = [&](int node) {
    auto& error = errors[static_cast<std::size_t>(node)];
    std::unique_ptr<NodeIo> io;
    try {
      io = make_node(ring, context ? &*context : nullptr, node);
    } catch (const std::exception& e) {
      error = e.what();
    }
    bound.arrive_and_wait();
    if (!io) {
      abort.store(true);
      return;
    }
    try {
      io->connect_output();
      if (node == 0) {
        result = run_origin(io.get(), spec);
        abort.store(true);
      } else {
        run_forwarder(*io, &abort);
      }
    } catch (const std::exception& e) {
      error = e.what();
      abort.store(true);
    }
  };
  {
    std::vector<std::jthread> threads;
    for (int node = 1; node < kNodes; ++node) {
      threads.emplace_back(node_main, node);
    }
    node_main(0);
  }
  for (const auto& e : errors) {
    if (!e.empty()) result.error += (result.error.empty() ? "" : "; ") + e;
  }
  return result;
}

RunResult run_processes(RingSetup ring, const RunSpec& spec, const std::string& tag) {
  if (ring.transport == Transport::kUds) {
    for (std::size_t i = 0; i < kNodes; ++i) {
      const auto fds = connect_abstract("hyloop-ring-" + tag + "-" + std::to_string(i));
      ring.send_fd[i] = fds[0];
      ring.recv_fd[i] = fds[1];
    }
  } else {
    for (std::size_t i = 0; i < kNodes; ++i) {
      ring.endpoints[i] = "ipc://@hyloop-ring-" + tag + "-" + std::to_string(i);
    }
  }
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  std::array<pid_t, kNodes> children{};
  for (int node = 1; node < kNodes; ++node) {
    const pid_t pid = ::fork();
    if (pid < 0) throw_errno("fork");
    if (pid == 0) child_main(ring, node, parent);
    children[static_cast<std::size_t>(node)] = pid;
  }
  if (ring.transport == Transport::kUds) close_other_fds(ring, 0);
  RunResult result;
  try {
    std::optional<zmq::context_t> context;
    if (ring.transport != Transport::kUds) context.emplace();
    auto io = make_node(ring, context ? &*context : nullptr, 0);
    io->connect_output();
    result = run_origin(io.get(), spec);
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  result.child_failures += reap_children(children);
  return result;
}

}  // namespace hyloop::bench
