#include "hyloop_io.hpp"

#include <utility>

namespace hyloop::bench {

namespace tr = hyloop::transport;

HyloopIo::HyloopIo(zmq::context_t& context, const std::string& input, std::string output,
                   std::uint32_t node)
    : context_(context),
      output_endpoint_(std::move(output)),
      encoder_({.run_id = std::string(kRunId), .sender = node}),
      decoder_({.run_id = std::string(kRunId),
                .mode = tr::Mode::kRealTime,
                .max_age = kMaxAge,
                .frame_length = kSignals}) {
  fill_sample(outgoing_, 0);
  input_.emplace(context_, tr::ChannelConfig{.endpoint = input, .role = tr::Role::kBind});
}

void HyloopIo::fill_sample(v2::Frame& s, std::uint64_t cycle) {
  if (s.values_size() != kSignals) s.mutable_values()->Resize(kSignals, 0.0);
  s.set_values(0, 0.0125 + 1e-6 * static_cast<double>(cycle % 1000));
  s.set_values(1, 0.031);
  s.set_values(2, 1523.75);
}

void HyloopIo::connect_output() {
  output_.emplace(context_,
                  tr::ChannelConfig{.endpoint = output_endpoint_, .role = tr::Role::kConnect});
}

void HyloopIo::send_origin(std::uint64_t cycle, std::int64_t origin_ns) {
  fill_sample(outgoing_, cycle);
  outgoing_.mutable_header()->set_origin_time_ns(origin_ns);
  (void)output_->try_send(encoder_.encode(outgoing_, cycle, virtual_time_s(cycle), origin_ns));
}

std::optional<Stamp> HyloopIo::receive(milliseconds timeout) {
  for (;;) {
    const auto r = input_->receive(rx_, timeout);
    if (!r) {
      return std::nullopt;
    }
    if (const v2::Frame* m = decoder_.decode_received(r->bytes, r->wire_bytes)) {
      return Stamp{m->header().cycle(), m->header().origin_time_ns()};
    }
    // Rejected (counted by the decoder): wait for the next one.
  }
}

void HyloopIo::forward() {
  const v2::Frame* in = decoder_.latest();
  for (int i = 0; i < kSignals; ++i) outgoing_.set_values(i, in->values(i));
  outgoing_.mutable_header()->set_origin_time_ns(in->header().origin_time_ns());
  (void)output_->try_send(
      encoder_.encode(outgoing_, in->header().cycle(), in->header().virtual_time_s()));
}

std::size_t hyloop_message_bytes() {
  tr::Encoder encoder({.run_id = std::string(kRunId), .sender = 1});
  v2::Frame s;
  HyloopIo::fill_sample(s, 10'000);
  const std::int64_t now = now_ns();
  s.mutable_header()->set_origin_time_ns(now);
  return encoder.encode(s, 10'000, HyloopIo::virtual_time_s(10'000), now).size();
}

}  // namespace hyloop::bench
