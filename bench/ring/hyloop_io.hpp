#pragma once
// Backend "hyloop": the loop plane, Encoder/Decoder of a v2::Frame (a SITS measurement) (run id and
// cycle order validated, real-time mode) over transport::Channel (ZeroMQ PAIR, try_send / receive
// with a timeout).

#include <hyloop/v2/loop.pb.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"
#include "node_io.hpp"

namespace hyloop::bench {

class HyloopIo final : public NodeIo {
 public:
  HyloopIo(zmq::context_t& context, const std::string& input, std::string output,
           std::uint32_t node);

  /// A realistic measurement (non-zero fields, so all are on the wire).
  static void fill_sample(v2::Frame& s, std::uint64_t cycle);
  /// A SITS measurement frame: x_robot [m], v_robot [m/s], f_meas [N].
  static constexpr int kSignals = 3;
  static double virtual_time_s(std::uint64_t cycle) { return 1e-3 * static_cast<double>(cycle); }

  void connect_output() override;
  void send_origin(std::uint64_t cycle, std::int64_t origin_ns) override;
  std::optional<Stamp> receive(milliseconds timeout) override;
  void forward() override;
  [[nodiscard]] std::uint64_t rejected() const override { return decoder_.counters().rejected(); }

 private:
  zmq::context_t& context_;
  std::string output_endpoint_;
  std::optional<transport::Channel> input_;
  std::optional<transport::Channel> output_;
  transport::Encoder encoder_;
  transport::Decoder<v2::Frame> decoder_;
  v2::Frame outgoing_;
  std::array<std::byte, kBufferBytes> rx_{};
};

/// Encoded size of the hyloop message at a typical cycle: the size of every raw message.
std::size_t hyloop_message_bytes();

}  // namespace hyloop::bench
