// TDPA (passivity.hpp): the observer of a damper and of a spring, a generating port made passive,
// a delayed haptic wall that diverges without the PC and stays bounded with it (20 noise seeds),
// the delayed two-port's energy balance, the damping bound, non-finite samples, validation
// messages, no allocation.
#include "hyloop/core/passivity.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

constexpr double kT = 1e-3;  // s
constexpr double kTwoPi = 2.0 * std::numbers::pi;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A band-limited random velocity (m/s): a sine plus noise.
std::vector<double> random_velocity(unsigned seed, int n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) v[k] = 0.1 * std::sin(kTwoPi * 2.0 * k * kT) + noise(rng);
  return v;
}

TEST(PassivityObserver, ADamperIntegratesExactlyBTimesTheSumOfVSquared) {
  const double b = 35.0;  // N·s/m
  PassivityObserver po({.step = kT});
  double expected = 0.0;
  for (double v : random_velocity(7, 5000)) {
    const double e = po.observe(b * v, v);
    expected += b * v * v * kT;
    ASSERT_NEAR(e, expected, 1e-12 * expected + 1e-300);
  }
  EXPECT_GT(expected, 0.9);  // J: the test had something to integrate
  EXPECT_NEAR(po.input_energy(), expected, 1e-12 * expected);
  EXPECT_EQ(po.output_energy(), 0.0);  // a damper never returns energy
  EXPECT_TRUE(po.passive());
}

TEST(PassivityObserver, ASpringOverAClosedCycleReturnsToZero) {
  // x = A·sin(ωt), v = A·ω·cos(ωt) sampled exactly, f = K·x, 4 periods of 250 samples.
  const double k_spring = 2000.0, amplitude = 0.01, w = kTwoPi * 4.0;  // N/m, m, rad/s
  const double peak = 0.5 * k_spring * amplitude * amplitude;          // J, 0.1
  PassivityObserver po({.step = kT});
  double worst_state_error = 0.0;
  for (int k = 1; k <= 1000; ++k) {
    const double x = amplitude * std::sin(w * k * kT);
    const double e = po.observe(k_spring * x, amplitude * w * std::cos(w * k * kT));
    worst_state_error = std::max(worst_state_error, std::abs(e - 0.5 * k_spring * x * x));
  }
  std::cout << "spring: E_obs after 4 cycles " << po.energy() << " J, largest |E_obs − ½Kx²| "
            << worst_state_error / peak << " of the peak\n";
  EXPECT_NEAR(po.energy(), 0.0, 1e-12 * peak);  // the cycle closes: no energy kept or made
  // Within a cycle E_obs is the spring's stored energy, to the rectangle rule's O(ωΔT) (0.05).
  EXPECT_LT(worst_state_error, 0.03 * peak);
  EXPECT_NEAR(po.input_energy(), 8.0 * peak, 0.01 * peak);   // in twice per cycle …
  EXPECT_NEAR(po.output_energy(), 8.0 * peak, 0.01 * peak);  // … and out twice
}

TEST(PassivityObserver, InitialEnergyIsStoredEnergyAtTheStart) {
  PassivityObserver po({.step = kT, .initial_energy = 0.5});
  EXPECT_DOUBLE_EQ(po.observe(-100.0, 2.0), 0.5 - 0.2);  // 0.2 J left the port
  EXPECT_DOUBLE_EQ(po.output_energy(), 0.2);
  EXPECT_TRUE(po.passive());
}

// A negative damper, output = −b·input, in either causality: the PC finds g = b and the modified
// port's energy stays ≥ 0 at every step.
void expect_made_passive(PortCausality causality, double b, double scale) {
  PassivityController pc({.step = kT, .causality = causality, .max_damping = 1e6});
  double modified = 0.0;  // ΔT·Σ input·output′, computed here
  double worst = 0.0;
  int k = 0;
  for (double unit : random_velocity(11, 4000)) {
    const double in = scale * unit;
    const double out = pc.step(in, -b * in);
    modified += kT * in * out;
    worst = std::min({worst, modified, pc.port_energy()});
    ASSERT_GE(pc.observed_energy() + pc.dissipated_energy(), -1e-12) << "step " << k;
    ASSERT_NEAR(pc.port_energy(), modified, 1e-12);
    // α = −E_obs/(ΔT·v²) = b: it cancels the generator (to the rounding of the energies, J).
    ASSERT_NEAR(pc.damping() * in * in * kT, b * in * in * kT, 1e-12) << "step " << k;
    ++k;
  }
  EXPECT_LT(pc.observed_energy(), -0.5);  // J the unmodified port generated …
  EXPECT_NEAR(pc.dissipated_energy(), -pc.observed_energy(), 1e-12);  // … all dissipated
  EXPECT_GE(worst, -1e-12);  // J, the rounding of sums of a few J
  EXPECT_EQ(pc.saturated_steps(), 0U);
}

TEST(PassivityController, AnImpedancePortThatGeneratesEnergyIsMadePassive) {
  expect_made_passive(PortCausality::kImpedance, 40.0, 1.0);  // v ~ 0.1 m/s, f = −40·v N
}

TEST(PassivityController, AnAdmittancePortThatGeneratesEnergyIsMadePassive) {
  // f ~ 10 N, v = −0.02·f m/s, β in m/(N·s)
  expect_made_passive(PortCausality::kAdmittance, 0.02, 100.0);
}

TEST(PassivityController, APassivePortIsLeftAlone) {
  PassivityController pc({.step = kT});
  for (double v : random_velocity(3, 2000)) EXPECT_EQ(pc.step(v, 5.0 * v), 5.0 * v);
  EXPECT_EQ(pc.dissipated_energy(), 0.0);
  EXPECT_EQ(pc.damping(), 0.0);
}

// A classic active haptic wall: a device (mass m, damping b) touches a virtual spring K through a
// zero-order hold, with the measured position (1 µm noise) reaching the virtual environment d
// steps late. The device moves exactly under the held force, F = −f′ over [nΔT, (n+1)ΔT). The PC
// sits at the device's port: v (backward difference of the measured position) in, f out.
enum class Wall { kNoPc, kSameSample, kHeldOutput };

struct WallRun {
  double final_ratio = 0.0;  // H(end)/H(0), H = ½mv² + ½Kx²
  double peak_ratio = 0.0;   // max_n H(n)/H(0)
};

WallRun haptic_wall(int delay, Wall mode, unsigned seed, double max_damping = 500.0,
                    int steps = 10000) {
  const double m = 1.0, b = 0.5, k_wall = 1000.0, noise = 1e-6;  // kg, N·s/m, N/m, m
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  // α_max = m/(2ΔT) by default: a sampled damper much above m/ΔT is unstable on this mass.
  PassivityController pc({.step = kT,
                          .hold = mode == Wall::kHeldOutput ? HoldConvention::kHeldOutput
                                                            : HoldConvention::kSameSample,
                          .max_damping = max_damping});
  double x = 0.0, v = 0.1;  // starts at the wall at 0.1 m/s
  const double h0 = 0.5 * m * v * v;
  std::vector<double> seen(static_cast<std::size_t>(delay) + 1, 0.0);  // the delayed positions
  std::size_t head = 0;
  double last_measured = x + noise * n01(rng);
  WallRun r;
  for (int k = 0; k < steps; ++k) {
    const double measured = x + noise * n01(rng);
    const double v_measured = (measured - last_measured) / kT;
    last_measured = measured;
    seen[head] = measured;
    head = (head + 1) % seen.size();
    const double f = k_wall * seen[head];  // K·x(n−d): the force the device pushes the wall with
    const double held = mode == Wall::kNoPc ? f : pc.step(v_measured, f);
    // m·v̇ = −held − b·v over one period, exactly.
    const double decay = std::exp(-b * kT / m), v_end = -held / b;
    x += v_end * kT + (v - v_end) * (m / b) * (1.0 - decay);
    v = v_end + (v - v_end) * decay;
    r.peak_ratio = std::max(r.peak_ratio, (0.5 * m * v * v + 0.5 * k_wall * x * x) / h0);
  }
  r.final_ratio = (0.5 * m * v * v + 0.5 * k_wall * x * x) / h0;
  return r;
}

TEST(PassivityController, ADelayedHapticWallDivergesWithoutThePcAndStaysBoundedWithIt) {
  // Measured over 10 s, 20 seeds (least growth / worst peak of the seeds): without the PC the
  // energy grows ×2.14e4 (d = 1 ms), ×8.60e12 (3 ms), ×1.79e21 (5 ms). The same-sample PO misses
  // one period of the loop's delay and still lets it grow ×167, ×249, ×335. With the held-output
  // PO the peak is ×1.079, ×1.222, ×1.360 of the initial energy and the end at most ×0.0051.
  struct Case {
    int delay;
    double min_growth;  // without the PC, every seed
    double max_peak;    // with the held-output PC, every seed
  };
  for (const Case c : {Case{1, 1e4, 1.2}, Case{3, 1e12, 1.4}, Case{5, 1e20, 1.6}}) {
    int diverged = 0, bounded = 0, same_sample_grew = 0;
    double worst_peak = 0.0, worst_final = 0.0, least_growth = kInf, least_same = kInf;
    for (unsigned seed = 1; seed <= 20; ++seed) {
      const WallRun none = haptic_wall(c.delay, Wall::kNoPc, seed);
      const WallRun same = haptic_wall(c.delay, Wall::kSameSample, seed);
      const WallRun held = haptic_wall(c.delay, Wall::kHeldOutput, seed);
      diverged += none.final_ratio > c.min_growth;
      same_sample_grew += same.final_ratio > 50.0;
      bounded += held.peak_ratio < c.max_peak && held.final_ratio < 0.01;
      least_growth = std::min(least_growth, none.final_ratio);
      least_same = std::min(least_same, same.final_ratio);
      worst_peak = std::max(worst_peak, held.peak_ratio);
      worst_final = std::max(worst_final, held.final_ratio);
    }
    std::cout << "wall, delay " << c.delay << " ms: energy ×" << least_growth
              << " without PC (least of 20), ×" << least_same
              << " same-sample PC (least); held-output PC peak ×" << worst_peak << ", end ×"
              << worst_final << " (worst); diverged " << diverged << "/20, bounded " << bounded
              << "/20\n";
    EXPECT_EQ(diverged, 20) << "delay " << c.delay;
    EXPECT_EQ(bounded, 20) << "delay " << c.delay;
    EXPECT_EQ(same_sample_grew, 20) << "delay " << c.delay;
  }
}

// A velocity–force teleoperator over a channel delayed d steps each way. The operator moves the
// master (left, impedance: v_m in, the fed-back force out); the slave (right, admittance: the
// environment's force in, the commanded velocity out) follows the delayed velocity into a wall
// (spring-damper, contact only for x > 0). Powers into the channel: left f·v_m, right −f_s·v.
struct TeleopRun {
  double worst_left = -kInf, worst_right = -kInf;  // max_n E_out,net(n) − E_in,other(n−d), J
  double transmitted = 0.0;                        // E_in,left at the end, J
  std::uint64_t saturated = 0;
};

TeleopRun teleoperate(int d, unsigned seed) {
  TwoPortPassivity channel(
      {.step = kT, .delay_steps = d, .left_max_damping = 1e9, .right_max_damping = 1e9});
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.005);
  const auto n = static_cast<std::size_t>(d);
  std::vector<double> velocity(n, 0.0), force(n, 0.0);  // the data in transit
  std::vector<double> in_left, in_right;                // E_in histories, to check against
  double x_slave = -0.005, v_slave = 0.0;               // 5 mm before the wall
  TeleopRun r;
  for (int k = 0; k < 6000; ++k) {
    const auto slot = static_cast<std::size_t>(k) % n;
    const double v_master = 0.05 * std::sin(kTwoPi * 1.0 * k * kT) + 0.02 + noise(rng);
    // The slave's environment in contact: 20 kN/m, 50 N·s/m.
    const double f_slave = x_slave > 0.0 ? 2e4 * x_slave + 50.0 * v_slave : 0.0;
    v_slave = channel.step_right(-f_slave, velocity[slot]);  // the commanded velocity, v′
    x_slave += v_slave * kT;
    channel.step_left(v_master, force[slot]);  // f′ to the master, a motion source here
    velocity[slot] = v_master;
    force[slot] = f_slave;
    // The energy balance, against E_in histories kept here.
    const double from_right = k >= d ? in_right[static_cast<std::size_t>(k - d)] : 0.0;
    const double from_left = k >= d ? in_left[static_cast<std::size_t>(k - d)] : 0.0;
    r.worst_left = std::max(r.worst_left, channel.left().net_output_energy() - from_right);
    r.worst_right = std::max(r.worst_right, channel.right().net_output_energy() - from_left);
    in_left.push_back(channel.left().input_energy());
    in_right.push_back(channel.right().input_energy());
    channel.advance();
  }
  r.transmitted = channel.left().input_energy();
  r.saturated = channel.left().saturated_steps() + channel.right().saturated_steps();
  return r;
}

TEST(TwoPortPassivity, NoSideReleasesMoreThanTheOtherPutInDStepsEarlier) {
  double worst = -kInf, least_transmitted = kInf;
  for (const int d : {1, 20, 100}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const TeleopRun r = teleoperate(d, seed);
      EXPECT_LE(r.worst_left, 1e-12) << "d " << d << " seed " << seed;
      EXPECT_LE(r.worst_right, 1e-12) << "d " << d << " seed " << seed;
      EXPECT_GT(r.transmitted, 1e-3) << "d " << d;  // J: energy did cross the channel
      EXPECT_EQ(r.saturated, 0U);
      worst = std::max({worst, r.worst_left, r.worst_right});
      least_transmitted = std::min(least_transmitted, r.transmitted);
    }
  }
  std::cout << "two-port with PC, d = 1, 20, 100, 5 seeds: max_n E_out,net − E_in,other(n−d) = "
            << worst << " J; least E_in,left transmitted " << least_transmitted << " J\n";
}

// The same channel without the PCs, observed by an open-loop energy balance: the delay makes it
// release energy it never received.
TEST(TwoPortPassivity, WithoutThePcTheDelayedChannelGeneratesEnergy) {
  const int d = 100;
  std::vector<double> v_sent(d, 0.0), f_sent(d, 0.0);
  PassivityObserver left({.step = kT}), right({.step = kT});
  std::vector<double> in_left;
  double x_slave = -0.005, worst = -kInf;
  for (int k = 0; k < 6000; ++k) {
    const auto slot = static_cast<std::size_t>(k % d);
    const double v_master = 0.05 * std::sin(kTwoPi * 1.0 * k * kT) + 0.02;
    const double v_slave = v_sent[slot], f_back = f_sent[slot];
    const double f_slave = x_slave > 0.0 ? 2e4 * x_slave + 50.0 * v_slave : 0.0;
    x_slave += v_slave * kT;
    left.observe(f_back, v_master);
    right.observe(-f_slave, v_slave);
    v_sent[slot] = v_master;
    f_sent[slot] = f_slave;
    const double from_left = k >= d ? in_left[static_cast<std::size_t>(k - d)] : 0.0;
    worst = std::max(worst, right.output_energy() - from_left);
    in_left.push_back(left.input_energy());
  }
  std::cout << "two-port without PC, d = 100: E_out,right exceeds E_in,left(n−d) by up to " << worst
            << " J; the channel's net energy " << left.energy() + right.energy() << " J\n";
  EXPECT_GT(worst, 0.01);
}

TEST(TwoPortPassivity, TheRemoteEnergyArrivesExactlyDStepsLate) {
  const int d = 7;
  TwoPortPassivity channel({.step = kT, .delay_steps = d});
  std::vector<double> sent;
  for (int k = 0; k < 40; ++k) {
    channel.step_left(1.0, 2.0);   // 2 mJ in per step on the left
    channel.step_right(0.0, 0.0);  // the right side only listens
    // What the right side holds now is the left's E_in of step k − d.
    EXPECT_DOUBLE_EQ(channel.right().remote_input_energy(),
                     k >= d ? sent[static_cast<std::size_t>(k - d)] : 0.0);
    sent.push_back(channel.left().input_energy());
    channel.advance();
  }
}

TEST(PassivityController, TheDampingBoundHoldsAndTheUndissipatedEnergyIsAccounted) {
  // f = −10·v with α_max = 4 N·s/m: every step is clipped, 6·v²·ΔT per step stays undissipated.
  PassivityController pc({.step = kT, .max_damping = 4.0});
  double sum_v2 = 0.0;
  for (double v : random_velocity(5, 3000)) {
    pc.step(v, -10.0 * v);
    sum_v2 += v * v * kT;
    ASSERT_LE(pc.damping(), 4.0);
  }
  EXPECT_DOUBLE_EQ(pc.damping(), 4.0);
  EXPECT_EQ(pc.saturated_steps(), 3000U);
  EXPECT_NEAR(pc.dissipated_energy(), 4.0 * sum_v2, 1e-12);
  EXPECT_NEAR(pc.port_energy(), -6.0 * sum_v2, 1e-12);  // the deficit is reported, not hidden
  // v → 0: no infinite damping. A zero input cannot dissipate: g = 0; a tiny one gets g_max.
  PassivityController small({.step = kT, .max_damping = 4.0});
  small.step(0.1, -10.0);  // −1 mJ generated
  EXPECT_DOUBLE_EQ(small.damping(), 4.0);
  EXPECT_EQ(small.step(0.0, 3.0), 3.0);
  EXPECT_EQ(small.damping(), 0.0);
  EXPECT_DOUBLE_EQ(small.step(1e-12, 0.0), 4.0 * 1e-12);
}

TEST(TwoPortSide, TheDampingBoundHolds) {
  TwoPortSide side({.step = kT, .max_damping = 2.0});
  for (double v : random_velocity(9, 2000)) {
    side.step(v, -30.0 * v, 0.0);  // releases energy with nothing received
    ASSERT_LE(side.damping(), 2.0);
  }
  EXPECT_EQ(side.saturated_steps(), 2000U);
  EXPECT_GT(side.net_output_energy(), 0.0);  // bounded damping could not hold it to 0
}

TEST(PassivityController, NonFiniteSamplesAreIgnored) {
  for (const HoldConvention hold : {HoldConvention::kSameSample, HoldConvention::kHeldOutput}) {
    PassivityController clean({.step = kT, .hold = hold}), dirty({.step = kT, .hold = hold});
    const std::vector<double> v = random_velocity(13, 500);
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (k % 50 == 10) {
        EXPECT_EQ(dirty.step(kNaN, 3.0), 3.0);
        EXPECT_TRUE(std::isinf(dirty.step(0.1, kInf)));  // passed through, for the limit check
        EXPECT_EQ(dirty.step(1e200, 1e200), 1e200);      // the power overflows
      }
      ASSERT_EQ(dirty.step(v[k], -20.0 * v[k]), clean.step(v[k], -20.0 * v[k]));
    }
    EXPECT_EQ(dirty.port_energy(), clean.port_energy());
    EXPECT_EQ(dirty.dissipated_energy(), clean.dissipated_energy());
    EXPECT_EQ(dirty.rejected_samples(), 30U);  // 3 per burst, 10 bursts
    EXPECT_EQ(clean.rejected_samples(), 0U);
  }
}

TEST(PassivityObserverAndTwoPortSide, NonFiniteSamplesAreIgnored) {
  PassivityObserver po({.step = kT});
  po.observe(2.0, 0.5);
  EXPECT_EQ(po.observe(kNaN, 1.0), 1e-3);
  EXPECT_EQ(po.observe(1.0, -kInf), 1e-3);
  EXPECT_EQ(po.observe(1e300, 1e300), 1e-3);  // the product overflows
  EXPECT_EQ(po.rejected_samples(), 3U);
  TwoPortSide side({.step = kT});
  side.step(1.0, 1.0, 0.5);
  EXPECT_EQ(side.step(kNaN, 2.0, 0.7), 2.0);
  EXPECT_EQ(side.remote_input_energy(), 0.7);  // a finite remote energy still counts
  side.step(1.0, 1.0, kNaN);
  side.step(1.0, 1.0, 0.3);                    // stale: the bound does not loosen …
  EXPECT_EQ(side.remote_input_energy(), 0.7);  // … nor does it tighten
  EXPECT_EQ(side.rejected_samples(), 1U);
  EXPECT_DOUBLE_EQ(side.input_energy(), 3e-3);
}

template <typename T, typename Config>
std::string message_of(const Config& c) {
  try {
    T block(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Passivity, BadConfigurationsNameTheField) {
  EXPECT_EQ(message_of<PassivityObserver>(PassivityObserverConfig{.step = 0.0}),
            "step = 0: must be finite and > 0");
  EXPECT_EQ(message_of<PassivityObserver>(PassivityObserverConfig{.initial_energy = -1.0}),
            "initial_energy = -1: must be finite and >= 0");
  EXPECT_EQ(message_of<PassivityController>(PassivityControllerConfig{.step = kNaN}),
            "step = nan: must be finite and > 0");
  EXPECT_EQ(message_of<PassivityController>(PassivityControllerConfig{.max_damping = 0.0}),
            "max_damping = 0: must be finite and > 0");
  EXPECT_EQ(message_of<PassivityController>(PassivityControllerConfig{.max_damping = kInf}),
            "max_damping = inf: must be finite and > 0");
  EXPECT_EQ(message_of<PassivityController>(PassivityControllerConfig{.initial_energy = kNaN}),
            "initial_energy = nan: must be finite and >= 0");
  EXPECT_EQ(message_of<TwoPortSide>(PassivityControllerConfig{.hold = HoldConvention::kHeldOutput}),
            "hold = 1: must be kSameSample (0) for a two-port side");
  EXPECT_EQ(message_of<TwoPortPassivity>(TwoPortPassivityConfig{.delay_steps = 0}),
            "delay_steps = 0: must lie within [1, 1000000]");
  EXPECT_EQ(message_of<TwoPortPassivity>(TwoPortPassivityConfig{.delay_steps = 1'000'001}),
            "delay_steps = 1000001: must lie within [1, 1000000]");
  EXPECT_EQ(message_of<TwoPortPassivity>(TwoPortPassivityConfig{.right_max_damping = -1.0}),
            "right_max_damping = -1: must be finite and > 0");
  EXPECT_EQ(message_of<TwoPortPassivity>(TwoPortPassivityConfig{.step = -kT}),
            "step = -0.001: must be finite and > 0");
  EXPECT_EQ(message_of<TwoPortPassivity>(TwoPortPassivityConfig{}), "");
}

TEST(Passivity, StepsAllocateNothing) {
  PassivityObserver po({.step = kT});
  PassivityController same({.step = kT});
  PassivityController held({.step = kT, .hold = HoldConvention::kHeldOutput});
  TwoPortSide side({.step = kT});
  TwoPortPassivity channel({.step = kT, .delay_steps = 50});
  const std::vector<double> v = random_velocity(17, 2000);
  double sink = 0.0;
  const testing::AllocGuard guard;
  for (double x : v) {
    sink += po.observe(-3.0 * x, x) + same.step(x, -3.0 * x) + held.step(x, -3.0 * x);
    sink += side.step(x, -3.0 * x, 0.01) + channel.step_left(x, -3.0 * x);
    sink += channel.step_right(-x, x);
    channel.advance();
  }
  EXPECT_EQ(guard.allocations(), 0U);
  EXPECT_TRUE(std::isfinite(sink));
  EXPECT_GT(same.dissipated_energy(), 0.0);  // the PCs were active under the guard
  EXPECT_GT(channel.left().dissipated_energy(), 0.0);
}

}  // namespace
}  // namespace hyloop::core
