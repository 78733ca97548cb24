#pragma once
// Recursive least squares with a forgetting factor (RHT paper, Eq. 3–4; papers/README.md), for
// the linear regression y(i) = φ(i)ᵀθ with up to kMaxParameters parameters:
//
//   K = P·φ/(λ + φᵀ·P·φ)
//   θ ← θ + K·(y − φᵀθ)
//   P ← (P − K·φᵀ·P)/λ                      (kept symmetric: P ← ½(P + Pᵀ))
//
// λ ∈ (0, 1] (1: ordinary RLS; the paper uses 0.97 and 0.963). Started either from θ0 and P0 = p0·I
// or from a batch least-squares fit of L offline regressions (rows of Φ, targets D):
//
//   θ0 = (ΦᵀΦ)⁻¹ΦᵀD,     P0 = (ΦᵀΦ)⁻¹
//
// Guard. An update is rejected, and θ and P stay at the last good values, when it would give a
// non-finite number (NaN/inf in φ, y or the result), a covariance trace above max_covariance_trace,
// or a parameter change max_i |Δθ_i| above max_parameter_jump. The reason of the last rejection is
// kept and each reason is counted; update() never throws.
//
// Units: θ in units of y per unit of φ; P in (unit of θ)² per (unit of y)².

#include <Eigen/Core>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

namespace hyloop::core {

inline constexpr int kRlsMaxParameters = 16;

using RlsVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kRlsMaxParameters, 1>;
using RlsMatrix =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kRlsMaxParameters, kRlsMaxParameters>;

enum class RlsStatus : std::uint8_t {
  kAccepted,         ///< θ and P updated
  kNotFinite,        ///< NaN/inf in the data or the result: θ, P kept
  kCovarianceLimit,  ///< trace(P) > max_covariance_trace: θ, P kept
  kParameterJump,    ///< max|Δθ| > max_parameter_jump: θ, P kept
};
inline constexpr std::size_t kRlsStatusCount = 4;

std::string_view to_string(RlsStatus status) noexcept;

struct RlsConfig {
  int parameters = 1;                    ///< n ∈ [1, 16]
  double forgetting_factor = 1.0;        ///< λ ∈ (0, 1]
  double initial_covariance = 1.0e6;     ///< p0 > 0: P0 = p0·I when not started from a batch fit
  double max_covariance_trace = 1.0e12;  ///< > 0; +inf disables the check
  double max_parameter_jump = std::numeric_limits<double>::infinity();  ///< > 0; +inf disables
};

class RecursiveLeastSquares {
 public:
  static constexpr int kMaxParameters = kRlsMaxParameters;

  /// θ = 0, P = p0·I. @throws std::invalid_argument naming the field out of range.
  explicit RecursiveLeastSquares(const RlsConfig& config);

  /// Sets θ and P = p0·I. @throws std::invalid_argument on a size mismatch or non-finite θ.
  void reset(const RlsVector& theta);
  /// Sets θ and P. @throws std::invalid_argument on a size mismatch or a non-finite value.
  void reset(const RlsVector& theta, const RlsMatrix& covariance);

  /// Batch fit θ0 = (ΦᵀΦ)⁻¹ΦᵀD, P0 = (ΦᵀΦ)⁻¹ (rows of `regressors` are φᵀ) and starts from it.
  /// With ridge ρ > 0, ΦᵀΦ is replaced by ΦᵀΦ + ρ·(trace(ΦᵀΦ)/n)·I (a relative Tikhonov term, for
  /// over-parameterised models whose offline data cannot separate every parameter).
  /// ΦᵀΦ and ΦᵀD are summed row after row in a fixed order, so θ0 and P0 are the same bits on
  /// every CPU (Eigen's matrix product would block the sum by the detected cache sizes).
  /// Not RT-safe. @throws std::invalid_argument on sizes, fewer rows than parameters, a
  /// non-finite value, ridge < 0, or a singular ΦᵀΦ (the offline data does not excite every
  /// parameter).
  void initialise_batch(const Eigen::MatrixXd& regressors, const Eigen::VectorXd& targets,
                        double ridge = 0.0);

  /// One update with regressor φ (size n) and observation y. RT-safe: no allocation, no
  /// exception, no lock. Returns the status (also in last_status()).
  RlsStatus update(const RlsVector& phi, double y) noexcept;
  /// Same with φ given as n contiguous values.
  RlsStatus update(const double* phi, double y) noexcept;

  /// φᵀθ. RT-safe.
  [[nodiscard]] double predict(const RlsVector& phi) const noexcept { return phi.dot(theta_); }

  [[nodiscard]] const RlsVector& parameters() const noexcept { return theta_; }
  [[nodiscard]] const RlsMatrix& covariance() const noexcept { return p_; }
  [[nodiscard]] int size() const noexcept { return config_.parameters; }
  [[nodiscard]] const RlsConfig& config() const noexcept { return config_; }
  /// y − φᵀθ before the last update attempt (a priori residual).
  [[nodiscard]] double last_residual() const noexcept { return residual_; }
  [[nodiscard]] RlsStatus last_status() const noexcept { return last_status_; }
  /// Updates with each status since construction or the last reset; [kAccepted] counts accepted.
  [[nodiscard]] std::uint64_t count(RlsStatus status) const noexcept {
    return counts_[static_cast<std::size_t>(status)];
  }
  [[nodiscard]] std::uint64_t rejected() const noexcept;
  /// The most recent rejection reason (kAccepted if none happened).
  [[nodiscard]] RlsStatus last_rejection() const noexcept { return last_rejection_; }

 private:
  void clear_counters() noexcept;

  RlsConfig config_;
  RlsVector theta_;
  RlsMatrix p_;
  // Scratch, pre-sized at construction.
  RlsVector phi_;
  RlsVector p_phi_;
  RlsVector gain_;
  RlsVector theta_new_;
  RlsMatrix p_new_;
  double residual_ = 0.0;
  RlsStatus last_status_ = RlsStatus::kAccepted;
  RlsStatus last_rejection_ = RlsStatus::kAccepted;
  std::array<std::uint64_t, kRlsStatusCount> counts_{};
};

}  // namespace hyloop::core
