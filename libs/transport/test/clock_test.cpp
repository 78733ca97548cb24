#include "hyloop/transport/clock.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <thread>

#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"

namespace hyloop::transport {
namespace {

using namespace std::chrono_literals;

TEST(LatencyHistogram, BucketsAreContiguousAndPercentilesClose) {
  for (std::size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::bucket_high_ns(b), LatencyHistogram::bucket_low_ns(b + 1)) << b;
    ASSERT_EQ(LatencyHistogram::bucket_of(LatencyHistogram::bucket_low_ns(b)), b);
  }
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 1000; ++v) h.record(v * 1000);  // 1..1000 µs
  EXPECT_EQ(h.count(), 1000U);
  EXPECT_EQ(h.max_ns(), 1'000'000);
  EXPECT_NEAR(static_cast<double>(h.percentile_ns(0.5)), 500'000.0, 500'000.0 * 0.04);
  EXPECT_NEAR(static_cast<double>(h.percentile_ns(0.99)), 990'000.0, 990'000.0 * 0.04);
  EXPECT_NEAR(h.mean_ns(), 500'500.0, 1e-6);
  h.record(-5);  // negative clamps to 0
  EXPECT_EQ(h.percentile_ns(0.0), 0);
  h.reset();
  EXPECT_EQ(h.count(), 0U);
  EXPECT_EQ(h.percentile_ns(0.5), 0);
}

void run_clock(std::chrono::nanoseconds spin_margin, const char* label) {
  PeriodicClock clock({.period = 1ms, .spin_margin = spin_margin});
  clock.start();
  std::int64_t last_deadline = 0;
  std::uint64_t last_cycle = 0;
  std::size_t allocations = 0;
  {
    hyloop::testing::AllocGuard guard;
    for (int i = 0; i < 200; ++i) {
      const Tick t = clock.wait_next();
      if (i > 0) {
        ASSERT_GT(t.deadline_ns, last_deadline);
        ASSERT_GT(t.cycle, last_cycle);
      }
      ASSERT_GE(t.lateness_ns, 0);
      ASSERT_GE(t.wake_ns, t.deadline_ns);
      ASSERT_EQ(t.deadline_ns - last_deadline,
                i > 0 ? static_cast<std::int64_t>(t.skipped + 1) * clock.period_ns()
                      : t.deadline_ns - last_deadline);
      last_deadline = t.deadline_ns;
      last_cycle = t.cycle;
    }
    allocations = guard.allocations();
  }
  EXPECT_EQ(allocations, 0U);
  EXPECT_EQ(clock.ticks(), 200U);
  EXPECT_EQ(clock.lateness().count(), 200U);
  EXPECT_EQ(last_cycle, 199U + clock.skipped());
  EXPECT_LE(clock.misses(), 200U);
  EXPECT_EQ(clock.missed_deadlines(), clock.misses() + clock.skipped());
  std::printf(
      "[ clock    ] %s 1 kHz x 200: late ticks %llu, skipped %llu, lateness p50 %.1f us, "
      "p99 %.1f us, max %.1f us, timer slack set %s\n",
      label, static_cast<unsigned long long>(clock.misses()),
      static_cast<unsigned long long>(clock.skipped()),
      static_cast<double>(clock.lateness().percentile_ns(0.5)) / 1e3,
      static_cast<double>(clock.lateness().percentile_ns(0.99)) / 1e3,
      static_cast<double>(clock.lateness().max_ns()) / 1e3, clock.timer_slack_set() ? "yes" : "no");
}

TEST(PeriodicClock, SleepOnlyAt1kHzFor200Ticks) { run_clock(0ns, "sleep"); }
TEST(PeriodicClock, SleepThenSpinAt1kHzFor200Ticks) { run_clock(100us, "sleep+spin 100us"); }

TEST(PeriodicClock, OverrunSkipsPastDeadlinesAndCountsAMiss) {
  PeriodicClock clock({.period = 1ms});
  clock.start();
  (void)clock.wait_next();
  std::this_thread::sleep_for(5ms);  // the "work" overruns by several periods
  const Tick t = clock.wait_next();
  EXPECT_GE(t.skipped, 3U);
  EXPECT_EQ(clock.skipped(), t.skipped);
  EXPECT_EQ(clock.missed_deadlines(), clock.misses() + clock.skipped());
  EXPECT_GE(clock.missed_deadlines(), 3U);
  EXPECT_EQ(t.cycle, 1U + t.skipped);
}

TEST(PeriodicClock, RejectsNonPositivePeriod) {
  EXPECT_THROW(PeriodicClock({.period = 0ns}), std::invalid_argument);
}

TEST(LockstepBarrier, StartsACycleOnlyWhenEveryInputHasArrived) {
  LockstepBarrier b(7);
  const auto sensor = b.add_input("sensor");
  const auto state = b.add_input("actuator_state");
  EXPECT_FALSE(b.ready());
  EXPECT_TRUE(b.arrive(sensor, 7));
  EXPECT_FALSE(b.ready());
  EXPECT_FALSE(b.pending(sensor));
  EXPECT_TRUE(b.pending(state));
  EXPECT_FALSE(b.advance());
  EXPECT_FALSE(b.arrive(sensor, 7));  // twice
  EXPECT_FALSE(b.arrive(state, 8));   // wrong cycle
  EXPECT_EQ(b.mismatches(), 2U);
  EXPECT_TRUE(b.arrive(state, 7));
  EXPECT_TRUE(b.ready());
  EXPECT_TRUE(b.advance());
  EXPECT_EQ(b.cycle(), 8U);
  EXPECT_TRUE(b.pending(sensor));
  EXPECT_TRUE(b.pending(state));
  EXPECT_EQ(b.name(state), "actuator_state");
}

// Two producers on threads, one consumer in lockstep over inproc: every cycle is assembled from
// both inputs of that cycle, whatever the interleaving; nothing is dropped or rejected.
TEST(LockstepBarrier, DrivesALockstepConsumerOverInproc) {
  zmq::context_t ctx;
  constexpr std::uint64_t kCycles = 300;
  Channel in_a(
      ctx,
      {.endpoint = "inproc://a", .pattern = Pattern::kPull, .role = Role::kBind, .recv_hwm = 8});
  Channel in_b(
      ctx,
      {.endpoint = "inproc://b", .pattern = Pattern::kPull, .role = Role::kBind, .recv_hwm = 8});
  auto producer = [&ctx](const char* ep, double scale) {
    Channel out(ctx, {.endpoint = ep,
                      .pattern = Pattern::kPush,
                      .role = Role::kConnect,
                      .send_hwm = 8,
                      .linger_ms = 2000});  // small queue: send() must wait
    Encoder enc({.run_id = "lock"});
    v2::Frame s;
    s.add_values(0.0);
    for (std::uint64_t k = 0; k < kCycles; ++k) {
      s.set_values(0, scale * static_cast<double>(k));
      ASSERT_TRUE(out.send(enc.encode(s, k, 0.0), 5000ms));  // lossless: waits for room
    }
    EXPECT_EQ(out.dropped(), 0U);
  };
  std::thread ta(producer, "inproc://a", 1.0);
  std::thread tb(producer, "inproc://b", -1.0);

  LockstepBarrier barrier;
  std::array<Channel*, 2> channels{&in_a, &in_b};
  std::array<Decoder<v2::Frame>, 2> decoders{Decoder<v2::Frame>({.run_id = "lock"}),
                                             Decoder<v2::Frame>({.run_id = "lock"})};
  barrier.add_input("a");
  barrier.add_input("b");
  std::array<std::byte, 512> buf{};
  double checksum = 0.0;
  while (barrier.cycle() < kCycles) {
    for (std::size_t i = 0; i < 2; ++i) {
      if (!barrier.pending(i)) continue;  // input i's next message belongs to a later cycle
      if (auto r = channels[i]->receive(buf, 1ms)) {
        const auto* m = decoders[i].decode_received(r->bytes, r->wire_bytes);
        ASSERT_NE(m, nullptr);
        ASSERT_TRUE(barrier.arrive(i, m->header().cycle()));
      }
    }
    if (barrier.ready()) {
      checksum += decoders[0].latest()->values(0) + decoders[1].latest()->values(0);
      ASSERT_TRUE(barrier.advance());
    }
  }
  ta.join();
  tb.join();
  EXPECT_EQ(checksum, 0.0);
  EXPECT_EQ(barrier.mismatches(), 0U);
  EXPECT_EQ(decoders[0].counters().accepted(), kCycles);
  EXPECT_EQ(decoders[1].counters().rejected(), 0U);
}

}  // namespace
}  // namespace hyloop::transport
