#include "hyloop/hal/openfresco_client.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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

void check_positive(std::chrono::milliseconds ms, const char* field) {
  if (ms.count() <= 0) {
    throw std::invalid_argument(std::string(field) + " = " + std::to_string(ms.count()) +
                                " ms: must be > 0");
  }
}

// A non-blocking socket connected to `config` within its connect_timeout.
int connect_socket(const SiteClientConfig& config) {
  const auto found = detail::numeric_address(config.address, config.port, false, "address");
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "socket");
  }
  const std::string where = config.address + ":" + std::to_string(config.port);
  int error = 0;
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      const int ready = ::poll(&p, 1, poll_ms(config.connect_timeout));
      socklen_t len = sizeof error;
      error = ready <= 0 ? ETIMEDOUT : 0;
      if (ready > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    }
  }
  if (error != 0) {
    ::close(fd);
    throw std::system_error(error, std::generic_category(), "connecting to the site " + where);
  }
  set_flag(fd, IPPROTO_TCP, TCP_NODELAY, config.no_delay ? 1 : 0);
  return fd;
}

// Sends all of `bytes` on non-blocking `fd`, waiting up to `timeout` for room each time.
// 0, or the errno (ETIMEDOUT when no room came).
int send_bytes(int fd, std::span<const std::byte> bytes, std::chrono::milliseconds timeout) {
  while (!bytes.empty()) {
    const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return errno;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(timeout)) <= 0) return ETIMEDOUT;
  }
  return 0;
}

// UDP: sends `bytes` to `to` as datagrams of at most kMaxUdpDatagram bytes. 0, or the errno.
int send_datagrams_to(int fd, const sockaddr_storage& to, std::span<const std::byte> bytes,
                      std::chrono::milliseconds timeout) {
  while (!bytes.empty()) {
    const auto piece = bytes.first(udp_datagram_bytes(bytes.size()));
    const auto n = ::sendto(fd, piece.data(), piece.size(), MSG_NOSIGNAL,
                            reinterpret_cast<const sockaddr*>(&to), detail::address_length(to));
    if (n == static_cast<ssize_t>(piece.size())) {
      bytes = bytes.subspan(piece.size());
      continue;
    }
    if (n >= 0) return EMSGSIZE;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return errno;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(timeout)) <= 0) return ETIMEDOUT;
  }
  return 0;
}

// UDP: a non-blocking datagram socket for `config`'s site (its address into `site`), after the
// optional handshake.
int open_udp_socket(const SiteClientConfig& config, sockaddr_storage& site) {
  const auto found =
      detail::numeric_address(config.address, config.port, false, "address", SOCK_DGRAM);
  std::memcpy(&site, found->ai_addr, found->ai_addrlen);
  const int fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  if (!config.udp_handshake) return fd;
  const std::string where = config.address + ":" + std::to_string(config.port);
  int error = send_datagrams_to(fd, site, std::span(&kUdpHandshakeAsk, 1), config.connect_timeout);
  const auto deadline = std::chrono::steady_clock::now() + config.connect_timeout;
  while (error == 0) {
    std::byte answer{};
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const auto n = ::recvfrom(fd, &answer, 1, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &len);
    if (n == 1 && answer == kUdpHandshakeAnswer && detail::same_endpoint(from, site)) return fd;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) error = errno;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (error == 0 && (left.count() <= 0 || ::poll(&p, 1, poll_ms(left)) <= 0)) error = ETIMEDOUT;
  }
  ::close(fd);
  throw std::system_error(error, std::generic_category(), "udp handshake with the site " + where);
}

bool sizes_match(const TrialView& trial, const BlockLayout& layout) noexcept {
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    if (trial.block[q].size() != layout.size[q]) return false;
  }
  return true;
}

}  // namespace

SiteClient::SiteClient(const SiteClientConfig& config, const SetupId& setup)
    : config_(config), setup_(setup) {
  check_positive(config_.connect_timeout, "connect_timeout");
  check_positive(config_.reply_timeout, "reply_timeout");
  if (auto why = check_setup_shape(setup_, std::max(setup_.data_size, kDefaultDataSize));
      !why.empty()) {
    throw std::invalid_argument(why);
  }
  ctrl_ = ctrl_layout(setup_);
  daq_ = daq_layout(setup_);
  data_size_ = static_cast<std::size_t>(setup_.data_size);
  out_.assign(data_size_, 0.0);
  in_.assign(data_size_, 0.0);
  bytes_.resize(data_size_ * sizeof(double));
  const bool udp = config_.transport == SiteTransport::kUdp;
  fd_ = udp ? open_udp_socket(config_, site_) : connect_socket(config_);
  std::array<std::byte, kSetupBytes> id{};
  encode_setup(setup_, id);
  const int e = udp ? send_datagrams_to(fd_, site_, id, config_.reply_timeout)
                    : send_bytes(fd_, id, config_.reply_timeout);
  if (e != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::system_error(e, std::generic_category(), "sending the set-up ID");
  }
}

SiteClient::~SiteClient() {
  if (fd_ >= 0) ::close(fd_);
}

hal::DriverStatus SiteClient::fail(const char* what, int error_number) noexcept {
  if (error_[0] == '\0') {
    std::snprintf(error_.data(), error_.size(), "%s%s%s", what, error_number != 0 ? ": " : "",
                  error_number != 0 ? std::strerror(error_number) : "");
  }
  return hal::DriverStatus::kFault;
}

hal::DriverStatus SiteClient::send_message() noexcept {
  if (!open()) return fail("the link is closed", 0);
  encode_doubles(out_, bytes_);
  const int e = config_.transport == SiteTransport::kUdp
                    ? send_datagrams_to(fd_, site_, bytes_, config_.reply_timeout)
                    : send_bytes(fd_, bytes_, config_.reply_timeout);
  if (e != 0) {
    return fail("send", e);
  }
  return hal::DriverStatus::kOk;
}

hal::DriverStatus SiteClient::receive_udp_reply() noexcept {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + config_.reply_timeout;
  std::size_t got = 0;
  while (got < bytes_.size()) {
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const std::size_t want = udp_datagram_bytes(bytes_.size() - got);
    // MSG_TRUNC: the whole datagram's size, so a longer one is seen as such (and dropped).
    const auto n = ::recvfrom(fd_, bytes_.data() + got, want, MSG_TRUNC,
                              reinterpret_cast<sockaddr*>(&from), &len);
    if (n >= 0 && static_cast<std::size_t>(n) == want && detail::same_endpoint(from, site_)) {
      got += want;
      continue;
    }
    if (n >= 0) {
      ++dropped_datagrams_;  // then the deadline: a stranger's flood cannot hold the call
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return fail("recvfrom", errno);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, poll_ms(left)) <= 0) {
      return fail("no reply from the site within reply_timeout", 0);
    }
  }
  decode_doubles(bytes_, in_);
  return hal::DriverStatus::kOk;
}

hal::DriverStatus SiteClient::receive_reply() noexcept {
  if (config_.transport == SiteTransport::kUdp) return receive_udp_reply();
  std::size_t got = 0;
  while (got < bytes_.size()) {
    const auto n = ::recv(fd_, bytes_.data() + got, bytes_.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) return fail("the site closed the connection before its reply", 0);
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return fail("recv", errno);
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, poll_ms(config_.reply_timeout)) <= 0) {
      return fail("no reply from the site within reply_timeout", 0);
    }
  }
  decode_doubles(bytes_, in_);
  return hal::DriverStatus::kOk;
}

hal::DriverStatus SiteClient::set_trial(const TrialView& trial) noexcept {
  if (!sizes_match(trial, ctrl_)) return fail("a trial block differs from the set-up's size", 0);
  out_[0] = static_cast<double>(Action::kSetTrialResponse);
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    const auto block = trial.block[q];
    if (!std::all_of(block.begin(), block.end(), [](double v) { return std::isfinite(v); })) {
      return hal::DriverStatus::kRejected;  // nothing sent: the site never sees a NaN
    }
    std::copy(block.begin(), block.end(),
              out_.begin() + static_cast<std::ptrdiff_t>(ctrl_.offset[q]));
  }
  return send_message();
}

hal::DriverStatus SiteClient::request(Action action) noexcept {
  out_[0] = static_cast<double>(action);
  if (send_message() != hal::DriverStatus::kOk) return hal::DriverStatus::kFault;
  return receive_reply();
}

hal::DriverStatus SiteClient::get_daq(const DaqView& daq, Action action) noexcept {
  const auto code = static_cast<std::int32_t>(action);
  if (code < static_cast<std::int32_t>(Action::kGetDaqResponse) ||
      code > static_cast<std::int32_t>(Action::kGetTime)) {
    return fail("get_daq takes codes 6..11", 0);
  }
  if (request(action) != hal::DriverStatus::kOk) return hal::DriverStatus::kFault;
  for (std::size_t q = 0; q < kQuantityCount; ++q) {
    const auto block = daq.block[q];
    const std::size_t n = std::min(block.size(), daq_.size[q]);
    std::copy_n(in_.begin() + static_cast<std::ptrdiff_t>(daq_.offset[q]), n, block.begin());
  }
  return hal::DriverStatus::kOk;
}

hal::DriverStatus SiteClient::get_matrix(Action action, std::span<double> row_major) noexcept {
  const auto code = static_cast<std::int32_t>(action);
  const auto n = static_cast<std::size_t>(setup_.ctrl[0]);
  if (code < static_cast<std::int32_t>(Action::kGetInitialStiff) ||
      code > static_cast<std::int32_t>(Action::kGetMass) || row_major.size() != n * n) {
    return fail("get_matrix takes codes 12..15 and n x n values (n = ctrl disp size)", 0);
  }
  if (request(action) != hal::DriverStatus::kOk) return hal::DriverStatus::kFault;
  // Transposing a column-major n×n gives it row by row.
  write_column_major(std::span<const double>(in_).first(n * n), n, row_major);
  return hal::DriverStatus::kOk;
}

hal::DriverStatus SiteClient::commit() noexcept {
  out_[0] = static_cast<double>(Action::kCommitState);
  return send_message();
}

void SiteClient::terminate() {
  if (fd_ < 0) return;
  if (open()) {
    out_[0] = static_cast<double>(Action::kTerminate);
    (void)send_message();
  }
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
  fd_ = -1;
}

// ---- in process ----

LocalSiteLink::LocalSiteLink(SiteRig& rig, const RigSignalLayout& layout, const SetupId& setup)
    : rig_(rig), setup_(setup) {
  if (auto why = setup_mismatch(setup_, layout); !why.empty()) {
    throw std::invalid_argument(why);
  }
  report_.setup = setup_;
  rig_.begin_session(setup_);
}

LocalSiteLink::~LocalSiteLink() {
  try {
    end(SessionEnd::kCut, "the local link was destroyed without terminate");
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor ends the session either way
  }
}

void LocalSiteLink::end(SessionEnd end, std::string reason) {
  if (!open_) return;
  open_ = false;
  report_.end = end;
  report_.reason = std::move(reason);
  rig_.end_session(report_);
}

hal::DriverStatus LocalSiteLink::set_trial(const TrialView& trial) noexcept {
  if (!open_) return hal::DriverStatus::kFault;
  for (const auto& block : trial.block) {
    if (!std::all_of(block.begin(), block.end(), [](double v) { return std::isfinite(v); })) {
      return hal::DriverStatus::kRejected;
    }
  }
  ++report_.trials;
  return rig_.trial(trial);
}

hal::DriverStatus LocalSiteLink::get_daq(const DaqView& daq, Action /*action*/) noexcept {
  if (!open_) return hal::DriverStatus::kFault;
  ++report_.daq_replies;
  rig_.measure(daq);
  return hal::DriverStatus::kOk;
}

hal::DriverStatus LocalSiteLink::commit() noexcept {
  if (!open_) return hal::DriverStatus::kFault;
  ++report_.commits;
  rig_.commit();
  return hal::DriverStatus::kOk;
}

void LocalSiteLink::terminate() {
  end(SessionEnd::kTerminated,
      "the local link terminated after " + std::to_string(report_.trials) + " trials");
}

// ---- the driver ----

SetupId servo_client_setup() { return {{1, 1, 0, 0, 0}, {1, 1, 0, 1, 0}, kDefaultDataSize}; }

SiteDriver::SiteDriver(SiteLink& link, const hal::ActuatorLimits& limits)
    : link_(link), limits_(limits) {
  const SetupId& s = link_.setup();
  const auto check = [](std::size_t slot, std::int32_t value, bool optional) {
    if (value != 1 && !(optional && value == 0)) {
      throw std::invalid_argument("set-up ID slot " + std::to_string(slot) + " (" +
                                  slot_name(slot) + ") = " + std::to_string(value) +
                                  (optional ? ": must be 0 or 1" : ": must be 1") +
                                  " (the driver is 1 DOF)");
    }
  };
  check(0, s.ctrl[0], false);
  check(1, s.ctrl[1], true);
  check(5, s.daq[0], false);
  check(6, s.daq[1], true);
  check(8, s.daq[3], false);
  check(9, s.daq[4], true);
}

hal::DriverStatus SiteDriver::measure() noexcept {
  const SetupId& s = link_.setup();
  DaqView daq;
  daq.block[0] = disp_;
  daq.block[1] = std::span<double>(vel_).first(static_cast<std::size_t>(s.daq[1]));
  daq.block[3] = force_;
  daq.block[4] = std::span<double>(time_).first(static_cast<std::size_t>(s.daq[4]));
  const auto status = link_.get_daq(daq);
  if (status == hal::DriverStatus::kOk) {
    state_ = {disp_[0], s.daq[1] != 0 ? vel_[0] : 0.0};
  }
  return status;
}

hal::DriverStatus SiteDriver::command(const hal::ActuatorCommand& command) noexcept {
  if (faulted_) return hal::DriverStatus::kFault;
  const bool good = hal::check_command(command, limits_) == hal::LimitVerdict::kOk;
  if (good) {
    last_good_ = command;
  } else {
    ++rejected_;
  }
  const SetupId& s = link_.setup();
  TrialView trial;
  trial.block[0] = std::span<const double>(&last_good_.position, 1);
  trial.block[1] =
      std::span<const double>(&last_good_.velocity, static_cast<std::size_t>(s.ctrl[1]));
  const auto sent = link_.set_trial(trial);
  if (sent == hal::DriverStatus::kFault) {
    faulted_ = true;
    return sent;
  }
  const auto measured = measure();
  if (measured != hal::DriverStatus::kOk) {
    faulted_ = true;
    return measured;
  }
  ++cycle_;
  return good ? sent : hal::DriverStatus::kRejected;
}

hal::DriverStatus SiteDriver::read(hal::ForceSample& sample) noexcept {
  if (faulted_) return hal::DriverStatus::kFault;
  sample = {force_[0] - force_zero_, cycle_};
  return hal::DriverStatus::kOk;
}

void SiteDriver::tare() {
  if (measure() != hal::DriverStatus::kOk) {
    faulted_ = true;
    throw std::runtime_error("tare: the site gave no measurement");
  }
  force_zero_ = force_[0];
}

hal::DriverStatus SiteDriver::commit() noexcept {
  if (faulted_) return hal::DriverStatus::kFault;
  const auto status = link_.commit();
  if (status == hal::DriverStatus::kFault) faulted_ = true;
  return status;
}

}  // namespace hyloop::hal::openfresco
