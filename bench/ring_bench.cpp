// Ring benchmark (issue 5): hyloop's loop plane against a bare ZeroMQ ring of the same hops and
// message size, and a raw Unix-socket ring as the floor; back to back and paced by
// transport::PeriodicClock; as separate processes and as threads of one process. A standalone
// program (it forks), not Google Benchmark. Results: docs/performance.md, "Loop rings".
//
// The ring has the loop's four hops: rig (node 0) → sensor → dynamics → actuator → rig. Node 0
// stamps each message with its CLOCK_MONOTONIC time, sends it, and measures the round trip when
// it comes back (latency = arrival − origin); nodes 1..3 block on receive and forward.
//
//   hyloop: Encoder/Decoder of a v1::SensorSample (run id and cycle order validated, real-time
//           mode) over transport::Channel (ZeroMQ PAIR, try_send / receive with a timeout).
//   zmq:    bare cppzmq PAIR sockets, raw bytes of the same size, blocking send and recv.
//   uds:    AF_UNIX SOCK_SEQPACKET sockets with read/write, raw bytes of the same size.
// Processes: fork after the endpoints are decided; ZeroMQ over ipc:// (abstract names), UDS via
// abstract bound/listening sockets connected before the fork. Threads: ZeroMQ over inproc:// (one
// shared context), UDS over socketpairs.
//
// Run: build/bin/ring_bench --out bench/results/ring.json       (--quick: smoke test, seconds)

#include <hyloop/v1/loop.pb.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/codec.hpp"

namespace {

namespace tr = hyloop::transport;
namespace v1 = hyloop::v1;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kNodes = 4;
constexpr std::uint64_t kStopCycle = std::uint64_t{1} << 62;
constexpr std::size_t kBufferBytes = 512;
constexpr std::size_t kStampBytes = 16;  // raw rings: cycle (u64) then origin time (i64)
constexpr milliseconds kRoundTripTimeout{1000};
constexpr milliseconds kConnectProbe{50};
constexpr std::int64_t kConnectLimitNs = 10'000'000'000;
constexpr int kForwarderIdleLimit = 30;  // receive timeouts in a row before a forwarder quits
constexpr std::int64_t kChildExitLimitNs = 5'000'000'000;
constexpr int kHwm = 16;
constexpr std::string_view kRunId = "ring-bench";
constexpr auto kMaxAge = std::chrono::seconds(1);  // staleness check on, above any VM stall

enum class Transport : std::uint8_t { kUds, kZmq, kHyloop };
enum class Placement : std::uint8_t { kProcess, kThread };

std::string_view name_of(Transport t) {
  switch (t) {
    case Transport::kUds:
      return "uds";
    case Transport::kZmq:
      return "zmq";
    case Transport::kHyloop:
      return "hyloop";
  }
  return "?";
}

std::string_view name_of(Placement p) { return p == Placement::kProcess ? "process" : "thread"; }

Transport parse_transport(std::string_view s) {
  if (s == "uds") return Transport::kUds;
  if (s == "zmq") return Transport::kZmq;
  if (s == "hyloop") return Transport::kHyloop;
  throw std::invalid_argument("unknown transport: " + std::string(s));
}

Placement parse_placement(std::string_view s) {
  if (s == "process") return Placement::kProcess;
  if (s == "thread") return Placement::kThread;
  throw std::invalid_argument("unknown placement: " + std::string(s));
}

std::int64_t now_ns() noexcept { return tr::monotonic_now_ns(); }

struct Stamp {
  std::uint64_t cycle = 0;
  std::int64_t origin_ns = 0;
};

// ---------------------------------------------------------------------------------------------
// One node's input (from the previous node) and output (to the next node).

class NodeIo {
 public:
  NodeIo() = default;
  NodeIo(const NodeIo&) = delete;
  NodeIo& operator=(const NodeIo&) = delete;
  NodeIo(NodeIo&&) = delete;
  NodeIo& operator=(NodeIo&&) = delete;
  virtual ~NodeIo() = default;

  /// Connects the output (after every node has bound its input).
  virtual void connect_output() {}
  /// Node 0: sends a new message of `cycle` stamped with `origin_ns`.
  virtual void send_origin(std::uint64_t cycle, std::int64_t origin_ns) = 0;
  /// Waits up to `timeout` for one (accepted) message.
  virtual std::optional<Stamp> receive(milliseconds timeout) = 0;
  /// Forwards the message last received.
  virtual void forward() = 0;
  /// True once the input reported end of stream.
  [[nodiscard]] virtual bool closed() const { return false; }
  /// Messages rejected by validation (hyloop only).
  [[nodiscard]] virtual std::uint64_t rejected() const { return 0; }
};

void put_stamp(std::span<std::byte> buffer, Stamp s) noexcept {
  std::memcpy(buffer.data(), &s.cycle, sizeof s.cycle);
  std::memcpy(buffer.data() + sizeof s.cycle, &s.origin_ns, sizeof s.origin_ns);
}

Stamp get_stamp(std::span<const std::byte> buffer) noexcept {
  Stamp s;
  std::memcpy(&s.cycle, buffer.data(), sizeof s.cycle);
  std::memcpy(&s.origin_ns, buffer.data() + sizeof s.cycle, sizeof s.origin_ns);
  return s;
}

/// Bare ZeroMQ PAIR sockets, raw bytes, blocking recv (ZMQ_RCVTIMEO for the timeout).
class ZmqIo final : public NodeIo {
 public:
  ZmqIo(zmq::context_t& context, const std::string& input, std::string output,
        std::size_t message_bytes)
      : in_(context, zmq::socket_type::pair),
        out_(context, zmq::socket_type::pair),
        output_(std::move(output)),
        message_bytes_(message_bytes) {
    for (zmq::socket_t* s : {&in_, &out_}) {
      s->set(zmq::sockopt::linger, 0);
      s->set(zmq::sockopt::sndhwm, kHwm);
      s->set(zmq::sockopt::rcvhwm, kHwm);
    }
    // Blocking send (bounded): a dontwait send on a send-only PAIR socket can fail spuriously
    // at more than ~16 messages per ms, because libzmq refreshes the HWM accounting only every
    // lwm messages and processes a send-only socket's commands at most every ~1 ms (TSC
    // throttle); a blocking send processes them and succeeds. Costs nothing when not full.
    out_.set(zmq::sockopt::sndtimeo, static_cast<int>(kRoundTripTimeout.count()));
    in_.bind(input);
  }

  void connect_output() override { out_.connect(output_); }

  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override {
    put_stamp(tx_, {cycle, origin_ns});
    (void)out_.send(zmq::const_buffer(tx_.data(), message_bytes_), zmq::send_flags::none);
  }

  std::optional<Stamp> receive(milliseconds timeout) override {
    const int ms = static_cast<int>(timeout.count());
    if (ms != timeout_ms_) {
      in_.set(zmq::sockopt::rcvtimeo, ms);
      timeout_ms_ = ms;
    }
    const auto r = in_.recv(zmq::mutable_buffer(rx_.data(), rx_.size()));
    if (!r || r->size < kStampBytes) {
      return std::nullopt;
    }
    rx_bytes_ = r->size;
    return get_stamp(rx_);
  }

  void forward() override {
    (void)out_.send(zmq::const_buffer(rx_.data(), rx_bytes_), zmq::send_flags::none);
  }

 private:
  zmq::socket_t in_;
  zmq::socket_t out_;
  std::string output_;
  std::size_t message_bytes_;
  std::size_t rx_bytes_ = 0;
  int timeout_ms_ = -2;
  std::array<std::byte, kBufferBytes> tx_{};
  std::array<std::byte, kBufferBytes> rx_{};
};

/// Raw Unix-domain SOCK_SEQPACKET sockets, read/write (SO_RCVTIMEO for the timeout).
class UdsIo final : public NodeIo {
 public:
  UdsIo(int in_fd, int out_fd, std::size_t message_bytes)
      : in_fd_(in_fd), out_fd_(out_fd), message_bytes_(message_bytes) {}
  ~UdsIo() override {
    ::close(in_fd_);
    ::close(out_fd_);
  }
  UdsIo(const UdsIo&) = delete;
  UdsIo& operator=(const UdsIo&) = delete;
  UdsIo(UdsIo&&) = delete;
  UdsIo& operator=(UdsIo&&) = delete;

  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override {
    put_stamp(tx_, {cycle, origin_ns});
    write_all(tx_.data(), message_bytes_);
  }

  std::optional<Stamp> receive(milliseconds timeout) override {
    const auto ms = timeout.count();
    if (ms != timeout_ms_) {
      timeval tv{};
      tv.tv_sec = static_cast<time_t>(ms / 1000);
      tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
      ::setsockopt(in_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      timeout_ms_ = ms;
    }
    const ssize_t n = ::read(in_fd_, rx_.data(), rx_.size());
    if (n == 0) {
      closed_ = true;
      return std::nullopt;
    }
    if (n < static_cast<ssize_t>(kStampBytes)) {
      return std::nullopt;  // timeout (EAGAIN) or EINTR
    }
    rx_bytes_ = static_cast<std::size_t>(n);
    return get_stamp(rx_);
  }

  void forward() override { write_all(rx_.data(), rx_bytes_); }
  [[nodiscard]] bool closed() const override { return closed_; }

 private:
  void write_all(const std::byte* data, std::size_t n) {
    if (::write(out_fd_, data, n) < 0) {
      ++errors_;
    }
  }

  int in_fd_;
  int out_fd_;
  std::size_t message_bytes_;
  std::size_t rx_bytes_ = 0;
  long timeout_ms_ = -1;
  bool closed_ = false;
  std::uint64_t errors_ = 0;
  std::array<std::byte, kBufferBytes> tx_{};
  std::array<std::byte, kBufferBytes> rx_{};
};

/// hyloop's loop plane: Encoder/Decoder of v1::SensorSample over transport::Channel (PAIR).
class HyloopIo final : public NodeIo {
 public:
  HyloopIo(zmq::context_t& context, const std::string& input, std::string output,
           std::uint32_t node)
      : context_(context),
        output_endpoint_(std::move(output)),
        encoder_({.run_id = std::string(kRunId), .sender = node}),
        decoder_({.run_id = std::string(kRunId), .mode = tr::Mode::kRealTime, .max_age = kMaxAge}) {
    fill_sample(outgoing_, 0);
    input_.emplace(context_, tr::ChannelConfig{.endpoint = input, .role = tr::Role::kBind});
  }

  /// A realistic measurement (non-zero fields, so all are on the wire).
  static void fill_sample(v1::SensorSample& s, std::uint64_t cycle) {
    s.set_position_m(0.0125 + 1e-6 * static_cast<double>(cycle % 1000));
    s.set_velocity_mps(0.031);
    s.set_force_n(1523.75);
  }
  static double virtual_time_s(std::uint64_t cycle) { return 1e-3 * static_cast<double>(cycle); }

  void connect_output() override {
    output_.emplace(context_,
                    tr::ChannelConfig{.endpoint = output_endpoint_, .role = tr::Role::kConnect});
  }

  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override {
    fill_sample(outgoing_, cycle);
    outgoing_.mutable_header()->set_origin_time_ns(origin_ns);
    (void)output_->try_send(encoder_.encode(outgoing_, cycle, virtual_time_s(cycle), origin_ns));
  }

  std::optional<Stamp> receive(milliseconds timeout) override {
    for (;;) {
      const auto r = input_->receive(rx_, timeout);
      if (!r) {
        return std::nullopt;
      }
      if (const v1::SensorSample* m = decoder_.decode_received(r->bytes, r->wire_bytes)) {
        return Stamp{m->header().cycle(), m->header().origin_time_ns()};
      }
      // Rejected (counted by the decoder): wait for the next one.
    }
  }

  void forward() override {
    const v1::SensorSample* in = decoder_.latest();
    outgoing_.set_position_m(in->position_m());
    outgoing_.set_velocity_mps(in->velocity_mps());
    outgoing_.set_force_n(in->force_n());
    outgoing_.mutable_header()->set_origin_time_ns(in->header().origin_time_ns());
    (void)output_->try_send(
        encoder_.encode(outgoing_, in->header().cycle(), in->header().virtual_time_s()));
  }

  [[nodiscard]] std::uint64_t rejected() const override { return decoder_.counters().rejected(); }

 private:
  zmq::context_t& context_;
  std::string output_endpoint_;
  std::optional<tr::Channel> input_;
  std::optional<tr::Channel> output_;
  tr::Encoder encoder_;
  tr::Decoder<v1::SensorSample> decoder_;
  v1::SensorSample outgoing_;
  std::array<std::byte, kBufferBytes> rx_{};
};

/// Encoded size of the hyloop message at a typical cycle: the size of every raw message.
std::size_t hyloop_message_bytes() {
  tr::Encoder encoder({.run_id = std::string(kRunId), .sender = 1});
  v1::SensorSample s;
  HyloopIo::fill_sample(s, 10'000);
  const std::int64_t now = now_ns();
  s.mutable_header()->set_origin_time_ns(now);
  return encoder.encode(s, 10'000, HyloopIo::virtual_time_s(10'000), now).size();
}

// ---------------------------------------------------------------------------------------------
// Node 0 (the rig) and the forwarders.

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

/// Node 0. `io == nullptr`: the bare timer (the clock with no ring).
RunResult run_origin(NodeIo* io, const RunSpec& spec) {
  RunResult res;
  std::uint64_t cycle = 1;
  if (io != nullptr) {
    const std::int64_t start = now_ns();
    bool up = false;
    while (!up && now_ns() - start < kConnectLimitNs) {
      io->send_origin(cycle, now_ns());
      up = await_cycle(*io, cycle, kConnectProbe).has_value();
      ++cycle;
    }
    if (!up) {
      res.error = "ring did not connect";
      return res;
    }
    for (std::uint64_t i = 0; i < spec.warmup; ++i, ++cycle) {
      io->send_origin(cycle, now_ns());
      (void)await_cycle(*io, cycle, kRoundTripTimeout);
    }
  }
  const auto target = spec.rate_hz == 0
                          ? spec.roundtrips
                          : static_cast<std::uint64_t>(std::llround(spec.rate_hz * spec.seconds));
  res.latency_ns.reserve(target + 16);
  const std::int64_t t_start = now_ns();
  if (spec.rate_hz == 0) {
    for (std::uint64_t i = 0; i < target; ++i, ++cycle) {
      io->send_origin(cycle, now_ns());
      if (const auto a = await_cycle(*io, cycle, kRoundTripTimeout)) {
        res.latency_ns.push_back(a->arrival_ns - a->origin_ns);
      } else {
        ++res.lost;
      }
    }
  } else {
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
  res.elapsed_s = 1e-9 * static_cast<double>(now_ns() - t_start);
  if (io != nullptr) {
    io->send_origin(kStopCycle, now_ns());
    (void)await_cycle(*io, kStopCycle, kRoundTripTimeout);
    res.rejected = io->rejected();
  }
  return res;
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

// ---------------------------------------------------------------------------------------------
// Placements.

struct RingSetup {
  Transport transport = Transport::kUds;
  std::size_t message_bytes = 0;
  std::array<std::string, kNodes> endpoints;  ///< link i: node i → node i+1 (ZeroMQ)
  std::array<int, kNodes> send_fd{};          ///< link i, held by node i (UDS)
  std::array<int, kNodes> recv_fd{};          ///< link i, held by node i+1 (UDS)
};

int input_link(int node) { return (node + kNodes - 1) % kNodes; }

std::unique_ptr<NodeIo> make_node(const RingSetup& ring, zmq::context_t* context, int node) {
  const int in = input_link(node);
  switch (ring.transport) {
    case Transport::kUds:
      return std::make_unique<UdsIo>(ring.recv_fd[static_cast<std::size_t>(in)],
                                     ring.send_fd[static_cast<std::size_t>(node)],
                                     ring.message_bytes);
    case Transport::kZmq:
      return std::make_unique<ZmqIo>(*context, ring.endpoints[static_cast<std::size_t>(in)],
                                     ring.endpoints[static_cast<std::size_t>(node)],
                                     ring.message_bytes);
    case Transport::kHyloop:
      return std::make_unique<HyloopIo>(*context, ring.endpoints[static_cast<std::size_t>(in)],
                                        ring.endpoints[static_cast<std::size_t>(node)],
                                        static_cast<std::uint32_t>(node));
  }
  throw std::logic_error("make_node: unknown transport");
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
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
      ++result.child_failures;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++result.child_failures;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Statistics and output.

struct Summary {
  std::uint64_t n = 0;
  double p50_us = kNaN, p90_us = kNaN, p99_us = kNaN, p999_us = kNaN, max_us = kNaN, mean_us = kNaN;
};

Summary summarise(std::vector<std::int64_t> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) {  // nearest rank
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return 1e-3 * static_cast<double>(v[std::clamp<std::size_t>(rank, 1, v.size()) - 1]);
  };
  s.p50_us = at(0.50);
  s.p90_us = at(0.90);
  s.p99_us = at(0.99);
  s.p999_us = at(0.999);
  s.max_us = 1e-3 * static_cast<double>(v.back());
  double sum = 0.0;
  for (const std::int64_t x : v) sum += static_cast<double>(x);
  s.mean_us = 1e-3 * sum / static_cast<double>(v.size());
  return s;
}

struct Row {
  std::string transport;  ///< uds / zmq / hyloop / timer
  std::string placement;  ///< process / thread / none (timer)
  int rate_hz = 0;        ///< 0: back to back
  RunResult result;
  Summary latency;
  [[nodiscard]] double miss_rate() const {
    return result.deadlines == 0
               ? kNaN
               : static_cast<double>(result.missed) / static_cast<double>(result.deadlines);
  }
  [[nodiscard]] std::string pacing() const {
    return rate_hz == 0 ? "b2b" : std::to_string(rate_hz) + " Hz";
  }
};

struct LoadAverage {
  double one = kNaN, five = kNaN, fifteen = kNaN;
};

LoadAverage load_average() {
  LoadAverage l;
  std::ifstream f("/proc/loadavg");
  f >> l.one >> l.five >> l.fifteen;
  return l;
}

std::string num(double x, int digits = 2) {
  if (!std::isfinite(x)) return "null";
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", digits, x);
  return buf.data();
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

const Row* find_row(const std::vector<Row>& rows, std::string_view transport,
                    std::string_view placement, int rate_hz) {
  for (const Row& r : rows) {
    if (r.transport == transport && r.placement == placement && r.rate_hz == rate_hz) return &r;
  }
  return nullptr;
}

double ratio(double a, double b) { return (std::isfinite(a) && b > 0.0) ? a / b : kNaN; }

std::string bool_json(bool met) { return met ? "true" : "false"; }

struct Options {
  std::uint64_t roundtrips = 20'000;
  double seconds = 5.0;
  std::uint64_t warmup = 1'000;
  std::vector<int> rates{500, 1000, 2000};
  std::vector<std::string> transports{"uds", "zmq", "hyloop"};
  std::vector<std::string> placements{"process", "thread"};
  int spin_us = 100;
  bool quick = false;
  std::string out = "bench/results/ring.json";
};

void print_table(const std::vector<Row>& rows) {
  std::printf("%-7s %-8s %-8s %7s %5s %8s %8s %8s %8s %9s %13s %8s %9s\n", "ring", "placement",
              "pacing", "n", "lost", "p50 us", "p90 us", "p99 us", "p99.9", "max us", "missed/dl",
              "miss %", "wake p50");
  for (const Row& r : rows) {
    const bool paced = r.rate_hz != 0;
    const std::string missed =
        paced ? std::to_string(r.result.missed) + "/" + std::to_string(r.result.deadlines) : "-";
    std::printf("%-7s %-8s %-8s %7llu %5llu %8s %8s %8s %8s %9s %13s %8s %9s%s%s\n",
                r.transport.c_str(), r.placement.c_str(), r.pacing().c_str(),
                static_cast<unsigned long long>(r.latency.n),
                static_cast<unsigned long long>(r.result.lost), num(r.latency.p50_us, 1).c_str(),
                num(r.latency.p90_us, 1).c_str(), num(r.latency.p99_us, 1).c_str(),
                num(r.latency.p999_us, 1).c_str(), num(r.latency.max_us, 1).c_str(), missed.c_str(),
                paced ? num(100.0 * r.miss_rate(), 3).c_str() : "-",
                paced ? num(1e-3 * static_cast<double>(r.result.lateness_p50_ns), 1).c_str() : "-",
                r.result.error.empty() ? "" : "  ERROR: ", r.result.error.c_str());
  }
}

void write_json(const std::string& path, const Options& opt, const std::vector<Row>& rows,
                std::size_t message_bytes, LoadAverage before, LoadAverage after,
                const std::string& started, double wall_s) {
  std::ostringstream j;
  utsname uts{};
  ::uname(&uts);
  j << "{\n  \"benchmark\": \"ring_bench\",\n";
  j << "  \"date_utc\": " << json_string(started) << ",\n";
  j << "  \"host\": {\"cpus\": " << std::thread::hardware_concurrency()
    << ", \"kernel\": " << json_string(std::string(uts.sysname) + " " + uts.release)
    << ", \"load_before\": [" << num(before.one) << ", " << num(before.five) << ", "
    << num(before.fifteen) << "], \"load_after\": [" << num(after.one) << ", " << num(after.five)
    << ", " << num(after.fifteen) << "]},\n";
  j << "  \"config\": {\"hops\": " << kNodes << ", \"message_bytes\": " << message_bytes
    << ", \"roundtrips_b2b\": " << opt.roundtrips << ", \"seconds_paced\": " << num(opt.seconds, 3)
    << ", \"warmup_roundtrips\": " << opt.warmup << ", \"spin_margin_us\": " << opt.spin_us
    << ", \"timer_slack_ns\": 1, \"miss_threshold\": \"one period\", \"quick\": "
    << bool_json(opt.quick) << ", \"wall_s\": " << num(wall_s, 1) << "},\n";
  j << "  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Row* timer = find_row(rows, "timer", "none", r.rate_hz);
    const double timer_rate = timer != nullptr ? timer->miss_rate() : kNaN;
    j << "    {\"transport\": " << json_string(r.transport)
      << ", \"placement\": " << json_string(r.placement)
      << ", \"pacing\": " << json_string(r.rate_hz == 0 ? "b2b" : "paced")
      << ", \"rate_hz\": " << r.rate_hz << ", \"n\": " << r.latency.n
      << ", \"lost\": " << r.result.lost
      << ",\n     \"latency_us\": {\"p50\": " << num(r.latency.p50_us)
      << ", \"p90\": " << num(r.latency.p90_us) << ", \"p99\": " << num(r.latency.p99_us)
      << ", \"p99_9\": " << num(r.latency.p999_us) << ", \"max\": " << num(r.latency.max_us)
      << ", \"mean\": " << num(r.latency.mean_us)
      << "},\n     \"deadlines\": " << r.result.deadlines << ", \"missed\": " << r.result.missed
      << ", \"miss_rate\": " << num(r.miss_rate(), 6)
      << ", \"timer_miss_rate\": " << num(r.rate_hz != 0 ? timer_rate : kNaN, 6)
      << ", \"miss_ratio_vs_timer\": " << num(ratio(r.miss_rate(), timer_rate), 3)
      << ", \"clock_misses\": " << r.result.clock_misses
      << ", \"clock_skipped\": " << r.result.clock_skipped << ",\n     \"wake_lateness_us\": "
      << (r.rate_hz == 0
              ? std::string("null")
              : "{\"p50\": " + num(1e-3 * static_cast<double>(r.result.lateness_p50_ns)) +
                    ", \"p99\": " + num(1e-3 * static_cast<double>(r.result.lateness_p99_ns)) +
                    ", \"max\": " + num(1e-3 * static_cast<double>(r.result.lateness_max_ns)) + "}")
      << ", \"rejected\": " << r.result.rejected
      << ", \"child_failures\": " << r.result.child_failures
      << ", \"elapsed_s\": " << num(r.result.elapsed_s, 3)
      << ", \"error\": " << (r.result.error.empty() ? "null" : json_string(r.result.error)) << "}"
      << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  j << "  ],\n";

  std::vector<int> pacings{0};
  pacings.insert(pacings.end(), opt.rates.begin(), opt.rates.end());
  std::vector<std::string> parts;
  // Aim 1: hyloop within 1.3x of the bare ZeroMQ ring at p50 and p99.
  for (const std::string& placement : {std::string("process"), std::string("thread")}) {
    for (const int rate : pacings) {
      const Row* h = find_row(rows, "hyloop", placement, rate);
      const Row* z = find_row(rows, "zmq", placement, rate);
      if (h == nullptr || z == nullptr) continue;
      const double r50 = ratio(h->latency.p50_us, z->latency.p50_us);
      const double r99 = ratio(h->latency.p99_us, z->latency.p99_us);
      parts.push_back("    {\"placement\": " + json_string(placement) +
                      ", \"rate_hz\": " + std::to_string(rate) + ", \"p50\": " + num(r50, 3) +
                      ", \"p99\": " + num(r99, 3) +
                      ", \"aim\": 1.3, \"met\": " + bool_json(r50 <= 1.3 && r99 <= 1.3) + "}");
    }
  }
  j << "  \"ratios\": {\n   \"hyloop_vs_zmq\": [\n";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    j << parts[i] << (i + 1 < parts.size() ? ",\n" : "\n");
  }
  // Aim 2: components in one process within 1.5x of the raw Unix-socket ring (threads).
  parts.clear();
  for (const int rate : pacings) {
    const Row* h = find_row(rows, "hyloop", "thread", rate);
    const Row* u = find_row(rows, "uds", "thread", rate);
    if (h == nullptr || u == nullptr) continue;
    const double r50 = ratio(h->latency.p50_us, u->latency.p50_us);
    const double r99 = ratio(h->latency.p99_us, u->latency.p99_us);
    parts.push_back("    {\"rate_hz\": " + std::to_string(rate) + ", \"p50\": " + num(r50, 3) +
                    ", \"p99\": " + num(r99, 3) +
                    ", \"aim\": 1.5, \"met\": " + bool_json(r50 <= 1.5 && r99 <= 1.5) + "}");
  }
  j << "   ],\n   \"thread_hyloop_vs_thread_uds\": [\n";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    j << parts[i] << (i + 1 < parts.size() ? ",\n" : "\n");
  }
  // Aim 3: miss rate of every paced ring against the bare timer (aim: thread hyloop at 2 kHz
  // within 2x).
  parts.clear();
  for (const Row& r : rows) {
    if (r.rate_hz == 0 || r.transport == "timer") continue;
    const Row* timer = find_row(rows, "timer", "none", r.rate_hz);
    if (timer == nullptr) continue;
    const bool aim = r.transport == "hyloop" && r.placement == "thread" && r.rate_hz == 2000;
    parts.push_back(
        "    {\"transport\": " + json_string(r.transport) + ", \"placement\": " +
        json_string(r.placement) + ", \"rate_hz\": " + std::to_string(r.rate_hz) +
        ", \"miss_rate\": " + num(r.miss_rate(), 6) +
        ", \"timer_miss_rate\": " + num(timer->miss_rate(), 6) +
        ", \"ratio\": " + num(ratio(r.miss_rate(), timer->miss_rate()), 3) +
        (aim ? ", \"aim\": 2.0, \"met\": " + bool_json(r.miss_rate() <= 2.0 * timer->miss_rate())
             : std::string()) +
        "}");
  }
  j << "   ],\n   \"miss_rate_vs_timer\": [\n";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    j << parts[i] << (i + 1 < parts.size() ? ",\n" : "\n");
  }
  j << "   ]\n  }\n}\n";

  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << j.str();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"hyloop ring benchmark: hyloop vs bare ZeroMQ vs raw Unix sockets, 4 hops"};
  app.add_option("--roundtrips", opt.roundtrips, "back-to-back round trips per ring");
  app.add_option("--seconds", opt.seconds, "duration of each paced run (s)");
  app.add_option("--warmup", opt.warmup, "warm-up round trips before each ring's measurement");
  app.add_option("--rates", opt.rates, "paced rates (Hz)")->delimiter(',');
  app.add_option("--transports", opt.transports, "uds,zmq,hyloop")->delimiter(',');
  app.add_option("--placements", opt.placements, "process,thread")->delimiter(',');
  app.add_option("--spin-us", opt.spin_us, "PeriodicClock spin margin (µs) before each deadline");
  app.add_flag("--quick", opt.quick, "smoke test: a few seconds in all");
  app.add_option("--out", opt.out, "JSON output file");
  CLI11_PARSE(app, argc, argv);
  if (opt.quick) {
    opt.roundtrips = std::min<std::uint64_t>(opt.roundtrips, 300);
    opt.seconds = std::min(opt.seconds, 0.2);
    opt.warmup = std::min<std::uint64_t>(opt.warmup, 50);
  }

  try {
    std::vector<Transport> transports;
    for (const auto& t : opt.transports) transports.push_back(parse_transport(t));
    std::vector<Placement> placements;
    for (const auto& p : opt.placements) placements.push_back(parse_placement(p));
    for (const int rate : opt.rates) {
      if (rate <= 0 || rate > 100'000) throw std::invalid_argument("bad rate");
    }
    std::signal(SIGPIPE, SIG_IGN);

    const std::size_t message_bytes = hyloop_message_bytes();
    const std::string started = utc_now();
    const LoadAverage before = load_average();
    const std::int64_t t0 = now_ns();
    std::printf("ring_bench: 4 hops, %zu-byte messages, spin margin %d us, load %.2f %.2f %.2f\n",
                message_bytes, opt.spin_us, before.one, before.five, before.fifteen);

    std::vector<int> pacings{0};
    pacings.insert(pacings.end(), opt.rates.begin(), opt.rates.end());
    std::vector<Row> rows;
    int run = 0;
    for (const int rate : pacings) {
      RunSpec spec{.rate_hz = rate,
                   .roundtrips = opt.roundtrips,
                   .seconds = opt.seconds,
                   .warmup = opt.warmup,
                   .spin_margin = std::chrono::microseconds(opt.spin_us)};
      if (rate != 0) {
        Row row;
        row.transport = "timer";
        row.placement = "none";
        row.rate_hz = rate;
        row.result = run_origin(nullptr, spec);
        rows.push_back(std::move(row));
        std::fprintf(stderr, "  timer %d Hz: %llu/%llu missed\n", rate,
                     static_cast<unsigned long long>(rows.back().result.missed),
                     static_cast<unsigned long long>(rows.back().result.deadlines));
      }
      for (const Placement placement : placements) {
        for (const Transport transport : transports) {
          RingSetup ring;
          ring.transport = transport;
          ring.message_bytes = message_bytes;
          const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(run++);
          Row row;
          row.transport = std::string(name_of(transport));
          row.placement = std::string(name_of(placement));
          row.rate_hz = rate;
          row.result = placement == Placement::kProcess ? run_processes(ring, spec, tag)
                                                        : run_threads(ring, spec, tag);
          row.latency = summarise(row.result.latency_ns);
          std::fprintf(stderr, "  %s %s %s: n=%llu p50=%s us p99=%s us%s%s\n",
                       row.transport.c_str(), row.placement.c_str(), row.pacing().c_str(),
                       static_cast<unsigned long long>(row.latency.n),
                       num(row.latency.p50_us, 1).c_str(), num(row.latency.p99_us, 1).c_str(),
                       row.result.error.empty() ? "" : " ERROR: ", row.result.error.c_str());
          rows.push_back(std::move(row));
        }
      }
    }
    const LoadAverage after = load_average();
    const double wall_s = 1e-9 * static_cast<double>(now_ns() - t0);
    print_table(rows);
    std::printf("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; wall %.1f s\n",
                before.one, before.five, before.fifteen, after.one, after.five, after.fifteen,
                wall_s);
    if (!opt.out.empty()) {
      write_json(opt.out, opt, rows, message_bytes, before, after, started, wall_s);
      std::printf("wrote %s\n", opt.out.c_str());
    }
    // The smoke test asserts only that every ring ran and produced rows.
    bool ok = !rows.empty();
    for (const Row& r : rows) {
      if (!r.result.error.empty() || (r.transport != "timer" && r.latency.n == 0)) ok = false;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ring_bench: %s\n", e.what());
    return 2;
  }
}
