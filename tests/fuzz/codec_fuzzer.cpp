// Fuzz target: the loop-message codec (libs/transport codec.hpp), every loop message kind.
//
// Input: a 6-byte configuration, then records, each a received message:
//   config   [0] kind (mod 4: Frame of 3 values, Frame of 2, Frame of any length,
//                Telemetry)  [1] bit 0: real time (else lockstep)  [2] max age in ms (0: off)
//            [3..4] first cycle (little endian)  [5] max_bytes selector (64 << (v mod 8))
//   record   [0..1] n, the received length (LE)  [2] wire_bytes − n (a truncating receive
//            buffer)  [3..10] the receiver's now_ns (LE, any int64)  then n message bytes
// tests/fuzz/make_corpus.py writes seeds in this format from real encoded messages.
//
// Invariants (beyond "no crash, no sanitizer report"): exactly one verdict counted per message;
// an accepted message carries this run's id, a cycle above the last accepted one (lockstep:
// exactly the expected one) and in real time is not older than max age; a message above
// max_bytes or truncated is never accepted; latest() is the last accepted message; an accepted
// message re-encoded by the Encoder decodes to the same message.

#include <google/protobuf/stubs/logging.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "fuzz_support.hpp"
#include "hyloop/transport/codec.hpp"

namespace {

namespace tr = hyloop::transport;
namespace v2 = hyloop::v2;

constexpr const char* kRunId = "fuzz-run";
constexpr std::size_t kConfigBytes = 6;
constexpr std::size_t kRecordHeaderBytes = 11;

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] std::size_t left() const { return size_ - pos_; }
  std::uint64_t little_endian(std::size_t bytes) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i) v |= std::uint64_t{data_[pos_ + i]} << (8 * i);
    pos_ += bytes;
    return v;
  }
  std::span<const std::byte> take(std::size_t n) {
    const auto* p = reinterpret_cast<const std::byte*>(data_ + pos_);
    pos_ += n;
    return {p, n};
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

template <tr::LoopMessage M>
void check_round_trip(const M& accepted) {
  M copy = accepted;
  tr::Encoder encoder({.run_id = kRunId, .sender = 1, .max_bytes = 1 << 20});
  const std::uint64_t cycle = accepted.header().cycle();
  const auto bytes = encoder.encode(copy, cycle, accepted.header().virtual_time_s(),
                                    accepted.header().send_time_ns());
  FUZZ_CHECK(!bytes.empty(), "an accepted message cannot be re-encoded");
  tr::Decoder<M> decoder(
      {.run_id = kRunId, .mode = tr::Mode::kLockstep, .max_bytes = 1 << 20, .first_cycle = cycle});
  const M* again = decoder.decode(bytes);
  FUZZ_CHECK(again != nullptr, std::string(tr::to_string(decoder.last_verdict())).c_str());
  // Byte comparison, not MessageDifferencer: a NaN field equals itself here.
  FUZZ_CHECK(again->SerializeAsString() == copy.SerializeAsString(),
             "re-encoded message decodes differently");
}

template <tr::LoopMessage M>
void run(Reader& in, const tr::ValidatorConfig& config) {
  tr::Decoder<M> decoder(config);
  std::uint64_t decoded = 0;
  bool has_accepted = false;
  std::uint64_t last_cycle = 0;
  while (in.left() >= kRecordHeaderBytes) {
    const std::size_t n = in.little_endian(2);
    const std::size_t extra = in.little_endian(1);
    const auto now_ns = static_cast<std::int64_t>(in.little_endian(8));
    if (n > in.left()) break;
    const auto bytes = in.take(n);
    const std::uint64_t expected = decoder.validator().expected_cycle();
    const M* m = decoder.decode_received(bytes, n + extra, now_ns);
    ++decoded;
    const tr::Verdict verdict = decoder.last_verdict();
    FUZZ_CHECK((m != nullptr) == (verdict == tr::Verdict::kAccepted), "result and verdict differ");
    if (n + extra > config.max_bytes) {
      FUZZ_CHECK(verdict == tr::Verdict::kOversized, "an oversized message was not refused");
    } else if (extra > 0) {
      FUZZ_CHECK(verdict == tr::Verdict::kMalformed, "a truncated message was not refused");
    }
    if (m == nullptr) {
      FUZZ_CHECK(has_accepted == (decoder.latest() != nullptr), "latest() after a rejection");
      continue;
    }
    const auto& h = m->header();
    FUZZ_CHECK(h.run_id() == kRunId, "accepted a message of another run");
    FUZZ_CHECK(!has_accepted || h.cycle() > last_cycle, "accepted a cycle not above the last");
    if (config.mode == tr::Mode::kLockstep) {
      FUZZ_CHECK(h.cycle() == expected, "lockstep accepted a cycle other than the expected one");
    } else if (config.max_age.count() > 0) {
      // The age without overflow: the check must hold for every pair of int64 times.
      if (now_ns > h.send_time_ns()) {
        const std::uint64_t age =
            static_cast<std::uint64_t>(now_ns) - static_cast<std::uint64_t>(h.send_time_ns());
        FUZZ_CHECK(age <= static_cast<std::uint64_t>(config.max_age.count()),
                   "accepted a stale message");
      }
    }
    FUZZ_CHECK(decoder.latest() == m, "latest() is not the accepted message");
    has_accepted = true;
    last_cycle = h.cycle();
    check_round_trip(*m);
  }
  std::uint64_t counted = 0;
  for (std::size_t v = 0; v < tr::kVerdictCount; ++v) {
    counted += decoder.counters().count(static_cast<tr::Verdict>(v));
  }
  FUZZ_CHECK(counted == decoded, "not exactly one verdict counted per message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // protobuf logs every invalid UTF-8 string it refuses: silence it, it is most inputs.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  if (size < kConfigBytes) return 0;
  Reader in(data, size);
  const auto kind = in.little_endian(1) % 4;
  tr::ValidatorConfig config{.run_id = kRunId};
  config.mode = (in.little_endian(1) & 1) != 0 ? tr::Mode::kRealTime : tr::Mode::kLockstep;
  config.max_age = std::chrono::milliseconds(in.little_endian(1));
  config.first_cycle = in.little_endian(2);
  config.max_bytes = std::size_t{64} << (in.little_endian(1) % 8);
  switch (kind) {
    case 0:  // a measurement frame of a 3-signal layout
      config.frame_length = 3;
      run<v2::Frame>(in, config);
      break;
    case 1:  // a command frame (set point, rate)
      config.frame_length = 2;
      run<v2::Frame>(in, config);
      break;
    case 2:  // a frame of any length
      run<v2::Frame>(in, config);
      break;
    default:
      run<v2::Telemetry>(in, config);
      break;
  }
  return 0;
}
