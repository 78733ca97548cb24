#include "hyloop/core/stability.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/core/lti.hpp"
#include "hyloop/core/polynomial.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::core {
namespace {

using hyloop::testing::invalid_argument_message;

using ::testing::HasSubstr;
using Complex = std::complex<double>;

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Table 1.
constexpr SitsLoopParameters kTable1{500.0, 20000.0, 50.0, 0.002, 0.004};

// DESIGN §6 default robot as zeros, poles and gain: G_R = (ωn²/ωz)(s + ωz)/(s² + 2ζωn·s + ωn²).
ZeroPoleGain default_robot() {
  const double wn = 2.0 * kPi * 40.0;
  const double zeta = 0.6;
  const double wz = 300.0;
  const double sigma = zeta * wn;
  const double wd = wn * std::sqrt(1.0 - zeta * zeta);
  return {{{-wz, 0.0}}, {{-sigma, wd}, {-sigma, -wd}}, wn * wn / wz};
}

int rhp_count_from_roots(const Polynomial& p) {
  int count = 0;
  for (const Complex& r : p.roots()) {
    count += r.real() > 0.0 ? 1 : 0;
  }
  return count;
}

double max_real_part(const Polynomial& p) {
  double m = -kInf;
  for (const Complex& r : p.roots()) {
    m = std::max(m, r.real());
  }
  return m;
}

std::string describe(const std::vector<GainInterval>& intervals) {
  std::string s;
  for (const GainInterval& g : intervals) {
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%c%.9g, %.9g%c ", g.lower_closed ? '[' : '(', g.lower,
                  g.upper, g.upper_closed ? ']' : ')');
    s += buffer;
  }
  return s.empty() ? "(empty)" : s;
}

// ---------------------------------------------------------------- characteristic polynomial

TEST(StabilityTest, CharacteristicPolynomialMatchesTheBlockDiagram) {
  // P(s) / [m_e s²(2 + T_c s)(2 + τ_s s)Π(s − p)] = 1 − G_d G_c G_R G_f G_s − K_h s G_d G_c G_R,
  // evaluated with complex arithmetic at a few points (Eq. 31–34 with G_c = 2/(2 + T_c s)).
  const ZeroPoleGain robot = default_robot();
  const double k_h = -111.8;
  const Polynomial p = sits_characteristic_polynomial(kTable1, robot, k_h);
  EXPECT_EQ(p.degree(), 6);
  for (const Complex s : {Complex(0.3, 2.0), Complex(-40.0, 90.0), Complex(120.0, -7.0)}) {
    const Complex gd = 1.0 / (kTable1.m_e * s * s);
    const Complex gc = 2.0 / (2.0 + kTable1.t_c * s);
    const Complex gs = (2.0 - kTable1.tau_s * s) / (2.0 + kTable1.tau_s * s);
    const Complex gf = -(kTable1.k_tc + kTable1.b_tc * s);
    const Complex gr =
        robot.gain * (s - robot.zeros[0]) / ((s - robot.poles[0]) * (s - robot.poles[1]));
    const Complex den = kTable1.m_e * s * s * (2.0 + kTable1.t_c * s) * (2.0 + kTable1.tau_s * s) *
                        (s - robot.poles[0]) * (s - robot.poles[1]);
    const Complex expected = den * (1.0 - gd * gc * gr * gf * gs - k_h * s * gd * gc * gr);
    EXPECT_LT(std::abs(p.evaluate(s) - expected), 1e-12 * std::abs(expected)) << s;
  }
  // The split is affine in K_h.
  const SitsCharacteristic split = sits_characteristic(kTable1, robot);
  EXPECT_EQ(split.p1.degree(), 3);  // −2K_R·s·(2 + τ_s s)(s − z)
  const Polynomial again = split.at(k_h);
  for (int i = 0; i <= 6; ++i) {
    EXPECT_NEAR(again.coeff(i), p.coeff(i), 1e-12 * std::abs(p.coeff(i)));
  }
  // Leading coefficient m_e·T_c·τ_s (Eq. 37, a_r6) and a_r0 = 4·K_R·K_tc·(−z) with G_c = 2/(…).
  EXPECT_NEAR(p.coeff(6), 500.0 * 0.004 * 0.002, 1e-15);
  EXPECT_NEAR(p.coeff(0), 4.0 * robot.gain * 20000.0 * 300.0, 1e-6);
}

TEST(StabilityTest, SwitchesReduceToTheIdealTwin) {
  SitsLoopParameters ideal = kTable1;
  ideal.force_delay = false;
  ideal.control_cycle = false;
  ideal.robot = false;
  // 4(m_e s² + B_tc s + K_tc).
  const Polynomial p = sits_characteristic_polynomial(ideal, ZeroPoleGain{}, 0.0);
  EXPECT_EQ(p, Polynomial({4.0 * 20000.0, 4.0 * 50.0, 4.0 * 500.0}));
  // τ_s = 0 and T_c = 0 give the same polynomial as the switches.
  SitsLoopParameters zero_delays = kTable1;
  zero_delays.tau_s = 0.0;
  zero_delays.t_c = 0.0;
  zero_delays.robot = false;
  EXPECT_EQ(sits_characteristic_polynomial(zero_delays, ZeroPoleGain{}, 0.0), p);
  // Undamped ideal loop: roots ±j·√(K_tc/m_e), marginal.
  ideal.b_tc = 0.0;
  const RouthResult r = routh(sits_characteristic_polynomial(ideal, ZeroPoleGain{}, 0.0));
  EXPECT_EQ(r.verdict, StabilityVerdict::kMarginal);
  EXPECT_EQ(r.imaginary_axis_roots, 2);
}

TEST(StabilityTest, ForceDelayAloneGrowsAtDesignRate) {
  // DESIGN §6: undamped, the force delay alone grows at Re s ≈ ωn²τ_s/2 = 0.0400 1/s.
  SitsLoopParameters p = kTable1;
  p.b_tc = 0.0;
  p.control_cycle = false;
  p.robot = false;
  const Polynomial q = sits_characteristic_polynomial(p, ZeroPoleGain{}, 0.0);
  const RouthResult r = routh(q);
  EXPECT_EQ(r.verdict, StabilityVerdict::kUnstable);
  EXPECT_EQ(r.rhp_roots(), 2);
  EXPECT_NEAR(max_real_part(q), 0.0400, 0.0004);
  std::printf("force delay alone (Pade): growth rate %.6f 1/s\n", max_real_part(q));
}

TEST(StabilityTest, RejectsInvalidParametersNamingThem) {
  SitsLoopParameters p = kTable1;
  p.m_e = 0.0;
  EXPECT_THAT(invalid_argument_message([&] { sits_characteristic(p, default_robot()); }),
              HasSubstr("m_e = 0"));
  p = kTable1;
  p.tau_s = -0.002;
  EXPECT_THAT(invalid_argument_message([&] { sits_characteristic(p, default_robot()); }),
              HasSubstr("tau_s = -0.002"));
  ZeroPoleGain broken = default_robot();
  broken.poles.pop_back();
  EXPECT_THAT(invalid_argument_message([&] { sits_characteristic(kTable1, broken); }),
              HasSubstr("robot.poles"));
  broken = default_robot();
  broken.gain = 0.0;
  EXPECT_THAT(invalid_argument_message([&] { sits_characteristic(kTable1, broken); }),
              HasSubstr("robot.gain = 0"));
}

// ---------------------------------------------------------------- Routh array

TEST(RouthTest, HurwitzAndUnstableCubic) {
  // s³ + 2s² + 3s + 1: first column 1, 2, 2.5, 1 → stable.
  const RouthResult stable = routh(Polynomial({1.0, 3.0, 2.0, 1.0}));
  EXPECT_THAT(stable.first_column, ::testing::ElementsAre(1.0, 2.0, 2.5, 1.0));
  EXPECT_EQ(stable.verdict, StabilityVerdict::kStable);
  // s³ + s² + 2s + 8 = (s + 2)(s² − s + 4): 1, 1, −6, 8 → two sign changes.
  const RouthResult unstable = routh(Polynomial({8.0, 2.0, 1.0, 1.0}));
  EXPECT_THAT(unstable.first_column, ::testing::ElementsAre(1.0, 1.0, -6.0, 8.0));
  EXPECT_EQ(unstable.rhp_roots(), 2);
  EXPECT_EQ(unstable.verdict, StabilityVerdict::kUnstable);
  // A negative leading coefficient is normalised away.
  EXPECT_EQ(routh(Polynomial({-1.0, -3.0, -2.0, -1.0})).verdict, StabilityVerdict::kStable);
  // Constants and first-order polynomials.
  EXPECT_EQ(routh(Polynomial::constant(-3.0)).verdict, StabilityVerdict::kStable);
  EXPECT_EQ(routh(Polynomial({-1.0, 1.0})).rhp_roots(), 1);
  EXPECT_THROW(routh(Polynomial()), std::invalid_argument);
}

TEST(RouthTest, ZeroFirstElementUsesEpsilon) {
  // Nise, Control Systems Engineering, Example 6.2: s⁵ + 2s⁴ + 3s³ + 6s² + 5s + 3:
  // the s³ row starts with 0 → ε; two sign changes, two RHP roots.
  const Polynomial p({3.0, 5.0, 6.0, 3.0, 2.0, 1.0});
  const RouthResult r = routh(p);
  ASSERT_EQ(r.epsilons.size(), 1U);
  EXPECT_EQ(r.epsilons[0].power, 3);
  EXPECT_GT(r.epsilons[0].epsilon, 0.0);
  EXPECT_TRUE(r.zero_rows.empty());
  EXPECT_EQ(r.rhp_roots(), 2);
  EXPECT_EQ(rhp_count_from_roots(p), 2);
  EXPECT_EQ(r.verdict, StabilityVerdict::kUnstable);
  // s⁵ + 2s⁴ + 2s³ + 4s² + 11s + 10 (ε in the s³ row): two RHP roots.
  const Polynomial q({10.0, 11.0, 4.0, 2.0, 2.0, 1.0});
  const RouthResult rq = routh(q);
  ASSERT_EQ(rq.epsilons.size(), 1U);
  EXPECT_EQ(rq.epsilons[0].power, 3);
  EXPECT_EQ(rq.rhp_roots(), 2);
  EXPECT_EQ(rhp_count_from_roots(q), 2);
  std::printf("%s", rq.to_string().c_str());
}

TEST(RouthTest, ZeroRowUsesAuxiliaryPolynomial) {
  // Nise Example 6.4: s⁵ + 7s⁴ + 6s³ + 42s² + 8s + 56 = (s + 7)(s² + 2)(s² + 4):
  // the s³ row vanishes, auxiliary 7s⁴ + 42s² + 56, four roots on the axis, none in the RHP.
  const Polynomial p({56.0, 8.0, 42.0, 6.0, 7.0, 1.0});
  const RouthResult r = routh(p);
  ASSERT_EQ(r.zero_rows.size(), 1U);
  EXPECT_EQ(r.zero_rows[0].power, 3);
  EXPECT_EQ(r.zero_rows[0].auxiliary, Polynomial({56.0, 0.0, 42.0, 0.0, 7.0}));
  EXPECT_EQ(r.array[2], (std::vector<double>{28.0, 84.0, 0.0}));  // d/ds of the auxiliary
  EXPECT_EQ(r.rhp_roots(), 0);
  EXPECT_EQ(r.imaginary_axis_roots, 4);
  EXPECT_EQ(r.verdict, StabilityVerdict::kMarginal);
  std::printf("%s", r.to_string().c_str());

  // (s² + 4)(s² − 1)(s + 2)(s + 3): auxiliary with ±2j and ±1 → one RHP root, two on the axis.
  const Polynomial q = Polynomial::from_roots(std::vector<Complex>{
      {0.0, 2.0}, {0.0, -2.0}, {1.0, 0.0}, {-1.0, 0.0}, {-2.0, 0.0}, {-3.0, 0.0}});
  const RouthResult rq = routh(q);
  ASSERT_FALSE(rq.zero_rows.empty());
  EXPECT_EQ(rq.zero_rows[0].auxiliary.degree(), 4);
  EXPECT_EQ(rq.rhp_roots(), 1);
  EXPECT_EQ(rq.imaginary_axis_roots, 2);
  EXPECT_EQ(rq.verdict, StabilityVerdict::kUnstable);

  // (s² + 1)²(s + 1): repeated roots on the axis → unstable although no RHP root.
  const Polynomial rep =
      Polynomial({1.0, 0.0, 1.0}) * Polynomial({1.0, 0.0, 1.0}) * Polynomial({1.0, 1.0});
  const RouthResult rr = routh(rep);
  EXPECT_EQ(rr.rhp_roots(), 0);
  EXPECT_EQ(rr.imaginary_axis_roots, 4);
  EXPECT_TRUE(rr.repeated_imaginary_axis_roots);
  EXPECT_EQ(rr.verdict, StabilityVerdict::kUnstable);

  // Roots at the origin: s(s + 1)(s + 2) marginal; s²(s + 1) unstable.
  const RouthResult origin = routh(Polynomial({0.0, 2.0, 3.0, 1.0}));
  EXPECT_EQ(origin.imaginary_axis_roots, 1);
  EXPECT_EQ(origin.verdict, StabilityVerdict::kMarginal);
  EXPECT_EQ(routh(Polynomial({0.0, 0.0, 1.0, 1.0})).verdict, StabilityVerdict::kUnstable);
}

TEST(RouthTest, AgreesWithCompanionRootsOnRandomPolynomials) {
  std::mt19937 generator(1234567);
  std::uniform_int_distribution<int> degree_dist(2, 8);
  std::normal_distribution<double> coefficient(0.0, 1.0);
  std::uniform_real_distribution<double> re(-3.0, 2.0);
  std::uniform_real_distribution<double> im(0.0, 3.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int tested = 0;
  int skipped = 0;
  int stable = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int degree = degree_dist(generator);
    Polynomial p;
    if (trial % 2 == 0) {
      // Random coefficients; positive ones half of the time so that stable cases occur.
      std::vector<double> c(static_cast<std::size_t>(degree) + 1);
      const bool positive = unit(generator) < 0.5;
      for (double& x : c) {
        x = positive ? std::abs(coefficient(generator)) + 0.05 : coefficient(generator);
      }
      p = Polynomial(c);
    } else {
      // Random roots, real or in conjugate pairs, mostly in the left half-plane.
      std::vector<Complex> roots;
      while (static_cast<int>(roots.size()) < degree) {
        const double real = re(generator);
        if (degree - static_cast<int>(roots.size()) >= 2 && unit(generator) < 0.5) {
          const double imag = im(generator);
          roots.emplace_back(real, imag);
          roots.emplace_back(real, -imag);
        } else {
          roots.emplace_back(real, 0.0);
        }
      }
      p = Polynomial::from_roots(roots, 0.1 + 2.0 * unit(generator));
    }
    if (p.degree() < 2) {
      continue;
    }
    const std::vector<Complex> roots = p.roots();
    const bool near_axis = std::any_of(roots.begin(), roots.end(),
                                       [](Complex r) { return std::abs(r.real()) < 1e-9; });
    if (near_axis) {
      ++skipped;
      continue;
    }
    const int rhp = static_cast<int>(
        std::count_if(roots.begin(), roots.end(), [](Complex r) { return r.real() > 0.0; }));
    const RouthResult r = routh(p);
    ++tested;
    stable += rhp == 0 ? 1 : 0;
    ASSERT_EQ(r.rhp_roots(), rhp) << p.to_string();
    ASSERT_EQ(r.verdict, rhp == 0 ? StabilityVerdict::kStable : StabilityVerdict::kUnstable)
        << p.to_string();
  }
  EXPECT_GE(tested, 1000);
  EXPECT_GE(stable, 200);
  std::printf("Routh vs companion roots: %d polynomials agree (%d Hurwitz), %d skipped\n", tested,
              stable, skipped);
}

// ---------------------------------------------------------------- stable gain intervals

TEST(StabilityTest, GainIntervalOfAnalyticCubic) {
  // s³ + s² + s + K is Hurwitz for 0 < K < 1.
  const auto intervals =
      stable_gain_intervals(Polynomial({0.0, 1.0, 1.0, 1.0}), Polynomial::constant(1.0));
  ASSERT_EQ(intervals.size(), 1U) << describe(intervals);
  EXPECT_NEAR(intervals[0].lower, 0.0, 1e-12);
  EXPECT_NEAR(intervals[0].upper, 1.0, 1e-12);
  EXPECT_FALSE(intervals[0].lower_closed);
  EXPECT_FALSE(intervals[0].upper_closed);
  EXPECT_TRUE(intervals[0].contains(0.5));
  EXPECT_FALSE(intervals[0].contains(1.0));
}

TEST(StabilityTest, GainIntervalsWithDegreeDropAndSeveralPieces) {
  // K·s² + s + 1: Hurwitz for K > 0 and at K = 0 (s + 1) → [0, ∞).
  const auto drop = stable_gain_intervals(Polynomial({1.0, 1.0}), Polynomial({0.0, 0.0, 1.0}));
  ASSERT_EQ(drop.size(), 1U) << describe(drop);
  EXPECT_EQ(drop[0].lower, 0.0);
  EXPECT_TRUE(drop[0].lower_closed);
  EXPECT_EQ(drop[0].upper, kInf);
  // s² + K·s + 1: Hurwitz for K > 0.
  const auto damping = stable_gain_intervals(Polynomial({1.0, 0.0, 1.0}), Polynomial({0.0, 1.0}));
  ASSERT_EQ(damping.size(), 1U) << describe(damping);
  EXPECT_NEAR(damping[0].lower, 0.0, 1e-12);
  EXPECT_EQ(damping[0].upper, kInf);
  // s³ + 3s² + (2 + K)s + 2K: Routh needs 2K > 0 and 3(2 + K) > 2K ⇔ K > −6 → (0, ∞).
  const auto loop = stable_gain_intervals(Polynomial({0.0, 2.0, 3.0, 1.0}), Polynomial({2.0, 1.0}));
  ASSERT_EQ(loop.size(), 1U) << describe(loop);
  EXPECT_NEAR(loop[0].lower, 0.0, 1e-12);
  EXPECT_EQ(loop[0].upper, kInf);
  // Never Hurwitz: s² + (K − 1) has no s term (unstable for K < 1, marginal for K > 1).
  EXPECT_TRUE(
      stable_gain_intervals(Polynomial({-1.0, 0.0, 1.0}), Polynomial::constant(1.0)).empty());
  // s³ + K s² + K s + (5K − 4): Hurwitz ⇔ K > 0, 5K − 4 > 0 and K² > 5K − 4 ⇔ (K − 1)(K − 4) > 0,
  // i.e. 0.8 < K < 1 or K > 4: two pieces.
  const auto two =
      stable_gain_intervals(Polynomial({-4.0, 0.0, 0.0, 1.0}), Polynomial({5.0, 1.0, 1.0}));
  ASSERT_EQ(two.size(), 2U) << describe(two);
  EXPECT_NEAR(two[0].lower, 0.8, 1e-12);
  EXPECT_NEAR(two[0].upper, 1.0, 1e-12);
  EXPECT_NEAR(two[1].lower, 4.0, 1e-12);
  EXPECT_EQ(two[1].upper, kInf);
  EXPECT_THROW(stable_gain_intervals(Polynomial({1.0, 1.0}), Polynomial()), std::invalid_argument);
}

TEST(StabilityTest, GainIntervalsAgreeWithRouthScan) {
  // Random affine families p0 + K·p1; the intervals must agree with Routh on a dense K grid
  // (grid points within 1e-6 of an end are not judged).
  std::mt19937 generator(99);
  std::uniform_int_distribution<int> degree0(3, 6);
  std::uniform_int_distribution<int> degree1(0, 4);
  std::uniform_real_distribution<double> positive(0.2, 3.0);
  std::normal_distribution<double> any(0.0, 1.0);
  int pieces = 0;
  int multi = 0;
  int checked = 0;
  for (int family = 0; family < 60; ++family) {
    std::vector<double> c0(static_cast<std::size_t>(degree0(generator)) + 1);
    for (double& x : c0) {
      // Mixed signs in a third of the families, so that some are stable only for K in a band.
      x = family % 3 == 2 ? any(generator) : positive(generator);
    }
    std::vector<double> c1(static_cast<std::size_t>(degree1(generator)) + 1);
    for (double& x : c1) {
      x = any(generator);
    }
    const Polynomial p0(c0);
    const Polynomial p1(c1);
    const auto intervals = stable_gain_intervals(p0, p1);
    pieces += static_cast<int>(intervals.size());
    multi += intervals.size() > 1 ? 1 : 0;
    for (int i = -2000; i <= 2000; ++i) {
      const double k = 0.01 * i;
      bool near_end = false;
      bool inside = false;
      for (const GainInterval& g : intervals) {
        near_end = near_end || std::abs(k - g.lower) < 1e-6 || std::abs(k - g.upper) < 1e-6;
        inside = inside || g.contains(k);
      }
      if (near_end) {
        continue;
      }
      const Polynomial q = p0 + k * p1;
      ++checked;
      ASSERT_EQ(inside, routh(q).stable())
          << "K = " << k << ", p0 = " << p0.to_string() << ", p1 = " << p1.to_string()
          << ", intervals " << describe(intervals);
    }
  }
  std::printf(
      "gain intervals vs Routh scan: %d K values agree; %d stable pieces, %d families "
      "with more than one\n",
      checked, pieces, multi);
}

TEST(StabilityTest, SitsTable1GainInterval) {
  const ZeroPoleGain robot = default_robot();
  const SitsCharacteristic c = sits_characteristic(kTable1, robot);
  const RouthResult at_zero = routh(c.at(0.0));
  EXPECT_EQ(at_zero.rhp_roots(), rhp_count_from_roots(c.at(0.0)));
  EXPECT_EQ(at_zero.verdict, StabilityVerdict::kUnstable);

  const std::vector<GainInterval> intervals = stable_gain_intervals(c.p0, c.p1);
  ASSERT_FALSE(intervals.empty());
  for (const GainInterval& g : intervals) {
    // Inside: every root in the open left half-plane.
    std::vector<double> inside;
    if (std::isfinite(g.lower) && std::isfinite(g.upper)) {
      for (double t : {0.001, 0.5, 0.999}) {
        inside.push_back(g.lower + t * (g.upper - g.lower));
      }
    } else {
      const double end = std::isfinite(g.lower) ? g.lower : g.upper;
      const double direction = std::isfinite(g.lower) ? 1.0 : -1.0;
      for (double d : {1e-3, 1.0, 1e3}) {
        inside.push_back(end + direction * d * std::max(1.0, std::abs(end)));
      }
    }
    for (double k : inside) {
      EXPECT_LT(max_real_part(c.at(k)), 0.0) << k;
      EXPECT_TRUE(routh(c.at(k)).stable()) << k;
    }
    // At a finite end a root sits on the imaginary axis; just outside one is in the RHP.
    for (double end : {g.lower, g.upper}) {
      if (!std::isfinite(end)) {
        continue;
      }
      double closest = kInf;
      for (const Complex& r : c.at(end).roots()) {
        closest = std::min(closest, std::abs(r.real()) / std::max(1.0, std::abs(r)));
      }
      EXPECT_LT(closest, 1e-8) << end;
      const double outside = end + (end == g.lower ? -1e-6 : 1e-6) * std::max(1.0, std::abs(end));
      EXPECT_GT(max_real_part(c.at(outside)), 0.0) << outside;
      EXPECT_FALSE(routh(c.at(outside)).stable()) << outside;
    }
  }
  // The paper's compensation gains (C_εl = −111.80, C_εh = −110.86) stabilise the loop.
  const bool paper_gain_stable = std::any_of(
      intervals.begin(), intervals.end(), [](const GainInterval& g) { return g.contains(-111.8); });
  std::printf(
      "SITS Table 1 + default G_R: RHP roots at K_h = 0: %d (Routh) / %d (roots); "
      "stable K_h: %s; K_h = -111.8 %s\n",
      at_zero.rhp_roots(), rhp_count_from_roots(c.at(0.0)), describe(intervals).c_str(),
      paper_gain_stable ? "stable" : "not stable");
  std::printf("P0 = %s\nP1 = %s\n", c.p0.to_string().c_str(), c.p1.to_string().c_str());
  // For information: the second preset (ωn = 2π·30, ζ = 0.35, ωz = 299.76).
  const double wn = 2.0 * kPi * 30.0;
  const double zeta = 0.35;
  const double wd = wn * std::sqrt(1.0 - zeta * zeta);
  const ZeroPoleGain paper{
      {{-299.76, 0.0}}, {{-zeta * wn, wd}, {-zeta * wn, -wd}}, wn * wn / 299.76};
  const SitsCharacteristic cp = sits_characteristic(kTable1, paper);
  std::printf("SITS Table 1 + paper-phase G_R: RHP roots at K_h = 0: %d; stable K_h: %s\n",
              routh(cp.at(0.0)).rhp_roots(), describe(stable_gain_intervals(cp.p0, cp.p1)).c_str());
  std::printf("%s", at_zero.to_string().c_str());
}

}  // namespace
}  // namespace hyloop::core
