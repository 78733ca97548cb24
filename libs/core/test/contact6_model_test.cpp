#include "hyloop/core/contact6_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "hyloop/core/contact_model.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop::core {
namespace {

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

Vector6 vec6(double a, double b, double c, double d, double e, double f) {
  Vector6 v;
  v << a, b, c, d, e, f;
  return v;
}

/// Unequal per-axis values and an offset, so that every coupling term is exercised.
Contact6Config coupled_config() {
  Contact6Config c;
  c.translational_stiffness = {1000.0, 2000.0, 3000.0};
  c.rotational_stiffness = {10.0, 20.0, 30.0};
  c.translational_damping = {5.0, 7.0, 11.0};
  c.rotational_damping = {0.1, 0.3, 0.7};
  c.contact_offset = {0.05, -0.02, 0.1};
  return c;
}

TEST(Contact6Model, XOnlyEqualsContactModelBitForBit) {
  const double values[] = {0.0,     -0.0,  1e-300, -4.9e-324, 1e-12, -3.7e-3, 0.05,
                           -0.1234, 1.0e3, -1e150, 7e200,     2.5,   -17.25,  1.0 / 3.0};
  int compared = 0;
  for (double k : {1e-3, 20000.0, 3.3e7}) {
    for (double b : {0.0, 50.0, 1e-9, 123.456}) {
      const ContactModel one({k, b});
      Contact6Config c;  // the other axes deliberately differ from x
      c.translational_stiffness = {k, 7.0, 9e4};
      c.translational_damping = {b, 3.0, 0.0};
      c.rotational_stiffness = {1.0, 0.0, 55.0};
      const Contact6Model six(c);
      for (double x : values) {
        for (double v : values) {
          const Vector6 w = six.wrench(vec6(x, 0, 0, 0, 0, 0), vec6(v, 0, 0, 0, 0, 0));
          ASSERT_EQ(bits(w[0]), bits(one.force(x, v)))
              << "k " << k << " b " << b << " x " << x << " v " << v;
          for (int i = 1; i < 6; ++i) {
            ASSERT_EQ(w[i], 0.0) << "axis " << i;
          }
          ++compared;
        }
        ASSERT_EQ(bits(six.potential_energy(vec6(x, 0, 0, 0, 0, 0))), bits(one.potential_energy(x)))
            << "x " << x;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 4 * 14 * 14);
}

TEST(Contact6Model, ZeroOffsetDecouplesTheAxes) {
  Contact6Config c = coupled_config();
  c.contact_offset = Vector3::Zero();
  const Contact6Model model(c);
  Vector6 k, b;
  k << c.translational_stiffness, c.rotational_stiffness;
  b << c.translational_damping, c.rotational_damping;
  for (int axis = 0; axis < 6; ++axis) {
    const Vector6 q = 0.01 * (axis + 1) * Vector6::Unit(axis);
    const Vector6 qd = -0.3 * (axis + 2) * Vector6::Unit(axis);
    const Vector6 w = model.wrench(q, qd);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(w[i], i == axis ? -k[i] * q[i] - b[i] * qd[i] : 0.0) << axis << "," << i;
    }
  }
  // All axes at once: still −k∘q − b∘q̇ per axis, exactly.
  const Vector6 q = vec6(0.01, -0.02, 0.003, 0.1, -0.05, 0.2);
  const Vector6 qd = vec6(-0.5, 0.25, 1.0, -2.0, 0.75, 3.0);
  const Vector6 w = model.wrench(q, qd);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(w[i], -k[i] * q[i] - b[i] * qd[i]) << i;
  }
  EXPECT_TRUE(model.stiffness_matrix().isDiagonal(0.0));
  EXPECT_TRUE(model.damping_matrix().isDiagonal(0.0));
}

TEST(Contact6Model, APureRotationLoadsTheOffsetSpring) {
  // r = (0.05, −0.02, 0.1) m, θ = (0.01, −0.02, 0.03) rad, by hand:
  //   θ × r = (−0.0014, 0.0005, 0.0008) m
  //   F = −K_t∘(θ × r) = (1.4, −1.0, −2.4) N      (K_t = 1000, 2000, 3000 N/m)
  //   r × F = (0.148, 0.26, −0.022) N·m,  −K_r∘θ = (−0.1, 0.4, −0.9) N·m
  //   M = (0.048, 0.66, −0.922) N·m
  const Contact6Model model(coupled_config());
  const Vector6 w = model.wrench(vec6(0, 0, 0, 0.01, -0.02, 0.03), Vector6::Zero());
  const Vector6 expected = vec6(1.4, -1.0, -2.4, 0.048, 0.66, -0.922);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(w[i], expected[i], 1e-12) << i;
  }
}

TEST(Contact6Model, APureAngularVelocityLoadsTheOffsetDamper) {
  // Same numbers with damping: B_t = (1000, 2000, 3000) N·s/m, B_r = (10, 20, 30) N·m·s/rad,
  // ω = (0.01, −0.02, 0.03) rad/s: F = −B_t∘(ω × r), M = r × F − B_r∘ω.
  Contact6Config c = coupled_config();
  c.translational_damping = c.translational_stiffness;
  c.rotational_damping = c.rotational_stiffness;
  c.translational_stiffness = {1.0, 1.0, 1.0};
  const Contact6Model model(c);
  const Vector6 w = model.wrench(Vector6::Zero(), vec6(0, 0, 0, 0.01, -0.02, 0.03));
  const Vector6 expected = vec6(1.4, -1.0, -2.4, 0.048, 0.66, -0.922);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(w[i], expected[i], 1e-12) << i;
  }
}

TEST(Contact6Model, MatricesAreSymmetricPsdAndGiveTheWrench) {
  for (const bool with_rotational_spring : {true, false}) {
    Contact6Config c = coupled_config();
    if (!with_rotational_spring) {
      c.rotational_stiffness = Vector3::Zero();
      c.rotational_damping = Vector3::Zero();
    }
    const Contact6Model model(c);
    for (const Matrix6* m : {&model.stiffness_matrix(), &model.damping_matrix()}) {
      EXPECT_EQ(*m, m->transpose());  // exactly
      const Eigen::SelfAdjointEigenSolver<Matrix6> eig(*m);
      EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12 * m->norm());
      // Without K_r / B_r, J = [I, −S] has rank 3: three eigenvalues are (numerically) zero.
      if (!with_rotational_spring) {
        EXPECT_LE(std::abs(eig.eigenvalues()[2]), 1e-12 * m->norm());
        EXPECT_GT(eig.eigenvalues()[3], 1.0);
      }
    }
    const Matrix6& k6 = model.stiffness_matrix();
    const Matrix6& b6 = model.damping_matrix();
    for (int trial = 0; trial < 20; ++trial) {
      const Vector6 q = 0.01 * Vector6::NullaryExpr([&](Eigen::Index i) {
                          return std::sin(1.3 * static_cast<double>(i) + 0.7 * trial);
                        });
      const Vector6 w = model.wrench(q, Vector6::Zero());
      EXPECT_LE((w + k6 * q).norm(), 1e-12 * w.norm()) << trial;
      const Vector6 wd = model.wrench(Vector6::Zero(), q);
      EXPECT_LE((wd + b6 * q).norm(), 1e-12 * wd.norm()) << trial;
      const double quadratic = 0.5 * q.dot(k6 * q);
      EXPECT_NEAR(model.potential_energy(q), quadratic, 1e-12 * quadratic) << trial;
    }
  }
}

TEST(Contact6Model, EnergyEqualsTheWorkDoneAlongACurvedPath) {
  // Work done against the contact from 0 to q1 along q(s) = s·q1 + sin(πs)·c, s ∈ [0, 1]:
  //   A = −∫ W(q(s), 0)·q'(s) ds     (composite Simpson, 2000 intervals; error ~1e-14 relative)
  const Contact6Model model(coupled_config());
  const Vector6 q1 = vec6(0.004, -0.003, 0.002, 0.05, 0.02, -0.04);
  const Vector6 bend = vec6(-0.002, 0.001, 0.003, -0.03, 0.06, 0.01);
  constexpr double kPi = std::numbers::pi;
  auto integrand = [&](double s) {
    const Vector6 q = s * q1 + std::sin(kPi * s) * bend;
    const Vector6 dq = q1 + kPi * std::cos(kPi * s) * bend;
    return -model.wrench(q, Vector6::Zero()).dot(dq);
  };
  constexpr int kN = 2000;
  const double h = 1.0 / kN;
  double sum = integrand(0.0) + integrand(1.0);
  for (int j = 1; j < kN; ++j) {
    sum += (j % 2 == 1 ? 4.0 : 2.0) * integrand(j * h);
  }
  const double work = sum * h / 3.0;
  const double energy = model.potential_energy(q1);
  EXPECT_GT(energy, 0.01);
  EXPECT_NEAR(work, energy, 1e-10 * energy);
}

TEST(Contact6Model, StepIsAllocationFree) {
  const Contact6Model model(coupled_config());
  double sum = 0.0;
  testing::AllocGuard guard;
  for (int k = 0; k < 1000; ++k) {
    const Vector6 q = Vector6::Constant(1e-4 * k);
    sum += model.wrench(q, -q)[4] + model.potential_energy(q);
  }
  EXPECT_EQ(guard.allocations(), 0u);
  EXPECT_TRUE(std::isfinite(sum));
}

std::string message(const Contact6Config& c) {
  try {
    const Contact6Model model(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Contact6Model, RefusesNegativeOrNonFiniteEntriesNamingTheField) {
  using ::testing::HasSubstr;
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Vector3 Contact6Config::*const fields[] = {
      &Contact6Config::translational_stiffness, &Contact6Config::rotational_stiffness,
      &Contact6Config::translational_damping, &Contact6Config::rotational_damping};
  const char* const names[] = {"translational_stiffness", "rotational_stiffness",
                               "translational_damping", "rotational_damping"};
  for (int f = 0; f < 4; ++f) {
    for (int i = 0; i < 3; ++i) {
      const std::string field = std::string(names[f]) + "[" + std::to_string(i) + "]";
      Contact6Config c;
      (c.*fields[f])[i] = -1.5;
      EXPECT_THAT(message(c), HasSubstr(field + " = -1.5: must be finite and >"));
      (c.*fields[f])[i] = kNan;
      EXPECT_THAT(message(c), HasSubstr(field + " = nan"));
      (c.*fields[f])[i] = kInf;
      EXPECT_THAT(message(c), HasSubstr(field + " = inf"));
      (c.*fields[f])[i] = 0.0;  // only the translational stiffness must be > 0
      EXPECT_EQ(message(c), f == 0 ? field + " = 0: must be finite and > 0 N/m" : "(accepted)");
    }
  }
  for (int i = 0; i < 3; ++i) {
    Contact6Config c;
    c.contact_offset[i] = kNan;
    EXPECT_THAT(message(c), HasSubstr("contact_offset[" + std::to_string(i) + "] = nan"));
    c.contact_offset[i] = -0.3;  // any finite offset
    EXPECT_EQ(message(c), "(accepted)");
  }
}

}  // namespace
// relative_pose: the translation's difference and the rotation that takes the rest attitude to
// the pose's. About one axis it is the angles' difference; about several it is not (and
// R(φ)·R(θ_c) = R(θ) holds to rounding).
TEST(Contact6Model, ARelativePoseIsTheRotationFromTheRestAttitude) {
  Vector6 rest;
  rest << 0.1, -0.2, 0.3, 0.0, 0.0, 0.5;
  EXPECT_LT(relative_pose(rest, rest).norm(), 1e-15);
  Vector6 pose = rest;
  pose(0) += 0.01;
  pose(5) += 0.02;
  const Vector6 q = relative_pose(pose, rest);
  EXPECT_NEAR(q(0), 0.01, 1e-15);
  EXPECT_NEAR(q(5), 0.02, 1e-15);
  EXPECT_NEAR(q(3), 0.0, 1e-15);
  rest.tail<3>() << 0.4, -0.3, 0.6;
  pose.tail<3>() << 0.45, -0.2, 0.5;
  const Vector6 r = relative_pose(pose, rest);
  const auto rot = [](const Eigen::Vector3d& v) {
    return Eigen::AngleAxisd(v.norm(), v.normalized()).toRotationMatrix();
  };
  EXPECT_LT((rot(r.tail<3>()) * rot(rest.tail<3>()) - rot(pose.tail<3>())).norm(), 1e-14);
  EXPECT_GT((r.tail<3>() - (pose.tail<3>() - rest.tail<3>())).norm(), 1e-3);  // not the difference
}

}  // namespace hyloop::core
