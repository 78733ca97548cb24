#include "hyloop/experiment/sits_runner.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "hyloop/experiment/run_directory.hpp"

namespace hyloop::experiment {
namespace {

hal::SitsRigConfig rig_config(const SitsScenario& s) {
  hal::SitsRigConfig c;
  c.step = s.timing.step;
  if (s.delays.robot_response) {
    c.robot = s.rig.robot.transfer_function();
  }
  c.contact = s.rig.contact;
  c.sensor_delay_steps = s.sensor_delay_steps();
  c.force_noise_std = s.rig.force_noise_std;
  c.position_noise_std = s.rig.position_noise_std;
  c.seed = s.rig.seed;
  c.limits = s.rig.limits;
  return c;
}

std::size_t cycle_capacity(const SitsScenario& s) {
  // A vibration cycle shorter than 8 steps cannot be resolved; the bound keeps memory modest.
  return static_cast<std::size_t>(s.steps() / 8 + 16);
}

constexpr std::size_t col(SitsColumn c) { return static_cast<std::size_t>(c); }

}  // namespace

const std::array<std::string_view, kSitsColumns> kSitsColumnHeaders = {
    "time[s]",       "x[m]",         "v[m/s]",       "x_ideal[m]",      "v_ideal[m/s]",
    "x_cmd[m]",      "x_robot[m]",   "v_robot[m/s]", "v_est[m/s]",      "f_contact[N]",
    "f_meas[N]",     "f_ideal[N]",   "f_input[N]",   "f_comp[N]",       "k_h[N*s/m]",
    "eps_h[J]",      "eps_sum[J*s]", "energy[J]",    "energy_ideal[J]", "power[W]",
    "power_ideal[W]"};

std::string_view to_string(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::kNone:
      return "none";
    case StopReason::kNotFinite:
      return "not_finite";
    case StopReason::kDisplacementLimit:
      return "displacement_limit";
    case StopReason::kDriverFault:
      return "driver_fault";
  }
  return "unknown";
}

SitsRunner::SitsRunner(const SitsScenario& scenario)
    : scenario_(scenario),
      step_(scenario.timing.step),
      total_steps_(scenario.steps()),
      rig_(rig_config(scenario)),
      actuator_(rig_),
      sensor_(rig_),
      target_(scenario.model.mass, scenario.timing.step,
              {scenario.model.initial_position, scenario.model.initial_velocity}),
      twin_(scenario.model.mass, scenario.timing.step, scenario.rig.contact,
            {scenario.model.initial_position, scenario.model.initial_velocity}),
      contact_(scenario.rig.contact),
      td_(scenario.tracking_differentiator),
      compensator_(scenario.compensator, scenario.timing.step),
      hold_(scenario.hold_steps()),
      metrics_(cycle_capacity(scenario), scenario.timing.duration - scenario.metrics.window),
      samples_(std::vector<std::string>(kSitsColumnHeaders.begin(), kSitsColumnHeaders.end()),
               scenario.outputs.samples
                   ? static_cast<std::size_t>(scenario.steps() / scenario.outputs.decimation + 1)
                   : 0),
      decimation_(scenario.outputs.decimation),
      k_h_min_(std::numeric_limits<double>::infinity()),
      k_h_max_(-std::numeric_limits<double>::infinity()) {
  // Bumpless start: the rig at rest at the target's initial position, the command there.
  rig_.reset(scenario.model.initial_position);
  const hal::ActuatorCommand initial{scenario.model.initial_position,
                                     scenario.model.initial_velocity};
  hold_.reset(hold_.update(0, initial));
  actuator_.command(hold_.held());
  td_.reset(scenario.model.initial_position,
            scenario.delays.robot_response ? 0.0 : scenario.model.initial_velocity);
}

bool SitsRunner::step() noexcept {
  if (finished()) {
    return false;
  }
  const std::int64_t k = cycle_;
  const double t = static_cast<double>(k) * step_;

  // 1–2. The rig advances under the held command and takes the measurements of cycle k.
  rig_.advance();
  const hal::ActuatorState robot = actuator_.state();
  // 3. The delayed force measurement.
  hal::ForceSample force{};
  if (sensor_.read(force) != hal::DriverStatus::kOk) {
    stop_reason_ = StopReason::kDriverFault;
    return false;
  }
  // 4. Dynamics with compensation.
  const double v_est = td_.update(robot.position);
  const double f_comp = compensator_.force(t, v_est);
  const double f_input = force.force + f_comp;
  const core::MassState x = target_.state();
  const core::MassState xi = twin_.state();
  const double f_ideal = twin_.force();
  const double eps_h = compensator_.observe(t, f_ideal, xi.position, f_input, robot.position);
  const double energy = target_.kinetic_energy() + contact_.potential_energy(x.position);
  const double energy_ideal = twin_.energy();
  const double k_h = compensator_.last_gain();
  k_h_min_ = std::min(k_h_min_, k_h);
  k_h_max_ = std::max(k_h_max_, k_h);

  row_[col(SitsColumn::kTime)] = t;
  row_[col(SitsColumn::kX)] = x.position;
  row_[col(SitsColumn::kV)] = x.velocity;
  row_[col(SitsColumn::kXIdeal)] = xi.position;
  row_[col(SitsColumn::kVIdeal)] = xi.velocity;
  row_[col(SitsColumn::kXCmd)] = rig_.held_command().position;
  row_[col(SitsColumn::kXRobot)] = robot.position;
  row_[col(SitsColumn::kVRobot)] = robot.velocity;
  row_[col(SitsColumn::kVEst)] = v_est;
  row_[col(SitsColumn::kFContact)] = rig_.contact_force();
  row_[col(SitsColumn::kFMeas)] = force.force;
  row_[col(SitsColumn::kFIdeal)] = f_ideal;
  row_[col(SitsColumn::kFInput)] = f_input;
  row_[col(SitsColumn::kFComp)] = f_comp;
  row_[col(SitsColumn::kKh)] = k_h;
  row_[col(SitsColumn::kEpsH)] = eps_h;
  row_[col(SitsColumn::kEpsSum)] = compensator_.observer().sum();
  row_[col(SitsColumn::kEnergy)] = energy;
  row_[col(SitsColumn::kEnergyIdeal)] = energy_ideal;
  row_[col(SitsColumn::kPower)] = f_input * x.velocity;
  row_[col(SitsColumn::kPowerIdeal)] = f_ideal * xi.velocity;
  if (scenario_.outputs.samples && k % decimation_ == 0) {
    samples_.append(row_);
  }
  metrics_.add({.t = t,
                .v = x.velocity,
                .v_ideal = xi.velocity,
                .energy = energy,
                .energy_ideal = energy_ideal,
                .e_f = f_ideal - f_input,
                .e_v = x.velocity - xi.velocity});

  target_.step(f_input);
  twin_.step();
  cycle_ = k + 1;

  // 5. The command for the next cycle, checked before it reaches the driver.
  const core::MassState next = target_.state();
  if (!std::isfinite(next.position) || !std::isfinite(next.velocity) || !std::isfinite(f_input)) {
    stop_reason_ = StopReason::kNotFinite;
    return false;
  }
  const hal::ActuatorLimits& limits = scenario_.rig.limits;
  if (next.position < limits.position_min || next.position > limits.position_max) {
    stop_reason_ = StopReason::kDisplacementLimit;
    return false;
  }
  const hal::ActuatorCommand& held = hold_.update(cycle_, {next.position, next.velocity});
  if (actuator_.command(held) == hal::DriverStatus::kFault) {
    stop_reason_ = StopReason::kDriverFault;
    return false;
  }
  return cycle_ < total_steps_;
}

namespace {
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json SitsRunner::summary() const {
  const SitsScenario& s = scenario_;
  const core::CycleMetrics& m = metrics_;
  const core::WindowMetrics w = m.window();
  const double energy_ratio = m.energy_ratio();
  const bool diverged =
      stopped() || (std::isfinite(energy_ratio) && energy_ratio > s.metrics.diverged_energy_ratio);
  const auto cycles = m.cycles();
  nlohmann::json j;
  j["compensator"] = std::string(core::to_string(s.compensator.kind));
  j["diverged"] = diverged;
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason()))) : nlohmann::json(nullptr);
  j["energy_ratio"] = number_or_null(energy_ratio);
  j["amplitude_growth_rate_per_s"] = number_or_null(m.amplitude_growth_rate());
  j["cycles"] = cycles.size();
  j["dropped_cycles"] = m.dropped_cycles();
  j["metrics"] = {
      {"window_s", s.metrics.window}, {"cycles_in_window", w.cycles},
      {"e_F_peak_N", w.e_f_peak},     {"e_V_peak_mps", w.e_v_peak},
      {"e_R", number_or_null(w.e_r)}, {"amplitude_ratio", number_or_null(w.amplitude_ratio)}};
  j["k_h"] = {{"min", number_or_null(k_h_min())},
              {"max", number_or_null(k_h_max())},
              {"final", last_row()[static_cast<std::size_t>(SitsColumn::kKh)]}};
  j["delays"] = {{"force_measurement_steps", s.sensor_delay_steps()},
                 {"control_cycle_steps", s.hold_steps()},
                 {"robot_response", s.delays.robot_response}};
  j["rejected_commands"] = rejected_commands();
  j["seed"] = s.rig.seed;
  return j;
}

void SitsRunner::write_extra_files(const std::filesystem::path& dir) const {
  std::ofstream f(dir / "cycles.csv");
  f << "cycle[-],t_start[s],t_end[s],e_R[-],amplitude_ratio[-],v_peak[m/s],v_ideal_peak[m/s],"
       "energy_max[J],energy_ideal_max[J],e_F_peak[N],e_V_peak[m/s]\n";
  for (const core::CycleRecord& c : metrics_.cycles()) {
    std::string line = std::to_string(c.index);
    for (double v : {c.t_start, c.t_end, c.e_r, c.amplitude_ratio, c.v_peak, c.v_ideal_peak,
                     c.energy_max, c.energy_ideal_max, c.e_f_peak, c.e_v_peak}) {
      line += ',';
      line += format_number(v);
    }
    f << line << '\n';
  }
  if (!f) throw std::runtime_error("writing cycles.csv failed");
}

}  // namespace hyloop::experiment
