#pragma once
// Linear structure with n ≤ 8 degrees of freedom under ground acceleration (the numerical
// substructure of the RHT paper: m = 1000 kg, T = 1 s, no damping, El Centro; central difference
// at Δt = 0.01 s):
//
//   M·ü + C·u̇ + K·u = p(t),    p = −M·ι·a_g(t) + f(t)·e_dof                       (N)
//
// u relative displacements (m), a_g ground acceleration (m/s²), ι the influence vector, f an
// external force (N) on DOF `external_force_dof`: the force the experimental substructure exerts
// on the structure. For a specimen whose measured restoring (resisting) force is r, pass f = −r
// (the specimen's stiffness then acts like a part of K).
//
// Integrators (Chopra, Dynamics of Structures, §5.3–5.4):
//   central difference (explicit; equilibrium at t_i gives u_{i+1}):
//     (M/Δt² + C/2Δt)·u_{i+1} = p_i − (K − 2M/Δt²)·u_i − (M/Δt² − C/2Δt)·u_{i−1}
//     u_{−1} = u_0 − Δt·v_0 + Δt²/2·a_0;  stable only for Δt < T_min/π (T_min the shortest
//     natural period, counting `experimental_stiffness`): checked at construction.
//   Newmark average acceleration γ = 1/2, β = 1/4 (implicit, unconditionally stable;
//   equilibrium at t_{i+1}):
//     (K + 2C/Δt + 4M/Δt²)·u_{i+1} = p_{i+1} + M(4u_i/Δt² + 4v_i/Δt + a_i) + C(2u_i/Δt + v_i)
//     v_{i+1} = 2(u_{i+1} − u_i)/Δt − v_i,   a_{i+1} = 4(u_{i+1} − u_i)/Δt² − 4v_i/Δt − a_i
//
// step(a_g, f) advances from t_i to t_{i+1}; its loads are those of the instant its equilibrium
// is written, load_time(): t_i for central difference, t_{i+1} for Newmark. In an RHT loop the
// explicit method uses the force measured at the current displacement, as the paper does.

#include <Eigen/Core>
#include <string_view>

namespace hyloop::core {

inline constexpr int kMaxStructureDof = 8;

using StructureMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor,
                                      kMaxStructureDof, kMaxStructureDof>;
using StructureVector =
    Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxStructureDof, 1>;

enum class StructureIntegrator { kCentralDifference, kNewmarkAverageAcceleration };

/// "central_difference", "newmark". @throws std::invalid_argument listing the allowed names.
StructureIntegrator parse_structure_integrator(std::string_view name);
std::string_view to_string(StructureIntegrator integrator) noexcept;

struct StructureConfig {
  StructureMatrix mass;        ///< M, kg; symmetric positive definite, n × n, n ∈ [1, 8]
  StructureMatrix damping;     ///< C, N·s/m; n × n
  StructureMatrix stiffness;   ///< K, N/m; symmetric, n × n (may be 0: all in the specimen)
  StructureVector influence;   ///< ι, size n; empty: all ones
  int external_force_dof = 0;  ///< DOF of f, in [0, n)
  double step = 0.01;          ///< Δt, s
  StructureIntegrator integrator = StructureIntegrator::kCentralDifference;
  /// Stiffness the experimental substructure adds on external_force_dof (N/m), used only for
  /// the central-difference stability check.
  double experimental_stiffness = 0.0;

  /// Single DOF: mass (kg), damping (N·s/m), stiffness (N/m).
  static StructureConfig single_dof(double mass, double damping, double stiffness, double step,
                                    StructureIntegrator integrator);
};

class StructureModel {
 public:
  /// Factorises the effective stiffness. Not RT-safe.
  /// @throws std::invalid_argument naming the field (sizes, symmetry, definiteness, finiteness,
  /// step > 0, and for central difference step < T_min/π).
  explicit StructureModel(const StructureConfig& config);

  /// At rest, t = 0, zero loads. RT-safe.
  void reset() noexcept;
  /// Initial state u_0, v_0 (size n) with the loads at t = 0 (for a_0). RT-safe (no
  /// allocation); wrong sizes are ignored (state left at rest).
  void reset(const StructureVector& displacement, const StructureVector& velocity,
             double ground_acceleration = 0.0, double external_force = 0.0) noexcept;

  /// Advances one step with the loads at load_time(): a_g in m/s², f in N.
  /// RT-safe: no allocation, no exception, no lock.
  void step(double ground_acceleration, double external_force) noexcept;

  /// Time of the loads the next step() expects: time() (central difference) or time() + Δt.
  [[nodiscard]] double load_time() const noexcept;
  [[nodiscard]] double time() const noexcept { return time_; }
  /// u at time().
  [[nodiscard]] const StructureVector& displacement() const noexcept { return u_; }
  [[nodiscard]] double displacement(int dof) const noexcept { return u_(dof); }
  /// v and a at state_rate_time(): time() for Newmark; one step earlier for central difference
  /// (the method obtains them from u_{i+1}, i.e. one step late).
  [[nodiscard]] const StructureVector& velocity() const noexcept { return v_; }
  [[nodiscard]] const StructureVector& acceleration() const noexcept { return a_; }
  [[nodiscard]] double state_rate_time() const noexcept;

  [[nodiscard]] int dof() const noexcept { return n_; }
  /// Shortest natural period T_min (s) of M, K + experimental stiffness (inf if all ω = 0).
  [[nodiscard]] double shortest_period() const noexcept { return shortest_period_; }
  /// Largest stable step: T_min/π for central difference, inf for Newmark.
  [[nodiscard]] double stability_limit() const noexcept;
  [[nodiscard]] const StructureConfig& config() const noexcept { return config_; }

 private:
  void load(double ground_acceleration, double external_force) noexcept;

  StructureConfig config_;
  int n_ = 0;
  double dt_ = 0.0;
  double shortest_period_ = 0.0;
  StructureMatrix m_iota_;  // n × 1: M·ι
  StructureMatrix k_hat_inv_;
  StructureMatrix m_inv_;
  // Central difference: (K − 2M/Δt²), (M/Δt² − C/2Δt). Newmark: 4M/Δt² + 2C/Δt, 4M/Δt + C.
  StructureMatrix g1_;
  StructureMatrix g2_;
  StructureVector u_;
  StructureVector u_prev_;  // central difference: u_{i−1}
  StructureVector v_;
  StructureVector a_;
  StructureVector p_;
  StructureVector rhs_;
  StructureVector u_next_;
  double time_ = 0.0;
  long steps_ = 0;
};

}  // namespace hyloop::core
