#include "hyloop/core/coupled_modes.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {

Eigen::Matrix3d cross_matrix(const Eigen::Vector3d& r) {
  Eigen::Matrix3d s;
  s << 0.0, -r.z(), r.y(), r.z(), 0.0, -r.x(), -r.y(), r.x(), 0.0;
  return s;
}

void require_symmetric(const Matrix6d& m, const char* name) {
  if (!m.allFinite()) throw std::invalid_argument(std::string(name) + ": not finite");
  const double scale = std::max(m.cwiseAbs().maxCoeff(), 1e-300);
  if ((m - m.transpose()).cwiseAbs().maxCoeff() > 1e-9 * scale) {
    throw std::invalid_argument(std::string(name) + ": not symmetric");
  }
}

}  // namespace

Matrix6d contact_inverse_inertia(const RigidBodyConfig& config,
                                 const Eigen::Quaterniond& attitude) {
  validate(config);
  const Eigen::Matrix3d rot = attitude.normalized().toRotationMatrix();
  const Eigen::Matrix3d inertia = 0.5 * (config.inertia + config.inertia.transpose());
  const Eigen::Matrix3d i_inv = (rot * inertia * rot.transpose()).inverse();
  const Eigen::Matrix3d s = cross_matrix(rot * config.contact_offset);
  Matrix6d a;
  a.topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() / config.mass - s * i_inv * s;
  a.topRightCorner<3, 3>() = -s * i_inv;
  a.bottomLeftCorner<3, 3>() = i_inv * s;
  a.bottomRightCorner<3, 3>() = i_inv;
  return 0.5 * (a + a.transpose());
}

std::vector<CoupledMode> coupled_modes(const Matrix6d& inverse_inertia, const Matrix6d& stiffness) {
  require_symmetric(inverse_inertia, "inverse_inertia");
  require_symmetric(stiffness, "stiffness");
  const Eigen::SelfAdjointEigenSolver<Matrix6d> a(inverse_inertia);
  if (a.eigenvalues().minCoeff() <= 0.0) {
    throw std::invalid_argument("inverse_inertia: not positive definite");
  }
  const Matrix6d root = a.operatorSqrt();
  const Eigen::SelfAdjointEigenSolver<Matrix6d> k(root * stiffness * root);
  std::vector<CoupledMode> modes;
  for (Eigen::Index j = 0; j < 6; ++j) {
    CoupledMode m;
    m.omega_n2 = std::max(k.eigenvalues()(j), 0.0);
    m.shape = root * k.eigenvectors().col(j);
    Eigen::Index big = 0;
    m.shape.cwiseAbs().maxCoeff(&big);
    m.shape /= m.shape(big);
    modes.push_back(m);
  }
  return modes;
}

std::complex<double> delay_equation_root(double omega_n2, double tau) {
  if (!std::isfinite(omega_n2) || omega_n2 < 0.0) {
    throw std::invalid_argument("omega_n2: must be finite and >= 0");
  }
  if (!std::isfinite(tau) || tau < 0.0) throw std::invalid_argument("tau: must be finite and >= 0");
  if (std::sqrt(omega_n2) * tau >= 1.0) {
    throw std::invalid_argument("omega_n*tau must be < 1 (the root near i*omega_n)");
  }
  std::complex<double> s(0.0, std::sqrt(omega_n2));
  if (omega_n2 == 0.0) return s;
  for (int k = 0; k < 100; ++k) {
    const std::complex<double> e = std::exp(-s * tau);
    const std::complex<double> step = (s * s + omega_n2 * e) / (2.0 * s - tau * omega_n2 * e);
    s -= step;
    if (std::abs(step) <= 1e-15 * std::abs(s)) break;
  }
  return s;
}

}  // namespace hyloop::core
