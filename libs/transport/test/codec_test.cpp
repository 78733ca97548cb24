#include "hyloop/transport/codec.hpp"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::transport {
namespace {

using google::protobuf::util::MessageDifferencer;

constexpr const char* kRun = "run-7f3a";

/// A SITS measurement frame: x_robot [m], v_robot [m/s], f_meas [N].
v2::Frame make_sensor() {
  v2::Frame m;
  for (double v : {0.0125, -0.31, -12.5}) m.add_values(v);
  return m;
}
/// A command frame: set point [m], rate [m/s].
v2::Frame make_command() {
  v2::Frame m;
  for (double v : {0.02, 0.1}) m.add_values(v);
  return m;
}
v2::Telemetry make_telemetry() {
  v2::Telemetry m;
  m.add_names("x[m]");
  m.add_names("F[N]");
  m.add_values(0.01);
  m.add_values(-3.5);
  m.set_deadline_misses(4);
  m.set_lateness_ns(52'000);
  m.set_rejected(2);
  m.set_event(v2::LOOP_EVENT_STOP);
  m.set_event_detail("displacement limit");
  return m;
}

template <class M>
void expect_round_trip(M msg) {
  Encoder enc({.run_id = kRun, .sender = 42});
  Decoder<M> dec({.run_id = kRun, .mode = Mode::kLockstep, .first_cycle = 5});
  const auto bytes = enc.encode(msg, 5, 0.01, 123'456'789);
  ASSERT_FALSE(bytes.empty());
  const M* got = dec.decode(bytes);
  ASSERT_NE(got, nullptr) << to_string(dec.last_verdict());
  EXPECT_TRUE(MessageDifferencer::Equals(*got, msg));
  EXPECT_EQ(got->header().run_id(), kRun);
  EXPECT_EQ(got->header().cycle(), 5U);
  EXPECT_EQ(got->header().virtual_time_s(), 0.01);
  EXPECT_EQ(got->header().send_time_ns(), 123'456'789);
  EXPECT_EQ(got->header().sender(), 42U);
  EXPECT_EQ(dec.counters().accepted(), 1U);
  EXPECT_EQ(dec.counters().rejected(), 0U);
}

TEST(Codec, RoundTripMeasurementFrame) { expect_round_trip(make_sensor()); }
TEST(Codec, RoundTripCommandFrame) { expect_round_trip(make_command()); }
TEST(Codec, RoundTripTelemetry) { expect_round_trip(make_telemetry()); }

// Loop contract v2: a frame carries exactly its channel's layout size; any other length is
// rejected and counted as wrong_length, never delivered, and the stream goes on.
TEST(Codec, FrameOfAnotherLengthThanItsLayoutIsRejected) {
  Encoder enc({.run_id = kRun});
  Decoder<v2::Frame> dec({.run_id = kRun, .mode = Mode::kLockstep, .frame_length = 3});
  v2::Frame shorter = make_command();  // 2 values
  v2::Frame longer = make_sensor();
  longer.add_values(7.0);  // 4 values
  v2::Frame empty;
  for (v2::Frame* f : {&shorter, &longer, &empty}) {
    EXPECT_EQ(dec.decode(enc.encode(*f, 0, 0.0)), nullptr);
    EXPECT_EQ(dec.last_verdict(), Verdict::kWrongLength);
  }
  EXPECT_EQ(dec.counters().count(Verdict::kWrongLength), 3U);
  EXPECT_EQ(dec.latest(), nullptr);
  v2::Frame good = make_sensor();
  const v2::Frame* got = dec.decode(enc.encode(good, 0, 0.0));
  ASSERT_NE(got, nullptr) << to_string(dec.last_verdict());
  EXPECT_EQ(got->values(2), -12.5);
  EXPECT_EQ(to_string(Verdict::kWrongLength), "wrong_length");
  // Without a layout length (0) any length passes the codec.
  Decoder<v2::Frame> any({.run_id = kRun, .mode = Mode::kLockstep});
  EXPECT_NE(any.decode(enc.encode(shorter, 0, 0.0)), nullptr);
}

std::vector<std::byte> copy(std::span<const std::byte> s) { return {s.begin(), s.end()}; }

// Every rejection kind, each counted exactly once, none delivered, the good ones unaffected.
TEST(Codec, EachRejectionCountedExactlyAndNoneDelivered) {
  Encoder enc({.run_id = kRun});
  Encoder other({.run_id = "another-run"});
  Decoder<v2::Frame> dec({.run_id = kRun,
                          .mode = Mode::kRealTime,
                          .max_bytes = 256,
                          .max_age = std::chrono::milliseconds(100)});
  const std::int64_t now = 10'000'000'000;
  auto cmd = make_command();

  // Accepted: cycle 10.
  ASSERT_NE(dec.decode(enc.encode(cmd, 10, 0.02, now), now), nullptr);

  // Malformed: forged bytes (0xFF is an invalid tag with wire type 7).
  std::array<std::byte, 16> forged{};
  forged.fill(std::byte{0xFF});
  EXPECT_EQ(dec.decode(forged, now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kMalformed);

  // Malformed: truncated buffer (cut inside the last double).
  auto full = copy(enc.encode(cmd, 11, 0.022, now));
  EXPECT_EQ(dec.decode(std::span<const std::byte>(full).first(full.size() - 3), now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kMalformed);

  // Oversized: more than max_bytes on the wire.
  std::vector<std::byte> big(257, std::byte{0});
  EXPECT_EQ(dec.decode(big, now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kOversized);

  // Wrong run id.
  EXPECT_EQ(dec.decode(other.encode(cmd, 12, 0.024, now), now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kWrongRun);

  // Stale: sent 150 ms before the receiver's now (max age 100 ms).
  EXPECT_EQ(dec.decode(enc.encode(cmd, 13, 0.026, now - 150'000'000), now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kStale);

  // Duplicate: cycle 10 again.
  EXPECT_EQ(dec.decode(enc.encode(cmd, 10, 0.02, now), now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kDuplicate);

  // Out of order: cycle 9 after 10.
  EXPECT_EQ(dec.decode(enc.encode(cmd, 9, 0.018, now), now), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kOutOfOrder);

  const auto& c = dec.counters();
  EXPECT_EQ(c.count(Verdict::kMalformed), 2U);
  EXPECT_EQ(c.count(Verdict::kOversized), 1U);
  EXPECT_EQ(c.count(Verdict::kWrongRun), 1U);
  EXPECT_EQ(c.count(Verdict::kStale), 1U);
  EXPECT_EQ(c.count(Verdict::kDuplicate), 1U);
  EXPECT_EQ(c.count(Verdict::kOutOfOrder), 1U);
  EXPECT_EQ(c.count(Verdict::kAhead), 0U);
  EXPECT_EQ(c.rejected(), 7U);
  EXPECT_EQ(c.accepted(), 1U);
  // The newest accepted message is still cycle 10, untouched by the rejected ones.
  ASSERT_NE(dec.latest(), nullptr);
  EXPECT_EQ(dec.latest()->header().cycle(), 10U);
  EXPECT_EQ(dec.latest()->values(0), 0.02);

  // Real time: newest wins, gaps are fine.
  ASSERT_NE(dec.decode(enc.encode(cmd, 15, 0.03, now), now), nullptr);
  EXPECT_EQ(dec.latest()->header().cycle(), 15U);
}

TEST(Codec, MissingHeaderIsMalformed) {
  Encoder enc({.run_id = kRun});
  Decoder<v2::Frame> dec({.run_id = kRun});
  auto s = make_sensor();  // no header set
  EXPECT_EQ(dec.decode(enc.serialize(s)), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kMalformed);
}

TEST(Codec, InvalidUtf8RunIdIsMalformed) {
  Decoder<v2::Frame> dec({.run_id = kRun});
  // Frame{header{run_id = "\xFF\xFE"}}: well-formed wire format, invalid proto3 string.
  const std::array<std::byte, 6> forged{std::byte{0x0A}, std::byte{0x04}, std::byte{0x0A},
                                        std::byte{0x02}, std::byte{0xFF}, std::byte{0xFE}};
  EXPECT_EQ(dec.decode(forged), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kMalformed);
  EXPECT_EQ(dec.counters().count(Verdict::kMalformed), 1U);
}

TEST(Codec, TruncatedReceiveIsMalformedAndOversizedWireIsOversized) {
  Encoder enc({.run_id = kRun});
  Decoder<v2::Frame> dec({.run_id = kRun, .max_bytes = 1024});
  auto s = make_sensor();
  const auto bytes = enc.encode(s, 0, 0.0);
  EXPECT_EQ(dec.decode_received(bytes.first(10), bytes.size()), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kMalformed);
  EXPECT_EQ(dec.decode_received(bytes.first(10), 4096), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kOversized);
}

TEST(Codec, EncoderRefusesMessagesAboveItsBuffer) {
  Encoder enc({.run_id = kRun, .max_bytes = 64});
  v2::Telemetry t;
  for (int i = 0; i < 32; ++i) t.add_values(i);
  EXPECT_TRUE(enc.encode(t, 0, 0.0).empty());
  EXPECT_EQ(enc.oversized(), 1U);
  EXPECT_EQ(enc.encoded(), 0U);
}

TEST(Codec, LockstepAcceptsOnlyTheExpectedCycleAndNeverStale) {
  Encoder enc({.run_id = kRun});
  Decoder<v2::Frame> dec({.run_id = kRun,
                          .mode = Mode::kLockstep,
                          .max_age = std::chrono::milliseconds(1),
                          .first_cycle = 3});
  auto s = make_sensor();
  EXPECT_EQ(dec.decode(enc.encode(s, 2, 0.0, 0), 1'000'000'000), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kOutOfOrder);
  EXPECT_EQ(dec.decode(enc.encode(s, 4, 0.0, 0), 1'000'000'000), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kAhead);
  // Sent "1 s ago" by the receiver's clock: never stale in lockstep.
  ASSERT_NE(dec.decode(enc.encode(s, 3, 0.0, 0), 1'000'000'000), nullptr);
  EXPECT_EQ(dec.validator().expected_cycle(), 4U);
  EXPECT_EQ(dec.decode(enc.encode(s, 3, 0.0, 0), 1'000'000'000), nullptr);
  EXPECT_EQ(dec.last_verdict(), Verdict::kDuplicate);
  ASSERT_NE(dec.decode(enc.encode(s, 4, 0.0, 0), 1'000'000'000), nullptr);
  EXPECT_EQ(dec.counters().accepted(), 2U);
  EXPECT_EQ(dec.counters().rejected(), 3U);
}

TEST(Codec, EncodeAndValidateAllocateNothingAfterWarmUp) {
  Encoder enc({.run_id = kRun, .sender = 1});
  Decoder<v2::Frame> sensor_dec({.run_id = kRun, .mode = Mode::kLockstep, .frame_length = 3});
  Decoder<v2::Telemetry> tel_dec(
      {.run_id = kRun, .mode = Mode::kRealTime, .max_age = std::chrono::seconds(10)});
  auto sample = make_sensor();
  auto tel = make_telemetry();
  std::array<std::byte, 4> forged{std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF},
                                  std::byte{0xFF}};
  auto wrong = make_command();  // 2 values where the layout has 3
  auto one_cycle = [&](std::uint64_t k) {
    sample.set_values(0, 1e-3 * static_cast<double>(k));
    EXPECT_EQ(sensor_dec.decode(enc.encode(wrong, k, 0.0)), nullptr);  // wrong length
    const std::size_t accepted_before = sensor_dec.counters().accepted();
    const auto* got = sensor_dec.decode(enc.encode(sample, k, 0.002 * static_cast<double>(k)));
    EXPECT_NE(got, nullptr);
    EXPECT_EQ(sensor_dec.counters().accepted(), accepted_before + 1);
    tel.set_values(0, static_cast<double>(k));
    tel.set_event(k % 2 == 0 ? v2::LOOP_EVENT_NONE : v2::LOOP_EVENT_STOP);
    EXPECT_NE(tel_dec.decode(enc.encode(tel, k, 0.0)), nullptr);
    EXPECT_EQ(tel_dec.decode(enc.encode(tel, k, 0.0)), nullptr);  // duplicate
    EXPECT_EQ(tel_dec.decode(forged), nullptr);                   // malformed (no log)
  };
  for (std::uint64_t k = 0; k < 4; ++k) one_cycle(k);  // warm-up: both scratch/latest objects
  std::size_t allocations = 0;
  {
    hyloop::testing::AllocGuard guard;
    for (std::uint64_t k = 4; k < 1004; ++k) one_cycle(k);
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  EXPECT_EQ(sensor_dec.counters().accepted(), 1004U);
  EXPECT_EQ(sensor_dec.counters().count(Verdict::kWrongLength), 1004U);
  EXPECT_EQ(tel_dec.counters().count(Verdict::kDuplicate), 1004U);
  EXPECT_EQ(tel_dec.counters().count(Verdict::kMalformed), 1004U);
}

}  // namespace
}  // namespace hyloop::transport
