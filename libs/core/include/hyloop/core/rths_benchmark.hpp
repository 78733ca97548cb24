#pragma once
// The virtual RTHS benchmark (Silva, Gomez, Maghareh, Dyke, Spencer, "Benchmark control problem
// for real-time hybrid simulation", MSSP 2020; MATLAB/Simulink package MECHS-RCN/BENCHMARKS
// "RTHS code RT V23", files F1_input_file.m, F4_evaluation.m, Building cases/Case_k.mat):
// a 3-storey frame whose first storey is the physical specimen, loaded through a servo-hydraulic
// actuator with control–structure interaction (CSI), at 4096 Hz.
//
// Control plant (5 states; u the command in m, x the specimen displacement in m):
//   Q'' = −β1·Q' − β2·Q + a1β0·(gain·u − x)          servo-valve with its inner loop
//   F'  = −a3·F + Q − a2·ẋ                            actuator, CSI feedback a2·s·x
//   m_e·ẍ = F − c_e·ẋ − k_e·x                        specimen, c_e = 2·ζ_e·√(k_e·m_e)
//   x/u = gain·a1β0 / [(s² + β1·s + β2)·((s + a3)·(m_e·s² + c_e·s + k_e) + a2·s) + a1β0]
// (the package differentiates a2·x with a Simulink Derivative block; here ẋ is the state.)
//
// Structure (relative displacements y of floors 1–3, ground acceleration a_g in m/s²):
//   reference    M·ÿ + C·ẏ + K·y = −M·ι·a_g
//   numerical    M_N·ÿ + C_N·ẏ + K_N·y = −M·ι·a_g − e1·f_e
//                M_N = M − m_e·e1e1ᵀ, C_N = C − c_e·e1e1ᵀ, K_N = K − k_e·e1e1ᵀ (with the
//                specimen's, possibly perturbed, k_e and c_e), f_e the measured specimen force (N)
//   Both advance by classical RK4 over the step with a_g linear between samples (evaluated at
//   t, t + T/2, t + T) and f_e held, as the package's ode4 at 1/4096 s.
//
// Evaluation criteria (F4_evaluation.m, in its order; x_m measured displacement, y_i numerical
// floor i, r_i reference floor i; std with the mean removed, N − 1; max over the whole record):
//   J1 = T·argmax_{l∈[0,49]} corr(x_m[l:], y_1[:N−l]) in ms (Pearson; x_m lags y_1 by l steps)
//   J2 = std(x_m − y_1)/std(y_1)     J3 = max|x_m − y_1|/max|y_1|
//   J4 = std(x_m − r_1)/std(r_1)     J5 = max|x_m − r_1|/max|r_1|
//   J6 = std(y_2 − r_2)/std(r_2)     J7 = std(y_3 − r_3)/std(r_3)
//   J8 = max|y_2 − r_2|/max|r_2|     J9 = max|y_3 − r_3|/max|r_3|          (J2–J9 in %)
//
// Sample controller (F2_controller.m, Controller_2018_6_11_15_20_29.mat): a phase lead on the
// desired displacement G_T = (50.8316·s + 8570.397)/(s + 8570.397) feeding a PI on the tracking
// error, G_C = 2 + 95/s, both by Tustin at T; each input and output through an 18-bit converter
// (quantiser q = 2⁻¹⁸ m then saturation ±3.8: the package's sensor gains are 1, so the
// converters act on metres).
//
// Units SI throughout. Constructors and free functions validate and may throw
// std::invalid_argument naming the parameter; step() and the controllers' step() are real-time
// safe (no allocation, no exception).

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <random>
#include <span>

#include "hyloop/core/lti.hpp"

namespace hyloop::core::rths {

inline constexpr double kBenchmarkRate = 4096.0;                ///< Hz
inline constexpr double kBenchmarkStep = 1.0 / kBenchmarkRate;  ///< s
inline constexpr int kCases = 4;
inline constexpr int kMaxDelayLag = 50;  ///< J1 searches lags 0 … 49 steps

/// The control plant's parameters (F1_input_file.m nominal values).
struct PlantParameters {
  double gain = 1.0261;  ///< command gain (in the code, not in the paper)
  double a1_beta0 = 2.1283e13;
  double a2 = 4.2297e6;
  double a3 = 3.3;          ///< 1/s
  double beta1 = 425.0;     ///< 1/s
  double beta2 = 9.9976e4;  ///< 1/s²
  double m_e = 29.13;       ///< kg
  double k_e = 1.19e6;      ///< N/m
  double zeta_e = 0.0097;
  /// c_e = 2·ζ_e·√(k_e·m_e), N·s/m.
  [[nodiscard]] double c_e() const noexcept;
};

/// @throws std::invalid_argument naming the first parameter that is not finite, or m_e, k_e,
/// a1_beta0, beta2 ≤ 0, or zeta_e < 0.
void validate(const PlantParameters& p);

/// The benchmark's uncertainty (standard deviations; F1_input_file.m, paper Table 2).
struct PlantUncertainty {
  double k_e = 50e3;   ///< N/m
  double beta1 = 3.3;  ///< 1/s
  double beta2 = 3.3e3;
  double a3 = 1.3;  ///< 1/s
};

/// A perturbed plant: k_e, β1, β2, a3 each + σ·N(0, 1), drawn in that order from `random`
/// (the package's order); the other parameters are the nominal ones. Untruncated as in the
/// package (a3 < 0 has a probability of about 0.55 %).
PlantParameters perturbed(const PlantParameters& nominal, const PlantUncertainty& sigma,
                          std::mt19937_64& random);

/// x/u as a transfer function (descending powers of s).
TransferFunction plant_transfer_function(const PlantParameters& p);

/// The control plant advanced by RK4 over steps of a held command.
class ServoHydraulicPlant {
 public:
  /// @throws std::invalid_argument (validate(), step not finite and > 0).
  explicit ServoHydraulicPlant(const PlantParameters& p, double step = kBenchmarkStep);
  /// All states to zero.
  void reset() noexcept;
  /// Holds `command` (m) over one step. RT-safe.
  void step(double command) noexcept;
  [[nodiscard]] double displacement() const noexcept { return state_[3]; }    ///< x, m
  [[nodiscard]] double velocity() const noexcept { return state_[4]; }        ///< ẋ, m/s
  [[nodiscard]] double actuator_force() const noexcept { return state_[2]; }  ///< F, N
  [[nodiscard]] const PlantParameters& parameters() const noexcept { return p_; }

 private:
  using State = Eigen::Matrix<double, 5, 1>;  // Q, Q', F, x, ẋ
  [[nodiscard]] State derivative(const State& s, double command) const noexcept;
  PlantParameters p_;
  double c_e_;
  double step_;
  State state_ = State::Zero();
};

/// One of the four partitioning cases (paper Table 1; Case_k.mat): M, C, K of the reference.
struct BuildingCase {
  int number = 1;
  Eigen::Matrix3d m = Eigen::Matrix3d::Zero();  ///< kg
  Eigen::Matrix3d c = Eigen::Matrix3d::Zero();  ///< N·s/m (the package's stored values)
  Eigen::Matrix3d k = Eigen::Matrix3d::Zero();  ///< N/m
};

/// Case 1–4. @throws std::invalid_argument for another number.
BuildingCase building_case(int number);

/// A 3-DOF linear frame M·ÿ + C·ẏ + K·y = −g·a_g − e1·f advanced by RK4 (g = M_ref·ι, the
/// ground-motion masses). The reference: M, C, K and f = 0; the numerical substructure: M_N,
/// C_N, K_N and f = f_e.
class FrameModel {
 public:
  /// @throws std::invalid_argument if M is singular or an entry is not finite, or step ≤ 0.
  FrameModel(const Eigen::Matrix3d& m, const Eigen::Matrix3d& c, const Eigen::Matrix3d& k,
             const Eigen::Vector3d& ground_mass, double step = kBenchmarkStep);
  /// The reference structure of a case.
  static FrameModel reference(const BuildingCase& building, double step = kBenchmarkStep);
  /// The numerical substructure of a case with the specimen `p` (m_e, c_e(), k_e) removed.
  static FrameModel numerical(const BuildingCase& building, const PlantParameters& p,
                              double step = kBenchmarkStep);
  void reset() noexcept;
  /// One step from t to t + T: ground acceleration at t, t + T/2, t + T (m/s²), interface
  /// force f held (N). RT-safe.
  void step(double ag_start, double ag_mid, double ag_end, double f) noexcept;
  [[nodiscard]] const Eigen::Vector3d& displacement() const noexcept { return y_; }
  [[nodiscard]] const Eigen::Vector3d& velocity() const noexcept { return v_; }

 private:
  Eigen::Matrix3d m_inv_k_, m_inv_c_;
  Eigen::Vector3d m_inv_g_, m_inv_e1_;
  double step_;
  Eigen::Vector3d y_ = Eigen::Vector3d::Zero(), v_ = Eigen::Vector3d::Zero();
};

/// J1 (ms) and J2–J9 (%), index 0 ↔ J1.
using Criteria = std::array<double, 9>;

/// The criteria from the whole records (all the same length N ≥ kMaxDelayLag + 2).
/// @throws std::invalid_argument if the lengths differ or are too short. Not RT-safe.
Criteria evaluate(std::span<const double> x_m, std::span<const double> y1,
                  std::span<const double> y2, std::span<const double> y3,
                  std::span<const double> r1, std::span<const double> r2,
                  std::span<const double> r3, double step = kBenchmarkStep);

/// A first-order discrete section y[k] = b0·u[k] + b1·u[k−1] − a1·y[k−1].
class FirstOrderSection {
 public:
  FirstOrderSection() = default;
  FirstOrderSection(double b0, double b1, double a1) : b0_(b0), b1_(b1), a1_(a1) {}
  /// Tustin (no prewarping) of (n1·s + n0)/(d1·s + d0) at step T.
  /// @throws std::invalid_argument if d1·2/T + d0 == 0 or an argument is not finite.
  static FirstOrderSection tustin(double n1, double n0, double d1, double d0, double step);
  double step(double u) noexcept;
  void reset() noexcept { u_ = y_ = 0.0; }
  [[nodiscard]] double b0() const noexcept { return b0_; }
  [[nodiscard]] double b1() const noexcept { return b1_; }
  [[nodiscard]] double a1() const noexcept { return a1_; }

 private:
  double b0_ = 1.0, b1_ = 0.0, a1_ = 0.0;
  double u_ = 0.0, y_ = 0.0;
};

/// The benchmark's converter: q·round(v/q), then saturation to ±limit.
struct Converter {
  double resolution = 1.0 / 262144.0;  ///< 2⁻¹⁸
  double limit = 3.8;
  [[nodiscard]] double operator()(double v) const noexcept;
};

/// The sample controller's gains (paper Eqs. 23–24).
struct SampleControllerGains {
  double kp = 2.0;
  double ki = 95.0;                                                 ///< 1/s
  double lead_n1 = 50.83163360273612, lead_n0 = 8570.397339444286;  ///< G_T numerator
  double lead_d1 = 1.0, lead_d0 = 8570.397339444286;                ///< G_T denominator
};

/// y_gc = D/A(PI(A/D(D/A(G_T(A/D(y_1))) − x_m))) (controller_model.slx's order).
class SampleController {
 public:
  /// @throws std::invalid_argument (a gain not finite, FirstOrderSection::tustin).
  explicit SampleController(const SampleControllerGains& g = {}, const Converter& c = {},
                            double step = kBenchmarkStep);
  /// The command of this step from the desired y_1 and the measured x_m (m). RT-safe.
  double step(double desired, double measured) noexcept;
  void reset() noexcept;

 private:
  FirstOrderSection lead_, pi_;
  Converter converter_;
};

}  // namespace hyloop::core::rths
