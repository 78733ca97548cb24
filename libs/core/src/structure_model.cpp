#include "hyloop/core/structure_model.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hyloop::core {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

void require_square(const StructureMatrix& m, int n, const char* field) {
  if (m.rows() != n || m.cols() != n) {
    std::ostringstream msg;
    msg << field << " is " << m.rows() << " x " << m.cols() << ": must be " << n << " x " << n;
    fail(msg.str());
  }
  if (!m.allFinite()) {
    fail(std::string(field) + ": values must be finite");
  }
}

void require_symmetric(const StructureMatrix& m, const char* field) {
  const double scale = m.cwiseAbs().maxCoeff();
  if ((m - m.transpose()).cwiseAbs().maxCoeff() > 1e-12 * scale) {
    fail(std::string(field) + ": must be symmetric");
  }
}

}  // namespace

StructureIntegrator parse_structure_integrator(std::string_view name) {
  if (name == "central_difference") {
    return StructureIntegrator::kCentralDifference;
  }
  if (name == "newmark") {
    return StructureIntegrator::kNewmarkAverageAcceleration;
  }
  throw std::invalid_argument("integrator = \"" + std::string(name) +
                              "\": must be central_difference or newmark");
}

std::string_view to_string(StructureIntegrator integrator) noexcept {
  return integrator == StructureIntegrator::kCentralDifference ? "central_difference" : "newmark";
}

StructureConfig StructureConfig::single_dof(double mass, double damping, double stiffness,
                                            double step, StructureIntegrator integrator) {
  StructureConfig c;
  c.mass = StructureMatrix::Constant(1, 1, mass);
  c.damping = StructureMatrix::Constant(1, 1, damping);
  c.stiffness = StructureMatrix::Constant(1, 1, stiffness);
  c.influence = StructureVector::Ones(1);
  c.step = step;
  c.integrator = integrator;
  return c;
}

StructureModel::StructureModel(const StructureConfig& config) : config_(config) {
  n_ = static_cast<int>(config.mass.rows());
  if (n_ < 1 || n_ > kMaxStructureDof) {
    fail("mass.rows() = " + std::to_string(n_) + ": must be in [1, 8] (degrees of freedom)");
  }
  require_square(config.mass, n_, "mass");
  require_square(config.damping, n_, "damping");
  require_square(config.stiffness, n_, "stiffness");
  require_symmetric(config.mass, "mass");
  require_symmetric(config.stiffness, "stiffness");
  if (config.influence.size() == 0) {
    config_.influence = StructureVector::Ones(n_);
  } else if (config.influence.size() != n_ || !config.influence.allFinite()) {
    fail("influence.size() = " + std::to_string(config.influence.size()) + ": must be " +
         std::to_string(n_) + " finite values");
  }
  if (config.external_force_dof < 0 || config.external_force_dof >= n_) {
    fail("external_force_dof = " + std::to_string(config.external_force_dof) + ": must be in [0, " +
         std::to_string(n_ - 1) + "]");
  }
  if (!std::isfinite(config.step) || config.step <= 0.0) {
    std::ostringstream msg;
    msg << "step = " << config.step << ": must be finite and > 0 s";
    fail(msg.str());
  }
  if (!std::isfinite(config.experimental_stiffness)) {
    fail("experimental_stiffness: must be finite");
  }
  const Eigen::MatrixXd m = config_.mass;
  const Eigen::LLT<Eigen::MatrixXd> llt(m);
  if (llt.info() != Eigen::Success) {
    fail("mass: must be positive definite");
  }
  dt_ = config.step;

  // Natural periods of M, K + k_exp·e·eᵀ.
  Eigen::MatrixXd k_total = config_.stiffness;
  k_total(config.external_force_dof, config.external_force_dof) += config.experimental_stiffness;
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eig(k_total, m);
  const double omega2_max = eig.eigenvalues().maxCoeff();
  shortest_period_ = omega2_max > 0.0 ? 2.0 * std::numbers::pi / std::sqrt(omega2_max)
                                      : std::numeric_limits<double>::infinity();
  if (config.integrator == StructureIntegrator::kCentralDifference && !(dt_ < stability_limit())) {
    std::ostringstream msg;
    msg << "step = " << dt_ << ": must be < T_min/pi = " << stability_limit()
        << " s for the central-difference method (shortest period T_min = " << shortest_period_
        << " s); use a smaller step or integrator newmark";
    fail(msg.str());
  }

  const StructureMatrix& mm = config_.mass;
  const StructureMatrix& cc = config_.damping;
  const StructureMatrix& kk = config_.stiffness;
  m_iota_ = mm * config_.influence;
  m_inv_ = Eigen::MatrixXd(llt.solve(Eigen::MatrixXd::Identity(n_, n_)));
  Eigen::MatrixXd k_hat;
  if (config.integrator == StructureIntegrator::kCentralDifference) {
    k_hat = Eigen::MatrixXd(mm / (dt_ * dt_) + cc / (2.0 * dt_));
    g1_ = kk - 2.0 * mm / (dt_ * dt_);
    g2_ = mm / (dt_ * dt_) - cc / (2.0 * dt_);
  } else {
    k_hat = Eigen::MatrixXd(kk + 2.0 * cc / dt_ + 4.0 * mm / (dt_ * dt_));
    g1_ = 4.0 * mm / (dt_ * dt_) + 2.0 * cc / dt_;
    g2_ = 4.0 * mm / dt_ + cc;
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(k_hat);
  if (!lu.isInvertible()) {
    fail("stiffness/damping: the effective stiffness of the integrator is singular");
  }
  k_hat_inv_ = lu.inverse();
  u_.setZero(n_);
  u_prev_.setZero(n_);
  v_.setZero(n_);
  a_.setZero(n_);
  p_.setZero(n_);
  rhs_.setZero(n_);
  u_next_.setZero(n_);
  reset();
}

void StructureModel::load(double ground_acceleration, double external_force) noexcept {
  p_ = -m_iota_.col(0) * ground_acceleration;
  p_(config_.external_force_dof) += external_force;
}

void StructureModel::reset() noexcept {
  const StructureVector zero = StructureVector::Zero(n_);
  reset(zero, zero);
}

void StructureModel::reset(const StructureVector& displacement, const StructureVector& velocity,
                           double ground_acceleration, double external_force) noexcept {
  time_ = 0.0;
  steps_ = 0;
  if (displacement.size() == n_ && velocity.size() == n_) {
    u_ = displacement;
    v_ = velocity;
  } else {
    u_.setZero();
    v_.setZero();
  }
  load(ground_acceleration, external_force);
  a_.noalias() = m_inv_ * (p_ - config_.damping * v_ - config_.stiffness * u_);
  u_prev_ = u_ - dt_ * v_ + 0.5 * dt_ * dt_ * a_;
}

void StructureModel::step(double ground_acceleration, double external_force) noexcept {
  load(ground_acceleration, external_force);
  if (config_.integrator == StructureIntegrator::kCentralDifference) {
    rhs_ = p_;
    rhs_.noalias() -= g1_ * u_;
    rhs_.noalias() -= g2_ * u_prev_;
    u_next_.noalias() = k_hat_inv_ * rhs_;
    // Rates at t_i from u_{i−1}, u_i, u_{i+1}.
    v_ = (u_next_ - u_prev_) / (2.0 * dt_);
    a_ = (u_next_ - 2.0 * u_ + u_prev_) / (dt_ * dt_);
    u_prev_ = u_;
    u_ = u_next_;
  } else {
    rhs_ = p_;
    rhs_.noalias() += g1_ * u_;
    rhs_.noalias() += g2_ * v_;
    rhs_.noalias() += config_.mass * a_;
    u_next_.noalias() = k_hat_inv_ * rhs_;
    const StructureVector du = u_next_ - u_;
    const StructureVector v_next = 2.0 / dt_ * du - v_;
    a_ = 4.0 / (dt_ * dt_) * du - 4.0 / dt_ * v_ - a_;
    v_ = v_next;
    u_prev_ = u_;
    u_ = u_next_;
  }
  ++steps_;
  time_ = static_cast<double>(steps_) * dt_;
}

double StructureModel::load_time() const noexcept {
  return config_.integrator == StructureIntegrator::kCentralDifference ? time_ : time_ + dt_;
}

double StructureModel::state_rate_time() const noexcept {
  if (config_.integrator == StructureIntegrator::kCentralDifference && steps_ > 0) {
    return time_ - dt_;
  }
  return time_;
}

double StructureModel::stability_limit() const noexcept {
  return config_.integrator == StructureIntegrator::kCentralDifference
             ? shortest_period_ / std::numbers::pi
             : std::numeric_limits<double>::infinity();
}

}  // namespace hyloop::core
