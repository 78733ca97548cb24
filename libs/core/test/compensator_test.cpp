#include "hyloop/core/compensator.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hyloop::core {
namespace {

constexpr double kStep = 0.002;

TEST(Compensator, GainLawsOfEachKind) {
  const CompensatorConfig base{.kind = CompensatorKind::kNone,
                               .k_eps0 = -100.0,
                               .k_eps1 = -0.5,
                               .k_eps2 = -2.0,
                               .switch_time = 10.0};
  auto with = [&](CompensatorKind kind) {
    CompensatorConfig c = base;
    c.kind = kind;
    return Compensator(c, kStep);
  };
  EXPECT_EQ(with(CompensatorKind::kNone).gain(5.0), 0.0);
  EXPECT_EQ(with(CompensatorKind::kFixedGain).gain(50.0), -100.0);
  EXPECT_DOUBLE_EQ(with(CompensatorKind::kLinearGain).gain(20.0), -110.0);
  EXPECT_DOUBLE_EQ(with(CompensatorKind::kSwitching).gain(4.0), -102.0);
}

TEST(Compensator, SwitchingUsesTheEnergySumAfterTheSwitch) {
  CompensatorConfig c{.kind = CompensatorKind::kSwitching,
                      .k_eps0 = -100.0,
                      .k_eps1 = -0.5,
                      .k_eps2 = -2.0,
                      .switch_time = 1.0};
  Compensator literal(c, kStep);
  c.bumpless = true;
  Compensator bumpless(c, kStep);
  // eps_h = E*x_i - F'*X_R = 3*2 - 1*1 = 5 J every step
  double sum = 0.0;
  for (int k = 0; k <= 1000; ++k) {
    const double t = k * kStep;
    literal.force(t, 0.1);
    bumpless.force(t, 0.1);
    literal.observe(t, 3.0, 2.0, 1.0, 1.0);
    bumpless.observe(t, 3.0, 2.0, 1.0, 1.0);
    if (t > 1.0) {
      sum += 5.0 * kStep;
    }
  }
  EXPECT_NEAR(literal.observer().sum(), sum, 1e-9);
  EXPECT_DOUBLE_EQ(literal.observer().last(), 5.0);
  const double t = 2.01;
  EXPECT_NEAR(literal.gain(t), -100.0 - 2.0 * sum, 1e-9);
  EXPECT_NEAR(bumpless.gain(t), -100.0 - 0.5 * 1.0 - 2.0 * sum, 1e-9);
  EXPECT_NEAR(literal.force(t, 0.1), 0.1 * literal.gain(t), 1e-12);
}

TEST(Compensator, ParsesKindsAndRejectsUnknown) {
  EXPECT_EQ(parse_compensator_kind("scvg"), CompensatorKind::kSwitching);
  EXPECT_EQ(to_string(CompensatorKind::kLinearGain), "lgc");
  try {
    parse_compensator_kind("pid");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none, fgc, lgc, scvg"), std::string::npos);
  }
}

TEST(Compensator, RejectsNonFiniteGains) {
  EXPECT_THROW(Compensator({.kind = CompensatorKind::kFixedGain, .k_eps0 = std::nan("")}, kStep),
               std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
