#include "hyloop/core/sampled_loop_stability.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "number_text.hpp"

namespace hyloop::core {
namespace {

using detail::str;

void require_loop(bool ok, const char* field, double value, const char* allowed) {
  if (!ok) {
    throw std::invalid_argument(std::string("sampled SITS loop: ") + field + " = " + str(value) +
                                "; allowed: " + allowed);
  }
}

void validate(const SampledSitsLoop& p) {
  require_loop(std::isfinite(p.step) && p.step > 0.0, "step", p.step, "finite and > 0 s");
  require_loop(p.hold_steps >= 1, "hold_steps", p.hold_steps, ">= 1");
  require_loop(std::isfinite(p.force_delay_steps) && p.force_delay_steps >= 0.0 &&
                   p.force_delay_steps <= 1.0e4,
               "force_delay_steps", p.force_delay_steps, "finite, in [0, 1e4]");
  require_loop(std::isfinite(p.m_e) && p.m_e > 0.0, "m_e", p.m_e, "finite and > 0 kg");
  require_loop(std::isfinite(p.k_tc) && p.k_tc >= 0.0, "k_tc", p.k_tc, "finite and >= 0 N/m");
  require_loop(std::isfinite(p.b_tc) && p.b_tc >= 0.0, "b_tc", p.b_tc, "finite and >= 0 N*s/m");
  require_loop(std::isfinite(p.filter_time_constant) && p.filter_time_constant >= 0.0,
               "filter_time_constant", p.filter_time_constant, "finite and >= 0 s");
  require_loop(std::isfinite(p.k_h), "k_h", p.k_h, "finite");
  require_loop(std::isfinite(p.k_x), "k_x", p.k_x, "finite");
  require_loop(std::isfinite(p.td.r) && p.td.r > 0.0, "td.r", p.td.r, "finite and > 0");
  require_loop(std::isfinite(p.td.h) && p.td.h >= p.step, "td.h", p.td.h, "finite and >= step");
  require_loop(p.td.step == p.step, "td.step", p.td.step, "equal to step");
}

// The loop's linear one-cycle map, applied to a state vector exactly as SitsRunner orders it.
class LoopStep {
 public:
  explicit LoopStep(const SampledSitsLoop& p) : p_(p) {
    validate(p);
    int next = 4;
    if (p.robot) {
      robot_.emplace(to_state_space(*p.robot), p.step);
      layout_.robot = next;
      layout_.robot_order = static_cast<int>(robot_->continuous().a.rows());
      next += layout_.robot_order;
    }
    whole_ = static_cast<int>(std::floor(p.force_delay_steps));
    fraction_ = p.force_delay_steps - whole_;
    layout_.history_length = whole_ + (fraction_ > 0.0 ? 1 : 0);
    if (layout_.history_length > 0) {
      layout_.force_history = next;
      next += layout_.history_length;
    }
    if (p.filter_time_constant > 0.0) {
      layout_.filter = next++;
      filter_gain_ = p.step / (p.filter_time_constant + p.step);
    }
    layout_.td_x1 = next++;
    layout_.td_x2 = next++;
    layout_.size = next;
  }

  [[nodiscard]] const SampledLoopLayout& layout() const { return layout_; }

  [[nodiscard]] Eigen::VectorXd apply(const Eigen::VectorXd& z, bool latch) const {
    const SampledLoopLayout& l = layout_;
    Eigen::VectorXd out = z;
    const double t = p_.step;
    const double command = z(l.command);
    double x_r = command;
    double v_r = z(l.command_velocity);
    if (robot_) {
      const StateSpace& c = robot_->continuous();
      const StateSpace& d = robot_->discrete();
      const Eigen::VectorXd r = z.segment(l.robot, l.robot_order);
      const Eigen::VectorXd r_next = Eigen::MatrixXd(d.a) * r + Eigen::VectorXd(d.b) * command;
      out.segment(l.robot, l.robot_order) = r_next;
      const Eigen::RowVectorXd cc = c.c;
      x_r = cc.dot(r_next) + c.d * command;
      v_r = (cc * Eigen::MatrixXd(c.a)).dot(r_next) + cc.dot(Eigen::VectorXd(c.b)) * command;
    }
    const double force = -p_.k_tc * x_r - p_.b_tc * v_r;
    // The delay line: age 0 is F[k], age i ≥ 1 the history.
    const auto aged = [&](int age) { return age == 0 ? force : z(l.force_history + age - 1); };
    double measured = aged(whole_);
    if (fraction_ > 0.0) {
      measured = (1.0 - fraction_) * measured + fraction_ * aged(whole_ + 1);
    }
    for (int i = l.history_length - 1; i >= 1; --i) {
      out(l.force_history + i) = z(l.force_history + i - 1);
    }
    if (l.history_length > 0) {
      out(l.force_history) = force;
    }
    if (l.filter >= 0) {
      measured = z(l.filter) + filter_gain_ * (measured - z(l.filter));
      out(l.filter) = measured;
    }
    const double h = p_.td.h;
    const double x1 = z(l.td_x1);
    const double x2 = z(l.td_x2);
    const double u = -(x1 - x_r) / (h * h) - 2.0 * x2 / h;
    out(l.td_x1) = x1 + t * x2;
    out(l.td_x2) = x2 + t * u;
    const double f_input = measured + p_.k_h * out(l.td_x2) + p_.k_x * x_r;
    out(l.v) = z(l.v) + t * f_input / p_.m_e;
    out(l.x) = z(l.x) + t * out(l.v);
    if (latch) {
      out(l.command) = out(l.x);
      out(l.command_velocity) = out(l.v);
    }
    return out;
  }

  [[nodiscard]] Eigen::MatrixXd matrix(bool latch) const {
    const int n = layout_.size;
    Eigen::MatrixXd a(n, n);
    for (int j = 0; j < n; ++j) {
      a.col(j) = apply(Eigen::VectorXd::Unit(n, j), latch);
    }
    return a;
  }

 private:
  SampledSitsLoop p_;
  SampledLoopLayout layout_;
  std::optional<LtiSystem> robot_;
  int whole_ = 0;
  double fraction_ = 0.0;
  double filter_gain_ = 1.0;
};

Eigen::MatrixXd period_matrix(const LoopStep& step, int hold_steps) {
  const Eigen::MatrixXd hold = step.matrix(false);
  Eigen::MatrixXd phi = Eigen::MatrixXd::Identity(hold.rows(), hold.cols());
  for (int i = 0; i + 1 < hold_steps; ++i) phi = hold * phi;
  return step.matrix(true) * phi;
}

double log_spectral_radius(const SampledSitsLoop& loop) {
  const LoopStep step(loop);
  const Eigen::MatrixXd phi = period_matrix(step, loop.hold_steps);
  const Eigen::VectorXcd mu = Eigen::EigenSolver<Eigen::MatrixXd>(phi, false).eigenvalues();
  double rho = 0.0;
  for (const auto& m : mu) rho = std::max(rho, std::abs(m));
  return std::log(rho);
}

}  // namespace

SampledLoopLayout sampled_loop_layout(const SampledSitsLoop& loop) {
  return LoopStep(loop).layout();
}

Eigen::MatrixXd sampled_loop_step_matrix(const SampledSitsLoop& loop, bool latch) {
  return LoopStep(loop).matrix(latch);
}

Eigen::MatrixXd sampled_loop_period_matrix(const SampledSitsLoop& loop) {
  return period_matrix(LoopStep(loop), loop.hold_steps);
}

SampledLoopAnalysis analyse_sampled_loop(const SampledSitsLoop& loop) {
  const LoopStep step(loop);
  const Eigen::MatrixXd phi = period_matrix(step, loop.hold_steps);
  const Eigen::VectorXcd mu = Eigen::EigenSolver<Eigen::MatrixXd>(phi, false).eigenvalues();
  const double period = loop.step * loop.hold_steps;
  SampledLoopAnalysis a;
  a.layout = step.layout();
  for (const auto& m : mu) {
    FloquetMode mode;
    mode.multiplier = m;
    mode.growth_rate = std::abs(m) > 0.0 ? std::log(std::abs(m)) / period
                                         : -std::numeric_limits<double>::infinity();
    mode.frequency_hz = std::abs(std::arg(m)) / (2.0 * std::numbers::pi * period);
    a.modes.push_back(mode);
  }
  std::sort(a.modes.begin(), a.modes.end(), [](const FloquetMode& x, const FloquetMode& y) {
    return std::abs(x.multiplier) > std::abs(y.multiplier);
  });
  a.spectral_radius = a.modes.empty() ? 0.0 : std::abs(a.modes.front().multiplier);
  a.growth_rate =
      a.modes.empty() ? -std::numeric_limits<double>::infinity() : a.modes.front().growth_rate;
  return a;
}

std::vector<GainInterval> sampled_stable_gain_intervals(SampledSitsLoop loop, double k_limit,
                                                        int decades, double rel_tolerance) {
  require_loop(std::isfinite(k_limit) && k_limit > 0.0, "k_limit", k_limit, "finite and > 0");
  require_loop(decades >= 1, "decades", decades, ">= 1");
  require_loop(rel_tolerance > 0.0 && rel_tolerance < 1.0, "rel_tolerance", rel_tolerance,
               "in (0, 1)");
  constexpr int kPerDecade = 40;
  std::vector<double> grid;
  for (int j = 0; j <= kPerDecade * decades; ++j) {
    grid.push_back(-k_limit * std::pow(10.0, -static_cast<double>(j) / kPerDecade));
  }
  grid.push_back(0.0);
  for (int j = kPerDecade * decades; j >= 0; --j) {
    grid.push_back(k_limit * std::pow(10.0, -static_cast<double>(j) / kPerDecade));
  }
  const auto margin = [&](double k) {  // > 0: stable
    loop.k_h = k;
    return -log_spectral_radius(loop);
  };
  std::vector<bool> stable(grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) stable[i] = margin(grid[i]) > 0.0;
  const auto boundary = [&](double a, double b) {  // stable(a) != stable(b)
    const bool sa = margin(a) > 0.0;
    while (std::abs(b - a) > rel_tolerance * std::max(1.0, std::abs(a))) {
      const double m = 0.5 * (a + b);
      if ((margin(m) > 0.0) == sa) {
        a = m;
      } else {
        b = m;
      }
    }
    return 0.5 * (a + b);
  };
  std::vector<GainInterval> intervals;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!stable[i] || (i > 0 && stable[i - 1])) continue;
    GainInterval g;
    g.lower = i == 0 ? grid[0] : boundary(grid[i - 1], grid[i]);
    std::size_t j = i;
    while (j + 1 < grid.size() && stable[j + 1]) ++j;
    g.upper = j + 1 == grid.size() ? grid[j] : boundary(grid[j], grid[j + 1]);
    intervals.push_back(g);
  }
  return intervals;
}

}  // namespace hyloop::core
