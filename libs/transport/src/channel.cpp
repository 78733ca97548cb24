#include "hyloop/transport/channel.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <thread>
#include <utility>

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

std::string bind_address(const std::string& endpoint) {
  constexpr std::string_view kTcp = "tcp://";
  if (endpoint.rfind(kTcp, 0) != 0) return endpoint;
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon < kTcp.size()) return endpoint;
  return std::string(kTcp) + "*" + endpoint.substr(colon);
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
  if (config_.conflate) {
    socket_.set(zmq::sockopt::conflate, 1);
  }
  if (config_.role == Role::kBind) {
    // A socket closed a moment ago (the previous run's) releases its address asynchronously in
    // ZeroMQ's I/O thread: retry an address in use for up to 2 s before giving up.
    for (int attempt = 0;; ++attempt) {
      try {
        socket_.bind(config_.endpoint);
        break;
      } catch (const zmq::error_t& e) {
        if (e.num() != EADDRINUSE || attempt >= 100) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
  } else {
    socket_.connect(config_.endpoint);
    endpoint_ = config_.endpoint;
  }
}

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
