#include "hyloop/hal/udp_packet.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hyloop/hal/seqlock.hpp"
#include "hyloop/testing/alloc_guard.hpp"
#include "udp_test_layouts.hpp"

namespace hyloop::hal {
namespace {

using Bytes = std::vector<std::uint8_t>;

TEST(UdpPacket, CommandGoldenFrame) {
  const PacketCodec codec("command layout", test::command_layout());
  ASSERT_EQ(codec.size(), 16U);
  // seq 1 (u32 BE) | 12.5 mm = 0.0125 m (f64 BE: 0x4029000000000000) | 2000 µm/s (i32 LE)
  const Bytes golden{0x00, 0x00, 0x00, 0x01, 0x40, 0x29, 0x00, 0x00,
                     0x00, 0x00, 0x00, 0x00, 0xd0, 0x07, 0x00, 0x00};
  const std::vector<double> values{0.0, 0.0125, 0.002};
  Bytes out(codec.size());
  ASSERT_EQ(codec.encode(values, 1, out), codec.size());
  EXPECT_EQ(out, golden);
  std::vector<double> back(3);
  std::uint64_t seq = 0;
  ASSERT_EQ(codec.decode(golden, back, seq), DecodeResult::kOk);
  EXPECT_EQ(seq, 1U);
  EXPECT_DOUBLE_EQ(back[1], 0.0125);
  EXPECT_DOUBLE_EQ(back[2], 0.002);
}

TEST(UdpPacket, MeasurementGoldenFrame) {
  const PacketCodec codec("measurement layout", test::measurement_layout());
  ASSERT_EQ(codec.size(), 15U);
  // seq 7 (u16 LE) | 12.5 mm (f32 LE 0x41480000) | −250 N = −2500 (i32 BE 0xfffff63c)
  // | echo 1 (u32 LE) | status 0
  const Bytes golden{0x07, 0x00, 0x00, 0x00, 0x48, 0x41, 0xff, 0xff,
                     0xf6, 0x3c, 0x01, 0x00, 0x00, 0x00, 0x00};
  std::vector<double> v(5);
  std::uint64_t seq = 0;
  ASSERT_EQ(codec.decode(golden, v, seq), DecodeResult::kOk);
  EXPECT_EQ(seq, 7U);
  EXPECT_DOUBLE_EQ(v[1], 0.0125);
  EXPECT_DOUBLE_EQ(v[2], -250.0);
  EXPECT_DOUBLE_EQ(v[3], 1.0);
  EXPECT_DOUBLE_EQ(v[4], 0.0);
  Bytes out(codec.size());
  ASSERT_EQ(codec.encode(v, 7, out), codec.size());
  EXPECT_EQ(out, golden);
}

TEST(UdpPacket, EveryTypeRoundTripsInBothByteOrders) {
  const WireType types[] = {WireType::kU8,  WireType::kU16, WireType::kU32, WireType::kU64,
                            WireType::kI8,  WireType::kI16, WireType::kI32, WireType::kI64,
                            WireType::kF32, WireType::kF64};
  for (ByteOrder order : {ByteOrder::kLittle, ByteOrder::kBig}) {
    PacketLayout layout;
    for (WireType t : types) {
      layout.fields.push_back({std::string(to_string(t)), t, order, 0.5, -3.0});
    }
    const PacketCodec codec("layout", layout);
    EXPECT_EQ(codec.size(), 1U + 2 + 4 + 8 + 1 + 2 + 4 + 8 + 4 + 8);
    std::vector<double> in(10);
    for (std::size_t i = 0; i < in.size(); ++i) {
      in[i] = (i >= 4 ? -20.5 : 40.5) + 0.5 * static_cast<double>(i);  // raw −35, 87, …
    }
    Bytes frame(codec.size());
    ASSERT_EQ(codec.encode(in, 0, frame), codec.size());
    std::vector<double> out(10);
    std::uint64_t seq = 0;
    ASSERT_EQ(codec.decode(frame, out, seq), DecodeResult::kOk);
    for (std::size_t i = 0; i < in.size(); ++i) {
      EXPECT_DOUBLE_EQ(out[i], in[i]) << to_string(types[i]);
    }
  }
  const auto be = PacketCodec("l", {{{"x", WireType::kU16, ByteOrder::kBig}}, ""});
  Bytes frame(2);
  ASSERT_EQ(be.encode(std::vector<double>{0x1234}, 0, frame), 2U);
  EXPECT_EQ(frame, (Bytes{0x12, 0x34}));
}

TEST(UdpPacket, ValuesThatDoNotFitAreNotEncoded) {
  PacketLayout layout;
  layout.fields = {{"a", WireType::kU8}, {"b", WireType::kI16, ByteOrder::kLittle, 0.1}};
  const PacketCodec codec("layout", layout);
  EXPECT_TRUE(codec.encodable(0, 255.4));
  EXPECT_FALSE(codec.encodable(0, 255.6));
  EXPECT_FALSE(codec.encodable(0, -0.6));
  EXPECT_TRUE(codec.encodable(1, -3276.8));
  EXPECT_FALSE(codec.encodable(1, 3276.8));  // raw 32768
  EXPECT_FALSE(codec.encodable(1, std::numeric_limits<double>::quiet_NaN()));
  Bytes frame(codec.size());
  EXPECT_EQ(codec.encode(std::vector<double>{1.0, 4000.0}, 0, frame), 0U);
  Bytes small(2);
  EXPECT_EQ(codec.encode(std::vector<double>{1.0, 2.0}, 0, small), 0U) << "buffer too small";
}

TEST(UdpPacket, DecodeRefusesWrongSizesAndNonFiniteFloats) {
  const PacketCodec codec("measurement layout", test::measurement_layout());
  std::vector<double> v(5);
  std::uint64_t seq = 0;
  EXPECT_EQ(codec.decode(Bytes(14), v, seq), DecodeResult::kWrongSize);
  EXPECT_EQ(codec.decode(Bytes(16), v, seq), DecodeResult::kWrongSize);
  Bytes nan_frame(15);
  nan_frame[2] = 0x00;
  nan_frame[3] = 0x00;
  nan_frame[4] = 0xc0;
  nan_frame[5] = 0x7f;  // f32 quiet NaN, little-endian
  EXPECT_EQ(codec.decode(nan_frame, v, seq), DecodeResult::kNotFinite);
}

TEST(UdpPacket, EveryTruncatedOrExtendedFrameIsRefused) {
  const PacketCodec codec("measurement layout", test::measurement_layout());
  const Bytes golden{0x07, 0x00, 0x00, 0x00, 0x48, 0x41, 0xff, 0xff,
                     0xf6, 0x3c, 0x01, 0x00, 0x00, 0x00, 0x00};
  std::vector<double> v(5);
  std::uint64_t seq = 0;
  for (std::size_t n = 0; n < golden.size(); ++n) {
    EXPECT_EQ(codec.decode({golden.data(), n}, v, seq), DecodeResult::kWrongSize) << n;
  }
  Bytes longer = golden;
  longer.push_back(0);
  EXPECT_EQ(codec.decode(longer, v, seq), DecodeResult::kWrongSize);
  EXPECT_EQ(codec.decode(golden, v, seq), DecodeResult::kOk);
}

void expect_refused(const PacketLayout& layout, const std::string& message) {
  try {
    const PacketCodec codec("command layout", layout);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), message.c_str());
  }
}

TEST(UdpPacket, RefusesInvalidLayoutsNamingTheField) {
  expect_refused({}, "command layout: 0 fields: must be 1..192");
  expect_refused({{{"x"}, {"x"}}, ""}, "command layout field 'x': declared twice");
  expect_refused({{{"Pos"}}, ""},
                 "command layout field 'Pos': the name must be non-empty, of [a-z0-9_]");
  expect_refused({{{"x", WireType::kF64, ByteOrder::kLittle, 0.0}}, ""},
                 "command layout field 'x': scale = 0.000000: must be finite and non-zero");
  expect_refused({{{"x", WireType::kU8, ByteOrder::kLittle, 1.0, 0.0, 300.0}}, ""},
                 "command layout field 'x': value = 300.000000: does not fit its type u8");
  expect_refused({{{"x"}}, "seq"},
                 "command layout field 'seq': the sequence field is not declared");
  expect_refused({{{"x"}}, "x"},
                 "command layout field 'x': the sequence field is f64: must be u16, u32 or u64");
  PacketLayout big;
  for (int i = 0; i < 190; ++i) {
    PacketField f;
    f.name = std::to_string(i);
    big.fields.push_back(f);
  }
  expect_refused(big, "command layout: 1520 bytes: must be at most 1472");
}

TEST(UdpPacket, SequenceDeltaWrapsInTheFieldsWidth) {
  EXPECT_EQ(sequence_delta(10, 11, 16), 1);
  EXPECT_EQ(sequence_delta(10, 14, 16), 4);
  EXPECT_EQ(sequence_delta(10, 10, 16), 0);
  EXPECT_EQ(sequence_delta(10, 8, 16), -2);
  EXPECT_EQ(sequence_delta(65535, 0, 16), 1);
  EXPECT_EQ(sequence_delta(65534, 3, 16), 5);
  EXPECT_EQ(sequence_delta(2, 65535, 16), -3);
  EXPECT_EQ(sequence_delta(0xffffffffU, 0, 32), 1);
  EXPECT_EQ(sequence_delta(~std::uint64_t{0}, 1, 64), 2);
}

TEST(UdpPacket, EncodeAndDecodeAllocateNothing) {
  const PacketCodec codec("measurement layout", test::measurement_layout());
  std::array<double, 5> v{0.0, 0.01, -20.0, 3.0, 0.0};
  std::array<std::uint8_t, 15> frame{};
  std::uint64_t seq = 0;
  testing::AllocGuard guard;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(codec.encode(v, static_cast<std::uint64_t>(i), frame), 15U);
    ASSERT_EQ(codec.decode(frame, v, seq), DecodeResult::kOk);
  }
  EXPECT_EQ(guard.allocations(), 0U);
}

TEST(SeqLock, ReadersNeverSeeATornValue) {
  // The writer stores {i, i, …, i} with i rising, yielding between stores (a driver's I/O thread
  // stores at most once a datagram; a writer that never pauses could starve the reader's
  // retries), until the reader has seen the value change 2000 times (or 10 s passed): every copy
  // read must be whole and none older than the last.
  struct Wide {
    std::array<std::uint64_t, 12> words;
  };
  SeqLock<Wide> lock;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t i = 1; !done.load(std::memory_order_relaxed); ++i) {
      Wide w{};
      w.words.fill(i);
      lock.store(w);
      std::this_thread::yield();
    }
  });
  std::uint64_t changes = 0;
  std::uint64_t torn = 0;
  std::uint64_t backwards = 0;
  std::uint64_t last = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (changes < 2000 && std::chrono::steady_clock::now() < until) {
    const Wide w = lock.load();
    for (std::uint64_t x : w.words) {
      torn += x != w.words[0] ? 1 : 0;
    }
    backwards += w.words[0] < last ? 1 : 0;
    changes += w.words[0] != last ? 1 : 0;
    last = w.words[0];
  }
  done = true;
  writer.join();
  EXPECT_EQ(changes, 2000U) << "the writer must have run while the reader read";
  EXPECT_EQ(torn, 0U);
  EXPECT_EQ(backwards, 0U);
  EXPECT_GE(lock.version(), last);
}

}  // namespace
}  // namespace hyloop::hal
