#include "hyloop/core/inverse_model_compensator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hyloop::core {

LoadingModelPreset parse_loading_model_preset(std::string_view name) {
  if (name == "p3") {
    return LoadingModelPreset::kThreeParameter;
  }
  if (name == "p4") {
    return LoadingModelPreset::kFourParameter;
  }
  if (name == "p7") {
    return LoadingModelPreset::kSevenParameter;
  }
  throw std::invalid_argument("model = \"" + std::string(name) + "\": must be p3, p4 or p7");
}

std::string_view to_string(LoadingModelPreset preset) noexcept {
  switch (preset) {
    case LoadingModelPreset::kThreeParameter:
      return "p3";
    case LoadingModelPreset::kFourParameter:
      return "p4";
    case LoadingModelPreset::kSevenParameter:
      return "p7";
  }
  return "unknown";
}

InverseModelCompensatorConfig InverseModelCompensatorConfig::preset(LoadingModelPreset preset) {
  InverseModelCompensatorConfig c;
  switch (preset) {
    case LoadingModelPreset::kThreeParameter:
      c.command_terms = 0;
      c.measurement_terms = 3;
      break;
    case LoadingModelPreset::kFourParameter:
      c.command_terms = 1;
      c.measurement_terms = 3;
      break;
    case LoadingModelPreset::kSevenParameter:
      c.command_terms = 3;
      c.measurement_terms = 4;
      break;
  }
  return c;
}

RlsConfig InverseModelCompensator::rls_config(const InverseModelCompensatorConfig& config) {
  if (config.command_terms < 0 || config.command_terms > kMaxParameters - 1) {
    throw std::invalid_argument("command_terms = " + std::to_string(config.command_terms) +
                                ": must be in [0, 15]");
  }
  if (config.measurement_terms < 1 ||
      config.command_terms + config.measurement_terms > kMaxParameters) {
    throw std::invalid_argument("measurement_terms = " + std::to_string(config.measurement_terms) +
                                ": must be in [1, " +
                                std::to_string(kMaxParameters - config.command_terms) +
                                "] (command_terms + measurement_terms <= 16)");
  }
  RlsConfig r;
  r.parameters = config.command_terms + config.measurement_terms;
  r.forgetting_factor = config.forgetting_factor;
  r.initial_covariance = config.initial_covariance;
  r.max_covariance_trace = config.max_covariance_trace;
  r.max_parameter_jump = config.max_parameter_jump;
  return r;
}

InverseModelCompensator::InverseModelCompensator(const InverseModelCompensatorConfig& config)
    : config_(config),
      n_c_(config.command_terms),
      n_m_(config.measurement_terms),
      rls_(rls_config(config)),
      phi_(RlsVector::Zero(config.command_terms + config.measurement_terms)) {}

LoadingModelRegression InverseModelCompensator::regression(
    const InverseModelCompensatorConfig& config, std::span<const double> commands,
    std::span<const double> measured) {
  const int n_c = config.command_terms;
  const int n_m = config.measurement_terms;
  if (commands.size() != measured.size()) {
    throw std::invalid_argument(
        "measured.size() = " + std::to_string(measured.size()) +
        ": must equal commands.size() = " + std::to_string(commands.size()));
  }
  const int first = std::max(n_c, n_m - 1);
  const int rows = static_cast<int>(commands.size()) - first;
  if (rows < 1) {
    throw std::invalid_argument("commands.size() = " + std::to_string(commands.size()) +
                                ": must exceed max(n_c, n_m - 1) = " + std::to_string(first));
  }
  LoadingModelRegression r{Eigen::MatrixXd(rows, n_c + n_m), Eigen::VectorXd(rows)};
  for (int row = 0; row < rows; ++row) {
    const int i = first + row;
    for (int j = 1; j <= n_c; ++j) {
      r.regressors(row, j - 1) = commands[static_cast<std::size_t>(i - j)];
    }
    for (int k = 1; k <= n_m; ++k) {
      r.regressors(row, n_c + k - 1) = measured[static_cast<std::size_t>(i - k + 1)];
    }
    r.targets(row) = commands[static_cast<std::size_t>(i)];
  }
  return r;
}

void InverseModelCompensator::initialise_batch(std::span<const double> commands,
                                               std::span<const double> measured) {
  const LoadingModelRegression r = regression(config_, commands, measured);
  rls_.initialise_batch(r.regressors, r.targets, config_.batch_ridge);
}

void InverseModelCompensator::set_parameters(const RlsVector& theta) { rls_.reset(theta); }

void InverseModelCompensator::set_parameters(const RlsVector& theta, const RlsMatrix& covariance) {
  rls_.reset(theta, covariance);
}

void InverseModelCompensator::reset(double position) noexcept {
  commands_.fill(position);
  measured_.fill(position);
}

RlsStatus InverseModelCompensator::observe(double command, double measured) noexcept {
  std::copy_backward(commands_.begin(), commands_.end() - 1, commands_.end());
  std::copy_backward(measured_.begin(), measured_.end() - 1, measured_.end());
  commands_[0] = command;
  measured_[0] = measured;
  for (int j = 1; j <= n_c_; ++j) {
    phi_(j - 1) = commands_[static_cast<std::size_t>(j)];
  }
  for (int k = 1; k <= n_m_; ++k) {
    phi_(n_c_ + k - 1) = measured_[static_cast<std::size_t>(k - 1)];
  }
  residual_ = command - rls_.predict(phi_);
  if (!config_.adapt) {
    return RlsStatus::kAccepted;
  }
  return rls_.update(phi_, command);
}

double InverseModelCompensator::command(double desired_next) const noexcept {
  const RlsVector& theta = rls_.parameters();
  // d_c(i+1−j) = commands_[j−1];  d_m(i+2−k) = measured_[k−2] for k ≥ 2.
  double c = 0.0;
  for (int j = 1; j <= n_c_; ++j) {
    c += theta(j - 1) * commands_[static_cast<std::size_t>(j - 1)];
  }
  c += theta(n_c_) * desired_next;
  for (int k = 2; k <= n_m_; ++k) {
    c += theta(n_c_ + k - 1) * measured_[static_cast<std::size_t>(k - 2)];
  }
  return c;
}

}  // namespace hyloop::core
