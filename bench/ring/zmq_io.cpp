#include "zmq_io.hpp"

#include <utility>

namespace hyloop::bench {

ZmqIo::ZmqIo(zmq::context_t& context, const std::string& input, std::string output,
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

void ZmqIo::connect_output() { out_.connect(output_); }

void ZmqIo::send_origin(std::uint64_t cycle, std::int64_t origin_ns) {
  put_stamp(tx_, {cycle, origin_ns});
  (void)out_.send(zmq::const_buffer(tx_.data(), message_bytes_), zmq::send_flags::none);
}

std::optional<Stamp> ZmqIo::receive(milliseconds timeout) {
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

void ZmqIo::forward() {
  (void)out_.send(zmq::const_buffer(rx_.data(), rx_bytes_), zmq::send_flags::none);
}

}  // namespace hyloop::bench
