#include "hyloop/core/coupled_modes.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <stdexcept>

#include "hyloop/core/contact6_model.hpp"

namespace hyloop::core {
namespace {

using Eigen::Matrix3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;

RigidBodyConfig body(const Vector3d& offset, const Matrix3d& inertia, double step = 0.002) {
  return {.mass = 500.0, .inertia = inertia, .contact_offset = offset, .step = step};
}

Matrix6d contact_stiffness(const Vector3d& spring_offset = Vector3d::Zero()) {
  Contact6Config c;
  c.contact_offset = spring_offset;
  return Contact6Model(c).stiffness_matrix();
}

// A is what RigidBody does: one step from rest under a wrench moves the contact frame's twist by
// T·A·W (the kick; the drift turns the arm by a second-order amount), for an offset arm, a full
// inertia tensor and a turned attitude.
TEST(CoupledModes, TheInverseInertiaIsTheRigidBodysFirstStep) {
  Matrix3d inertia;
  inertia << 50.0, 3.0, -2.0, 3.0, 60.0, 1.5, -2.0, 1.5, 70.0;
  const double step = 1e-6;
  const RigidBodyConfig c = body({0.1, 0.3, -0.2}, inertia, step);
  RigidBodyState rest;
  rest.attitude = Quaterniond(Eigen::AngleAxisd(0.4, Vector3d(1.0, 2.0, 0.5).normalized()));
  const Matrix6d a = contact_inverse_inertia(c, rest.attitude);
  for (int k = 0; k < 6; ++k) {
    RigidBody b(c, rest);
    Vector6d w = Vector6d::Zero();
    w(k) = k < 3 ? 100.0 : 10.0;
    b.step(w.head<3>(), w.tail<3>());
    const FrameTwist t = b.contact_twist();
    Vector6d acc;
    acc << t.linear / step, t.angular / step;
    EXPECT_LT((acc - a * w).norm(), 1e-6 * (a * w).norm()) << "wrench axis " << k;
  }
  EXPECT_LT((a - a.transpose()).cwiseAbs().maxCoeff(), 1e-15);
}

// Nothing coupling: the modes are the axes, ω² = K_t/m and K_r/I_ii.
TEST(CoupledModes, WithoutOffsetOrProductsTheModesAreTheAxes) {
  const auto modes =
      coupled_modes(contact_inverse_inertia(body({0, 0, 0}, Vector3d(50, 60, 70).asDiagonal())),
                    contact_stiffness());
  const double want[6] = {200.0 / 70.0, 200.0 / 60.0, 200.0 / 50.0, 40.0, 40.0, 40.0};
  for (int j = 0; j < 6; ++j) {
    EXPECT_NEAR(modes[j].omega_n2, want[j], 1e-12 * want[j]) << j;
    EXPECT_NEAR(modes[j].shape.cwiseAbs().sum(), 1.0, 1e-12) << j;  // one axis each
  }
}

// The contact frame 0.3 m along y from the CoM couples x with rz: the 2×2 block
// A = [[1/m + r²/I_z, −r/I_z], [−r/I_z, 1/I_z]] times diag(K_t, K_r) has
// ω² = (tr ± √(tr² − 4·det))/2, tr = K_t(1/m + r²/I_z) + K_r/I_z, det = K_t·K_r/(m·I_z):
// 66.862 and 1.7093 1/s² for off_centre (the axes alone: 40 and 2.857).
TEST(CoupledModes, AnOffsetArmCouplesTranslationAndRotationAsTheClosedForm) {
  const double m = 500.0, iz = 70.0, r = 0.3, k = 20000.0, kr = 200.0;
  const double tr = k * (1.0 / m + r * r / iz) + kr / iz, det = k * kr / (m * iz);
  const double hi = 0.5 * (tr + std::sqrt(tr * tr - 4.0 * det));
  const double lo = 0.5 * (tr - std::sqrt(tr * tr - 4.0 * det));
  const auto modes =
      coupled_modes(contact_inverse_inertia(body({0, r, 0}, Vector3d(50, 60, iz).asDiagonal())),
                    contact_stiffness());
  int found = 0;
  for (const CoupledMode& mode : modes) {
    const bool x_rz = std::abs(mode.shape(0)) > 1e-9 && std::abs(mode.shape(5)) > 1e-9;
    if (!x_rz) continue;
    ++found;
    const double want = mode.omega_n2 > 10.0 ? hi : lo;
    EXPECT_NEAR(mode.omega_n2, want, 1e-10 * want);
    // (A·K − ω²)·φ = 0, first row: φ_x/φ_rz = (r/I_z·K_r)/(K_t(1/m + r²/I_z) − ω²).
    EXPECT_NEAR(mode.shape(0) / mode.shape(5), (r / iz * kr) / (k * (1.0 / m + r * r / iz) - want),
                1e-9);
  }
  EXPECT_EQ(found, 2);
  EXPECT_NEAR(hi, 66.862, 1e-3);
  EXPECT_NEAR(lo, 1.7093, 1e-4);
}

// The root satisfies its equation, is ω²τ/2 to first order, and Table 1's is 0.0400 1/s.
TEST(CoupledModes, TheDelayEquationRootSatisfiesItsEquation) {
  for (const double w2 : {1.7, 40.0, 66.9, 400.0}) {
    const std::complex<double> s = delay_equation_root(w2, 0.002);
    EXPECT_LT(std::abs(s * s + w2 * std::exp(-s * 0.002)), 1e-12 * w2) << w2;
    EXPECT_NEAR(s.real(), w2 * 0.002 / 2.0, 0.02 * w2 * 0.002 / 2.0) << w2;
  }
  EXPECT_NEAR(delay_equation_root(40.0, 0.002).real(), 0.0400, 1e-4);
  EXPECT_EQ(delay_equation_root(0.0, 0.002), std::complex<double>(0.0, 0.0));
  EXPECT_THROW((void)delay_equation_root(-1.0, 0.002), std::invalid_argument);
  EXPECT_THROW((void)delay_equation_root(1e6, 0.002), std::invalid_argument);
}

TEST(CoupledModes, ABadMatrixIsRefusedByName) {
  Matrix6d bad = Matrix6d::Identity();
  bad(0, 1) = 1.0;
  try {
    (void)coupled_modes(bad, contact_stiffness());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "inverse_inertia: not symmetric");
  }
  EXPECT_THROW((void)coupled_modes(-Matrix6d::Identity(), contact_stiffness()),
               std::invalid_argument);
}

}  // namespace
}  // namespace hyloop::core
