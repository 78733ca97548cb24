#include "hyloop/core/rigid_body.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "hyloop/core/free_rigid_body.hpp"
#include "hyloop/core/sit_model.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

using Eigen::Matrix3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;
using ::testing::HasSubstr;

// The asymmetric tumbling body of the brief: I = diag(2, 3, 4.5) kg·m², ω0 = (0.3, 0.05, 0.2)
// rad/s (L² > 2E·I₂: the polhode circles axis 3, period ≈ 53 s). 0.02 rad/s about axis 3 gives
// the other case (polhode about axis 1).
const Vector3d kMoments(2.0, 3.0, 4.5);
const Vector3d kOmegaMajor(0.3, 0.05, 0.2);
const Vector3d kOmegaMinor(0.3, 0.05, 0.02);
constexpr double kMass = 10.0;

RigidBodyConfig tumbling(double step, const Vector3d& offset = Vector3d::Zero()) {
  return {.mass = kMass, .inertia = kMoments.asDiagonal(), .contact_offset = offset, .step = step};
}

RigidBodyState spinning(const Vector3d& omega) {
  RigidBodyState s;
  s.angular_velocity = omega;
  return s;
}

double relative(const Vector3d& a, const Vector3d& b) { return (a - b).norm() / b.norm(); }

// Largest |ω − ω_exact|/|ω0| of the integrator against FreeRigidBody over `duration`.
double polhode_error(double step, double duration, const Vector3d& omega0) {
  RigidBody body(tumbling(step), spinning(omega0));
  const FreeRigidBody exact(kMoments[0], kMoments[1], kMoments[2], omega0);
  const long n = std::lround(duration / step);
  double worst = 0.0;
  for (long k = 1; k <= n; ++k) {
    body.step(Vector3d::Zero(), Vector3d::Zero());
    const Vector3d e = body.state().angular_velocity - exact.omega(static_cast<double>(k) * step);
    worst = std::max(worst, e.norm());
  }
  return worst / omega0.norm();
}

// ---------------------------------------------------------------------------------- translation

TEST(RigidBody, PureTranslationIsPointMassBitForBit) {
  RigidBodyState initial;
  initial.position = Vector3d(0.3, -1.2, 7.0);
  initial.velocity = Vector3d(-0.01, 0.4, 0.0);
  RigidBody body(tumbling(0.002), initial);
  PointMass x(kMass, 0.002, {0.3, -0.01}), y(kMass, 0.002, {-1.2, 0.4}), z(kMass, 0.002, {7.0, 0});
  int mismatches = 0;
  for (int k = 0; k < 10000; ++k) {
    const double t = 0.002 * k;
    const Vector3d f(120.0 * std::sin(3.1 * t), -40.0 * std::cos(0.7 * t) + 3.0, 1e-3 * k);
    body.step(f, Vector3d::Zero());
    x.step(f.x());
    y.step(f.y());
    z.step(f.z());
    const RigidBodyState& s = body.state();
    mismatches += s.position.x() != x.state().position || s.velocity.x() != x.state().velocity ||
                  s.position.y() != y.state().position || s.velocity.y() != y.state().velocity ||
                  s.position.z() != z.state().position || s.velocity.z() != z.state().velocity;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(body.state().position.x(), x.state().position);
  EXPECT_EQ(body.state().velocity.z(), z.state().velocity);
  // no torque and no spin: the attitude is the identity to the bit, ω stays 0
  EXPECT_EQ(body.state().attitude.w(), 1.0);
  EXPECT_EQ(body.state().attitude.vec(), Vector3d::Zero());
  EXPECT_EQ(body.state().angular_velocity, Vector3d::Zero());
  const double e = x.kinetic_energy() + y.kinetic_energy() + z.kinetic_energy();
  EXPECT_NEAR(body.kinetic_energy(), e, 1e-15 * e);  // the same sum, grouped differently
}

// ---------------------------------------------------------------------------------- torque-free

// Measured over 600 s at T = 2 ms: max |ΔL_w|/|L_w| = 1.1e-13 (rounding only: every sub-flow is
// an exact rotation), max |ΔE|/E = 7.6e-9 (the O(T²) oscillation of a symplectic splitting),
// max ||q| − 1| = 2.2e-16. The tolerances are those with a margin of ~10x.
constexpr double kMomentumTolerance = 1e-12;
constexpr double kEnergyTolerance = 8e-8;
constexpr double kNormTolerance = 1e-12;

TEST(RigidBody, TorqueFreeTumblingConservesMomentumAndEnergyWithoutDrift) {
  const double step = 0.002;
  RigidBody body(tumbling(step), spinning(kOmegaMajor));
  const Vector3d l0 = body.world_angular_momentum();
  const double e0 = body.kinetic_energy();
  double worst_l = 0.0, worst_norm = 0.0, first_e = 0.0, last_e = 0.0;
  const int n = 300000, window = 30000;  // 600 s; the first and the last 60 s
  for (int k = 1; k <= n; ++k) {
    body.step(Vector3d::Zero(), Vector3d::Zero());
    worst_l = std::max(worst_l, relative(body.world_angular_momentum(), l0));
    worst_norm = std::max(worst_norm, std::abs(body.state().attitude.norm() - 1.0));
    const double de = std::abs(body.kinetic_energy() - e0) / e0;
    if (k <= window) first_e = std::max(first_e, de);
    if (k > n - window) last_e = std::max(last_e, de);
  }
  std::printf("600 s: |dL_w|/|L_w| %.2e, |dE|/E first 60 s %.2e, last 60 s %.2e, ||q|-1| %.2e\n",
              worst_l, first_e, last_e, worst_norm);
  EXPECT_LT(worst_l, kMomentumTolerance);
  EXPECT_LT(first_e, kEnergyTolerance);
  EXPECT_LT(last_e, kEnergyTolerance);
  EXPECT_LT(worst_norm, kNormTolerance);
  // bounded, no secular drift: the last minute is no worse than the first (the error is a
  // periodic function of the polhode phase, so both windows hold the same peak)
  EXPECT_LT(last_e, 1.05 * first_e);
  EXPECT_GT(last_e, 0.95 * first_e);
}

// Max |ω − ω_exact|/|ω0| at T = 2 ms, measured: about axis 3 (ω0 = kOmegaMajor) 2.2e-7 over one
// polhode period (51.1 s) and 2.5e-6 over 600 s; about axis 1 (kOmegaMinor) 7.5e-9 over one
// period (48.6 s) and 8.2e-8 over 600 s. The tolerances are those with a margin of ~10x.
TEST(RigidBody, PolhodeMatchesTheAnalyticSolutionToSecondOrder) {
  const struct {
    Vector3d omega0;
    double one_period, long_run;  // tolerances
  } cases[] = {{kOmegaMajor, 2e-6, 2.5e-5}, {kOmegaMinor, 8e-8, 8e-7}};
  for (const auto& c : cases) {
    const FreeRigidBody exact(kMoments[0], kMoments[1], kMoments[2], c.omega0);
    const double period = exact.polhode_period();
    const double one = polhode_error(0.002, period, c.omega0);
    const double coarse = polhode_error(0.002, 600.0, c.omega0);
    const double fine = polhode_error(0.001, 600.0, c.omega0);
    std::printf(
        "polhode (%s axis, period %.3f s): one period %.2e, 600 s %.2e at 2 ms, %.2e at "
        "1 ms (ratio %.3f)\n",
        exact.about_major_axis() ? "major" : "minor", period, one, coarse, fine, coarse / fine);
    EXPECT_LT(one, c.one_period);
    EXPECT_LT(coarse, c.long_run);
    // the error grows linearly with t, like the O(T²) phase error: 600 s hold ~12 periods
    EXPECT_GT(coarse, 0.7 * 600.0 / period * one);
    EXPECT_LT(coarse, 1.3 * 600.0 / period * one);
    // second order: halving T divides the error by 4
    EXPECT_NEAR(coarse / fine, 4.0, 0.1);
  }
}

TEST(RigidBody, NonDiagonalInertiaIsTheRotatedDiagonalBody) {
  const Matrix3d q = Eigen::AngleAxisd(0.7, Vector3d(1.0, 2.0, 3.0).normalized()).matrix();
  RigidBodyConfig rotated = tumbling(0.002);
  rotated.inertia = q * kMoments.asDiagonal() * q.transpose();  // body' = q·body
  RigidBodyState initial = spinning(q * kOmegaMajor);
  initial.attitude = Quaterniond(q.transpose());  // the same body in the world
  RigidBody tilted(rotated, initial);
  RigidBody plain(tumbling(0.002), spinning(kOmegaMajor));
  EXPECT_LT((tilted.principal_moments() - kMoments).norm(), 1e-14);
  const Vector3d l0 = plain.world_angular_momentum();
  EXPECT_LT(relative(tilted.world_angular_momentum(), l0), 4e-15);
  double worst_l = 0.0, worst_omega = 0.0;
  for (int k = 0; k < 300000; ++k) {
    tilted.step(Vector3d::Zero(), Vector3d::Zero());
    plain.step(Vector3d::Zero(), Vector3d::Zero());
    worst_l = std::max(worst_l, relative(tilted.world_angular_momentum(), l0));
    worst_omega = std::max(
        worst_omega, relative(tilted.state().angular_velocity, q * plain.state().angular_velocity));
  }
  std::printf("non-diagonal, 600 s: |dL_w|/|L_w| %.2e, |omega' - Q omega|/|omega| %.2e\n", worst_l,
              worst_omega);
  // the same splitting in a rotated frame, apart from rounding (measured 9.9e-13)
  EXPECT_LT(worst_l, kMomentumTolerance);
  EXPECT_LT(worst_omega, 1e-11);
}

TEST(RigidBody, DiagonalInertiaKeepsTheBodyFrameAsGiven) {
  RigidBodyConfig c = tumbling(0.002);
  c.inertia = Vector3d(4.5, 2.0, 3.0).asDiagonal();
  const RigidBody body(c);
  EXPECT_EQ(body.principal_axes(), Matrix3d::Identity());
  EXPECT_EQ(body.principal_moments(), Vector3d(4.5, 2.0, 3.0));
}

// ---------------------------------------------------------------------------------- torque

TEST(RigidBody, ConstantMomentAboutAPrincipalAxisFromRest) {
  const double step = 0.002, tau = 0.9;
  RigidBody body(tumbling(step));
  const int n = 1000;  // 2 s
  for (int k = 0; k < n; ++k) body.step(Vector3d::Zero(), Vector3d(0.0, 0.0, tau));
  const double t = n * step;
  const RigidBodyState& s = body.state();
  EXPECT_NEAR(s.angular_velocity.z(), tau * t / kMoments[2], 1e-13);
  EXPECT_EQ(s.angular_velocity.x(), 0.0);
  EXPECT_EQ(s.angular_velocity.y(), 0.0);
  // kick then drift: angle = T²τ/I·n(n+1)/2 = ½τt²/I + ½τTt/I, an O(T) excess of the exact value
  const double angle = 2.0 * std::atan2(s.attitude.z(), s.attitude.w());
  const double exact = 0.5 * tau * t * t / kMoments[2];
  const double excess = 0.5 * tau * step * t / kMoments[2];
  EXPECT_NEAR(angle - exact, excess, 1e-10);
  EXPECT_EQ(s.attitude.x(), 0.0);
  EXPECT_EQ(s.attitude.y(), 0.0);
}

TEST(RigidBody, ForceAtTheContactPointGivesTheMomentOfTheForce) {
  const double step = 0.002;
  const Vector3d offset(0.4, -0.1, 0.25);
  RigidBody body(tumbling(step, offset), spinning(kOmegaMajor));
  Vector3d expected_l = body.world_angular_momentum();
  Vector3d expected_v = Vector3d::Zero();
  for (int k = 0; k < 20000; ++k) {
    const double t = k * step;
    const Vector3d f(3.0 * std::sin(t), 2.0 * std::cos(0.3 * t), 1.0);
    const Vector3d m(0.0, 0.05 * std::sin(2.0 * t), -0.02);
    const Vector3d arm = body.contact_pose().position - body.state().position;  // R·r_c
    expected_l += step * (m + arm.cross(f));  // L_w(t) = L_w(0) + Σ T·τ_k
    expected_v += step * f / kMass;
    body.step(f, m);
  }
  EXPECT_LT(relative(body.world_angular_momentum(), expected_l), 1e-12);
  EXPECT_LT((body.state().velocity - expected_v).norm(), 1e-12);
  // not a no-op: the moments changed L_w by more than its initial size
  EXPECT_GT((expected_l - kMoments.cwiseProduct(kOmegaMajor)).norm(), 1.0);
}

// ---------------------------------------------------------------------------------- contact frame

// Largest difference between the finite differences of the contact frame's pose and its twist.
std::pair<double, double> twist_error(double step) {
  RigidBodyState initial = spinning(kOmegaMajor);
  initial.velocity = Vector3d(0.1, -0.2, 0.05);
  RigidBody body(tumbling(step, Vector3d(0.5, 0.2, -0.3)), initial);
  double linear = 0.0, angular = 0.0;
  for (int k = 0; k < std::lround(20.0 / step); ++k) {
    const FramePose before = body.contact_pose();
    body.step(Vector3d::Zero(), Vector3d::Zero());
    const FramePose after = body.contact_pose();
    const FrameTwist twist = body.contact_twist();
    const Vector3d dp = (after.position - before.position) / step;
    const Eigen::AngleAxisd turn(after.orientation * before.orientation.conjugate());
    const Vector3d dr = turn.angle() * turn.axis() / step;
    linear = std::max(linear, (dp - twist.linear).norm());
    angular = std::max(angular, (dr - twist.angular).norm());
  }
  return {linear, angular};
}

TEST(RigidBody, ContactTwistIsTheDerivativeOfTheContactPose) {
  const auto [linear, angular] = twist_error(0.002);
  const auto [linear_half, angular_half] = twist_error(0.001);
  std::printf(
      "contact twist vs finite difference: linear %.2e (ratio %.2f), angular %.2e "
      "(ratio %.2f)\n",
      linear, linear / linear_half, angular, angular / angular_half);
  // |ω|·|r_c|·|ω|·T/2 ≈ 0.36·0.62·0.36·1e-3 = 8e-5 m/s for the arm's turn
  EXPECT_LT(linear, 2e-4);
  EXPECT_LT(angular, 2e-4);
  EXPECT_NEAR(linear / linear_half, 2.0, 0.1);  // first order in T
  EXPECT_NEAR(angular / angular_half, 2.0, 0.1);
}

// ---------------------------------------------------------------------------------- analytic

TEST(FreeRigidBody, EllipticFunctionsSatisfyTheIdentitiesAndKnownValues) {
  for (double m : {0.0, 1e-20, 0.1, 0.5, 0.672, 0.9, 0.999, 1.0 - 1e-12}) {
    for (double u = -20.0; u <= 20.0; u += 0.37) {
      const JacobiElliptic e = jacobi_elliptic(u, m);
      EXPECT_NEAR(e.sn * e.sn + e.cn * e.cn, 1.0, 1e-15) << u << " " << m;
      EXPECT_NEAR(e.dn * e.dn + m * e.sn * e.sn, 1.0, 1e-15) << u << " " << m;
    }
  }
  for (double u = -10.0; u <= 10.0; u += 0.37) {
    const JacobiElliptic zero = jacobi_elliptic(u, 0.0);
    EXPECT_NEAR(zero.sn, std::sin(u), 2e-15);
    EXPECT_NEAR(zero.cn, std::cos(u), 2e-15);
    EXPECT_EQ(zero.dn, 1.0);
    const JacobiElliptic one = jacobi_elliptic(u, 1.0);
    EXPECT_EQ(one.sn, std::tanh(u));
    EXPECT_EQ(one.cn, 1.0 / std::cosh(u));
  }
  // near m = 1, A&S 16.15 to first order in m₁ = 1 − m (the m₁² terms are < 1e-15 for |u| ≤ 6,
  // while the first-order ones reach 5e-11: tanh and sech alone would not pass)
  const double m1 = std::ldexp(1.0, -40);  // 9.1e-13, and 1 − m₁ is exact
  for (double u = -6.0; u <= 6.0; u += 0.23) {
    const JacobiElliptic e = jacobi_elliptic(u, 1.0 - m1);
    const double th = std::tanh(u), sech = 1.0 / std::cosh(u);
    const double d = std::sinh(u) * std::cosh(u);
    EXPECT_NEAR(e.sn, th + 0.25 * m1 * (d - u) * sech * sech, 1e-15) << u;
    EXPECT_NEAR(e.cn, sech - 0.25 * m1 * (d - u) * th * sech, 1e-15) << u;
    EXPECT_NEAR(e.dn, sech + 0.25 * m1 * (d + u) * th * sech, 1e-15) << u;
  }
  // A&S table 17.1; the others from mpmath 1.3 at 30 digits
  EXPECT_NEAR(elliptic_k(0.5), 1.854074677301372, 1e-15);
  EXPECT_NEAR(elliptic_k(0.9), 2.578092113348173, 1e-15);
  EXPECT_EQ(elliptic_k(0.0), std::numbers::pi / 2.0);
  EXPECT_NEAR(elliptic_f(1.1, 0.8), 1.3152738609458602, 1e-15);
  const struct {
    double u, m, sn, cn, dn;
  } table[] = {
      {0.7, 0.3, 0.63230477631086451725, 0.7747197363269297698, 0.93811363968143021572},
      {2.5, 0.9, 0.9996945384505861342, 0.024714971010898662991, 0.31709580068626355582},
      {1.2, 0.999999, 0.83365472391979165641, 0.5522859778106048865, 0.55228660699533053843},
      {-3.1, 0.672, -0.77572316936898946915, -0.63107334320515399044, 0.77176835601544028803},
  };
  for (const auto& r : table) {
    const JacobiElliptic e = jacobi_elliptic(r.u, r.m);
    EXPECT_NEAR(e.sn, r.sn, 1e-15) << r.u;
    EXPECT_NEAR(e.cn, r.cn, 1e-15) << r.u;
    EXPECT_NEAR(e.dn, r.dn, 1e-15) << r.u;
  }
  // sn K = 1, cn K = 0, dn K = √(1 − m); F inverts the amplitude
  for (double m : {0.2, 0.672, 0.99}) {
    const double k = elliptic_k(m);
    const JacobiElliptic e = jacobi_elliptic(k, m);
    EXPECT_NEAR(e.sn, 1.0, 1e-15);
    EXPECT_NEAR(e.cn, 0.0, 1e-15);
    EXPECT_NEAR(e.dn, std::sqrt(1.0 - m), 1e-15);
    for (double u = -3.0 * k; u <= 3.0 * k; u += 0.29) {
      const JacobiElliptic a = jacobi_elliptic(u, m);
      EXPECT_NEAR(elliptic_f(std::atan2(a.sn, a.cn), m), u - 4.0 * k * std::nearbyint(u / 4 / k),
                  1e-14)
          << u << " " << m;
    }
  }
  EXPECT_TRUE(std::isnan(jacobi_elliptic(1.0, 1.5).sn));
  EXPECT_TRUE(std::isnan(elliptic_f(1.0, -0.1)));
}

TEST(FreeRigidBody, SolvesEulersEquationsFromTheGivenInitialValue) {
  for (const Vector3d& omega0 : {kOmegaMajor, kOmegaMinor, Vector3d(-0.3, 0.05, -0.2),
                                 Vector3d(-0.3, -0.05, 0.02), Vector3d(0.0, 0.0, 0.4)}) {
    const FreeRigidBody exact(kMoments[0], kMoments[1], kMoments[2], omega0);
    EXPECT_LT((exact.omega(0.0) - omega0).norm(), 1e-15) << omega0.transpose();
    const double period = exact.polhode_period();
    EXPECT_LT((exact.omega(period) - omega0).norm(), 1e-14);
    double worst_residual = 0.0, worst_invariant = 0.0;
    const double h = 1e-4;
    for (double t = 0.0; t < period; t += period / 97.0) {
      const Vector3d w = exact.omega(t);
      const Vector3d rate = (exact.omega(t + h) - exact.omega(t - h)) / (2.0 * h);
      const Vector3d lw = kMoments.cwiseProduct(w);
      // I·ω̇ = (I·ω) × ω
      worst_residual = std::max(worst_residual, (kMoments.cwiseProduct(rate) - lw.cross(w)).norm());
      worst_invariant =
          std::max({worst_invariant, std::abs(0.5 * w.dot(lw) - exact.energy()) / exact.energy(),
                    std::abs(lw.norm() - exact.angular_momentum()) / exact.angular_momentum()});
    }
    EXPECT_LT(worst_residual, 1e-9) << omega0.transpose();    // O(h²) of the central difference
    EXPECT_LT(worst_invariant, 5e-14) << omega0.transpose();  // measured 2.1e-14
  }
}

TEST(FreeRigidBody, MomentsInAnyOrderGiveThePermutedSolution) {
  const FreeRigidBody sorted(2.0, 3.0, 4.5, kOmegaMajor);
  // a cyclic relabelling of the axes (even) gives the same motion, relabelled
  const FreeRigidBody cycled(4.5, 2.0, 3.0, Vector3d(0.2, 0.3, 0.05));
  const FreeRigidBody swapped(3.0, 2.0, 4.5, Vector3d(0.05, 0.3, 0.2));
  for (double t = 0.0; t < 120.0; t += 1.3) {
    const Vector3d w = sorted.omega(t);
    EXPECT_LT((cycled.omega(t) - Vector3d(w.z(), w.x(), w.y())).norm(), 1e-14) << t;
    // a transposition (odd) is a different body: its ω(t) must still solve Euler's equations
    const FreeRigidBody& s = swapped;
    const Vector3d v = s.omega(t);
    const Vector3d lv = Vector3d(3.0, 2.0, 4.5).cwiseProduct(v);
    const Vector3d rate = (s.omega(t + 1e-4) - s.omega(t - 1e-4)) / 2e-4;
    EXPECT_LT((Vector3d(3.0, 2.0, 4.5).cwiseProduct(rate) - lv.cross(v)).norm(), 1e-9) << t;
  }
  EXPECT_LT((swapped.omega(0.0) - Vector3d(0.05, 0.3, 0.2)).norm(), 1e-15);
  EXPECT_NEAR(swapped.polhode_period(), sorted.polhode_period(), 1e-12);
}

// ---------------------------------------------------------------------------------- validation

std::string refusal(const RigidBodyConfig& c) {
  try {
    RigidBody body(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RigidBody, ConstructorRefusesBadConfigurationNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  RigidBodyConfig c = tumbling(0.002);
  EXPECT_EQ(refusal(c), "");
  c.mass = 0.0;
  EXPECT_THAT(refusal(c), HasSubstr("mass = 0: must be finite and > 0 kg"));
  c.mass = -1.0;
  EXPECT_THAT(refusal(c), HasSubstr("mass = -1"));
  c.mass = nan;
  EXPECT_THAT(refusal(c), HasSubstr("mass = nan"));
  c = tumbling(0.0);
  EXPECT_THAT(refusal(c), HasSubstr("step = 0: must be finite and > 0 s"));
  c = tumbling(-0.001);
  EXPECT_THAT(refusal(c), HasSubstr("step = -0.001"));
  c = tumbling(0.002, Vector3d(0.0, nan, 0.0));
  EXPECT_THAT(refusal(c), HasSubstr("contact_offset = nan"));
  c = tumbling(0.002);
  c.inertia(0, 1) = 0.1;  // (1, 0) stays 0
  EXPECT_THAT(refusal(c), HasSubstr("inertia: max |I - I^T| = 0.1 with max |I| = 4.5: must be "
                                    "symmetric"));
  c.inertia(1, 0) = 0.1;
  EXPECT_EQ(refusal(c), "");
  c.inertia(2, 2) = nan;
  EXPECT_THAT(refusal(c), HasSubstr("inertia: element (2, 2) = nan: must be finite"));
  c.inertia = Vector3d(1.0, 1.0, -1.0).asDiagonal();
  EXPECT_THAT(refusal(c), HasSubstr("inertia: principal moment I3 = -1: must be > 0"));
  c.inertia << 2.0, 3.0, 0.0, 3.0, 2.0, 0.0, 0.0, 0.0, 1.0;  // eigenvalues −1, 1, 5
  EXPECT_THAT(refusal(c), HasSubstr("inertia: principal moment I1 = -1"));
  c.inertia = Vector3d(1.0, 2.0, 4.0).asDiagonal();
  EXPECT_THAT(refusal(c), HasSubstr("inertia: I1 + I2 = 3 < I3 = 4: the principal moments must "
                                    "satisfy the triangle inequality"));
  c.inertia = Vector3d(4.0, 1.0, 2.0).asDiagonal();
  EXPECT_THAT(refusal(c), HasSubstr("inertia: I2 + I3 = 3 < I1 = 4"));
  c.inertia = Vector3d(1.0, 2.0, 3.0).asDiagonal();  // a flat plate: on the edge, accepted
  EXPECT_EQ(refusal(c), "");
  c.inertia = Matrix3d::Zero();
  EXPECT_THAT(refusal(c), HasSubstr("principal moment I1 = 0"));
  c = tumbling(0.002);
  EXPECT_NO_THROW(validate(c));
  c.mass = -2.0;
  EXPECT_THROW(validate(c), std::invalid_argument);
  RigidBodyState bad;
  bad.attitude = Quaterniond(0.0, 0.0, 0.0, 0.0);
  EXPECT_THROW(RigidBody(tumbling(0.002), bad), std::invalid_argument);
  bad = spinning(Vector3d(0.0, nan, 0.0));
  EXPECT_THROW(RigidBody(tumbling(0.002), bad), std::invalid_argument);
}

TEST(FreeRigidBody, ConstructorRefusesBadInputNamingTheField) {
  auto refusal = [](double i1, double i2, double i3, const Vector3d& w) -> std::string {
    try {
      FreeRigidBody body(i1, i2, i3, w);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(refusal(0.0, 3.0, 4.5, kOmegaMajor), HasSubstr("I1 = 0: must be finite and > 0"));
  EXPECT_THAT(refusal(2.0, 3.0, -1.0, kOmegaMajor), HasSubstr("I3 = -1"));
  EXPECT_THAT(refusal(3.0, 2.0, 3.0, kOmegaMajor),
              HasSubstr("I1 = 3, I3 = 3: the principal moments must be distinct"));
  EXPECT_THAT(refusal(2.0, 3.0, 4.5, Vector3d(0.0, std::nan(""), 0.0)), HasSubstr("omega0 = nan"));
  EXPECT_THAT(refusal(2.0, 3.0, 4.5, Vector3d(0.0, 0.3, 0.0)),
              HasSubstr("omega0: L^2 - 2*E*I_mid"));
  EXPECT_THAT(refusal(2.0, 3.0, 4.5, Vector3d::Zero()), HasSubstr("on the separatrix"));
  // on the separatrix L² = 2E·I₂: 2·(3 − 2)·ω₁² = 4.5·(4.5 − 3)·ω₃²
  const double w1 = std::sqrt(4.5 * 1.5 / 2.0) * 0.1;
  EXPECT_THAT(refusal(2.0, 3.0, 4.5, Vector3d(w1, 0.2, 0.1)), HasSubstr("on the separatrix"));
  EXPECT_EQ(refusal(2.0, 3.0, 4.5, Vector3d(1.001 * w1, 0.2, 0.1)), "");
}

// ---------------------------------------------------------------------------------- RT safety

TEST(RigidBody, StepAllocatesNothing) {
  const Matrix3d q = Eigen::AngleAxisd(0.4, Vector3d::UnitY()).matrix();
  RigidBodyConfig c = tumbling(0.002, Vector3d(0.3, 0.0, -0.1));
  c.inertia = q * kMoments.asDiagonal() * q.transpose();
  RigidBody body(c, spinning(kOmegaMajor));
  const FreeRigidBody exact(kMoments[0], kMoments[1], kMoments[2], kOmegaMajor);
  double sink = 0.0;
  {
    hyloop::testing::AllocGuard guard;
    for (int k = 0; k < 1000; ++k) {
      body.step(Vector3d(std::sin(0.01 * k), 1.0, 0.0), Vector3d(0.0, 0.0, 0.1));
      sink += body.kinetic_energy() + body.world_angular_momentum().x() +
              body.contact_twist().linear.y() + body.contact_pose().position.z() +
              exact.omega(0.002 * k).x();
    }
    body.reset(spinning(kOmegaMajor));
    EXPECT_EQ(guard.allocations(), 0u);
  }
  EXPECT_TRUE(std::isfinite(sink));
}

}  // namespace
}  // namespace hyloop::core
