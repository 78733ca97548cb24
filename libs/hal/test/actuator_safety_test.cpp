#include "hyloop/hal/actuator_safety.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::hal {
namespace {

using hyloop::testing::invalid_argument_message;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

SafetyConfig bounded_config() {
  SafetyConfig c;
  c.limits.position_min = -0.1;
  c.limits.position_max = 0.2;
  c.limits.velocity_max = 0.5;
  c.limits.acceleration_max = 5.0;
  c.step = 0.002;
  c.rate_limit = 0.3;
  c.watchdog_cycles = 5;
  c.stop_deceleration = 2.0;
  return c;
}

TEST(ActuatorSafety, ValidationNamesFieldValueAndRange) {
  const auto message = [](auto mutate) {
    return invalid_argument_message([&] {
      SafetyConfig c;
      mutate(c);
      ActuatorSafety safety(c);
    });
  };
  EXPECT_THAT(message([](SafetyConfig& c) { c.step = 0.0; }),
              AllOf(HasSubstr("step"), HasSubstr("= 0"), HasSubstr("> 0")));
  EXPECT_THAT(message([](SafetyConfig& c) { c.step = kInf; }), HasSubstr("step"));
  EXPECT_THAT(message([](SafetyConfig& c) { c.rate_limit = -1.0; }),
              AllOf(HasSubstr("rate_limit"), HasSubstr("-1"), HasSubstr("> 0")));
  EXPECT_THAT(message([](SafetyConfig& c) { c.rate_limit = kNan; }), HasSubstr("rate_limit"));
  EXPECT_THAT(message([](SafetyConfig& c) { c.watchdog_cycles = 0; }),
              AllOf(HasSubstr("watchdog_cycles"), HasSubstr(">= 1")));
  EXPECT_THAT(message([](SafetyConfig& c) { c.stop_deceleration = 0.0; }),
              AllOf(HasSubstr("stop_deceleration"), HasSubstr("> 0")));
  EXPECT_THAT(message([](SafetyConfig& c) {
                c.limits.position_min = 1.0;
                c.limits.position_max = 1.0;
              }),
              AllOf(HasSubstr("limits.position_min"), HasSubstr("< limits.position_max")));
  EXPECT_THAT(message([](SafetyConfig& c) { c.limits.position_max = kNan; }),
              HasSubstr("limits.position_max"));
  EXPECT_THAT(message([](SafetyConfig& c) { c.limits.velocity_max = 0.0; }),
              HasSubstr("limits.velocity_max"));
  EXPECT_THAT(message([](SafetyConfig& c) { c.limits.acceleration_max = kNan; }),
              HasSubstr("limits.acceleration_max"));
  EXPECT_NO_THROW(ActuatorSafety(SafetyConfig{}));
  SafetyConfig unbounded;
  unbounded.stop_deceleration = kInf;
  EXPECT_NO_THROW(ActuatorSafety{unbounded});
}

// Issue 27: a stop ramp that could take longer than kMaxStopTime is refused, naming the field,
// its value and the least deceleration (bounded_config: V = 0.3 m/s, W = 0.3 m → 0.3 m/s²).
TEST(ActuatorSafety, RefusesAStopRampSlowerThanTheBound) {
  const auto message = [](auto mutate) {
    return invalid_argument_message([&] {
      SafetyConfig c = bounded_config();
      mutate(c);
      ActuatorSafety safety(c);
    });
  };
  EXPECT_DOUBLE_EQ(min_stop_deceleration(bounded_config()), 0.3);
  EXPECT_THAT(message([](SafetyConfig& c) { c.stop_deceleration = 1e-30; }),
              AllOf(HasSubstr("stop_deceleration = 1e-30"), HasSubstr("must be >= 0.3 m/s^2"),
                    HasSubstr("within 1 s")));
  EXPECT_THAT(message([](SafetyConfig& c) { c.stop_deceleration = 0.29; }),
              HasSubstr("stop_deceleration = 0.29: must be >= 0.3"));
  EXPECT_THAT(message([](SafetyConfig& c) { c.limits.acceleration_max = 0.1; }),
              HasSubstr("limits.acceleration_max = 0.1: must be >= 0.3"));
  EXPECT_THAT(message([](SafetyConfig& c) {  // no speed or window bound: only a hold will do
                c.limits = ActuatorLimits{};
                c.rate_limit = kInf;
              }),
              HasSubstr("stop_deceleration = 2: must be >= inf"));
  EXPECT_NO_THROW(message([](SafetyConfig& c) { c.stop_deceleration = 0.3; }));
  SafetyConfig hold = bounded_config();
  hold.limits = ActuatorLimits{};
  hold.rate_limit = kInf;
  hold.stop_deceleration = kInf;
  EXPECT_NO_THROW(ActuatorSafety{hold});
  EXPECT_EQ(max_stop_time(hold), 0.0);
}

// Calls of filter() after emergency_stop() until the output is at rest (the last one included).
int calls_to_rest(ActuatorSafety& safety) {
  safety.emergency_stop();
  int calls = 0;
  do {
    (void)safety.filter(nullptr);
    ++calls;
  } while (!safety.at_rest() && calls < 10000000);
  return calls;
}

// Issue 27: for every accepted configuration the ramp reaches rest within kMaxStopTime of its
// first step, so within kMaxStopTime + 2T of the request (filter() takes it within one period).
// Configurations at the bound (d = min_stop_deceleration), e-stopped at every cycle of a run to
// the far end of the window from rest at the near end.
TEST(ActuatorSafety, StopRampReachesRestWithinTheBoundForTheWorstAcceptedConfig) {
  struct Case {
    double step, speed, width, accel;
    bool by_acceleration;  // d set through limits.acceleration_max (stop_deceleration = inf)
  };
  std::vector<Case> cases;
  for (double step : {0.001, 0.004, 0.01}) {
    for (double speed : {0.05, 2.0, kInf}) {
      for (double width : {0.01, 1.0, 100.0, kInf}) {
        if (std::isinf(speed) && std::isinf(width)) continue;
        cases.push_back({step, speed, width, kInf, false});
        cases.push_back({step, speed, width, 500.0, false});
        cases.push_back({step, speed, width, 0.0, true});
      }
    }
  }
  double worst = 0.0;
  for (const Case& k : cases) {
    SafetyConfig c;
    c.step = k.step;
    c.limits.velocity_max = k.speed;
    c.limits.position_min = std::isinf(k.width) ? -kInf : -k.width / 2.0;
    c.limits.position_max = std::isinf(k.width) ? kInf : k.width / 2.0;
    const double d = min_stop_deceleration(c);
    if (k.by_acceleration) {
      c.limits.acceleration_max = d;
    } else {
      c.limits.acceleration_max = std::max(k.accel, d);
      c.stop_deceleration = d;
    }
    ASSERT_LE(max_stop_time(c), kMaxStopTime * (1.0 + 1e-12));
    const double start = std::isinf(k.width) ? 0.0 : c.limits.position_min;
    const double target = std::isinf(k.width) ? 1e6 : c.limits.position_max;
    // Cycles of the run to the target (stopped there or after 2 s).
    int run = 0;
    {
      ActuatorSafety probe(c);
      probe.reset(start);
      const ActuatorCommand far{target, 0.0};
      while (run < 2.0 / k.step && (run == 0 || !probe.at_rest())) {
        (void)probe.filter(&far);
        ++run;
      }
    }
    for (int at = 1; at <= run; at += std::max(1, run / 40)) {
      ActuatorSafety safety(c);
      safety.reset(start);
      const ActuatorCommand far{target, 0.0};
      for (int i = 0; i < at; ++i) (void)safety.filter(&far);
      const double v0 = std::abs(safety.output_velocity());
      const int calls = calls_to_rest(safety);
      const double to_rest = (calls - 1) * k.step;  // from the ramp's first step
      ASSERT_LE(to_rest, kMaxStopTime + k.step)
          << "T " << k.step << " V " << k.speed << " W " << k.width << " d " << d << " v0 " << v0;
      ASSERT_LE(to_rest, max_stop_time(c) + k.step);
      worst = std::max(worst, to_rest + k.step);  // + one period until the request is taken
    }
  }
  std::printf("worst time to rest after the request: %.4f s (bound %.1f s + 2T)\n", worst,
              kMaxStopTime);
}

// The worst accepted SITS scenario's window (docs/scenarios.md "Stop time"): the default stroke
// ±0.5 m, 2 m/s, a = 500 m/s², control period 4 ms, at the least accepted deceleration 2 m/s²,
// e-stopped at full speed from the near end: rest 1 s after the first ramp step at most.
TEST(ActuatorSafety, DefaultSitsWindowStopsWithinTheBoundFromFullSpeed) {
  SafetyConfig c;
  c.step = 0.004;
  c.limits = {-0.5, 0.5, 2.0, 500.0};
  c.stop_deceleration = min_stop_deceleration(c);
  ASSERT_EQ(c.stop_deceleration, 2.0);
  ASSERT_EQ(max_stop_time(c), 1.0);
  ActuatorSafety safety(c);
  safety.reset(-0.5);
  const ActuatorCommand far{0.5, 0.0};
  for (int k = 0; k < 3; ++k) (void)safety.filter(&far);
  ASSERT_NEAR(safety.output_velocity(), 2.0, 1e-9);
  const int calls = calls_to_rest(safety);
  const double to_rest = (calls - 1) * c.step;
  std::printf("default SITS window at 2 m/s: rest %.3f s after the ramp's first step (%d calls)\n",
              to_rest, calls);
  EXPECT_LE(to_rest, kMaxStopTime);
  EXPECT_LE(safety.last_output().position, 0.5);
}

TEST(ActuatorSafety, WithinLimitsTheOutputIsTheCommandBitForBit) {
  // A sine well inside every bound: 0.04 m at 1 Hz peaks at 0.25 m/s < rate_limit 0.3 m/s and
  // 1.6 m/s² < 5 m/s² (plus a 1e-9 m jitter: ≤ 1e-6 m/s, ≤ 5e-4 m/s² per call).
  ActuatorSafety safety(bounded_config());
  ActuatorSafety open(SafetyConfig{});
  safety.reset(0.0);
  open.reset(0.0);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> wiggle(-1e-9, 1e-9);
  for (int k = 1; k <= 5000; ++k) {
    const double t = 0.002 * k;
    // Starts from rest: x = A·(1 − cos ωt), v = A·ω·sin ωt.
    const ActuatorCommand c{0.04 * (1.0 - std::cos(2.0 * 3.141592653589793 * t)) + wiggle(rng),
                            0.25 * std::sin(2.0 * 3.141592653589793 * t)};
    for (ActuatorSafety* s : {&safety, &open}) {
      const SafetyOutput out = s->filter(&c);
      ASSERT_EQ(std::bit_cast<std::uint64_t>(out.command.position),
                std::bit_cast<std::uint64_t>(c.position))
          << "k = " << k;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(out.command.velocity),
                std::bit_cast<std::uint64_t>(c.velocity));
      ASSERT_FALSE(out.limited);
      ASSERT_EQ(out.event, SafetyEvent::kNone);
    }
  }
  // The default (unlimited) filter passes any finite command, however far it jumps.
  for (double p : {1e300, -3.5, 0.0, -1e-300, 7.25}) {
    const ActuatorCommand c{p, -2.0};
    const SafetyOutput out = open.filter(&c);
    EXPECT_EQ(out.command.position, p);
    EXPECT_EQ(out.command.velocity, -2.0);
    EXPECT_EQ(out.event, SafetyEvent::kNone);
  }
  EXPECT_EQ(safety.rate_limited() + safety.rejected_acceleration(), 0U);
}

TEST(ActuatorSafety, RejectedCommandsHoldTheLastOutputAndAreCounted) {
  SafetyConfig config = bounded_config();
  config.limits.acceleration_max = kInf;
  ActuatorSafety safety(config);
  safety.reset(0.01);
  const ActuatorCommand good{0.0105, 0.2};
  ASSERT_EQ(safety.filter(&good).event, SafetyEvent::kNone);

  struct Case {
    ActuatorCommand command;
    SafetyEvent event;
  };
  const Case cases[] = {
      {{kNan, 0.0}, SafetyEvent::kRejectedNotFinite},
      {{0.0, kInf}, SafetyEvent::kRejectedNotFinite},
      {{0.25, 0.0}, SafetyEvent::kRejectedPosition},
      {{-1e300, 0.0}, SafetyEvent::kRejectedPosition},
      {{0.011, 0.6}, SafetyEvent::kRejectedVelocity},
  };
  for (const Case& c : cases) {
    const SafetyOutput out = safety.filter(&c.command);
    EXPECT_EQ(out.event, c.event);
    EXPECT_EQ(out.command.position, 0.0105);  // held
    EXPECT_EQ(out.command.velocity, 0.0);     // at rest while holding
    EXPECT_FALSE(out.watchdog);
    const ActuatorCommand again{0.0105, 0.0};
    ASSERT_EQ(safety.filter(&again).event, SafetyEvent::kNone);  // keeps the watchdog fed
  }
  EXPECT_EQ(safety.rejected_not_finite(), 2U);
  EXPECT_EQ(safety.rejected_position(), 2U);
  EXPECT_EQ(safety.rejected_velocity(), 1U);
}

TEST(ActuatorSafety, RateLimitClipsTheStepAndArrivesExactly) {
  SafetyConfig config;
  config.rate_limit = 0.1;  // 2e-4 m per call at T = 2 ms
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const ActuatorCommand target{0.01, 0.0};
  double previous = 0.0;
  int calls = 0;
  SafetyOutput out;
  do {
    out = safety.filter(&target);
    ++calls;
    EXPECT_LE(std::abs(out.command.position - previous), 0.1 * 0.002 * (1.0 + 1e-12));
    if (out.limited) {
      EXPECT_EQ(out.event, SafetyEvent::kRateLimited);
      EXPECT_NEAR(out.command.velocity, 0.1, 1e-9);
    }
    previous = out.command.position;
  } while (out.limited && calls < 1000);
  EXPECT_EQ(out.command.position, 0.01);  // exactly the command once it is within reach
  EXPECT_EQ(out.event, SafetyEvent::kNone);
  EXPECT_NEAR(calls, 50, 1);
  EXPECT_EQ(safety.rate_limited(), static_cast<std::uint64_t>(calls - 1));

  // velocity_max bounds the implied velocity as well as the feed-forward.
  SafetyConfig slow;
  slow.limits.velocity_max = 0.05;
  ActuatorSafety limited(slow);
  limited.reset(0.0);
  const SafetyOutput first = limited.filter(&target);
  EXPECT_TRUE(first.limited);
  EXPECT_EQ(first.event, SafetyEvent::kRateLimited);
  EXPECT_NEAR(first.command.position, 0.05 * 0.002, 1e-15);
}

TEST(ActuatorSafety, AccelerationLimitClipsWithoutOvershoot) {
  SafetyConfig config;
  config.step = 0.01;
  config.limits.acceleration_max = 10.0;  // Δv ≤ 0.1 m/s per call
  config.limits.position_min = -1.0;      // a window: the stop ramp (at a) is bounded
  config.limits.position_max = 1.0;
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const ActuatorCommand target{0.1, 0.0};
  double p_prev = 0.0;
  double v_prev = 0.0;
  SafetyOutput out;
  int calls = 0;
  do {
    out = safety.filter(&target);
    ++calls;
    const double v = (out.command.position - p_prev) / config.step;
    EXPECT_LE(std::abs(v - v_prev), 0.1 + 1e-9) << "call " << calls;
    EXPECT_LE(out.command.position, 0.1);  // never past the command
    if (out.limited) {
      EXPECT_EQ(out.event, SafetyEvent::kRejectedAcceleration);
    }
    p_prev = out.command.position;
    v_prev = v;
  } while (out.limited && calls < 1000);
  EXPECT_EQ(out.command.position, 0.1);
  EXPECT_LT(calls, 30);  // bang-bang over 0.1 m at 10 m/s² takes 0.2 s = 20 calls
  EXPECT_EQ(safety.rejected_acceleration(), static_cast<std::uint64_t>(calls - 1));
  EXPECT_LE(std::abs(v_prev), 0.1 + 1e-9);  // lands slowly enough to stop in one call...
  for (int i = 0; i < 5; ++i) {             // ...and then holds the command exactly
    out = safety.filter(&target);
    EXPECT_EQ(out.command.position, 0.1);
    EXPECT_EQ(out.event, SafetyEvent::kNone);
  }
}

TEST(ActuatorSafety, AfterAClipTheOutputRejoinsStaticAndMovingCommandsExactly) {
  for (double a : {0.5, 5.0, 80.0}) {
    for (double step : {0.001, 0.01}) {
      SafetyConfig config;
      config.step = step;
      config.limits.acceleration_max = a;
      config.rate_limit = 0.4;
      ActuatorSafety safety(config);
      // A static step of 3 cm: no overshoot, then exactly the command.
      safety.reset(0.0);
      const ActuatorCommand target{-0.03, 0.0};
      int calls = 0;
      while (safety.filter(&target).event != SafetyEvent::kNone && calls < 100000) {
        EXPECT_GE(safety.last_output().position, -0.03);
        ++calls;
      }
      EXPECT_EQ(safety.last_output().position, -0.03) << "a = " << a << ", T = " << step;
      EXPECT_LE(std::abs(safety.output_velocity()), a * step * (1.0 + 1e-9));
      // A ramp at 0.1 m/s starting 2 cm away: the output catches it and then passes it through.
      safety.reset(0.0);
      int k = 0;
      int last_clip = -1;
      for (; k < 200000; ++k) {
        const ActuatorCommand c{0.02 + 0.1 * step * k, 0.1};
        const SafetyOutput out = safety.filter(&c);
        if (out.event != SafetyEvent::kNone) {
          last_clip = k;
        } else if (k - last_clip > 10) {
          break;
        }
      }
      EXPECT_LT(k, 200000) << "a = " << a << ", T = " << step;
      EXPECT_NEAR(safety.output_velocity(), 0.1, 1e-9);
    }
  }
}

TEST(ActuatorSafety, WatchdogTripsAfterConfiguredMissesAndStaysLatched) {
  SafetyConfig config;
  config.watchdog_cycles = 4;
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const ActuatorCommand c{0.001, 0.1};
  ASSERT_EQ(safety.filter(&c).event, SafetyEvent::kNone);
  for (int i = 1; i < config.watchdog_cycles; ++i) {
    const SafetyOutput out = safety.filter(nullptr);
    EXPECT_EQ(out.event, SafetyEvent::kCommandMissed);
    EXPECT_EQ(out.command.position, 0.001);
    EXPECT_EQ(out.command.velocity, 0.0);
    EXPECT_FALSE(out.watchdog);
  }
  const SafetyOutput tripped = safety.filter(nullptr);
  EXPECT_EQ(tripped.event, SafetyEvent::kWatchdogTripped);
  EXPECT_TRUE(tripped.watchdog);
  EXPECT_TRUE(safety.watchdog_tripped());
  EXPECT_EQ(safety.watchdog_trips(), 1U);
  EXPECT_EQ(safety.missed_commands(), 4U);

  // A fresh valid command does not resume.
  const ActuatorCommand fresh{0.002, 0.0};
  for (int i = 0; i < 3; ++i) {
    const SafetyOutput out = safety.filter(&fresh);
    EXPECT_EQ(out.event, SafetyEvent::kWatchdogTripped);
    EXPECT_EQ(out.command.position, 0.001);
  }
  // rearm at the rig's position clears it (at rest), then commands pass again.
  ASSERT_TRUE(safety.rearm(0.0015));
  EXPECT_FALSE(safety.watchdog_tripped());
  EXPECT_EQ(safety.last_output().position, 0.0015);
  EXPECT_EQ(safety.filter(&fresh).command.position, 0.002);
  EXPECT_EQ(safety.watchdog_trips(), 1U);

  // Rejected commands do not feed the watchdog either.
  const ActuatorCommand bad{kNan, 0.0};
  for (int i = 0; i < config.watchdog_cycles; ++i) {
    (void)safety.filter(&bad);
  }
  EXPECT_TRUE(safety.watchdog_tripped());
  EXPECT_EQ(safety.watchdog_trips(), 2U);
}

// trip_watchdog() (the actuator service's input deadline, issue 27 finding 8): latched at once,
// counted once, the next call ramps and ignores commands; rearm clears it as for a counted trip.
TEST(ActuatorSafety, TripWatchdogLatchesAtOnceAndTheNextCallRamps) {
  SafetyConfig config = bounded_config();
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const ActuatorCommand moving{0.00001, 0.005};  // within a·T of rest
  ASSERT_EQ(safety.filter(&moving).event, SafetyEvent::kNone);
  safety.trip_watchdog();
  safety.trip_watchdog();  // once
  EXPECT_TRUE(safety.watchdog_tripped());
  EXPECT_EQ(safety.watchdog_trips(), 1U);
  const ActuatorCommand further{0.00003, 0.01};
  const SafetyOutput out = safety.filter(&further);
  EXPECT_EQ(out.event, SafetyEvent::kWatchdogTripped);
  EXPECT_TRUE(out.watchdog);
  EXPECT_LT(out.command.position, further.position);  // the ramp (braking at d), not it
  for (int i = 0; i < 1000 && !safety.at_rest(); ++i) (void)safety.filter(&further);
  EXPECT_TRUE(safety.at_rest());
  EXPECT_EQ(safety.watchdog_trips(), 1U);
  ASSERT_TRUE(safety.rearm(0.0));
  EXPECT_FALSE(safety.filter(&moving).watchdog);  // commands pass again (within the bounds)
}

TEST(ActuatorSafety, WatchdogRampBrakesAtTheAccelerationBoundAndRearmNeedsRest) {
  SafetyConfig config;
  config.step = 0.01;
  config.limits.acceleration_max = 1.0;  // 0.01 m/s per call
  config.stop_deceleration = 0.5;        // 0.005 m/s per call once tripped
  config.rate_limit = 0.5;               // the ramp at 0.5 m/s² then ends within 1 s
  config.watchdog_cycles = 2;
  ActuatorSafety safety(config);
  safety.reset(0.0);
  // Accelerate to 0.1 m/s along a ramp the filter passes through.
  double p = 0.0;
  for (int k = 1; k <= 10; ++k) {
    p += 0.009 * k * config.step;
    const ActuatorCommand c{p, 0.009 * k};
    ASSERT_EQ(safety.filter(&c).event, SafetyEvent::kNone);
  }
  EXPECT_NEAR(safety.output_velocity(), 0.09, 1e-12);
  // Miss 1: hold = brake at a (0.09 → 0.08). Miss 2: trip, ramp at d (0.08 → 0.075).
  SafetyOutput out = safety.filter(nullptr);
  EXPECT_EQ(out.event, SafetyEvent::kCommandMissed);
  EXPECT_TRUE(out.limited);
  EXPECT_NEAR(safety.output_velocity(), 0.08, 1e-9);
  out = safety.filter(nullptr);
  EXPECT_EQ(out.event, SafetyEvent::kWatchdogTripped);
  EXPECT_NEAR(safety.output_velocity(), 0.075, 1e-9);
  EXPECT_FALSE(safety.rearm(0.0));  // still moving
  int calls = 0;
  while (!safety.at_rest() && calls < 100) {
    (void)safety.filter(nullptr);
    ++calls;
  }
  EXPECT_NEAR(calls, 15, 1);  // 0.075 / 0.005
  EXPECT_TRUE(safety.rearm(safety.last_output().position));
}

TEST(ActuatorSafety, EmergencyStopTakesEffectOnTheNextCall) {
  SafetyConfig config;
  config.stop_deceleration = 1.0;  // 0.002 m/s per call
  config.rate_limit = 1.0;         // the ramp then ends within 1 s
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const double v = 0.05;
  ActuatorCommand c;
  for (int k = 1; k <= 100; ++k) {
    c = {v * config.step * k, v};
    ASSERT_EQ(safety.filter(&c).event, SafetyEvent::kNone);
  }
  const double p_before = safety.last_output().position;
  const double v_before = safety.output_velocity();
  safety.emergency_stop();  // between two cycles
  EXPECT_TRUE(safety.estopped());
  c = {v * config.step * 101, v};
  const SafetyOutput first = safety.filter(&c);  // the command is ignored
  EXPECT_TRUE(first.estopped);
  EXPECT_EQ(first.event, SafetyEvent::kEstopped);
  const double v_first = v_before - 1.0 * config.step;
  EXPECT_DOUBLE_EQ(first.command.position, p_before + v_first * config.step);
  EXPECT_NEAR(first.command.velocity, v_first, 1e-12);

  EXPECT_FALSE(safety.clear_emergency_stop());  // not at rest
  double v_prev = v_first;
  int calls = 1;
  while (!safety.at_rest() && calls < 1000) {
    c.position += v * config.step;
    const SafetyOutput out = safety.filter(&c);
    EXPECT_EQ(out.event, SafetyEvent::kEstopped);
    EXPECT_LE(out.command.velocity, v_prev);
    EXPECT_GE(out.command.velocity, 0.0);
    EXPECT_NEAR(v_prev - out.command.velocity, std::min(v_prev, 1.0 * config.step), 1e-9);
    v_prev = out.command.velocity;
    ++calls;
  }
  EXPECT_NEAR(calls, 25, 1);  // 0.05 m/s at 1 m/s²: 50 ms = 25 calls
  const double stopped_at = safety.last_output().position;
  EXPECT_NEAR(stopped_at - p_before, v * v / 2.0, 1e-4);
  // Latched at rest until cleared; then commands pass again.
  EXPECT_EQ(safety.filter(&c).command.position, stopped_at);
  EXPECT_TRUE(safety.clear_emergency_stop());
  EXPECT_FALSE(safety.estopped());
  const ActuatorCommand resume{stopped_at + 1e-5, 0.0};
  EXPECT_EQ(safety.filter(&resume).command.position, stopped_at + 1e-5);
}

TEST(ActuatorSafety, EmergencyStopWithUnboundedDecelerationHoldsAtOnce) {
  SafetyConfig config;
  config.stop_deceleration = kInf;
  ActuatorSafety safety(config);
  safety.reset(0.0);
  const ActuatorCommand c{0.0002, 0.1};
  (void)safety.filter(&c);
  safety.emergency_stop();
  const ActuatorCommand next{0.0004, 0.1};
  const SafetyOutput out = safety.filter(&next);
  EXPECT_EQ(out.command.position, 0.0002);
  EXPECT_EQ(out.command.velocity, 0.0);
  EXPECT_TRUE(safety.at_rest());
  EXPECT_TRUE(safety.clear_emergency_stop());
}

TEST(ActuatorSafety, PendingEmergencyStopCannotBeClearedBeforeItIsApplied) {
  ActuatorSafety safety(SafetyConfig{});
  safety.reset(0.0);
  safety.emergency_stop();
  EXPECT_FALSE(safety.clear_emergency_stop());
  EXPECT_TRUE(safety.estopped());
  EXPECT_EQ(safety.filter(nullptr).event, SafetyEvent::kEstopped);
  EXPECT_TRUE(safety.clear_emergency_stop());
  // reset() re-arms but never clears a latched e-stop.
  safety.emergency_stop();
  (void)safety.filter(nullptr);
  safety.reset(0.0);
  EXPECT_TRUE(safety.estopped());
  EXPECT_TRUE(safety.clear_emergency_stop());
  // A tripped watchdog cannot be re-armed while the e-stop is latched.
  for (int i = 0; i < SafetyConfig{}.watchdog_cycles; ++i) {
    (void)safety.filter(nullptr);
  }
  ASSERT_TRUE(safety.watchdog_tripped());
  safety.emergency_stop();
  (void)safety.filter(nullptr);
  EXPECT_FALSE(safety.rearm(0.0));
  EXPECT_TRUE(safety.clear_emergency_stop());
  EXPECT_TRUE(safety.rearm(0.0));
  EXPECT_TRUE(safety.rearm(0.0));  // not tripped: nothing to do
}

TEST(ActuatorSafety, RampStopsAtTheWindowEdge) {
  SafetyConfig config;
  config.limits.position_min = -0.01;
  config.limits.position_max = 0.01;
  config.stop_deceleration = 1.0;  // from 0.1 m/s needs 5 mm; only 2 mm are left
  ActuatorSafety safety(config);
  safety.reset(0.0078);
  const ActuatorCommand c{0.008, 0.1};
  (void)safety.filter(&c);
  safety.emergency_stop();
  for (int i = 0; i < 100; ++i) {
    const SafetyOutput out = safety.filter(nullptr);
    EXPECT_LE(out.command.position, 0.01);
  }
  EXPECT_EQ(safety.last_output().position, 0.01);
  EXPECT_TRUE(safety.at_rest());
}

TEST(ActuatorSafety, ResetClampsIntoTheWindow) {
  ActuatorSafety safety(bounded_config());
  safety.reset(5.0);
  EXPECT_EQ(safety.last_output().position, 0.2);
  safety.reset(kNan);
  EXPECT_EQ(safety.last_output().position, 0.2);
  safety.reset(-kInf);
  EXPECT_EQ(safety.last_output().position, 0.2);
  safety.reset(-0.05);
  EXPECT_EQ(safety.last_output().position, -0.05);
  EXPECT_TRUE(safety.at_rest());
}

// Every output of thousands of random commands (finite, near, far, NaN, inf, huge, missing),
// with random e-stops, clears and re-arms, satisfies every limit.
TEST(ActuatorSafety, PropertyEveryOutputSatisfiesEveryLimit) {
  std::vector<SafetyConfig> configs;
  configs.push_back(bounded_config());
  {
    SafetyConfig c = bounded_config();
    c.limits.acceleration_max = kInf;
    c.rate_limit = kInf;
    configs.push_back(c);
  }
  {
    SafetyConfig c = bounded_config();
    c.stop_deceleration = kInf;  // capped by acceleration_max
    c.limits.velocity_max = 0.1;
    configs.push_back(c);
  }
  {
    SafetyConfig c;  // one-sided window, tiny acceleration, long step
    c.limits.position_max = 0.05;
    c.limits.acceleration_max = 0.02;
    c.rate_limit = 0.02;  // the slowest speed the ramp at 0.02 m/s² stops within 1 s
    c.step = 0.05;
    c.watchdog_cycles = 3;
    configs.push_back(c);
  }
  {
    SafetyConfig c;  // nothing but a window
    c.limits.position_min = -1.0;
    c.limits.position_max = 1.0;
    c.stop_deceleration = 1e12;
    configs.push_back(c);
  }

  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<int> kind(0, 99);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double specials[] = {kNan, kInf, -kInf, 1e308, -1e308, 1e-310, 0.0};
  std::uniform_int_distribution<std::size_t> special(0, std::size(specials) - 1);

  for (const SafetyConfig& config : configs) {
    ActuatorSafety safety(config);
    safety.reset(0.0);
    const ActuatorLimits& l = config.limits;
    const double t = config.step;
    const double speed = std::min(config.rate_limit, l.velocity_max);
    const double width = std::isfinite(l.position_min) ? l.position_max - l.position_min : 1.0;
    double p_prev = safety.last_output().position;
    double v_prev = 0.0;
    std::uint64_t passed = 0;
    for (int k = 0; k < 20000; ++k) {
      const int r = kind(rng);
      if (r == 0) {
        safety.emergency_stop();
      } else if (r == 1) {
        (void)safety.clear_emergency_stop();
      } else if (r == 2 && safety.watchdog_tripped() &&
                 safety.rearm(safety.last_output().position)) {
        v_prev = 0.0;
      }
      const double p = safety.last_output().position;
      const double v = safety.output_velocity();
      ActuatorCommand c;
      const ActuatorCommand* command = &c;
      const int what = kind(rng);
      if (what < 50) {  // a small move, usually admissible
        c.position =
            p + v * t + 0.5 * unit(rng) * std::min({1e-3, speed * t, l.acceleration_max * t * t});
        c.velocity = 0.5 * unit(rng) * std::min(1.0, l.velocity_max);
      } else if (what < 70) {  // anywhere in (or just outside) the window
        c.position = (std::isfinite(l.position_min) ? l.position_min : l.position_max - 1.0) +
                     width * (1.2 * (unit(rng) + 1.0) / 2.0 - 0.1);
        c.velocity = 2.0 * unit(rng);
      } else if (what < 85) {
        c.position = specials[special(rng)];
        c.velocity = specials[special(rng)];
      } else if (what < 90) {
        c.position = p;
        c.velocity = kNan;
      } else {
        command = nullptr;
      }
      const SafetyOutput out = safety.filter(command);
      const double q = out.command.position;
      ASSERT_TRUE(std::isfinite(q)) << "k = " << k;
      ASSERT_TRUE(std::isfinite(out.command.velocity));
      ASSERT_GE(q, l.position_min);
      ASSERT_LE(q, l.position_max);
      ASSERT_LE(std::abs(out.command.velocity), l.velocity_max);
      const double v_out = (q - p_prev) / t;
      const double tol = 1e-12 * (1.0 + std::abs(p_prev) / t);
      if (std::isfinite(speed)) {
        ASSERT_LE(std::abs(v_out), speed + tol) << "k = " << k;
      }
      if (std::isfinite(l.acceleration_max)) {
        ASSERT_LE(std::abs(v_out - v_prev), l.acceleration_max * t + 2.0 * tol) << "k = " << k;
      }
      if (out.event == SafetyEvent::kNone) {
        ++passed;
        ASSERT_EQ(q, c.position);
        ASSERT_EQ(out.command.velocity, c.velocity);
      }
      p_prev = q;
      v_prev = v_out;
    }
    std::printf("passed %llu, clipped %llu + %llu, rejected %llu + %llu + %llu, trips %llu\n",
                static_cast<unsigned long long>(passed),
                static_cast<unsigned long long>(safety.rate_limited()),
                static_cast<unsigned long long>(safety.rejected_acceleration()),
                static_cast<unsigned long long>(safety.rejected_not_finite()),
                static_cast<unsigned long long>(safety.rejected_position()),
                static_cast<unsigned long long>(safety.rejected_velocity()),
                static_cast<unsigned long long>(safety.watchdog_trips()));
    EXPECT_GT(passed, 500U);  // the test exercised the pass-through too
    EXPECT_GT(safety.rejected_not_finite() + safety.rejected_position(), 500U);
  }
}

TEST(ActuatorSafety, FilterAllocatesNothing) {
  ActuatorSafety safety(bounded_config());
  safety.reset(0.0);
  std::vector<ActuatorCommand> commands(10000);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    commands[i] = {0.05 * std::sin(0.01 * static_cast<double>(i)), 0.0};
  }
  commands[10].position = kNan;
  commands[20].position = 10.0;
  std::uint64_t sum = 0;
  hyloop::testing::AllocGuard guard;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (i == 5000) {
      safety.emergency_stop();
    }
    if (i == 6000) {
      (void)safety.clear_emergency_stop();
    }
    if (i == 7000) {
      safety.trip_watchdog();  // the input deadline's trip, then its ramp
    }
    if (i == 8000) {
      (void)safety.rearm(0.0);
    }
    const SafetyOutput out = safety.filter(i % 97 == 0 ? nullptr : &commands[i]);
    sum += static_cast<std::uint64_t>(out.event);
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_GT(sum, 0U);
}

}  // namespace
}  // namespace hyloop::hal
