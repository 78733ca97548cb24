#pragma once
// ZeroMQ loop channels (DESIGN.md §1–2): one message per cycle, bounded queues (high-water
// marks), non-blocking send (a full queue or a missing peer counts a drop and never blocks the
// loop; lockstep and recorded streams use the lossless send() that waits for room instead),
// receive with a poll timeout, reconnection left to ZeroMQ (reconnect interval options).
// Endpoints are ZeroMQ strings: inproc://name (same zmq::context_t, threads of one process),
// ipc:///path (same host), tcp://host:port. A binding socket binds exactly the address given.
// Who may connect (docs/security.md, "Loop plane"): ChannelSecurity confines ipc:// to a
// private run directory (ipc_dir.hpp) and puts CURVE with a ZAP allow-list on tcp:// (curve.hpp);
// plain tcp:// is refused unless allowed explicitly (--insecure).
//
// RT-safety: try_send(), receive() and drain_newest() take no lock of ours and make no C++
// allocation; libzmq itself allocates (malloc) a message body above 33 bytes. A Channel is used
// by one thread (ZeroMQ sockets are not thread-safe); its counters are atomics readable anywhere.
// Units: sizes in bytes, timeouts in milliseconds (zmq_poll's resolution).

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <zmq.hpp>

#include "hyloop/transport/curve.hpp"
#include "hyloop/transport/socket_monitor.hpp"

namespace hyloop::transport {

enum class Pattern : std::uint8_t {
  kPair,  ///< exclusive bidirectional pair (one peer)
  kPush,  ///< send side of a pipeline
  kPull,  ///< receive side of a pipeline
};

enum class Role : std::uint8_t { kBind, kConnect };

/// Who may reach a channel. The services always fill it (runtime::LoopComponent); the defaults
/// leave ipc:// unchecked (tests, benchmarks) and refuse plain tcp://.
struct ChannelSecurity {
  /// ipc:// endpoints must be IPC_DIR/RUN/NAME (check_ipc_endpoint); empty: not checked.
  std::string ipc_dir{};
  /// tcp://: CURVE server (binder) or client (connecter) keys; empty: plain tcp.
  CurveKeys curve{};
  /// tcp:// without CURVE keys is refused (std::invalid_argument) unless this is set.
  bool allow_plain_tcp = false;
};

struct ChannelConfig {
  std::string endpoint;  ///< "inproc://x", "ipc:///tmp/x.sock", "tcp://127.0.0.1:5555"
  Pattern pattern = Pattern::kPair;
  Role role = Role::kBind;
  int send_hwm = 16;               ///< messages queued for sending before drops (ZMQ_SNDHWM)
  int recv_hwm = 16;               ///< messages queued on receipt (ZMQ_RCVHWM)
  int linger_ms = 0;               ///< on close, 0 = drop unsent messages at once
  int reconnect_ivl_ms = 10;       ///< first reconnection attempt after a lost peer
  int reconnect_ivl_max_ms = 500;  ///< back-off ceiling
  /// Keep only the newest message in the queues (ZMQ_CONFLATE; push/pull only): the
  /// "newest wins" semantics of real-time control inputs. Never for recorded streams.
  bool conflate = false;
  /// ZMTP heartbeats, ms (0: off): a PING every heartbeat_ivl_ms; a peer silent for
  /// heartbeat_timeout_ms (stopped, or gone without closing its socket) is disconnected, which
  /// a socket monitor sees (runtime::PeerWatch); the peer is asked to do the same (TTL).
  int heartbeat_ivl_ms = 0;
  int heartbeat_timeout_ms = 0;
  ChannelSecurity security{};
  /// Where the endpoint came from, for messages
  /// ("endpoints.rig_to_sensor"): a bind or connect that libzmq refuses is std::invalid_argument
  /// "FIELD = 'ENDPOINT': cannot bind: REASON".
  std::string field{};
  /// Called on a monitor thread (SocketMonitor) for each failed ZMTP handshake on this socket
  /// (CURVE keys that do not match, a key the binder refuses), `what` naming the endpoint and
  /// the failure; counted in Channel::handshake_failures(). Unset: not watched.
  std::function<void(const std::string& what)> on_handshake_failed{};
};

/// Parses "pair"/"push"/"pull" and "bind"/"connect"; throws std::invalid_argument otherwise.
[[nodiscard]] Pattern parse_pattern(std::string_view s);
[[nodiscard]] Role parse_role(std::string_view s);

/// The address a binding socket binds for `endpoint`: exactly the one given. tcp://HOST:PORT
/// with a numeric HOST (or '*', every interface, only when written so) is unchanged; a host
/// name is resolved here (libzmq binds numeric addresses only) to its IPv4 address, else its
/// IPv6 one, which must be an address of this host for the bind to succeed. Other transports
/// are unchanged. Throws std::invalid_argument when the name does not resolve.
[[nodiscard]] std::string bind_address(const std::string& endpoint);

/// True for tcp:// endpoints (the ones CURVE protects).
[[nodiscard]] bool is_tcp(std::string_view endpoint) noexcept;
/// True for ipc:// endpoints.
[[nodiscard]] bool is_ipc(std::string_view endpoint) noexcept;

/// A message received into the caller's buffer.
struct Received {
  std::span<const std::byte> bytes;  ///< what fit in the buffer
  std::size_t wire_bytes = 0;        ///< size sent; > bytes.size() when truncated
  [[nodiscard]] bool truncated() const noexcept { return wire_bytes > bytes.size(); }
};

class Channel {
 public:
  /// Creates the socket, sets the options and the security (ChannelSecurity) and binds or
  /// connects. Throws std::invalid_argument when the security refuses the endpoint, zmq::error_t
  /// on a bad endpoint or an address in use.
  Channel(zmq::context_t& context, ChannelConfig config);
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  Channel(Channel&&) = delete;
  Channel& operator=(Channel&&) = delete;
  /// Closes the socket and removes the ipc:// socket file it bound (if it is still that file).
  ~Channel();

  /// Non-blocking send. Returns true if queued; false counts a drop (queue at its high-water
  /// mark, or no peer yet for a pair/push socket). Never blocks.
  bool try_send(std::span<const std::byte> bytes) noexcept;

  /// Lossless send for lockstep and recorded streams: waits up to `timeout` for room in the
  /// queue (the receiver paces the sender), then sends. Returns false (counted as a drop) only
  /// on timeout. Not for real-time control paths: it can block for `timeout`.
  bool send(std::span<const std::byte> bytes, std::chrono::milliseconds timeout) noexcept;

  /// Waits up to `timeout` (0 = just look) for one message and copies it into `buffer`.
  /// Returns std::nullopt on timeout. A message longer than the buffer is truncated (see
  /// Received::truncated) and counted in truncated().
  std::optional<Received> receive(std::span<std::byte> buffer,
                                  std::chrono::milliseconds timeout) noexcept;

  /// Reads every queued message without waiting and keeps the last one in `buffer` (newest
  /// wins); the older ones are counted in superseded(). std::nullopt if the queue was empty.
  std::optional<Received> drain_newest(std::span<std::byte> buffer) noexcept;

  [[nodiscard]] const ChannelConfig& config() const noexcept { return config_; }
  /// The endpoint actually bound (resolves tcp://*:0 to the chosen port).
  [[nodiscard]] const std::string& endpoint() const noexcept { return endpoint_; }
  [[nodiscard]] zmq::socket_t& socket() noexcept { return socket_; }

  [[nodiscard]] std::uint64_t sent() const noexcept {
    return sent_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t dropped() const noexcept {
    return dropped_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t received() const noexcept {
    return received_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t truncated() const noexcept {
    return truncated_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t superseded() const noexcept {
    return superseded_.load(std::memory_order_relaxed);
  }
  [[nodiscard]] std::uint64_t errors() const noexcept {
    return errors_.load(std::memory_order_relaxed);
  }
  /// Failed handshakes seen (only with ChannelConfig::on_handshake_failed set).
  [[nodiscard]] std::uint64_t handshake_failures() const noexcept {
    return handshake_failures_.load(std::memory_order_relaxed);
  }
  /// CURVE server: peers whose handshake the ZAP handler accepted / refused (not RT: locks).
  [[nodiscard]] std::uint64_t peers_accepted() const;
  [[nodiscard]] std::uint64_t peers_denied() const;

 private:
  static void bump(std::atomic<std::uint64_t>& a, std::uint64_t by = 1) noexcept {
    a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  std::optional<Received> recv_now(std::span<std::byte> buffer) noexcept;

  void apply_security(zmq::context_t& context);

  ChannelConfig config_;
  // Declared before socket_: released after the socket is closed.
  std::shared_ptr<ZapAuthenticator> zap_;
  std::string zap_domain_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::string bound_ipc_path_;  // the socket file this channel bound, removed on destruction
  dev_t bound_dev_ = 0;
  ino_t bound_ino_ = 0;
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> truncated_{0};
  std::atomic<std::uint64_t> superseded_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> handshake_failures_{0};
  // Declared after socket_: stopped before the socket closes.
  std::unique_ptr<SocketMonitor> monitor_;
};

}  // namespace hyloop::transport
