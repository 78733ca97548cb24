#include "hyloop/kinds/sits/sits_jobs.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <numbers>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

#include "hyloop/core/arx.hpp"
#include "hyloop/core/compensator.hpp"
#include "hyloop/core/sampled_loop_stability.hpp"
#include "hyloop/core/stability.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/hal/sits_rig_emulator.hpp"
#include "hyloop/kinds/sits/sits_runner.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json complex_list(const std::vector<std::complex<double>>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back({v.real(), v.imag()});
  return out;
}

json bode_json(const std::vector<core::BodePoint>& points) {
  json out = json::array();
  for (const auto& p : points) {
    out.push_back({{"frequency_hz", p.frequency_hz},
                   {"magnitude", p.magnitude},
                   {"magnitude_db", p.magnitude_db},
                   {"phase_deg", p.phase_deg}});
  }
  return out;
}

json zpk_json(const core::ZeroPoleGain& zpk) {
  return {
      {"zeros", complex_list(zpk.zeros)}, {"poles", complex_list(zpk.poles)}, {"gain", zpk.gain}};
}

core::ArxOrders orders_of(const SitsScenario& s) {
  return {s.identification.na, s.identification.nb, s.identification.nk};
}

core::ArxModel fit_model(const SitsScenario& s, const SweepData& data) {
  return core::fit(s.identification.method, data.command, data.position, orders_of(s));
}

// n_k = 0 means y[k] responds to u[k]: the end-of-step convention of DESIGN §6 (advance 1).
int advance_of(const SitsScenario& s) { return s.identification.nk == 0 ? 1 : 0; }

// The fit report shared by the sweep and the recorded-data paths.
json fit_report(const SitsScenario& s, const SweepData& data, const std::string& source) {
  const core::ArxModel model = fit_model(s, data);
  const double step = s.timing.step;
  const int advance = advance_of(s);
  const auto& freqs = s.identification.report_frequencies_hz;
  json j;
  j["source"] = source;
  j["samples"] = data.command.size();
  j["step_s"] = step;
  j["method"] = core::to_string(model.method);
  if (model.method != core::FitMethod::kArx) {
    j["iterations"] = model.iterations;
    j["converged"] = model.converged;
  }
  j["orders"] = {{"na", model.orders.n_a}, {"nb", model.orders.n_b}, {"nk", model.orders.n_k}};
  j["a"] = model.a;
  j["b"] = model.b;
  j["standard_deviations"] = model.standard_deviations();
  json cov = json::array();
  for (Eigen::Index r = 0; r < model.covariance.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < model.covariance.cols(); ++c)
      row.push_back(model.covariance(r, c));
    cov.push_back(row);
  }
  j["covariance"] = cov;
  j["discrete_model"] = {{"num", model.transfer_function.num},
                         {"den", model.transfer_function.den}};
  j["residual_rms_m"] = model.residual_rms;
  j["nrmse_prediction_percent"] = model.fit_prediction_percent;
  j["nrmse_simulation_percent"] = model.fit_simulation_percent;
  j["condition_number"] = model.condition_number;
  const bool good = model.fit_prediction_percent > 95.0;
  j["fit_ok"] = good;
  std::ostringstream note;
  note.precision(4);
  note << core::to_string(model.method) << " fit " << model.fit_prediction_percent
       << "% NRMSE (one-step prediction), " << model.fit_simulation_percent << "% (simulation); "
       << (good ? "above" : "BELOW") << " the 95% acceptance threshold";
  if (s.rig.position_noise_std > 0.0) {
    note << " with position noise sigma = " << s.rig.position_noise_std << " m";
  }
  if (model.method != core::FitMethod::kArx && !model.converged) {
    note << "; NOT converged in " << model.iterations << " iterations";
  }
  j["fit_note"] = note.str();
  // The discrete model's own response exists whenever a fit does.
  j["discrete_frequency_response"] = bode_json(core::discrete_bode(model, step, advance, freqs));
  try {
    const core::ZeroPoleGain identified = core::identified_continuous_model(model, step, advance);
    j["continuous_model"] = zpk_json(identified);
    j["continuous_model"]["zeros_count"] = identified.zeros.size();
    j["continuous_model"]["poles_count"] = identified.poles.size();
    j["frequency_response"] = bode_json(core::bode(identified, freqs));
    j["frequency_response_source"] = "continuous_model";
  } catch (const std::invalid_argument& e) {
    // A discrete pole on the negative real axis (e.g. an ARX fit biased by noise) has no
    // continuous zero-order-hold preimage: say why, and give the discrete model's response.
    j["continuous_model"] = nullptr;
    j["continuous_model_error"] = e.what();
    j["frequency_response"] = j["discrete_frequency_response"];
    j["frequency_response_source"] =
        "discrete_model (no continuous model; includes the hold's lag of about half a step)";
  }
  return j;
}

}  // namespace

SitsScenario identification_run_scenario(const std::string& yaml, const std::string& origin,
                                         std::vector<std::string> overrides) {
  const SitsScenario base = parse_scenario(yaml, origin, overrides);
  const double duration = base.timing.step * static_cast<double>(base.identification.samples);
  overrides.push_back("delays.control_cycle=false");
  overrides.push_back("timing.duration_s=" + format_number(duration));
  overrides.push_back("metrics.window_s=" + format_number(duration));
  return parse_scenario(yaml, origin, overrides);
}

SweepCommand sweep_command(const SitsScenario& s, std::uint64_t k) noexcept {
  const auto& id = s.identification;
  const double t = static_cast<double>(k) * s.timing.step;
  if (id.signal == "chirp") {
    constexpr double kTwoPi = 2.0 * std::numbers::pi;
    const double t_n = static_cast<double>(std::max(id.samples - 1, 1)) * s.timing.step;
    const double rate = (id.chirp_end_hz - id.chirp_start_hz) / t_n;  // Hz/s
    const double phase = kTwoPi * (id.chirp_start_hz * t + 0.5 * rate * t * t);
    const double frequency = id.chirp_start_hz + rate * t;  // Hz
    return {id.amplitude * std::sin(phase), id.amplitude * kTwoPi * frequency * std::cos(phase)};
  }
  return {id.amplitude * std::sin(id.omega * t), id.amplitude * id.omega * std::cos(id.omega * t)};
}

SweepData run_sweep(const SitsScenario& s) {
  hal::SitsRigConfig rig;
  rig.step = s.timing.step;
  rig.robot = s.rig.robot.transfer_function();
  rig.contact = s.rig.contact;
  rig.sensor_delay_steps = 0.0;
  rig.position_noise_std = s.rig.position_noise_std;
  rig.seed = s.rig.seed;
  rig.limits = s.rig.limits;
  hal::SitsRigEmulator emulator(rig);
  const auto n = static_cast<std::size_t>(s.identification.samples);
  SweepData data;
  data.command.resize(n);
  data.position.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const SweepCommand c = sweep_command(s, k);
    if (emulator.apply({c.position, c.velocity}) != hal::DriverStatus::kOk) {
      throw std::runtime_error("identification sweep: command " + format_number(c.position) +
                               " m, " + format_number(c.velocity) +
                               " m/s rejected by rig.limits (reduce identification.amplitude_m)");
    }
    emulator.advance();
    data.command[k] = c.position;
    data.position[k] = emulator.robot_state().position;
  }
  return data;
}

json identify_robot(const SitsScenario& s) { return identify_from_sweep(s, run_sweep(s)); }

json identify_from_sweep(const SitsScenario& s, const SweepData& data) {
  json j = fit_report(s, data, s.identification.signal + " sweep through the rig emulator");
  j["sweep"] = {{"signal", s.identification.signal},
                {"amplitude_m", s.identification.amplitude},
                {"omega_rad_s", s.identification.omega},
                {"chirp_start_hz", s.identification.chirp_start_hz},
                {"chirp_end_hz", s.identification.chirp_end_hz},
                {"position_noise_std_m", s.rig.position_noise_std},
                {"seed", s.rig.seed}};
  // The emulator's truth, for comparison: its sampled model and continuous response.
  const core::TransferFunction truth_tf = s.rig.robot.transfer_function();
  const core::LtiSystem truth(core::to_state_space(truth_tf), s.timing.step);
  const core::TransferFunction sampled = truth.sampled_transfer_function();
  json truth_j;
  truth_j["continuous_model"] = zpk_json(core::to_zero_pole_gain(truth_tf));
  truth_j["discrete_model"] = {{"num", sampled.num}, {"den", sampled.den}};
  truth_j["frequency_response"] =
      bode_json(core::bode(truth_tf, s.identification.report_frequencies_hz));
  const auto& num = j["discrete_model"]["num"];
  const auto& den = j["discrete_model"]["den"];
  if (num.size() == sampled.num.size() && den.size() == sampled.den.size()) {
    double worst = 0.0;
    for (std::size_t i = 0; i < sampled.num.size(); ++i) {
      worst = std::max(worst, std::abs(num[i].get<double>() - sampled.num[i]) /
                                  std::max(std::abs(sampled.num[i]), 1e-300));
    }
    for (std::size_t i = 1; i < sampled.den.size(); ++i) {
      worst = std::max(worst, std::abs(den[i].get<double>() - sampled.den[i]) /
                                  std::max(std::abs(sampled.den[i]), 1e-300));
    }
    truth_j["max_relative_coefficient_error"] = worst;
  }
  json phase_errors = json::array();
  for (std::size_t i = 0; j["frequency_response"].is_array() && i < j["frequency_response"].size();
       ++i) {
    phase_errors.push_back(j["frequency_response"][i]["phase_deg"].get<double>() -
                           truth_j["frequency_response"][i]["phase_deg"].get<double>());
  }
  truth_j["phase_error_deg"] = phase_errors;
  if (data.command.size() == static_cast<std::size_t>(s.identification.samples)) {
    // The identified discrete model simulated from rest against the noise-free sweep.
    SitsScenario clean = s;
    clean.rig.position_noise_std = 0.0;
    const SweepData truth_data = run_sweep(clean);
    const auto fit_num = j["discrete_model"]["num"].get<std::vector<double>>();
    const auto fit_den = j["discrete_model"]["den"].get<std::vector<double>>();
    std::vector<double> sim(truth_data.position.size(), 0.0);
    double error = 0.0, spread = 0.0, mean = 0.0;
    for (double y : truth_data.position) mean += y;
    mean /= static_cast<double>(std::max<std::size_t>(truth_data.position.size(), 1));
    for (std::size_t k = 0; k < sim.size(); ++k) {
      double acc = 0.0;
      for (std::size_t i = 0; i < fit_num.size() && i <= k; ++i)
        acc += fit_num[i] * data.command[k - i];
      for (std::size_t i = 1; i < fit_den.size() && i <= k; ++i) acc -= fit_den[i] * sim[k - i];
      sim[k] = acc;
      error += (truth_data.position[k] - acc) * (truth_data.position[k] - acc);
      spread += (truth_data.position[k] - mean) * (truth_data.position[k] - mean);
    }
    const double fit = 100.0 * (1.0 - std::sqrt(error / spread));
    truth_j["nrmse_simulation_vs_noise_free_percent"] = fields::json_number(fit);
  }
  j["emulator_truth"] = truth_j;
  return j;
}

json identify_from_run(const SitsScenario& s, const fs::path& run_dir) {
  const fs::path file = run_dir / "samples.csv";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot open");
  std::string header;
  std::getline(in, header);
  std::vector<std::string> names;
  {
    std::stringstream ss(header);
    for (std::string name; std::getline(ss, name, ',');) names.push_back(name);
  }
  const auto find = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) throw std::runtime_error(file.string() + ": no column " + name);
    return static_cast<std::size_t>(it - names.begin());
  };
  const std::size_t cu = find("x_cmd[m]");
  const std::size_t cy = find("x_robot[m]");
  SweepData data;
  std::string line;
  std::size_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<double> values;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) {
      try {
        values.push_back(std::stod(cell));
      } catch (const std::exception&) {
        throw std::runtime_error(file.string() + ":" + std::to_string(line_no) + ": \"" + cell +
                                 "\" is not a number");
      }
    }
    if (values.size() != names.size()) {
      throw std::runtime_error(file.string() + ":" + std::to_string(line_no) + ": " +
                               std::to_string(values.size()) + " columns, header has " +
                               std::to_string(names.size()));
    }
    data.command.push_back(values[cu]);
    data.position.push_back(values[cy]);
  }
  return fit_report(s, data, "recorded run " + run_dir.string() + " (x_cmd -> x_robot)");
}

core::ZeroPoleGain identified_robot(const SitsScenario& s) {
  const SweepData data = run_sweep(s);
  return core::identified_continuous_model(fit_model(s, data), s.timing.step, advance_of(s));
}

namespace {

core::SitsLoopParameters loop_parameters(const SitsScenario& s) {
  core::SitsLoopParameters p;
  p.m_e = s.model.mass;
  p.k_tc = s.rig.contact.stiffness;
  p.b_tc = s.rig.contact.damping;
  core::set_sits_delays(p, s.delays.force_measurement, s.rig.sensor_delay, s.delays.control_cycle,
                        s.timing.control_period, s.delays.robot_response);
  return p;
}

core::ZeroPoleGain robot_model(const SitsScenario& s, bool identified) {
  if (!s.delays.robot_response) return core::ZeroPoleGain{{}, {}, 1.0};
  return identified ? identified_robot(s)
                    : core::to_zero_pole_gain(s.rig.robot.transfer_function());
}

json intervals_json(const std::vector<core::GainInterval>& intervals) {
  json out = json::array();
  for (const auto& i : intervals) {
    out.push_back(
        {{"lower", fields::json_number(i.lower)}, {"upper", fields::json_number(i.upper)}});
  }
  return out;
}

}  // namespace

namespace {

// K_h of the scenario's compensator at t = 0 and where it came from.
std::pair<double, std::string> scenario_gain(const SitsScenario& s) {
  const core::Compensator compensator(s.compensator, s.timing.step);
  const double k = compensator.gain(0.0);
  switch (s.compensator.kind) {
    case core::CompensatorKind::kNone:
      return {k, "scenario: compensator none (K_h = 0)"};
    case core::CompensatorKind::kFixedGain:
      return {k, "scenario: compensator fgc, K_h = k_eps0"};
    case core::CompensatorKind::kLinearGain:
      return {k,
              "scenario: compensator lgc, K_h(t = 0) = k_eps0 (K_h varies with t: see "
              "k_h_range)"};
    case core::CompensatorKind::kSwitching:
      return {k,
              "scenario: compensator scvg, K_h(t = 0) = k_eps0 (after t_eps K_h follows the "
              "energy observer)"};
    case core::CompensatorKind::kPassivity:
      return {k,
              "scenario: compensator tdpa, K_h(t = 0) = 0 (K_h = -alpha follows the "
              "passivity observer)"};
  }
  return {k, "scenario"};
}

// K_x of the scenario's phase correction for the analysis (phase's contract: analysis_k_x).
double scenario_k_x(const SitsScenario& s, const core::ZeroPoleGain& robot, double k_h) {
  return analysis_k_x(s, robot, k_h);
}

std::string scenario_k_x_source(const SitsScenario& s) {
  return s.compensator.phase_correction.enabled
             ? "scenario: compensator.phase_correction, the model-based K_x it converges to "
               "(within k_x_max_n_per_m)"
             : "scenario: no phase correction (K_x = 0)";
}

// A run at a fixed K_x: the correction on, starting at K_x and never adapting.
void set_fixed_k_x(SitsScenario& s, double k_x) {
  core::PhaseCorrectionConfig& c = s.compensator.phase_correction;
  c.enabled = k_x != 0.0;
  c.k_x_initial = k_x;
  c.k_x_max = std::max(c.k_x_max, std::abs(k_x));
  c.start_time = std::numeric_limits<double>::max();
}

json sampled_json(const core::SampledLoopAnalysis& a, const std::vector<core::GainInterval>& iv) {
  json modes = json::array();
  for (std::size_t i = 0; i < a.modes.size() && i < 6; ++i) {
    const auto& m = a.modes[i];
    modes.push_back({{"multiplier", {m.multiplier.real(), m.multiplier.imag()}},
                     {"abs", std::abs(m.multiplier)},
                     {"growth_rate_per_s", fields::json_number(m.growth_rate)},
                     {"frequency_hz", m.frequency_hz}});
  }
  return {{"method",
           "Floquet multipliers of the exact sampled loop over one control period "
           "(hold, force delay line, G_R, tracking differentiator, acquisition filter, K_h, K_x)"},
          {"states", a.layout.size},
          {"spectral_radius", a.spectral_radius},
          {"growth_rate_per_s", fields::json_number(a.growth_rate)},
          {"stable", a.stable()},
          {"dominant_modes", modes},
          {"stable_k_h_intervals", intervals_json(iv)}};
}

// The sampled analysis' K_h search range: well beyond the explicit-Euler limit of a velocity
// feedback on m_e (|K_h|·T/m_e > 2).
double k_limit_of(const SitsScenario& s) { return 10.0 * s.model.mass / s.timing.step; }

}  // namespace

core::SampledSitsLoop sampled_loop(const SitsScenario& s, const core::ZeroPoleGain& robot,
                                   double k_h, double k_x) {
  core::SampledSitsLoop l;
  l.step = s.timing.step;
  l.hold_steps = static_cast<int>(s.hold_steps());
  l.force_delay_steps = s.sensor_delay_steps();
  l.m_e = s.model.mass;
  l.k_tc = s.rig.contact.stiffness;
  l.b_tc = s.rig.contact.damping;
  if (s.delays.robot_response) l.robot = core::to_transfer_function(robot);
  l.td = s.tracking_differentiator;
  l.filter_time_constant = s.acquisition.filter_time_constant;
  l.k_h = k_h;
  l.k_x = k_x;
  return l;
}

json analyze_loop(const SitsScenario& s, double k_h, bool identified) {
  AnalyzeOptions o;
  o.k_h = k_h;
  o.identified = identified;
  return analyze_loop(s, o);
}

namespace {

// The Routh array's report: first column, sign changes, the epsilons of zero first elements and
// the zero rows with their auxiliary polynomials, the verdict.
json routh_json(const core::RouthResult& r) {
  json eps = json::array();
  for (const auto& e : r.epsilons) eps.push_back({{"power", e.power}, {"epsilon", e.epsilon}});
  json zero_rows = json::array();
  for (const auto& z : r.zero_rows) {
    zero_rows.push_back({{"power", z.power},
                         {"auxiliary_ascending", z.auxiliary.coeffs()},
                         {"imaginary_axis_roots", z.imaginary_axis_roots}});
  }
  return {{"first_column", r.first_column},
          {"sign_changes", r.sign_changes},
          {"imaginary_axis_roots", r.imaginary_axis_roots},
          {"zero_first_element_epsilons", eps},
          {"zero_rows", zero_rows},
          {"verdict", core::to_string(r.verdict)}};
}

// analyze --simulate: each predicted boundary of the sampled loop found on runs (bisection on the
// growth rate), the ones at the gain limit aside.
json simulated_boundaries(const SitsScenario& s,
                          const std::vector<core::GainInterval>& sampled_intervals, double k_x) {
  json sims = json::array();
  for (const auto& iv : sampled_intervals) {
    for (const double b : {iv.lower, iv.upper}) {
      if (std::abs(b) >= 0.999 * k_limit_of(s)) continue;
      const double w = 0.3 * std::abs(b) + 1.0;
      const SimulatedBoundary sim =
          simulated_stability_boundary(s, b - w, b + w, k_x, s.timing.duration);
      sims.push_back({{"predicted_k_h", b},
                      {"simulated_k_h", sim.k_h},
                      {"relative_difference", (b - sim.k_h) / sim.k_h},
                      {"bracket", {sim.growing, sim.decaying}},
                      {"runs", sim.runs},
                      {"run_duration_s", s.timing.duration}});
    }
  }
  return sims;
}

}  // namespace

json analyze_loop(const SitsScenario& s, const AnalyzeOptions& options) {
  const core::ZeroPoleGain robot = robot_model(s, options.identified);
  std::string k_h_source = "--k-h";
  double k_h = 0.0;
  if (options.k_h) {
    k_h = *options.k_h;
  } else {
    std::tie(k_h, k_h_source) = scenario_gain(s);
  }
  double k_x = 0.0;
  std::string k_x_source = "--k-x";
  if (options.k_x) {
    k_x = *options.k_x;
  } else {
    k_x = scenario_k_x(s, robot, k_h);
    k_x_source = scenario_k_x_source(s);
  }
  core::SitsLoopParameters p = loop_parameters(s);
  p.k_x = k_x;
  const core::Polynomial poly = core::sits_characteristic_polynomial(p, robot, k_h);
  const core::RouthResult r = core::routh(poly);
  const auto roots = poly.roots();
  int rhp_roots = 0;
  for (const auto& root : roots) rhp_roots += root.real() > 0.0 ? 1 : 0;
  const auto split = core::sits_characteristic(p, robot);
  const auto intervals = core::stable_gain_intervals(split.p0, split.p1);
  json j;
  j["k_h"] = k_h;
  j["k_h_source"] = k_h_source;
  if (!options.k_h && s.compensator.kind == core::CompensatorKind::kLinearGain) {
    const core::Compensator c(s.compensator, s.timing.step);
    j["k_h_range"] = {c.gain(0.0), c.gain(s.timing.duration)};
  }
  j["k_x"] = k_x;
  j["k_x_source"] = k_x_source;
  j["robot_model"] = zpk_json(robot);
  j["robot_source"] =
      !s.delays.robot_response ? "bypassed" : (options.identified ? "identified" : "configured");
  j["parameters"] = {{"m_e", p.m_e},     {"k_tc", p.k_tc}, {"b_tc", p.b_tc},
                     {"tau_s", p.tau_s}, {"t_c", p.t_c},   {"k_x", p.k_x}};
  j["characteristic_polynomial"] = {{"ascending", poly.coeffs()},
                                    {"descending", poly.descending()},
                                    {"degree", poly.degree()},
                                    {"expression", poly.to_expression('s')}};
  j["routh"] = routh_json(r);
  j["roots"] = complex_list(roots);
  j["rhp_roots"] = rhp_roots;
  j["stable"] = r.stable();
  j["routh_agrees_with_roots"] = (r.sign_changes == rhp_roots);
  j["stable_k_h_intervals"] = intervals_json(intervals);
  const core::SampledSitsLoop loop = sampled_loop(s, robot, k_h, k_x);
  const auto sampled_intervals = core::sampled_stable_gain_intervals(loop, k_limit_of(s));
  j["sampled_loop"] = sampled_json(core::analyse_sampled_loop(loop), sampled_intervals);
  j["note"] =
      "\"stable\" and \"stable_k_h_intervals\" are the Routh test of Eq. 34 (Pade force delay, "
      "2/(2 + T_c s) hold, ideal velocity); \"sampled_loop\" is the exact loop a run computes "
      "(its prediction of what `hyloop run` does)";
  if (options.simulate) j["simulated_boundaries"] = simulated_boundaries(s, sampled_intervals, k_x);
  return j;
}

GrowthMeasurement simulated_growth_rate(const SitsScenario& base, double k_h, double k_x,
                                        double duration_s) {
  SitsScenario s = base;
  s.outputs.samples = false;
  s.timing.duration = duration_s;
  s.metrics.window = std::min(s.metrics.window, duration_s);
  s.compensator.kind = core::CompensatorKind::kFixedGain;
  s.compensator.k_eps0 = k_h;
  set_fixed_k_x(s, k_x);
  s.guard.enabled = false;  // the growth is what is measured: the guard would stop it at 1.2x
  SitsRunner runner(s);
  while (runner.step()) {
  }
  GrowthMeasurement g;
  g.k_h = k_h;
  g.stopped = runner.stopped();
  g.cycles = runner.metrics().cycles().size();
  g.growth_rate = runner.metrics().amplitude_growth_rate(2);
  return g;
}

SimulatedBoundary simulated_stability_boundary(const SitsScenario& s, double k_a, double k_b,
                                               double k_x, double duration_s, double tolerance) {
  const auto growing = [&](double k) {
    const GrowthMeasurement g = simulated_growth_rate(s, k, k_x, duration_s);
    return g.stopped || !(g.growth_rate <= 0.0);
  };
  SimulatedBoundary b;
  const bool ga = growing(k_a);
  const bool gb = growing(k_b);
  b.runs = 2;
  if (ga == gb) {
    throw std::invalid_argument("simulated_stability_boundary: the loop is " +
                                std::string(ga ? "growing" : "decaying") +
                                " at both K_h = " + format_number(k_a) + " and " +
                                format_number(k_b) + " N*s/m; give a bracket with one of each");
  }
  b.growing = ga ? k_a : k_b;
  b.decaying = ga ? k_b : k_a;
  while (std::abs(b.growing - b.decaying) > tolerance) {
    const double m = 0.5 * (b.growing + b.decaying);
    (growing(m) ? b.growing : b.decaying) = m;
    ++b.runs;
  }
  b.k_h = 0.5 * (b.growing + b.decaying);
  return b;
}

// ---- tune -------------------------------------------------------------------------------------

namespace {

struct Gains {
  double k0 = 0.0, k1 = 0.0, k2 = 0.0, t_switch = 0.0;
};

struct Outcome {
  Gains gains;
  core::CompensatorKind kind = core::CompensatorKind::kNone;
  bool diverged = true;
  double e_f = 0.0, e_v = 0.0, e_r = 0.0, amplitude = 0.0;
  double kh_min = 0.0, kh_max = 0.0;
  double kx_final = 0.0;  // K_x at the end of the run, N/m (0 without the phase correction)
  double cost = std::numeric_limits<double>::infinity();
  bool stable = false;
};

Outcome evaluate(const SitsScenario& base, core::CompensatorKind kind, const Gains& g) {
  SitsScenario s = base;
  s.outputs.samples = false;
  s.compensator.kind = kind;
  s.compensator.k_eps0 = g.k0;
  s.compensator.k_eps1 = g.k1;
  s.compensator.k_eps2 = g.k2;
  s.compensator.switch_time = g.t_switch;
  // The tuner explores unstable gains on the model and ranks what they do over the whole run; a
  // gain's guarded run is judged by its own scenario (the chosen ones peak at 1.002x E(0)).
  s.guard.enabled = false;
  SitsRunner runner(s);
  while (runner.step()) {
  }
  Outcome o;
  o.gains = g;
  o.kind = kind;
  const core::WindowMetrics w = runner.metrics().window();
  const double ratio = runner.metrics().energy_ratio();
  o.diverged = runner.stopped() || !std::isfinite(ratio) || ratio > s.metrics.diverged_energy_ratio;
  o.e_f = w.e_f_peak;
  o.e_v = w.e_v_peak;
  o.e_r = w.e_r;
  o.amplitude = w.amplitude_ratio;
  o.kh_min = runner.k_h_min();
  o.kh_max = runner.k_h_max();
  o.kx_final = runner.last_row()[col(SitsColumn::kKx)];
  // Dimensionless cost: the window's velocity and force errors relative to the twin's peaks,
  // plus the per-cycle ratios' distance from 1.
  double v_ref = 0.0;
  for (const auto& c : runner.metrics().cycles()) {
    if (c.t_end >= s.timing.duration - s.metrics.window) v_ref = std::max(v_ref, c.v_ideal_peak);
  }
  const double wn = std::sqrt(s.rig.contact.stiffness / s.model.mass);
  const double f_ref = s.rig.contact.stiffness * v_ref / wn;
  if (!runner.stopped() && v_ref > 0.0 && std::isfinite(w.e_r) &&
      std::isfinite(w.amplitude_ratio)) {
    o.cost = w.e_v_peak / v_ref + w.e_f_peak / f_ref + std::abs(w.amplitude_ratio - 1.0) +
             std::abs(w.e_r - 1.0);
  }
  return o;
}

template <typename Fn>
std::vector<Outcome> parallel_map(const std::vector<Gains>& gains, int jobs, Fn fn) {
  std::vector<Outcome> out(gains.size());
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto worker = [&] {
    for (std::size_t i = next++; i < gains.size(); i = next++) {
      try {
        out[i] = fn(gains[i]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

bool inside(const std::vector<core::GainInterval>& intervals, double lo, double hi) {
  return std::any_of(intervals.begin(), intervals.end(),
                     [&](const core::GainInterval& i) { return i.lower < lo && hi < i.upper; });
}

json outcome_json(const Outcome& o) {
  const auto num = [](double v) { return fields::json_number(v); };
  return {{"compensator", std::string(core::to_string(o.kind))},
          {"k_eps0", o.gains.k0},
          {"k_eps1", o.gains.k1},
          {"k_eps2", o.gains.k2},
          {"switch_time_s", o.gains.t_switch},
          {"diverged", o.diverged},
          {"routh_stable", o.stable},
          {"k_h_min", o.kh_min},
          {"k_h_max", o.kh_max},
          {"k_x_final_n_per_m", o.kx_final},
          {"e_F_peak_N", o.e_f},
          {"e_V_peak_mps", o.e_v},
          {"e_R", num(o.e_r)},
          {"amplitude_ratio", num(o.amplitude)},
          {"cost", num(o.cost)}};
}

}  // namespace

namespace {

// t_ε candidates: the given ones, each inside (0, duration); none given: 26/60, 36/60 and 46/60
// of the run (26, 36 and 46 s for the paper's 60 s).
std::vector<double> switch_times_for(const SitsScenario& s, const std::vector<double>& given) {
  const double duration = s.timing.duration;
  if (given.empty()) {
    std::vector<double> out;
    for (double f : {26.0, 36.0, 46.0}) out.push_back(std::round(f / 60.0 * duration * 1e3) / 1e3);
    return out;
  }
  for (double ts : given) {
    if (!std::isfinite(ts) || ts <= 0.0 || ts >= duration) {
      throw std::runtime_error("tune: --switch-times " + format_number(ts) +
                               " s: must lie in (0, timing.duration_s = " +
                               format_number(duration) + " s); a later switch never happens");
    }
  }
  return given;
}

}  // namespace

namespace {

bool lower_cost(const Outcome& a, const Outcome& b) { return a.cost < b.cost; }

// What every stage of the tuner shares: the scenario, the threads, and the stable K_h set of the
// linearised loop that marks every outcome the same way (routh_stable: its whole K_h range lies
// inside; an unstable or diverged one costs infinity).
struct Tuner {
  const SitsScenario& base;
  int jobs = 1;
  std::vector<core::GainInterval> intervals;

  Outcome run(core::CompensatorKind k, const Gains& g) const {
    Outcome o = evaluate(base, k, g);
    o.stable = inside(intervals, o.kh_min, o.kh_max);
    if (!o.stable || o.diverged) o.cost = std::numeric_limits<double>::infinity();
    return o;
  }
  std::vector<Outcome> run_all(core::CompensatorKind k, const std::vector<Gains>& gains) const {
    return parallel_map(gains, jobs, [&](const Gains& g) { return run(k, g); });
  }
};

void refuse_untunable(core::CompensatorKind kind) {
  if (kind == core::CompensatorKind::kNone) {
    throw std::runtime_error(
        "tune: compensator.type is none: no gain to tune (set fgc, lgc or scvg)");
  }
  if (kind == core::CompensatorKind::kPassivity) {
    throw std::runtime_error(
        "tune: compensator.type is tdpa: no gain to tune (its damping follows the passivity "
        "observer; max_damping_ns_per_m only bounds it)");
  }
}

// The stable K_h set of the linearised loop with the identified G_R.
std::vector<core::GainInterval> tuning_intervals(const SitsScenario& base, std::ostream& log) {
  const core::SitsLoopParameters p = loop_parameters(base);
  const core::ZeroPoleGain robot = robot_model(base, true);
  const auto split = core::sits_characteristic(p, robot);
  auto intervals = core::stable_gain_intervals(split.p0, split.p1);
  if (intervals.empty()) throw std::runtime_error("tune: no K_h makes the linearised loop stable");
  log << "tune: stable K_h intervals (Routh, identified G_R):";
  for (const auto& i : intervals) log << " (" << i.lower << ", " << i.upper << ")";
  log << "\n";
  return intervals;
}

// 1. FGC: the best fixed gain, coarse then refined, within [-1000, 1000] ∩ stable set. Adds the
//    runs it made to `runs`.
Outcome best_fixed_gain(const Tuner& t, int& runs, std::ostream& log) {
  double lo = std::max(-1000.0, t.intervals.front().lower);
  double hi = std::min(1000.0, t.intervals.back().upper);
  Outcome best_fgc;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<Gains> grid;
    for (int i = 0; i <= 40; ++i) grid.push_back({lo + (hi - lo) * i / 40.0, 0.0, 0.0, 0.0});
    const auto results = t.run_all(core::CompensatorKind::kFixedGain, grid);
    runs += static_cast<int>(grid.size());
    const auto it = std::min_element(results.begin(), results.end(), lower_cost);
    if (!std::isfinite(it->cost))
      throw std::runtime_error("tune: no fixed gain gives a stable run");
    if (it->cost < best_fgc.cost) best_fgc = *it;
    const double width = (hi - lo) / 40.0;
    lo = best_fgc.gains.k0 - 2.0 * width;
    hi = best_fgc.gains.k0 + 2.0 * width;
  }
  log << "tune: FGC best fixed gain K = " << best_fgc.gains.k0 << " N*s/m (" << runs << " runs)\n";
  return best_fgc;
}

// The t_eps candidates of SCVG (the middle one only with --coarse); {0} for LGC.
std::vector<double> tuned_switch_times(const SitsScenario& base, const TuneOptions& options,
                                       bool scvg, std::ostream& log) {
  std::vector<double> switch_times =
      scvg ? switch_times_for(base, options.switch_times) : std::vector<double>{0.0};
  if (options.coarse && switch_times.size() > 1) {
    switch_times = {switch_times[switch_times.size() / 2]};
  }
  if (scvg) {
    log << "tune: switch times t_eps:";
    for (double ts : switch_times) log << " " << ts;
    log << " s\n";
  }
  return switch_times;
}

// The time over which K_eps1 ramps: t_eps for SCVG, the run for LGC.
double ramp_time(const SitsScenario& base, bool scvg, double ts) {
  return scvg ? ts : base.timing.duration;
}

// 2. LGC: K_eps0 around the best fixed gain `kstar` and the ramp K_eps1·duration; SCVG: also
//    K_eps2 on a log grid and each t_eps.
std::vector<Gains> candidate_grid(const SitsScenario& base, const TuneOptions& options, bool scvg,
                                  const std::vector<double>& switch_times, double kstar) {
  const std::vector<double> offsets =
      options.coarse ? std::vector<double>{-2, -1, 0, 1, 2}
                     : std::vector<double>{-20, -10, -5, -2, -1, 0, 1, 2, 5, 10, 20};
  const std::vector<double> ramps =
      options.coarse ? std::vector<double>{-2, -1, 0, 1, 2}
                     : std::vector<double>{-20, -10, -5, -2, -1, -0.5, 0, 0.5, 1, 2, 5, 10, 20};
  std::vector<double> k2s{0.0};
  const double k2_factor = options.coarse ? 10.0 : std::sqrt(10.0);
  for (double m = options.coarse ? 1e-1 : 1e-2; scvg && m <= (options.coarse ? 1e1 : 1e4);
       m *= k2_factor) {
    k2s.push_back(m);
    k2s.push_back(-m);
  }
  std::vector<Gains> grid;
  for (double ts : switch_times) {
    for (double off : offsets) {
      for (double ramp : ramps) {
        for (double k2 : k2s)
          grid.push_back({kstar + off, ramp / ramp_time(base, scvg, ts), k2, ts});
      }
    }
  }
  return grid;
}

// 3. Compass search from `current` (the best grid point of one switch time, whose K_eps1 ramps
//    over `ramp_s`): the amplitude over the last window integrates K_h − K* over the whole run, so
//    it needs finer steps than any grid. Adds the runs it made to `runs`.
Outcome compass_search(const Tuner& t, core::CompensatorKind kind, Outcome current, double ramp_s,
                       bool scvg, int& runs) {
  double step0 = 1.0, step1 = 0.5 / ramp_s;
  double step2 = scvg ? std::max(std::abs(current.gains.k2) * 0.5, 1e-2) : 0.0;
  for (int iter = 0; iter < 40 && step0 > 1e-4; ++iter) {
    std::vector<Gains> around;
    for (int sign : {-1, 1}) {
      Gains g = current.gains;
      g.k0 += sign * step0;
      around.push_back(g);
      g = current.gains;
      g.k1 += sign * step1;
      around.push_back(g);
      if (scvg) {
        g = current.gains;
        g.k2 += sign * step2;
        around.push_back(g);
      }
    }
    const auto results = t.run_all(kind, around);
    runs += static_cast<int>(around.size());
    const auto it = std::min_element(results.begin(), results.end(), lower_cost);
    if (it->cost < current.cost) {
      current = *it;
    } else {
      step0 *= 0.5;
      step1 *= 0.5;
      step2 *= 0.5;
    }
  }
  return current;
}

// The best `top` candidates of `found` (sorted by cost) as a table on the log.
void log_top_candidates(const SitsScenario& base, bool scvg, const std::vector<Outcome>& found,
                        std::size_t rows, std::ostream& log) {
  log << "tune: top " << (scvg ? "SCVG" : "LGC") << " candidates (final " << base.metrics.window
      << " s; K_h min/max: the range of K_h over the run, the paper's [C_el, C_eh])\n"
      << "  rank   K_eps0      K_eps1       K_eps2      t_eps  amplitude  e_F[N]    e_V[mm/s]  "
         "K_h min   K_h max   K_x[N/m]\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const Outcome& o = found[i];
    char line[220];
    std::snprintf(line, sizeof line,
                  "  %4zu %9.4f %11.6f %11.5g %6.1f %10.6f %9.5f %10.6f %9.4f %9.4f %9.4f\n", i + 1,
                  o.gains.k0, o.gains.k1, o.gains.k2, o.gains.t_switch, o.amplitude, o.e_f,
                  o.e_v * 1e3, o.kh_min, o.kh_max, o.kx_final);
    log << line;
  }
}

// 4. For SCVG the chosen candidate is the best whose final e_F and e_V peaks beat both FGC and LGC
//    with the same gains (the paper's claim), else the best. Returns (index, whether it beats).
std::pair<std::size_t, bool> chosen_candidate(bool scvg, std::size_t top,
                                              const std::vector<Outcome>& found,
                                              const std::vector<Outcome>& fgc_same,
                                              const std::vector<Outcome>& lgc_same) {
  for (std::size_t i = 0; scvg && i < top; ++i) {
    if (found[i].e_f < fgc_same[i].e_f && found[i].e_f < lgc_same[i].e_f &&
        found[i].e_v < fgc_same[i].e_v && found[i].e_v < lgc_same[i].e_v) {
      return {i, true};
    }
  }
  return {0, false};
}

}  // namespace

json tune_compensator(const SitsScenario& base, const TuneOptions& options, std::ostream& log) {
  const core::CompensatorKind kind = base.compensator.kind;
  refuse_untunable(kind);
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const bool corrected = base.compensator.phase_correction.enabled;
  log << "tune: " << core::to_string(kind)
      << (corrected ? " with the phase correction (K_x estimated online in every run)" : "")
      << "\n";
  const Tuner t{base, jobs, tuning_intervals(base, log)};
  int fgc_runs = 0;
  const Outcome best_fgc = best_fixed_gain(t, fgc_runs, log);
  json j;
  j["compensator"] = std::string(core::to_string(kind));
  j["phase_correction"] = corrected;
  j["stable_k_h_intervals"] = intervals_json(t.intervals);
  j["fgc_best_fixed_gain"] = outcome_json(best_fgc);
  if (kind == core::CompensatorKind::kFixedGain) {
    j["candidates_run"] = fgc_runs;
    j["best"] = outcome_json(best_fgc);
    return j;
  }

  const bool scvg = kind == core::CompensatorKind::kSwitching;
  const std::vector<double> switch_times = tuned_switch_times(base, options, scvg, log);
  const std::vector<Gains> grid =
      candidate_grid(base, options, scvg, switch_times, best_fgc.gains.k0);
  log << "tune: " << grid.size() << " " << core::to_string(kind) << " candidates on " << jobs
      << " threads\n";
  std::vector<Outcome> found = t.run_all(kind, grid);
  std::sort(found.begin(), found.end(), lower_cost);
  int refine_runs = 0;
  for (double ts : switch_times) {
    const auto start = std::find_if(found.begin(), found.end(), [&](const Outcome& o) {
      return o.gains.t_switch == ts && std::isfinite(o.cost);
    });
    if (start == found.end()) continue;
    found.push_back(compass_search(t, kind, *start, ramp_time(base, scvg, ts), scvg, refine_runs));
  }
  log << "tune: " << refine_runs << " refinement runs\n";
  std::sort(found.begin(), found.end(), lower_cost);
  const std::size_t kept = static_cast<std::size_t>(std::count_if(
      found.begin(), found.end(), [](const Outcome& o) { return std::isfinite(o.cost); }));
  if (kept == 0) {
    throw std::runtime_error("tune: no " + std::string(core::to_string(kind)) +
                             " candidate is stable");
  }

  // FGC and LGC with the shared gains of the best candidates.
  const std::size_t top = std::min<std::size_t>(std::max(options.top, 1) * 5, kept);
  std::vector<Gains> top_gains;
  for (std::size_t i = 0; i < top; ++i) top_gains.push_back(found[i].gains);
  const auto fgc_same = t.run_all(core::CompensatorKind::kFixedGain, top_gains);
  const auto lgc_same = t.run_all(core::CompensatorKind::kLinearGain, top_gains);
  const auto [chosen, beats] = chosen_candidate(scvg, top, found, fgc_same, lgc_same);
  const std::size_t rows = std::min<std::size_t>(options.top, top);
  log_top_candidates(base, scvg, found, rows, log);
  json table = json::array();
  for (std::size_t i = 0; i < rows; ++i) {
    json row = outcome_json(found[i]);
    row["fgc_same_gains"] = outcome_json(fgc_same[i]);
    row["lgc_same_gains"] = outcome_json(lgc_same[i]);
    table.push_back(row);
  }
  j["switch_times_s"] = scvg ? json(switch_times) : json(nullptr);
  j["candidates_run"] = grid.size() + static_cast<std::size_t>(fgc_runs + refine_runs) + 2 * top;
  j["candidates_stable"] = kept;
  j["table"] = table;
  j["best"] = outcome_json(found[chosen]);
  j["best"]["fgc_same_gains"] = outcome_json(fgc_same[chosen]);
  j["best"]["lgc_same_gains"] = outcome_json(lgc_same[chosen]);
  if (scvg) j["best"]["beats_fgc_and_lgc"] = beats;
  j["best"]["rank_by_cost"] = chosen + 1;
  return j;
}

}  // namespace hyloop::experiment
