#pragma once
// One loop-plane stream end: a Channel with its codec. LoopOutput stamps and sends messages of
// one kind; LoopInput receives, validates (run id, size, parse, cycle order, age) and counts
// rejections, so a service never touches an unvalidated payload. Buffers are allocated at
// construction; send/receive are RT-safe after warm-up (protobuf reuses its buffers).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"

namespace hyloop::transport {

template <LoopMessage M>
class LoopInput {
 public:
  LoopInput(zmq::context_t& context, ChannelConfig channel, ValidatorConfig validator)
      : buffer_(validator.max_bytes + 1),
        channel_(context, std::move(channel)),
        decoder_(std::move(validator)) {}

  /// Waits up to `timeout` for the next accepted message; rejected ones are counted and skipped.
  /// nullptr on timeout.
  const M* receive(std::chrono::milliseconds timeout) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
      auto got = channel_.receive(buffer_, left.count() > 0 ? left : std::chrono::milliseconds(0));
      if (!got) {
        return nullptr;
      }
      if (const M* m = decode(*got)) {
        return m;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return nullptr;
      }
    }
  }

  /// Real time: decodes every queued message without waiting and returns the newest accepted
  /// one of this call (older ones are superseded), nullptr if none was accepted.
  const M* receive_newest() noexcept {
    const M* newest = nullptr;
    while (auto got = channel_.receive(buffer_, std::chrono::milliseconds(0))) {
      if (const M* m = decode(*got)) {
        newest = m;
      }
    }
    return newest;
  }

  [[nodiscard]] const M* latest() const noexcept { return decoder_.latest(); }
  [[nodiscard]] const VerdictCounters& counters() const noexcept { return decoder_.counters(); }
  [[nodiscard]] Validator& validator() noexcept { return decoder_.validator(); }
  [[nodiscard]] Channel& channel() noexcept { return channel_; }

 private:
  const M* decode(const Received& got) noexcept {
    try {
      return decoder_.decode_received(got.bytes, got.wire_bytes);
    } catch (...) {  // a protobuf allocation failure: treat as malformed, never propagate
      decoder_.validator().count(Verdict::kMalformed);
      return nullptr;
    }
  }

  std::vector<std::byte> buffer_;
  Channel channel_;
  Decoder<M> decoder_;
};

class LoopOutput {
 public:
  LoopOutput(zmq::context_t& context, ChannelConfig channel, EncoderConfig encoder)
      : channel_(context, std::move(channel)), encoder_(std::move(encoder)) {}

  /// Stamps and sends. `lossless`: wait up to `timeout` for room (lockstep, recorded streams);
  /// otherwise a full queue drops the message (counted). False when not sent.
  template <LoopMessage M>
  bool send(M& msg, std::uint64_t cycle, double virtual_time_s, bool lossless,
            std::chrono::milliseconds timeout = std::chrono::milliseconds(1000)) noexcept {
    std::span<const std::byte> bytes;
    try {
      bytes = encoder_.encode(msg, cycle, virtual_time_s);
    } catch (...) {
      return false;
    }
    if (bytes.empty()) {
      return false;
    }
    return lossless ? channel_.send(bytes, timeout) : channel_.try_send(bytes);
  }

  [[nodiscard]] Channel& channel() noexcept { return channel_; }
  [[nodiscard]] Encoder& encoder() noexcept { return encoder_; }

 private:
  Channel channel_;
  Encoder encoder_;
};

}  // namespace hyloop::transport
