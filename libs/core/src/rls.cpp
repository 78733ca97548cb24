#include "hyloop/core/rls.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hyloop::core {
namespace {

[[noreturn]] void reject(const char* field, double value, const char* range) {
  std::ostringstream msg;
  msg << field << " = " << value << ": must be " << range;
  throw std::invalid_argument(msg.str());
}

}  // namespace

std::string_view to_string(RlsStatus status) noexcept {
  switch (status) {
    case RlsStatus::kAccepted:
      return "accepted";
    case RlsStatus::kNotFinite:
      return "not_finite";
    case RlsStatus::kCovarianceLimit:
      return "covariance_limit";
    case RlsStatus::kParameterJump:
      return "parameter_jump";
  }
  return "unknown";
}

RecursiveLeastSquares::RecursiveLeastSquares(const RlsConfig& config) : config_(config) {
  if (config.parameters < 1 || config.parameters > kMaxParameters) {
    reject("parameters", config.parameters, "in [1, 16]");
  }
  if (!(config.forgetting_factor > 0.0 && config.forgetting_factor <= 1.0)) {
    reject("forgetting_factor", config.forgetting_factor, "in (0, 1]");
  }
  if (!(config.initial_covariance > 0.0) || !std::isfinite(config.initial_covariance)) {
    reject("initial_covariance", config.initial_covariance, "finite and > 0");
  }
  if (!(config.max_covariance_trace > 0.0)) {
    reject("max_covariance_trace", config.max_covariance_trace, "> 0 (inf disables)");
  }
  if (!(config.max_parameter_jump > 0.0)) {
    reject("max_parameter_jump", config.max_parameter_jump, "> 0 (inf disables)");
  }
  const int n = config.parameters;
  theta_.setZero(n);
  p_.setZero(n, n);
  phi_.setZero(n);
  p_phi_.setZero(n);
  gain_.setZero(n);
  theta_new_.setZero(n);
  p_new_.setZero(n, n);
  reset(RlsVector::Zero(n));
}

void RecursiveLeastSquares::clear_counters() noexcept {
  counts_.fill(0);
  last_status_ = RlsStatus::kAccepted;
  last_rejection_ = RlsStatus::kAccepted;
  residual_ = 0.0;
}

void RecursiveLeastSquares::reset(const RlsVector& theta) {
  const int n = config_.parameters;
  reset(theta, RlsMatrix::Identity(n, n) * config_.initial_covariance);
}

void RecursiveLeastSquares::reset(const RlsVector& theta, const RlsMatrix& covariance) {
  const int n = config_.parameters;
  if (theta.size() != n) {
    reject("theta.size()", static_cast<double>(theta.size()), "equal to parameters");
  }
  if (covariance.rows() != n || covariance.cols() != n) {
    reject("covariance.rows()", static_cast<double>(covariance.rows()),
           "equal to parameters (square)");
  }
  if (!theta.allFinite()) {
    throw std::invalid_argument("theta: values must be finite");
  }
  if (!covariance.allFinite()) {
    throw std::invalid_argument("covariance: values must be finite");
  }
  theta_ = theta;
  p_ = covariance;
  clear_counters();
}

void RecursiveLeastSquares::initialise_batch(const Eigen::MatrixXd& regressors,
                                             const Eigen::VectorXd& targets, double ridge) {
  if (!std::isfinite(ridge) || ridge < 0.0) {
    reject("ridge", ridge, "finite and >= 0");
  }
  const int n = config_.parameters;
  if (regressors.cols() != n) {
    reject("regressors.cols()", static_cast<double>(regressors.cols()), "equal to parameters");
  }
  if (regressors.rows() != targets.size()) {
    reject("targets.size()", static_cast<double>(targets.size()), "equal to regressors.rows()");
  }
  if (regressors.rows() < n) {
    reject("regressors.rows()", static_cast<double>(regressors.rows()),
           ">= parameters (one regression per parameter at least)");
  }
  if (!regressors.allFinite() || !targets.allFinite()) {
    throw std::invalid_argument("regressors/targets: values must be finite");
  }
  // ΦᵀΦ and ΦᵀD summed row after row, in this fixed order. Not Φ.transpose() * Φ: Eigen's matrix
  // product splits the sum over rows into blocks sized from the cache sizes it detects at run
  // time, so θ0 differed in its last bits from one CPU to another (docs/rht.md, "Noise").
  const Eigen::Index rows = regressors.rows();
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd moment = Eigen::VectorXd::Zero(n);
  for (Eigen::Index r = 0; r < rows; ++r) {
    for (int i = 0; i < n; ++i) {
      const double phi_i = regressors(r, i);
      moment(i) += phi_i * targets(r);
      for (int j = 0; j <= i; ++j) gram(i, j) += phi_i * regressors(r, j);
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) gram(j, i) = gram(i, j);
  }
  if (ridge > 0.0) {
    gram.diagonal().array() += ridge * gram.trace() / n;
  }
  // Relative rank test: a Gram matrix whose condition number is beyond ~1e14 is singular here.
  Eigen::FullPivLU<Eigen::MatrixXd> lu(gram);
  lu.setThreshold(1e-14);
  if (lu.rank() < n) {
    std::ostringstream msg;
    msg << "regressors: Phi^T Phi has rank " << lu.rank() << " < parameters = " << n
        << " (the offline data does not excite every parameter)";
    throw std::invalid_argument(msg.str());
  }
  const Eigen::MatrixXd p0 = lu.inverse();
  const Eigen::VectorXd theta0 = p0 * moment;
  RlsMatrix p = 0.5 * (p0 + p0.transpose());
  reset(RlsVector(theta0), p);
}

RlsStatus RecursiveLeastSquares::update(const double* phi, double y) noexcept {
  for (int i = 0; i < config_.parameters; ++i) {
    phi_(i) = phi[i];
  }
  const RlsVector& local = phi_;
  return update(local, y);
}

RlsStatus RecursiveLeastSquares::update(const RlsVector& phi, double y) noexcept {
  const double lambda = config_.forgetting_factor;
  RlsStatus status = RlsStatus::kAccepted;
  residual_ = y - phi.dot(theta_);
  p_phi_.noalias() = p_ * phi;
  const double denom = lambda + phi.dot(p_phi_);
  if (!std::isfinite(residual_) || !std::isfinite(denom) || !(denom > 0.0)) {
    status = RlsStatus::kNotFinite;
  } else {
    gain_ = p_phi_ / denom;
    theta_new_ = theta_ + gain_ * residual_;
    // P − K φᵀ P = P − K (P φ)ᵀ (P symmetric)
    p_new_.noalias() = p_ - gain_ * p_phi_.transpose();
    p_new_ /= lambda;
    p_new_ = 0.5 * (p_new_ + p_new_.transpose()).eval();
    if (!theta_new_.allFinite() || !p_new_.allFinite()) {
      status = RlsStatus::kNotFinite;
    } else if (p_new_.trace() > config_.max_covariance_trace) {
      status = RlsStatus::kCovarianceLimit;
    } else if ((theta_new_ - theta_).cwiseAbs().maxCoeff() > config_.max_parameter_jump) {
      status = RlsStatus::kParameterJump;
    }
  }
  if (status == RlsStatus::kAccepted) {
    theta_.swap(theta_new_);
    p_.swap(p_new_);
  } else {
    last_rejection_ = status;
  }
  last_status_ = status;
  ++counts_[static_cast<std::size_t>(status)];
  return status;
}

std::uint64_t RecursiveLeastSquares::rejected() const noexcept {
  return counts_[1] + counts_[2] + counts_[3];
}

}  // namespace hyloop::core
