#include "hyloop/transport/channel.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <thread>
#include <utility>

#include "hyloop/transport/ipc_dir.hpp"

namespace hyloop::transport {

namespace {

zmq::socket_type to_socket_type(Pattern p) {
  switch (p) {
    case Pattern::kPair:
      return zmq::socket_type::pair;
    case Pattern::kPush:
      return zmq::socket_type::push;
    case Pattern::kPull:
      return zmq::socket_type::pull;
  }
  throw std::invalid_argument("Channel: unknown pattern");
}

}  // namespace

bool is_tcp(std::string_view endpoint) noexcept { return endpoint.rfind("tcp://", 0) == 0; }
bool is_ipc(std::string_view endpoint) noexcept { return endpoint.rfind("ipc://", 0) == 0; }

std::string bind_address(const std::string& endpoint) {
  constexpr std::string_view kTcp = "tcp://";
  if (!is_tcp(endpoint)) return endpoint;
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < kTcp.size()) return endpoint;
  const std::string host = endpoint.substr(kTcp.size(), colon - kTcp.size());
  const std::string port = endpoint.substr(colon);
  if (host == "*" || host.empty() || host.front() == '[') return endpoint;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return endpoint;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
    throw std::invalid_argument("'" + endpoint + "': cannot resolve " + host + " (" +
                                gai_strerror(rc) + ")");
  }
  std::string v4_text;
  std::string v6_text;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET && v4_text.empty()) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr, text,
                sizeof text);
      v4_text = text;
    } else if (a->ai_family == AF_INET6 && v6_text.empty()) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof text);
      v6_text.append("[").append(text).append("]");
    }
  }
  freeaddrinfo(found);
  if (v4_text.empty() && v6_text.empty()) {
    throw std::invalid_argument("'" + endpoint + "': " + host + " has no IP address");
  }
  std::string out(kTcp);
  out.append(v4_text.empty() ? v6_text : v4_text);
  out.append(port);
  return out;
}

Pattern parse_pattern(std::string_view s) {
  if (s == "pair") return Pattern::kPair;
  if (s == "push") return Pattern::kPush;
  if (s == "pull") return Pattern::kPull;
  throw std::invalid_argument("unknown channel pattern: " + std::string(s));
}

Role parse_role(std::string_view s) {
  if (s == "bind") return Role::kBind;
  if (s == "connect") return Role::kConnect;
  throw std::invalid_argument("unknown channel role: " + std::string(s));
}

Channel::Channel(zmq::context_t& context, ChannelConfig config)
    : config_(std::move(config)), socket_(context, to_socket_type(config_.pattern)) {
  if (config_.conflate && config_.pattern == Pattern::kPair) {
    throw std::invalid_argument("Channel: conflate needs push/pull (" + config_.endpoint + ")");
  }
  socket_.set(zmq::sockopt::sndhwm, config_.send_hwm);
  socket_.set(zmq::sockopt::rcvhwm, config_.recv_hwm);
  socket_.set(zmq::sockopt::linger, config_.linger_ms);
  socket_.set(zmq::sockopt::reconnect_ivl, config_.reconnect_ivl_ms);
  socket_.set(zmq::sockopt::reconnect_ivl_max, config_.reconnect_ivl_max_ms);
  if (config_.heartbeat_ivl_ms > 0) {
    socket_.set(zmq::sockopt::heartbeat_ivl, config_.heartbeat_ivl_ms);
    socket_.set(zmq::sockopt::heartbeat_timeout, config_.heartbeat_timeout_ms);
    socket_.set(zmq::sockopt::heartbeat_ttl, config_.heartbeat_timeout_ms);
  }
  if (config_.conflate) {
    socket_.set(zmq::sockopt::conflate, 1);
  }
  try {
    apply_security(context);
    if (config_.on_handshake_failed) {
      monitor_ = std::make_unique<SocketMonitor>(
          context, socket_, handshake_failed_events(),
          [this](int event, std::uint32_t value, const std::string& endpoint) {
            handshake_failures_.fetch_add(1, std::memory_order_relaxed);
            config_.on_handshake_failed("handshake on " + endpoint +
                                        " failed: " + describe_handshake_failure(event, value));
          });
    }
    if (config_.role == Role::kBind) {
      const std::string address = bind_address(config_.endpoint);
      if (address.find('[') != std::string::npos) socket_.set(zmq::sockopt::ipv6, 1);
      // A socket closed a moment ago (the previous run's) releases its address asynchronously
      // in ZeroMQ's I/O thread: retry an address in use for up to 2 s before giving up.
      for (int attempt = 0;; ++attempt) {
        try {
          socket_.bind(address);
          break;
        } catch (const zmq::error_t& e) {
          if (e.num() != EADDRINUSE || attempt >= 100) throw;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
      if (is_ipc(endpoint_)) {
        struct stat st {};
        const std::string path = endpoint_.substr(6);
        if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
          bound_ipc_path_ = path;
          bound_dev_ = st.st_dev;
          bound_ino_ = st.st_ino;
        }
      }
    } else {
      if (config_.endpoint.find('[') != std::string::npos) socket_.set(zmq::sockopt::ipv6, 1);
      socket_.connect(config_.endpoint);
      endpoint_ = config_.endpoint;
    }
  } catch (const zmq::error_t& e) {
    if (zap_) zap_->remove_domain(zap_domain_);
    throw std::invalid_argument((config_.field.empty() ? "" : config_.field + " = ") + "'" +
                                config_.endpoint.substr(0, 200) + "': cannot " +
                                (config_.role == Role::kBind ? "bind" : "connect") + ": " +
                                e.what());
  } catch (...) {
    monitor_.reset();
    if (zap_) zap_->remove_domain(zap_domain_);
    throw;
  }
}

void Channel::apply_security(zmq::context_t& context) {
  const ChannelSecurity& sec = config_.security;
  const bool bind = config_.role == Role::kBind;
  if (is_ipc(config_.endpoint) && !sec.ipc_dir.empty()) {
    (void)check_ipc_endpoint(config_.endpoint, sec.ipc_dir, bind);
  }
  if (!is_tcp(config_.endpoint)) return;
  if (sec.curve.empty()) {
    if (!sec.allow_plain_tcp) {
      throw std::invalid_argument("'" + config_.endpoint +
                                  "': tcp:// needs CURVE keys (a security directory made by "
                                  "`hyloop certs`) or an explicit --insecure");
    }
    return;
  }
  if (bind) {
    if (sec.curve.allowed_clients.empty()) {
      throw std::invalid_argument("'" + config_.endpoint +
                                  "': a CURVE server needs the public keys of its peers");
    }
    zap_ = ZapAuthenticator::acquire(context);
    zap_domain_ = zap_->add_domain(sec.curve.allowed_clients);
    socket_.set(zmq::sockopt::zap_domain, zap_domain_);
    socket_.set(zmq::sockopt::curve_server, 1);
    socket_.set(zmq::sockopt::curve_secretkey, sec.curve.secret_key);
  } else {
    if (sec.curve.server_key.empty() || sec.curve.public_key.empty()) {
      throw std::invalid_argument("'" + config_.endpoint +
                                  "': a CURVE client needs its key pair and the server's key");
    }
    socket_.set(zmq::sockopt::curve_serverkey, sec.curve.server_key);
    socket_.set(zmq::sockopt::curve_publickey, sec.curve.public_key);
    socket_.set(zmq::sockopt::curve_secretkey, sec.curve.secret_key);
  }
}

Channel::~Channel() {
  monitor_.reset();  // the monitor goes before the socket it watches
  try {
    socket_.close();
  } catch (...) {  // close never fails on a valid socket; nothing to do if it did
  }
  if (!bound_ipc_path_.empty()) {
    struct stat st {};
    if (::lstat(bound_ipc_path_.c_str(), &st) == 0 && st.st_dev == bound_dev_ &&
        st.st_ino == bound_ino_) {
      ::unlink(bound_ipc_path_.c_str());
    }
  }
  if (zap_) zap_->remove_domain(zap_domain_);
}

std::uint64_t Channel::peers_accepted() const { return zap_ ? zap_->accepted(zap_domain_) : 0; }
std::uint64_t Channel::peers_denied() const { return zap_ ? zap_->denied(zap_domain_) : 0; }

bool Channel::try_send(std::span<const std::byte> bytes) noexcept {
  try {
    const auto result =
        socket_.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
    if (result.has_value()) {
      bump(sent_);
      return true;
    }
  } catch (const zmq::error_t&) {
    bump(errors_);
  }
  bump(dropped_);
  return false;
}

bool Channel::send(std::span<const std::byte> bytes, std::chrono::milliseconds timeout) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    try {
      if (socket_.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait)) {
        bump(sent_);
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        break;
      }
      // POLLOUT is not signalled while a push/pair socket has no peer: wait in short slices.
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLOUT, 0};
      (void)zmq::poll(&item, 1, std::min(left, std::chrono::milliseconds(10)));
    } catch (const zmq::error_t&) {
      bump(errors_);
      break;
    }
  }
  bump(dropped_);
  return false;
}

std::optional<Received> Channel::recv_now(std::span<std::byte> buffer) noexcept {
  try {
    const auto result =
        socket_.recv(zmq::mutable_buffer(buffer.data(), buffer.size()), zmq::recv_flags::dontwait);
    if (!result.has_value()) {
      return std::nullopt;
    }
    bump(received_);
    Received r;
    r.bytes = std::span<const std::byte>(buffer.data(), result->size);
    r.wire_bytes = result->untruncated_size;
    if (r.truncated()) {
      bump(truncated_);
    }
    return r;
  } catch (const zmq::error_t&) {
    bump(errors_);
    return std::nullopt;
  }
}

std::optional<Received> Channel::receive(std::span<std::byte> buffer,
                                         std::chrono::milliseconds timeout) noexcept {
  if (auto r = recv_now(buffer)) {
    return r;
  }
  if (timeout.count() <= 0) {
    return std::nullopt;
  }
  try {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) <= 0) {
      return std::nullopt;
    }
  } catch (const zmq::error_t&) {
    bump(errors_);
    return std::nullopt;
  }
  return recv_now(buffer);
}

std::optional<Received> Channel::drain_newest(std::span<std::byte> buffer) noexcept {
  std::optional<Received> newest = recv_now(buffer);
  if (!newest) {
    return std::nullopt;
  }
  while (auto next = recv_now(buffer)) {
    bump(superseded_);
    newest = next;
  }
  return newest;
}

}  // namespace hyloop::transport
