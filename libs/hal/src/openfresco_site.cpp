#include "hyloop/hal/openfresco_site.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "openfresco_socket.hpp"

namespace hyloop::hal::openfresco {

namespace {

using detail::poll_ms;
using detail::set_flag;

std::string quantity_list(const std::array<bool, kQuantityCount>& flags) {
  std::string out;
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    if (flags[q]) {
      out += (out.empty() ? "" : ", ") + std::string(to_string(static_cast<Quantity>(q)));
    }
  }
  return out.empty() ? "none" : out;
}

std::string slot_prefix(std::size_t slot, std::int32_t value) {
  return "set-up ID slot " + std::to_string(slot) + " (" + slot_name(slot) +
         ") = " + std::to_string(value) + ": ";
}

std::string code_text(double code) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", code);
  return text;
}

std::vector<double> column_major(const MatrixRows& rows, std::int32_t dofs, const char* name) {
  const auto n = static_cast<std::size_t>(dofs);
  std::vector<double> out(n * n, 0.0);
  if (rows.empty()) {
    return out;
  }
  if (rows.size() != n) {
    throw std::invalid_argument(std::string(name) + " has " + std::to_string(rows.size()) +
                                " rows: must be " + std::to_string(n) + " (the rig's DOFs)");
  }
  std::vector<double> row_major;
  row_major.reserve(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() != n) {
      throw std::invalid_argument(std::string(name) + " row " + std::to_string(i) + " has " +
                                  std::to_string(rows[i].size()) + " entries: must be " +
                                  std::to_string(n));
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (!std::isfinite(rows[i][j])) {
        throw std::invalid_argument(std::string(name) + "[" + std::to_string(i) + "][" +
                                    std::to_string(j) + "] is not finite");
      }
      row_major.push_back(rows[i][j]);
    }
  }
  write_column_major(row_major, n, out);
  return out;
}

}  // namespace

void validate(const RigSignalLayout& layout) {
  if (layout.dofs < 1 || layout.dofs > kMaxDofs) {
    throw std::invalid_argument("dofs = " + std::to_string(layout.dofs) + ": must be in [1, " +
                                std::to_string(kMaxDofs) + "]");
  }
  if (!layout.ctrl[static_cast<std::size_t>(layout.drive)] || layout.drive == Quantity::kTime) {
    throw std::invalid_argument("drive = " + std::string(to_string(layout.drive)) +
                                ": must be one of the accepted ctrl quantities (" +
                                quantity_list(layout.ctrl) + "), not time");
  }
  if (std::none_of(layout.daq.begin(), layout.daq.end(), [](bool b) { return b; })) {
    throw std::invalid_argument("daq = none: the rig must measure at least one quantity");
  }
  const std::int64_t n = layout.dofs;
  if (layout.max_data_size < kDefaultDataSize || n * n > layout.max_data_size) {
    throw std::invalid_argument("max_data_size = " + std::to_string(layout.max_data_size) +
                                ": must be >= " + std::to_string(kDefaultDataSize) +
                                " and >= dofs² = " + std::to_string(n * n));
  }
}

std::string setup_mismatch(const SetupId& id, const RigSignalLayout& layout) {
  if (auto shape = check_setup_shape(id, layout.max_data_size); !shape.empty()) {
    return shape;
  }
  const std::string n = std::to_string(layout.dofs);
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    const bool time = static_cast<Quantity>(q) == Quantity::kTime;
    const std::string full = time ? "1" : n;
    const std::int32_t want = time ? 1 : layout.dofs;
    if (id.ctrl[q] != 0 && (!layout.ctrl[q] || id.ctrl[q] != want)) {
      return slot_prefix(q, id.ctrl[q]) +
             (layout.ctrl[q] ? "must be 0 or " + full +
                                   (time ? " (one time value)" : " (the rig's control DOFs)")
                             : "must be 0 (the rig accepts " + quantity_list(layout.ctrl) + ")");
    }
    if (id.daq[q] != 0 && (!layout.daq[q] || id.daq[q] != want)) {
      return slot_prefix(q + kQuantityCount, id.daq[q]) +
             (layout.daq[q] ? "must be 0 or " + full +
                                  (time ? " (one time value)" : " (the rig's control DOFs)")
                            : "must be 0 (the rig measures " + quantity_list(layout.daq) + ")");
    }
  }
  const auto drive = static_cast<std::size_t>(layout.drive);
  if (id.ctrl[drive] == 0) {
    return slot_prefix(drive, 0) + "must be " + n + " (the rig is driven by " +
           std::string(to_string(layout.drive)) + ")";
  }
  if (std::all_of(id.daq.begin(), id.daq.end(), [](std::int32_t s) { return s == 0; })) {
    return "set-up ID slots 5..9 (daq sizes) are all 0: the peer asks for no measurement";
  }
  const std::int64_t nn = static_cast<std::int64_t>(layout.dofs) * layout.dofs;
  if (id.data_size < nn) {
    return slot_prefix(10, id.data_size) + "must be >= dofs² = " + std::to_string(nn) +
           " (room for the matrix replies)";
  }
  return {};
}

std::string_view to_string(SessionEnd end) noexcept {
  switch (end) {
    case SessionEnd::kNone:
      return "running";
    case SessionEnd::kTerminated:
      return "terminated";
    case SessionEnd::kRefused:
      return "refused";
    case SessionEnd::kProtocolError:
      return "protocol error";
    case SessionEnd::kCut:
      return "cut";
    case SessionEnd::kRigFault:
      return "rig fault";
  }
  return "?";
}

SiteSession::SiteSession(const RigSignalLayout& layout, const SiteMatrices& matrices, SiteRig& rig)
    : layout_(layout),
      rig_(rig),
      reader_((validate(layout), static_cast<std::size_t>(layout.max_data_size) * sizeof(double))),
      in_(static_cast<std::size_t>(layout.max_data_size), 0.0),
      out_(static_cast<std::size_t>(layout.max_data_size), 0.0),
      out_bytes_(static_cast<std::size_t>(layout.max_data_size) * sizeof(double)) {
  matrices_[0] = column_major(matrices.initial_stiffness, layout.dofs, "initial_stiffness");
  matrices_[1] = column_major(matrices.tangent_stiffness, layout.dofs, "tangent_stiffness");
  matrices_[2] = column_major(matrices.damping, layout.dofs, "damping");
  matrices_[3] = column_major(matrices.mass, layout.dofs, "mass");
  reader_.set_message_bytes(kSetupBytes);
}

SiteSession::FeedResult SiteSession::feed(std::span<const std::byte> input) noexcept {
  FeedResult result;
  if (ended()) {
    return result;
  }
  result.consumed = reader_.consume(input);
  report_.bytes_received += result.consumed;
  if (!reader_.complete()) {
    return result;
  }
  try {
    if (!set_up_) {
      handle_setup();
    } else {
      handle_message();
    }
  } catch (...) {
    // Only an ending can throw (its reason text, or the rig's begin/end): end without a reason.
    if (!ended()) {
      report_.end = SessionEnd::kCut;
      try {
        rig_.end_session(report_);
      } catch (...) {  // NOLINT(bugprone-empty-catch): the session is over either way
      }
    }
  }
  if (out_ready_ && !ended()) {
    result.reply = {out_bytes_.data(), data_size_ * sizeof(double)};
  }
  out_ready_ = false;
  reader_.next();
  return result;
}

void SiteSession::handle_setup() {
  const auto bytes = reader_.message().first<kSetupBytes>();
  report_.setup = decode_setup(bytes);
  if (auto why = setup_mismatch(report_.setup, layout_); !why.empty()) {
    finish(SessionEnd::kRefused, std::move(why));
    return;
  }
  ctrl_ = ctrl_layout(report_.setup);
  daq_ = daq_layout(report_.setup);
  data_size_ = static_cast<std::size_t>(report_.setup.data_size);
  reader_.set_message_bytes(data_size_ * sizeof(double));
  set_up_ = true;
  rig_.begin_session(report_.setup);
}

void SiteSession::handle_message() {
  ++report_.messages;
  decode_doubles(reader_.message(), std::span(in_).first(data_size_));
  const auto action = action_from_code(in_[0]);
  if (!action) {
    finish(SessionEnd::kProtocolError,
           "message " + std::to_string(report_.messages) + ": action code " + code_text(in_[0]) +
               " is not one the site serves (3, 5, 6..15, 99; 1 and 2 ignored)");
    return;
  }
  switch (*action) {
    case Action::kSetTrialResponse: {
      TrialView trial;
      for (std::size_t q = 0; q < kQuantityCount; ++q) {
        trial.block[q] = std::span<const double>(in_).subspan(ctrl_.offset[q], ctrl_.size[q]);
      }
      ++report_.trials;
      const auto status = rig_.trial(trial);
      if (status == hal::DriverStatus::kRejected) {
        ++report_.rejected_trials;
      } else if (status == hal::DriverStatus::kFault) {
        finish(SessionEnd::kRigFault,
               "trial " + std::to_string(report_.trials) + ": the rig reported a fault");
      }
      return;
    }
    case Action::kCommitState:
      ++report_.commits;
      rig_.commit();
      return;
    case Action::kGetDaqResponse:
    case Action::kGetDisp:
    case Action::kGetVel:
    case Action::kGetAccel:
    case Action::kGetForce:
    case Action::kGetTime: {
      std::fill(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(data_size_), 0.0);
      DaqView daq;
      for (std::size_t q = 0; q < kQuantityCount; ++q) {
        daq.block[q] = std::span<double>(out_).subspan(daq_.offset[q], daq_.size[q]);
      }
      rig_.measure(daq);
      ++report_.daq_replies;
      out_ready_ = true;
      break;
    }
    case Action::kGetInitialStiff:
    case Action::kGetTangentStiff:
    case Action::kGetDamp:
    case Action::kGetMass: {
      const auto& m = matrices_[static_cast<std::size_t>(*action) -
                                static_cast<std::size_t>(Action::kGetInitialStiff)];
      std::fill(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(data_size_), 0.0);
      std::copy(m.begin(), m.end(), out_.begin());
      ++report_.matrix_replies;
      out_ready_ = true;
      break;
    }
    case Action::kOpen:
    case Action::kSetup:
      return;
    case Action::kTerminate:
      finish(SessionEnd::kTerminated,
             "the peer sent terminate (99) after " + std::to_string(report_.trials) + " trials");
      return;
    case Action::kExecute:
      finish(SessionEnd::kProtocolError,
             "message " + std::to_string(report_.messages) +
                 ": action code 4 (execute) is not served by this site");
      return;
  }
  encode_doubles(std::span<const double>(out_).first(data_size_),
                 std::span(out_bytes_).first(data_size_ * sizeof(double)));
}

void SiteSession::peer_closed() {
  if (ended()) {
    return;
  }
  if (reader_.filled() > 0) {
    finish(SessionEnd::kCut, "the peer closed mid-message, after " +
                                 std::to_string(reader_.filled()) + " of " +
                                 std::to_string(reader_.message_bytes()) + " bytes");
  } else {
    finish(SessionEnd::kCut, std::string("the peer closed without terminate (99)") +
                                 (set_up_ ? "" : ", before the set-up ID"));
  }
}

void SiteSession::note_dropped_datagram(bool foreign) noexcept {
  ++(foreign ? report_.foreign_datagrams : report_.wrong_size_datagrams);
}

void SiteSession::abort(std::string_view reason) {
  if (!ended()) {
    finish(SessionEnd::kCut, std::string(reason));
  }
}

void SiteSession::finish(SessionEnd end, std::string reason) {
  report_.end = end;
  report_.reason = std::move(reason);
  rig_.end_session(report_);
}

// ---- the TCP server ----

namespace {

std::system_error sys_error(const std::string& what) {
  return {errno, std::generic_category(), what};
}

struct PeerName {
  std::string host = "?";
  std::string port = "?";
  [[nodiscard]] std::string text() const { return host + ":" + port; }
};

// The bound socket of `config` (TCP: listening), or throws naming the address.
int open_server_socket(const SiteServerConfig& config) {
  const bool udp = config.transport == SiteTransport::kUdp;
  const int type = udp ? SOCK_DGRAM : SOCK_STREAM;
  const auto found = detail::numeric_address(config.address, config.port, true, "address", type);
  const int fd = ::socket(found->ai_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw sys_error("socket");
  }
  set_flag(fd, SOL_SOCKET, SO_REUSEADDR, 1);
  const bool bound = ::bind(fd, found->ai_addr, found->ai_addrlen) == 0;
  if (!bound || (!udp && ::listen(fd, 1) != 0)) {
    auto err = sys_error(std::string(udp ? "bind udp " : "bind/listen ") + config.address + ":" +
                         std::to_string(config.port));
    ::close(fd);
    throw err;
  }
  return fd;
}

}  // namespace

std::string_view to_string(SiteTransport transport) noexcept {
  return transport == SiteTransport::kUdp ? "udp" : "tcp";
}

SiteTransport site_transport_from(std::string_view text, const char* field) {
  if (text == "tcp") return SiteTransport::kTcp;
  if (text == "udp") return SiteTransport::kUdp;
  throw std::invalid_argument(std::string(field) + " = '" + std::string(text) +
                              "': must be tcp or udp");
}

namespace {

PeerName peer_name(const sockaddr_storage& addr) {
  char host[NI_MAXHOST] = {};
  char serv[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, host, sizeof host, serv,
                    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {};
  }
  return {host, serv};
}

}  // namespace

SiteServer::SiteServer(SiteServerConfig config, const RigSignalLayout& layout,
                       const SiteMatrices& matrices, SiteRig& rig)
    : config_(std::move(config)),
      layout_(layout),
      matrices_(matrices),
      rig_(rig),
      recv_buffer_(64 * 1024) {
  validate(layout_);
  if (config_.poll_timeout.count() <= 0) {
    throw std::invalid_argument("poll_timeout = " + std::to_string(config_.poll_timeout.count()) +
                                " ms: must be > 0");
  }
  if (config_.send_timeout.count() <= 0) {
    throw std::invalid_argument("send_timeout = " + std::to_string(config_.send_timeout.count()) +
                                " ms: must be > 0");
  }
  if (config_.idle_timeout.count() < 0) {
    throw std::invalid_argument("idle_timeout = " + std::to_string(config_.idle_timeout.count()) +
                                " ms: must be >= 0 (0: none)");
  }
  if (config_.udp_timeout.count() <= 0) {
    throw std::invalid_argument("udp_timeout = " + std::to_string(config_.udp_timeout.count()) +
                                " ms: must be > 0 (UDP has no close: silence is the only end)");
  }
  listen_fd_ = open_server_socket(config_);
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &len);
  port_ = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    auto err = sys_error("eventfd");
    ::close(listen_fd_);
    throw err;
  }
}

SiteServer::~SiteServer() {
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void SiteServer::stop() noexcept {
  stopping_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void SiteServer::resume() noexcept {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto n = ::read(wake_fd_, &count, sizeof count);
  aborting_.store(false);
  stopping_.store(false);
}

void SiteServer::abort_session() noexcept {
  aborting_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void SiteServer::log(std::string_view line) const {
  if (config_.log) {
    config_.log(line);
  }
}

void SiteServer::run() {
  log("openfresco site listening on " + std::string(to_string(config_.transport)) + " " +
      config_.address + ":" + std::to_string(port_));
  if (config_.transport == SiteTransport::kUdp) {
    run_udp();
  } else {
    run_tcp();
  }
}

void SiteServer::run_tcp() {
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, poll_ms(config_.poll_timeout)) <= 0 || !(fds[0].revents & POLLIN)) {
      if (aborting_.exchange(false)) {  // no session to abort: drain the wake-up
        std::uint64_t count = 0;
        [[maybe_unused]] const auto n = ::read(wake_fd_, &count, sizeof count);
      }
      continue;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    const PeerName peer = peer_name(addr);
    if (!config_.allowed_peers.empty() &&
        std::find(config_.allowed_peers.begin(), config_.allowed_peers.end(), peer.host) ==
            config_.allowed_peers.end()) {
      log("openfresco site: refused client " + peer.text() + ": not in allowed_peers");
      ::close(fd);
      refused_peers_.fetch_add(1);
      continue;
    }
    set_flag(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    serve(fd, peer.text());
    ::close(fd);
    sessions_.fetch_add(1);
  }
}

bool SiteServer::send_all(int fd, std::span<const std::byte> bytes, std::string& error) {
  while (!bytes.empty()) {
    const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      error = std::string("send: ") + std::strerror(errno);
      return false;
    }
    pollfd out{fd, POLLOUT, 0};
    if (::poll(&out, 1, poll_ms(config_.send_timeout)) <= 0) {
      error =
          "send: no room in the socket for " + std::to_string(config_.send_timeout.count()) + " ms";
      return false;
    }
  }
  return true;
}

void SiteServer::serve(int fd, const std::string& peer) {
  log("openfresco site: client " + peer + " connected");
  SiteSession session(layout_, matrices_, rig_);
  using Clock = std::chrono::steady_clock;
  auto last_bytes = Clock::now();
  while (!session.ended()) {
    if (stopping_.load()) {
      session.abort("the site is stopping");
      break;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, poll_ms(config_.poll_timeout));
    if (aborting_.exchange(false)) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto n = ::read(wake_fd_, &count, sizeof count);
      session.abort("aborted by the site (emergency stop)");
      break;
    }
    if (ready < 0 && errno != EINTR) {
      session.abort(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (ready <= 0 || !(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      if (config_.idle_timeout.count() > 0 && Clock::now() - last_bytes > config_.idle_timeout) {
        session.abort("no bytes from the peer for " + std::to_string(config_.idle_timeout.count()) +
                      " ms");
      }
      continue;
    }
    const auto n = ::recv(fd, recv_buffer_.data(), recv_buffer_.size(), 0);
    if (n == 0) {
      session.peer_closed();
      break;
    }
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        session.abort(std::string("recv: ") + std::strerror(errno));
      }
      continue;
    }
    last_bytes = Clock::now();
    if (config_.quick_ack) {
      set_flag(fd, IPPROTO_TCP, TCP_QUICKACK, 1);
    }
    auto input = std::span<const std::byte>(recv_buffer_).first(static_cast<std::size_t>(n));
    while (!input.empty() && !session.ended()) {
      const auto step = session.feed(input);
      input = input.subspan(step.consumed);
      std::string error;
      if (!step.reply.empty() && !send_all(fd, step.reply, error)) {
        session.abort(error);
      }
    }
  }
  const auto& r = session.report();
  log("openfresco site: client " + peer + " " + std::string(to_string(r.end)) + ": " + r.reason +
      " (" + std::to_string(r.trials) + " trials, " + std::to_string(r.daq_replies) +
      " daq replies)");
}

}  // namespace hyloop::hal::openfresco
