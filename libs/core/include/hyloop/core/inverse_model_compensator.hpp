#pragma once
// Adaptive inverse-model delay compensation of the RHT paper (Wang, Li, Wu; papers/README.md).
//
// Loading-system model, the newest command on the left (paper Eq. 1–2):
//
//   d_c(i) = Σ_{j=1}^{n_c} θ_c,j·d_c(i−j) + Σ_{k=1}^{n_m} θ_m,k·d_m(i−k+1) = φ(i)ᵀθ
//   θ = [θ_c,1 … θ_c,n_c, θ_m,1 … θ_m,n_m],   φ(i) = [d_c(i−1) … d_c(i−n_c), d_m(i) … d_m(i−n_m+1)]
//
// d_c(i) is the command held over step i and d_m(i) the displacement measured at the end of step i
// (DESIGN.md §6). θ starts from a batch least-squares fit of an offline run, θ0 = (ΦᵀΦ)⁻¹ΦᵀD,
// P0 = (ΦᵀΦ)⁻¹, and is updated online by RLS with forgetting factor λ (rls.hpp), guarded.
// The command for step i+1 is the model with the measured displacement replaced by the desired
// one d(i+1) (paper Eq. 5–9):
//
//   d_c(i+1) = Σ_j θ_c,j·d_c(i+1−j) + θ_m,1·d(i+1) + Σ_{k≥2} θ_m,k·d_m(i+2−k)
//
// Presets (the paper prints the 4-parameter structure only; the others are our reading):
//   4 parameters  n_c = 1, n_m = 3: θ1 on d_c(i−1), θ2…θ4 on d_m(i), d_m(i−1), d_m(i−2). A second-
//                 order servo under a zero-order hold is d_m(i) = −a1·d_m(i−1) − a2·d_m(i−2) +
//                 b1·d_c(i) + b2·d_c(i−1); solved for d_c(i) it is exactly this model with
//                 θ = [−b2/b1, 1/b1, a1/b1, a2/b1]: the 4-parameter model is the servo's exact
//                 inverse under the §6 timing.
//   3 parameters  n_c = 0, n_m = 3: θ1…θ3 on d_m(i), d_m(i−1), d_m(i−2), the 4-parameter model
//                 without its command term. The command is then a finite combination of the
//                 desired and measured displacements, with no recursion on past commands, so the
//                 compensator itself cannot go unstable (the paper: "stable, little threat to the
//                 test"); the dropped term leaks into the others, whose estimates "oscillate
//                 slightly". The alternative, n_c = 1, n_m = 2, fits θ_c > 1 on the RHT servo
//                 (an unstable command recursion) and diverges in closed loop: not used.
//   7 parameters  n_c = 3, n_m = 4: the exact inverse of a third-order servo model. On a
//                 second-order servo it is over-parameterised: noise-free offline data cannot
//                 separate its parameters (ΦᵀΦ singular; use batch_ridge), and the extra
//                 pole/zero pair is free to wander under measurement noise. The recursion on past
//                 commands already has a root at −b2/b1 ≈ −0.77 (the ZOH zero of the servo at
//                 Δt = 0.01 s), a lightly damped mode at period 2Δt: the paper's oscillation.
//
// Units: displacements in m (any consistent unit works; θ is dimensionless).

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "hyloop/core/rls.hpp"

namespace hyloop::core {

enum class LoadingModelPreset { kThreeParameter, kFourParameter, kSevenParameter };

/// "p3", "p4", "p7". @throws std::invalid_argument listing the allowed names.
LoadingModelPreset parse_loading_model_preset(std::string_view name);
std::string_view to_string(LoadingModelPreset preset) noexcept;

struct InverseModelCompensatorConfig {
  int command_terms = 1;      ///< n_c ≥ 0
  int measurement_terms = 3;  ///< n_m ≥ 1 (θ_m,1 multiplies the displacement being commanded)
  double forgetting_factor = 0.97;       ///< λ ∈ (0, 1]
  double initial_covariance = 1.0e6;     ///< p0: P0 = p0·I when not started from a batch fit
  double max_covariance_trace = 1.0e12;  ///< RLS guard (rls.hpp)
  double max_parameter_jump = 1.0e6;     ///< RLS guard: largest |Δθ_i| in one update
  bool adapt = true;                     ///< false: keep θ fixed (no online update)
  /// Relative ridge ρ ≥ 0 of the batch fit (rls.hpp); 0 is the paper's plain least squares.
  double batch_ridge = 0.0;

  /// n_c, n_m of a preset with the other fields at their defaults.
  static InverseModelCompensatorConfig preset(LoadingModelPreset preset);
};

/// Regression rows of a recorded run: Φ (rows φ(i)ᵀ) and D (d_c(i)) for every i with a full
/// history, i = max(n_c, n_m − 1) … L − 1.
struct LoadingModelRegression {
  Eigen::MatrixXd regressors;
  Eigen::VectorXd targets;
};

class InverseModelCompensator {
 public:
  static constexpr int kMaxParameters = kRlsMaxParameters;

  /// θ = 0 until initialised. @throws std::invalid_argument naming the field out of range
  /// (n_c + n_m ≤ 16; the RLS fields as in RlsConfig).
  explicit InverseModelCompensator(const InverseModelCompensatorConfig& config);

  /// Φ and D of a recorded run (`commands[i]` = d_c(i), `measured[i]` = d_m(i)). Not RT-safe.
  /// @throws std::invalid_argument if the sizes differ or are too short for one row.
  static LoadingModelRegression regression(const InverseModelCompensatorConfig& config,
                                           std::span<const double> commands,
                                           std::span<const double> measured);

  /// Batch fit θ0, P0 on an offline run and starts from it. Not RT-safe.
  /// @throws std::invalid_argument on bad sizes or data that does not excite every parameter.
  void initialise_batch(std::span<const double> commands, std::span<const double> measured);

  /// Sets θ (size n_c + n_m, order as in the header) with P = p0·I. Not RT-safe (may throw).
  void set_parameters(const RlsVector& theta);
  /// Sets θ and P. Not RT-safe (may throw on sizes or non-finite values).
  void set_parameters(const RlsVector& theta, const RlsMatrix& covariance);

  /// Fills the command and measurement histories with `position` (bumpless start at rest).
  /// RT-safe.
  void reset(double position) noexcept;

  /// Cycle i: records d_c(i) (the command applied over step i) and d_m(i) (measured at its
  /// end), and (if adapt) updates θ by one guarded RLS step on φ(i). RT-safe: no allocation,
  /// no exception. Returns the RLS status (kAccepted when not adapting).
  RlsStatus observe(double command, double measured) noexcept;

  /// d_c(i+1) for the desired displacement d(i+1) at the end of step i+1, from the histories
  /// recorded by observe() up to cycle i. RT-safe.
  [[nodiscard]] double command(double desired_next) const noexcept;

  /// Residual d_c(i) − φ(i)ᵀθ of the last observe(), θ before its update (a priori).
  [[nodiscard]] double last_residual() const noexcept { return residual_; }
  [[nodiscard]] const RlsVector& parameters() const noexcept { return rls_.parameters(); }
  [[nodiscard]] const RecursiveLeastSquares& estimator() const noexcept { return rls_; }
  [[nodiscard]] int parameter_count() const noexcept { return n_c_ + n_m_; }
  [[nodiscard]] int command_terms() const noexcept { return n_c_; }
  [[nodiscard]] int measurement_terms() const noexcept { return n_m_; }
  [[nodiscard]] const InverseModelCompensatorConfig& config() const noexcept { return config_; }

 private:
  static RlsConfig rls_config(const InverseModelCompensatorConfig& config);

  InverseModelCompensatorConfig config_;
  int n_c_;
  int n_m_;
  RecursiveLeastSquares rls_;
  // Newest first: commands_[0] = d_c(i), measured_[0] = d_m(i).
  std::array<double, kMaxParameters + 1> commands_{};
  std::array<double, kMaxParameters + 1> measured_{};
  RlsVector phi_;
  double residual_ = 0.0;
};

}  // namespace hyloop::core
