#pragma once
// hyloop as the experimental site of an OpenSees/OpenFresco model (issue 25): the session
// engine that speaks the RemoteTest framing (openfresco.hpp) for one client, and the TCP or UDP
// server that hands it one client at a time. No gRPC, no ZeroMQ.
//
// A session, in order:
//   1. The 44-byte set-up ID. It is checked against the rig's RigSignalLayout before anything
//      else: a mismatch ends the session (kRefused) with a reason naming the slot, its value and
//      what the rig allows. The peer gets no protocol error (the framing has none): the site
//      closes the connection and logs the reason.
//   2. Messages of dataSize doubles, by the code in slot 0:
//        3  trial → SiteRig::trial() (the caller sends it through the actuator safety layer)
//        5  commit → SiteRig::commit()
//        6..11  reply: the daq blocks, filled by SiteRig::measure() (the latest measurement)
//        12..15 reply: the configured n×n matrix, column-major
//        1, 2   ignored, no reply (OpenFresco's own servers do the same)
//        99     ends the session (kTerminated), no reply
//        any other code (4, 98, fractional, unknown) ends the session (kProtocolError): the
//        peer may wait for a reply the site cannot give, so the site closes rather than guess
//   3. The peer closing before 99, mid-message or between messages, ends it as kCut; so does
//      abort() (I/O error, idle timeout, the site stopping). A rig fault on a trial ends it
//      as kRigFault.
// Whatever the end, SiteRig::end_session() is called exactly once, so the rig goes to rest.
//
// Over UDP (SiteTransport::kUdp) the server takes a 44-byte datagram from any peer as a set-up
// and serves that peer (address and port) alone until the session ends. A datagram from another
// source, or of another size than the next piece of the message (udp_datagram_bytes), is dropped
// and counted (SessionReport, SiteServer::dropped_datagrams()); the session goes on. UDP has no
// close: a peer that sends nothing for udp_timeout is cut, which brings the rig to rest.
//
// RT-safety: once the set-up ID is accepted, feed() allocates nothing, takes no lock and throws
// nothing while the session runs (the reason text of an ending is the one allocation, once).
// The set-up itself (the check, its reason text, SiteRig::begin_session) is not RT.

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/hal/drivers.hpp"
#include "hyloop/hal/openfresco.hpp"

namespace hyloop::hal::openfresco {

/// What a rig can take and give, per DOF: which trial quantities it accepts, which it is
/// driven by, which daq quantities it measures.
struct RigSignalLayout {
  std::int32_t dofs = 1;  ///< n, control DOFs (actuators); 1..kMaxDofs
  /// Trial quantities the rig accepts (others must have size 0 in the set-up).
  std::array<bool, kQuantityCount> ctrl{true, false, false, false, false};
  /// The quantity that moves the rig: the set-up must send it (disp for a servo-hydraulic
  /// actuator under displacement control).
  Quantity drive = Quantity::kDisp;
  /// Daq quantities the rig measures (others must have size 0 in the set-up).
  std::array<bool, kQuantityCount> daq{true, false, false, true, false};
  /// Hard limit on dataSize (doubles per message); ≥ kDefaultDataSize.
  std::int32_t max_data_size = 4096;
};
inline constexpr std::int32_t kMaxDofs = 64;

/// @throws std::invalid_argument naming the field, its value and the allowed range.
void validate(const RigSignalLayout& layout);

/// Why `id` does not fit `layout` ("" when it does): the first slot that does not, e.g.
/// "set-up ID slot 0 (ctrl disp size) = 2: must be 0 or 1 (the rig's control DOFs)".
[[nodiscard]] std::string setup_mismatch(const SetupId& id, const RigSignalLayout& layout);

/// An n×n matrix given row by row: rows[i][j] = entry (i, j). Empty = all zero.
using MatrixRows = std::vector<std::vector<double>>;

/// The matrices the site answers 12..15 with (units of the rig's DOFs: N/m, N·s/m, kg).
struct SiteMatrices {
  MatrixRows initial_stiffness;
  MatrixRows tangent_stiffness;
  MatrixRows damping;
  MatrixRows mass;
};

/// A trial's ctrl blocks, each as long as the set-up sized it (empty: not sent).
struct TrialView {
  std::array<std::span<const double>, kQuantityCount> block;
  [[nodiscard]] std::span<const double> of(Quantity q) const noexcept {
    return block[static_cast<std::size_t>(q)];
  }
};

/// The daq blocks of a reply to fill, each as long as the set-up sized it (empty: not asked).
struct DaqView {
  std::array<std::span<double>, kQuantityCount> block;
  [[nodiscard]] std::span<double> of(Quantity q) const noexcept {
    return block[static_cast<std::size_t>(q)];
  }
};

enum class SessionEnd : std::uint8_t {
  kNone,           ///< still running
  kTerminated,     ///< the peer sent 99
  kRefused,        ///< the set-up ID did not fit the rig
  kProtocolError,  ///< a code the site does not serve
  kCut,            ///< the peer closed (or was dropped) before 99
  kRigFault,       ///< the rig reported a fault on a trial
};
[[nodiscard]] std::string_view to_string(SessionEnd end) noexcept;

struct SessionReport {
  SessionEnd end = SessionEnd::kNone;
  std::string reason;  ///< why it ended, for the log
  SetupId setup;
  std::uint64_t messages = 0;  ///< complete messages after the set-up
  std::uint64_t trials = 0;
  std::uint64_t commits = 0;
  std::uint64_t daq_replies = 0;      ///< replies to 6..11
  std::uint64_t matrix_replies = 0;   ///< replies to 12..15
  std::uint64_t rejected_trials = 0;  ///< trials the rig answered kRejected (held or clipped)
  std::uint64_t bytes_received = 0;
  std::uint64_t wrong_size_datagrams = 0;  ///< UDP: dropped, not the size the message needed
  std::uint64_t foreign_datagrams = 0;     ///< UDP: dropped, not from the session's peer
};

/// The rig behind the site. trial(), measure() and commit() are called from the session's
/// thread, must be RT-safe and must not throw.
class SiteRig {
 public:
  virtual ~SiteRig() = default;
  /// The set-up was accepted: arm, bumpless at the rig's actual position. Not RT.
  virtual void begin_session(const SetupId& setup) = 0;
  /// Code 3. kRejected: the safety layer held or clipped it (counted, the session goes on);
  /// kFault: the session ends (kRigFault).
  virtual hal::DriverStatus trial(const TrialView& trial) noexcept = 0;
  /// Codes 6..11: write the latest measurement into every non-empty block.
  virtual void measure(const DaqView& daq) noexcept = 0;
  /// Code 5.
  virtual void commit() noexcept = 0;
  /// The session ended, however: bring the rig to rest. Called once per session. Not RT.
  virtual void end_session(const SessionReport& report) = 0;
};

class SiteSession {
 public:
  /// @throws std::invalid_argument for a layout that fails validate() or a matrix that is not
  /// empty or n×n and finite (naming the matrix, the row and the size).
  SiteSession(const RigSignalLayout& layout, const SiteMatrices& matrices, SiteRig& rig);

  struct FeedResult {
    std::size_t consumed = 0;          ///< bytes taken from the input
    std::span<const std::byte> reply;  ///< to send now, whole; valid until the next call
  };
  /// Takes bytes up to the end of one message and handles it when complete. Call again with the
  /// rest of the input after sending the reply; takes nothing once ended(). RT-safe.
  FeedResult feed(std::span<const std::byte> input) noexcept;

  /// The peer closed the connection (recv returned 0): ends as kCut unless already ended.
  void peer_closed();
  /// Ends the session as kCut with `reason` (I/O error, timeout, site stopping).
  void abort(std::string_view reason);

  /// UDP: a datagram was dropped (`foreign`: from another source; else of the wrong size).
  void note_dropped_datagram(bool foreign) noexcept;
  /// Bytes still missing from the message under way (the whole set-up or message between).
  [[nodiscard]] std::size_t pending_bytes() const noexcept {
    return reader_.message_bytes() - reader_.filled();
  }

  [[nodiscard]] bool ended() const noexcept { return report_.end != SessionEnd::kNone; }
  [[nodiscard]] bool set_up() const noexcept { return set_up_; }
  [[nodiscard]] const SessionReport& report() const noexcept { return report_; }

 private:
  void handle_setup();
  void handle_message();
  void finish(SessionEnd end, std::string reason);

  RigSignalLayout layout_;
  SiteRig& rig_;
  std::array<std::vector<double>, 4> matrices_;  ///< column-major n×n, order of codes 12..15
  StreamReader reader_;
  std::vector<double> in_;   ///< the decoded message
  std::vector<double> out_;  ///< the reply
  std::vector<std::byte> out_bytes_;
  BlockLayout ctrl_;
  BlockLayout daq_;
  std::size_t data_size_ = 0;
  bool set_up_ = false;
  bool out_ready_ = false;  ///< the message produced a reply
  SessionReport report_;
};

enum class SiteTransport : std::uint8_t { kTcp, kUdp };
[[nodiscard]] std::string_view to_string(SiteTransport transport) noexcept;
/// "tcp" or "udp". @throws std::invalid_argument naming `field` and the value.
[[nodiscard]] SiteTransport site_transport_from(std::string_view text, const char* field);

/// The server side: plain POSIX sockets, one client at a time.
struct SiteServerConfig {
  SiteTransport transport = SiteTransport::kTcp;
  std::string address = "127.0.0.1";  ///< the one address to bind (numeric IPv4 or IPv6)
  std::uint16_t port = 44000;         ///< 0: any free port (tests)
  /// How long poll() waits before it looks at stop() again, ms; > 0.
  std::chrono::milliseconds poll_timeout{100};
  /// TCP: a session with no byte from the peer for this long is cut; 0: wait forever.
  std::chrono::milliseconds idle_timeout{0};
  /// UDP: a session with no datagram from its peer for this long is cut (the rig brought to
  /// rest); > 0. It runs from the set-up too: longer than any pause before the first trial.
  std::chrono::milliseconds udp_timeout{5000};
  /// How long a reply may wait for room in the socket before the session is cut, ms; > 0.
  std::chrono::milliseconds send_timeout{1000};
  /// TCP: re-arm TCP_QUICKACK after each read, so the peer's trial is ACKed at once and its
  /// Nagle-held getDaq leaves without waiting for a delayed ACK.
  bool quick_ack = true;
  /// Numeric addresses a client may connect from (as getnameinfo prints them, e.g. "10.0.0.2",
  /// "::1"); a client from any other is closed at once and logged. Empty: any.
  std::vector<std::string> allowed_peers;
  /// Log lines (accepted peer, refusals, ends); none when empty. Called from run()'s thread.
  std::function<void(std::string_view)> log;
};

class SiteServer {
 public:
  /// Binds (and for TCP listens on) the configured address, only that one.
  /// @throws std::invalid_argument naming the field; std::system_error when bind/listen fail.
  SiteServer(SiteServerConfig config, const RigSignalLayout& layout, const SiteMatrices& matrices,
             SiteRig& rig);
  ~SiteServer();
  SiteServer(const SiteServer&) = delete;
  SiteServer& operator=(const SiteServer&) = delete;

  /// The bound port (the chosen one when config.port was 0).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Serves clients one after the other until stop(). Blocking; one thread.
  void run();
  /// Ends run() within a poll: the current session is cut ("site stopping"). Any thread.
  void stop() noexcept;
  /// After stop() and run()'s return: run() may serve again. Not while run() runs.
  void resume() noexcept;
  /// Cuts the current session within a poll ("aborted by the site": an emergency stop) and
  /// goes on serving the next client. Any thread.
  void abort_session() noexcept;
  [[nodiscard]] std::uint64_t sessions_served() const noexcept { return sessions_.load(); }
  /// Clients closed at once because their address is not in allowed_peers.
  [[nodiscard]] std::uint64_t refused_peers() const noexcept { return refused_peers_.load(); }
  /// UDP: datagrams dropped, in sessions or between them (wrong size or foreign source).
  [[nodiscard]] std::uint64_t dropped_datagrams() const noexcept {
    return dropped_datagrams_.load();
  }

 private:
  void run_tcp();
  void run_udp();
  void serve(int fd, const std::string& peer);
  void serve_udp(const sockaddr_storage& peer, std::span<const std::byte> setup);
  /// UDP: waits for a datagram up to poll_timeout; its size (≥ 0, whole even when truncated),
  /// -1 when none came (or stop/abort woke the wait), -2 on a socket error (errno set).
  std::int64_t receive_datagram(sockaddr_storage& from);
  bool send_datagrams(const sockaddr_storage& to, std::span<const std::byte> bytes,
                      std::string& error);
  bool send_all(int fd, std::span<const std::byte> bytes, std::string& error);
  void log(std::string_view line) const;

  SiteServerConfig config_;
  RigSignalLayout layout_;
  SiteMatrices matrices_;
  SiteRig& rig_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  ///< eventfd: stop() wakes poll()
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> aborting_{false};
  std::atomic<std::uint64_t> sessions_{0};
  std::atomic<std::uint64_t> refused_peers_{0};
  std::atomic<std::uint64_t> dropped_datagrams_{0};
  std::vector<std::byte> recv_buffer_;
};

}  // namespace hyloop::hal::openfresco
