#include "hyloop/core/rths_benchmark.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hyloop::core::rths {
namespace {

[[noreturn]] void fail(const std::string& field, double value, const std::string& allowed) {
  std::ostringstream m;
  m.precision(17);
  m << field << " = " << value << ": " << allowed;
  throw std::invalid_argument(m.str());
}

void require_step(double step) {
  if (!std::isfinite(step) || step <= 0.0) fail("step", step, "must be finite and > 0");
}

double mean(std::span<const double> x) {
  double s = 0.0;
  for (const double v : x) s += v;
  return s / static_cast<double>(x.size());
}

/// Sample standard deviation (N − 1) of a − b.
double std_of_difference(std::span<const double> a, std::span<const double> b) {
  double ma = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i] - b[i];
  ma /= static_cast<double>(a.size());
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - b[i] - ma;
    s += d * d;
  }
  return std::sqrt(s / static_cast<double>(a.size() - 1));
}

double std_of(std::span<const double> a) {
  const double m = mean(a);
  double s = 0.0;
  for (const double v : a) s += (v - m) * (v - m);
  return std::sqrt(s / static_cast<double>(a.size() - 1));
}

double peak_of_difference(std::span<const double> a, std::span<const double> b) {
  double p = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) p = std::max(p, std::abs(a[i] - b[i]));
  return p;
}

double peak_of(std::span<const double> a) {
  double p = 0.0;
  for (const double v : a) p = std::max(p, std::abs(v));
  return p;
}

double pearson(std::span<const double> a, std::span<const double> b) {
  const double ma = mean(a);
  const double mb = mean(b);
  double sab = 0.0, saa = 0.0, sbb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// The reference's stiffness (Case_k.mat, identical for the four cases), N/m.
constexpr double kK[3][3] = {{26054883.879603837, -23133938.877108198, 5937035.463339146},
                             {-23133938.877108198, 32560774.186380334, -14419970.777236981},
                             {5937035.463339146, -14419970.777236985, 9267275.506224312}};
// The stored damping of each case (the package's modal damping with ω rounded to 0.01 rad/s).
constexpr double kC[4][3][3] = {{{14084.2757452999, -7873.0314609132, 440.4514988426},
                                 {-7873.0314609132, 14943.6229378957, -6348.6720963053},
                                 {440.4514988426, -6348.6720963053, 7223.1013168045}},
                                {{11817.4226204191, -6606.2154233087, 369.6755622297},
                                 {-6606.2154233087, 12538.5775697309, -5327.0473737919},
                                 {369.6755622297, -5327.0473737919, 6060.3198098501}},
                                {{9635.0143633619, -5386.0257741965, 301.4386401441},
                                 {-5386.0257741965, 10223.0068117688, -4343.0847021168},
                                 {301.4386401441, -4343.0847021168, 4941.2988248693}},
                                {{8450.5654471799, -4723.8188765479, 264.2708993056},
                                 {-4723.8188765479, 8966.1737627374, -3809.2032577832},
                                 {264.2708993056, -3809.2032577832, 4333.8607900827}}};
constexpr double kFloorMass[4] = {1000.0, 1100.0, 1300.0, 1000.0};  // kg

}  // namespace

double PlantParameters::c_e() const noexcept { return 2.0 * zeta_e * std::sqrt(k_e * m_e); }

void validate(const PlantParameters& p) {
  const std::pair<const char*, double> all[] = {
      {"gain", p.gain}, {"a1_beta0", p.a1_beta0}, {"a2", p.a2},
      {"a3", p.a3},     {"beta1", p.beta1},       {"beta2", p.beta2},
      {"m_e", p.m_e},   {"k_e", p.k_e},           {"zeta_e", p.zeta_e}};
  for (const auto& [name, value] : all) {
    if (!std::isfinite(value)) fail(name, value, "must be finite");
  }
  const std::pair<const char*, double> positive[] = {
      {"m_e", p.m_e}, {"k_e", p.k_e}, {"a1_beta0", p.a1_beta0}, {"beta2", p.beta2}};
  for (const auto& [name, value] : positive) {
    if (value <= 0.0) fail(name, value, "must be > 0");
  }
  if (p.zeta_e < 0.0) fail("zeta_e", p.zeta_e, "must be >= 0");
}

PlantParameters perturbed(const PlantParameters& nominal, const PlantUncertainty& sigma,
                          std::mt19937_64& random) {
  std::normal_distribution<double> normal(0.0, 1.0);
  PlantParameters p = nominal;
  p.k_e += sigma.k_e * normal(random);
  p.beta1 += sigma.beta1 * normal(random);
  p.beta2 += sigma.beta2 * normal(random);
  p.a3 += sigma.a3 * normal(random);
  return p;
}

TransferFunction plant_transfer_function(const PlantParameters& p) {
  validate(p);
  const double c = p.c_e();
  // (s + a3)(m s² + c s + k) + a2 s
  const double actuator[4] = {p.m_e, c + p.m_e * p.a3, p.k_e + c * p.a3 + p.a2, p.k_e * p.a3};
  const double valve[3] = {1.0, p.beta1, p.beta2};
  std::vector<double> den(6, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) den[static_cast<std::size_t>(i + j)] += valve[i] * actuator[j];
  }
  den[5] += p.a1_beta0;
  return {{p.gain * p.a1_beta0}, den};
}

ServoHydraulicPlant::ServoHydraulicPlant(const PlantParameters& p, double step)
    : p_(p), c_e_(p.c_e()), step_(step) {
  validate(p);
  require_step(step);
}

void ServoHydraulicPlant::reset() noexcept { state_.setZero(); }

ServoHydraulicPlant::State ServoHydraulicPlant::derivative(const State& s,
                                                           double command) const noexcept {
  State d;
  d[0] = s[1];
  d[1] = -p_.beta1 * s[1] - p_.beta2 * s[0] + p_.a1_beta0 * (p_.gain * command - s[3]);
  d[2] = -p_.a3 * s[2] + s[0] - p_.a2 * s[4];
  d[3] = s[4];
  d[4] = (s[2] - c_e_ * s[4] - p_.k_e * s[3]) / p_.m_e;
  return d;
}

void ServoHydraulicPlant::step(double command) noexcept {
  const double h = step_;
  const State k1 = derivative(state_, command);
  const State k2 = derivative(state_ + 0.5 * h * k1, command);
  const State k3 = derivative(state_ + 0.5 * h * k2, command);
  const State k4 = derivative(state_ + h * k3, command);
  state_ += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
}

BuildingCase building_case(int number) {
  if (number < 1 || number > kCases) {
    fail("case", number, "must be one of 1, 2, 3, 4");
  }
  const auto i = static_cast<std::size_t>(number - 1);
  BuildingCase b;
  b.number = number;
  b.m = Eigen::Matrix3d::Identity() * kFloorMass[i];
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      b.k(r, c) = kK[r][c];
      b.c(r, c) = kC[i][r][c];
    }
  }
  return b;
}

FrameModel::FrameModel(const Eigen::Matrix3d& m, const Eigen::Matrix3d& c, const Eigen::Matrix3d& k,
                       const Eigen::Vector3d& ground_mass, double step)
    : step_(step) {
  require_step(step);
  if (!m.allFinite() || !c.allFinite() || !k.allFinite() || !ground_mass.allFinite()) {
    throw std::invalid_argument("frame model: M, C, K and the ground masses must be finite");
  }
  const Eigen::FullPivLU<Eigen::Matrix3d> lu(m);
  if (!lu.isInvertible()) throw std::invalid_argument("frame model: M must be invertible");
  const Eigen::Matrix3d inv = lu.inverse();
  m_inv_k_ = inv * k;
  m_inv_c_ = inv * c;
  m_inv_g_ = inv * ground_mass;
  m_inv_e1_ = inv.col(0);
}

FrameModel FrameModel::reference(const BuildingCase& building, double step) {
  return {building.m, building.c, building.k, building.m * Eigen::Vector3d::Ones(), step};
}

FrameModel FrameModel::numerical(const BuildingCase& building, const PlantParameters& p,
                                 double step) {
  validate(p);
  Eigen::Matrix3d m = building.m, c = building.c, k = building.k;
  m(0, 0) -= p.m_e;
  c(0, 0) -= p.c_e();
  k(0, 0) -= p.k_e;
  return {m, c, k, building.m * Eigen::Vector3d::Ones(), step};
}

void FrameModel::reset() noexcept {
  y_.setZero();
  v_.setZero();
}

void FrameModel::step(double ag_start, double ag_mid, double ag_end, double f) noexcept {
  const double h = step_;
  const auto acc = [&](const Eigen::Vector3d& y, const Eigen::Vector3d& v, double ag) {
    return Eigen::Vector3d(-m_inv_k_ * y - m_inv_c_ * v - m_inv_g_ * ag - m_inv_e1_ * f);
  };
  const Eigen::Vector3d y1 = y_, v1 = v_, a1 = acc(y1, v1, ag_start);
  const Eigen::Vector3d y2 = y_ + 0.5 * h * v1, v2 = v_ + 0.5 * h * a1;
  const Eigen::Vector3d a2 = acc(y2, v2, ag_mid);
  const Eigen::Vector3d y3 = y_ + 0.5 * h * v2, v3 = v_ + 0.5 * h * a2;
  const Eigen::Vector3d a3 = acc(y3, v3, ag_mid);
  const Eigen::Vector3d y4 = y_ + h * v3, v4 = v_ + h * a3;
  const Eigen::Vector3d a4 = acc(y4, v4, ag_end);
  y_ += h / 6.0 * (v1 + 2.0 * v2 + 2.0 * v3 + v4);
  v_ += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
}

Criteria evaluate(std::span<const double> x_m, std::span<const double> y1,
                  std::span<const double> y2, std::span<const double> y3,
                  std::span<const double> r1, std::span<const double> r2,
                  std::span<const double> r3, double step) {
  require_step(step);
  const std::size_t n = x_m.size();
  for (const auto s : {y1, y2, y3, r1, r2, r3}) {
    if (s.size() != n) {
      fail("record length", static_cast<double>(s.size()),
           "must equal the measured displacement's " + std::to_string(n));
    }
  }
  if (n < static_cast<std::size_t>(kMaxDelayLag) + 2) {
    fail("record length", static_cast<double>(n),
         "must be >= " + std::to_string(kMaxDelayLag + 2) + " samples");
  }
  Criteria j{};
  double best = -2.0;
  std::size_t lag = 0;
  for (std::size_t l = 0; l < static_cast<std::size_t>(kMaxDelayLag); ++l) {
    const double r = pearson(x_m.subspan(l), y1.first(n - l));
    if (r > best) {
      best = r;
      lag = l;
    }
  }
  j[0] = 1000.0 * static_cast<double>(lag) * step;
  j[1] = 100.0 * std_of_difference(x_m, y1) / std_of(y1);
  j[2] = 100.0 * peak_of_difference(x_m, y1) / peak_of(y1);
  j[3] = 100.0 * std_of_difference(x_m, r1) / std_of(r1);
  j[4] = 100.0 * peak_of_difference(x_m, r1) / peak_of(r1);
  j[5] = 100.0 * std_of_difference(y2, r2) / std_of(r2);
  j[6] = 100.0 * std_of_difference(y3, r3) / std_of(r3);
  j[7] = 100.0 * peak_of_difference(y2, r2) / peak_of(r2);
  j[8] = 100.0 * peak_of_difference(y3, r3) / peak_of(r3);
  return j;
}

FirstOrderSection FirstOrderSection::tustin(double n1, double n0, double d1, double d0,
                                            double step) {
  require_step(step);
  for (const double v : {n1, n0, d1, d0}) {
    if (!std::isfinite(v)) fail("first-order section coefficient", v, "must be finite");
  }
  const double w = 2.0 / step;
  const double den0 = d1 * w + d0;
  if (den0 == 0.0) fail("d1*2/T + d0", den0, "must be non-zero");
  return {(n1 * w + n0) / den0, (n0 - n1 * w) / den0, (d0 - d1 * w) / den0};
}

double FirstOrderSection::step(double u) noexcept {
  const double y = b0_ * u + b1_ * u_ - a1_ * y_;
  u_ = u;
  y_ = y;
  return y;
}

double Converter::operator()(double v) const noexcept {
  return std::clamp(resolution * std::round(v / resolution), -limit, limit);
}

SampleController::SampleController(const SampleControllerGains& g, const Converter& c, double step)
    : lead_(FirstOrderSection::tustin(g.lead_n1, g.lead_n0, g.lead_d1, g.lead_d0, step)),
      pi_(FirstOrderSection::tustin(g.kp, g.ki, 1.0, 0.0, step)),
      converter_(c) {
  if (!std::isfinite(c.resolution) || c.resolution <= 0.0) {
    fail("converter.resolution", c.resolution, "must be finite and > 0");
  }
  if (!std::isfinite(c.limit) || c.limit <= 0.0) {
    fail("converter.limit", c.limit, "must be finite and > 0");
  }
}

double SampleController::step(double desired, double measured) noexcept {
  const double lead = converter_(lead_.step(converter_(desired)));
  return converter_(pi_.step(converter_(lead - measured)));
}

void SampleController::reset() noexcept {
  lead_.reset();
  pi_.reset();
}

}  // namespace hyloop::core::rths
