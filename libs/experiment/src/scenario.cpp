#include "hyloop/experiment/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <set>
#include <sstream>

#include "hyloop/experiment/run_export.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace {

void parse_into(const YAML::Node& root, const std::string& origin, SitsScenario& s) {
  MapReader top(root, "", origin);
  top.integer("schema_version", s.schema_version);
  top.string("name", s.name);
  top.string("description", s.description);
  std::string kind = "sits";
  top.string("kind", kind);
  if (kind != "sits") top.fail("kind", "\"" + excerpt(kind) + "\": must be sits");

  MapReader model = top.child("model");
  model.number("mass_kg", s.model.mass);
  model.number("initial_position_m", s.model.initial_position);
  model.number("initial_velocity_mps", s.model.initial_velocity);
  model.finish();

  MapReader rig = top.child("rig");
  MapReader contact = rig.child("contact");
  contact.number("stiffness_n_per_m", s.rig.contact.stiffness);
  contact.number("damping_ns_per_m", s.rig.contact.damping);
  contact.finish();
  MapReader robot = rig.child("robot");
  robot.string("preset", s.rig.robot.preset);
  if (s.rig.robot.preset == "paper") {
    s.rig.robot.omega_n = 2.0 * std::numbers::pi * 30.0;
    s.rig.robot.zeta = 0.35;
    s.rig.robot.omega_z = 299.76;
  }
  robot.number("omega_n_rad_s", s.rig.robot.omega_n);
  robot.number("zeta", s.rig.robot.zeta);
  robot.number("omega_z_rad_s", s.rig.robot.omega_z);
  robot.numbers("num", s.rig.robot.num);
  robot.numbers("den", s.rig.robot.den);
  robot.finish();
  MapReader sensor = rig.child("sensor");
  sensor.number("delay_s", s.rig.sensor_delay);
  sensor.number("force_noise_std_n", s.rig.force_noise_std);
  sensor.number("position_noise_std_m", s.rig.position_noise_std);
  sensor.unsigned64("seed", s.rig.seed);
  sensor.finish();
  MapReader limits = rig.child("limits");
  limits.number("position_min_m", s.rig.limits.position_min);
  limits.number("position_max_m", s.rig.limits.position_max);
  limits.number("velocity_max_mps", s.rig.limits.velocity_max);
  limits.limit("acceleration_max_mps2", s.safety.acceleration_max);
  limits.finish();
  MapReader faults = rig.child("faults");
  faults.integer("corrupt_message_every", s.rig.corrupt_message_every);
  faults.finish();
  rig.finish();

  MapReader acq = top.child("acquisition");
  acq.boolean("tare", s.acquisition.tare);
  acq.number("filter_time_constant_s", s.acquisition.filter_time_constant);
  acq.finish();

  MapReader safety = top.child("safety");
  safety.limit("rate_limit_mps", s.safety.rate_limit);
  safety.integer("watchdog_cycles", s.safety.watchdog_cycles);
  safety.number("stop_deceleration_mps2", s.safety.stop_deceleration);
  safety.finish();

  MapReader delays = top.child("delays");
  delays.boolean("force_measurement", s.delays.force_measurement);
  delays.boolean("control_cycle", s.delays.control_cycle);
  delays.boolean("robot_response", s.delays.robot_response);
  delays.finish();

  MapReader timing = top.child("timing");
  timing.number("step_s", s.timing.step);
  timing.number("control_period_s", s.timing.control_period);
  timing.number("duration_s", s.timing.duration);
  timing.finish();

  MapReader comp = top.child("compensator");
  std::string type(core::to_string(s.compensator.kind));
  comp.string("type", type);
  try {
    s.compensator.kind = core::parse_compensator_kind(type);
  } catch (const std::invalid_argument& e) {
    comp.fail(comp.field("type"), excerpt(e.what()));
  }
  comp.number("k_eps0", s.compensator.k_eps0);
  comp.number("k_eps1", s.compensator.k_eps1);
  comp.number("k_eps2", s.compensator.k_eps2);
  comp.number("switch_time_s", s.compensator.switch_time);
  comp.boolean("bumpless", s.compensator.bumpless);
  MapReader td = comp.child("tracking_differentiator");
  td.number("r", s.tracking_differentiator.r);
  td.number("h_s", s.tracking_differentiator.h);
  td.finish();
  MapReader pc = comp.child("phase_correction");
  core::PhaseCorrectionConfig& p = s.compensator.phase_correction;
  pc.boolean("enabled", p.enabled);
  pc.number("k_x_initial_n_per_m", p.k_x_initial);
  pc.number("k_x_max_n_per_m", p.k_x_max);
  pc.number("rate_max_n_per_m_s", p.rate_max);
  pc.number("bandwidth_rad_s", p.bandwidth);
  pc.number("damping", p.damping);
  pc.number("start_time_s", p.start_time);
  pc.number("min_amplitude_m", p.min_amplitude);
  pc.finish();
  comp.finish();

  MapReader ident = top.child("identification");
  ident.string("signal", s.identification.signal);
  ident.number("amplitude_m", s.identification.amplitude);
  ident.number("omega_rad_s", s.identification.omega);
  ident.number("chirp_start_hz", s.identification.chirp_start_hz);
  ident.number("chirp_end_hz", s.identification.chirp_end_hz);
  ident.integer("samples", s.identification.samples);
  ident.integer("na", s.identification.na);
  ident.integer("nb", s.identification.nb);
  ident.integer("nk", s.identification.nk);
  {
    std::string method = core::to_string(s.identification.method);
    ident.string("method", method);
    try {
      s.identification.method = core::parse_fit_method(method, "identification.method");
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(e.what());
    }
  }
  ident.numbers("report_frequencies_hz", s.identification.report_frequencies_hz);
  ident.finish();

  MapReader out = top.child("outputs");
  out.boolean("samples", s.outputs.samples);
  out.integer("decimation", s.outputs.decimation);
  out.string("progress", s.outputs.progress);
  out.string("format", s.outputs.format);
  out.finish();

  MapReader metrics = top.child("metrics");
  s.metrics.window = std::numeric_limits<double>::quiet_NaN();  // left out: see parse_scenario
  metrics.number("window_s", s.metrics.window);
  metrics.number("diverged_energy_ratio", s.metrics.diverged_energy_ratio);
  metrics.finish();

  top.finish();
  s.tracking_differentiator.step = s.timing.step;
}

}  // namespace

core::TransferFunction RobotSpec::transfer_function() const {
  if (preset == "custom") {
    return {num, den};
  }
  const double wn2 = omega_n * omega_n;
  return {{wn2 / omega_z, wn2}, {1.0, 2.0 * zeta * omega_n, wn2}};
}

std::int64_t SitsScenario::steps() const {
  return static_cast<std::int64_t>(std::llround(timing.duration / timing.step));
}

std::int64_t SitsScenario::hold_steps() const {
  return delays.control_cycle
             ? static_cast<std::int64_t>(std::llround(timing.control_period / timing.step))
             : 1;
}

double SitsScenario::sensor_delay_steps() const {
  return delays.force_measurement ? rig.sensor_delay / timing.step : 0.0;
}

void validate(const SitsScenario& s) {
  require(s.schema_version == kSchemaVersion, "schema_version", s.schema_version,
          "this hyloop reads schema_version " + std::to_string(kSchemaVersion));
  if (s.name.empty()) throw ScenarioError("name: must not be empty");
  require(s.model.mass >= 1e-3 && s.model.mass <= 1e7, "model.mass_kg", s.model.mass,
          "must be in [1e-3, 1e7] kg");
  require(s.rig.contact.stiffness > 0.0 && s.rig.contact.stiffness <= 1e10,
          "rig.contact.stiffness_n_per_m", s.rig.contact.stiffness, "must be in (0, 1e10] N/m");
  require(s.rig.contact.damping >= 0.0, "rig.contact.damping_ns_per_m", s.rig.contact.damping,
          "must be >= 0 N*s/m");
  const std::string& preset = s.rig.robot.preset;
  if (preset != "default" && preset != "paper" && preset != "second_order" && preset != "custom") {
    throw ScenarioError("rig.robot.preset = \"" + excerpt(preset) +
                        "\": must be one of default, paper, second_order, custom");
  }
  if (preset == "custom") {
    if (s.rig.robot.den.empty() || s.rig.robot.num.empty()) {
      throw ScenarioError("rig.robot: preset custom needs num and den (descending powers of s)");
    }
    require(s.rig.robot.den.front() != 0.0, "rig.robot.den[0]", s.rig.robot.den.front(),
            "leading coefficient must be non-zero");
    require(s.rig.robot.num.size() <= s.rig.robot.den.size(), "rig.robot.num (length)",
            static_cast<double>(s.rig.robot.num.size()),
            "must not exceed den's length (a proper transfer function)");
    require(s.rig.robot.den.size() <= static_cast<std::size_t>(core::kMaxLtiOrder) + 1,
            "rig.robot.den (length)", static_cast<double>(s.rig.robot.den.size()),
            "order must be <= " + std::to_string(core::kMaxLtiOrder));
  } else {
    require(s.rig.robot.omega_n > 0.0, "rig.robot.omega_n_rad_s", s.rig.robot.omega_n,
            "must be > 0");
    require(s.rig.robot.zeta > 0.0, "rig.robot.zeta", s.rig.robot.zeta, "must be > 0");
    require(s.rig.robot.omega_z > 0.0, "rig.robot.omega_z_rad_s", s.rig.robot.omega_z,
            "must be > 0");
  }
  require(s.rig.sensor_delay >= 0.0, "rig.sensor.delay_s", s.rig.sensor_delay, "must be >= 0 s");
  require(s.rig.force_noise_std >= 0.0, "rig.sensor.force_noise_std_n", s.rig.force_noise_std,
          "must be >= 0 N");
  require(s.rig.position_noise_std >= 0.0, "rig.sensor.position_noise_std_m",
          s.rig.position_noise_std, "must be >= 0 m");
  require(s.rig.limits.position_min < s.rig.limits.position_max, "rig.limits.position_min_m",
          s.rig.limits.position_min, "must be < position_max_m");
  require(s.rig.limits.velocity_max > 0.0, "rig.limits.velocity_max_mps", s.rig.limits.velocity_max,
          "must be > 0");
  require(s.safety.acceleration_max > 0.0, "rig.limits.acceleration_max_mps2",
          s.safety.acceleration_max, "must be > 0 (.inf: no limit)");
  require(s.rig.corrupt_message_every >= 0, "rig.faults.corrupt_message_every",
          s.rig.corrupt_message_every, "must be >= 0 (0: off)");
  require(s.safety.rate_limit > 0.0, "safety.rate_limit_mps", s.safety.rate_limit,
          "must be > 0 (.inf: no limit)");
  require(s.safety.watchdog_cycles >= 1 && s.safety.watchdog_cycles <= 100000,
          "safety.watchdog_cycles", s.safety.watchdog_cycles, "must be in [1, 100000]");
  require(std::isfinite(s.safety.stop_deceleration) && s.safety.stop_deceleration > 0.0,
          "safety.stop_deceleration_mps2", s.safety.stop_deceleration, "must be finite and > 0");
  require(std::isfinite(s.acquisition.filter_time_constant) &&
              s.acquisition.filter_time_constant >= 0.0,
          "acquisition.filter_time_constant_s", s.acquisition.filter_time_constant,
          "must be finite and >= 0 (0: off)");
  require(s.model.initial_position >= s.rig.limits.position_min &&
              s.model.initial_position <= s.rig.limits.position_max,
          "model.initial_position_m", s.model.initial_position, "must lie within rig.limits");

  require(s.timing.step >= 1e-6 && s.timing.step <= 1.0, "timing.step_s", s.timing.step,
          "must be in [1e-6, 1] s");
  require(s.timing.duration >= s.timing.step && s.timing.duration <= 1e6, "timing.duration_s",
          s.timing.duration, "must be in [step_s, 1e6] s");
  require(s.timing.duration / s.timing.step <= 5e7, "timing.duration_s", s.timing.duration,
          "duration/step must be <= 5e7 steps");
  double ratio = 0.0;
  require(s.timing.control_period >= s.timing.step &&
              is_integer_ratio(s.timing.control_period, s.timing.step, ratio),
          "timing.control_period_s", s.timing.control_period,
          "must be a whole multiple (>= 1) of timing.step_s = " + format_value(s.timing.step));
  require(s.rig.sensor_delay / s.timing.step <= core::DelayLine::kMaxDelaySteps,
          "rig.sensor.delay_s", s.rig.sensor_delay, "must be at most 1e6 steps");

  const auto& c = s.compensator;
  require(c.switch_time >= 0.0, "compensator.switch_time_s", c.switch_time, "must be >= 0 s");
  try {
    core::validate(c.phase_correction);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(std::string("compensator.phase_correction.") + e.what());
  }
  require(s.tracking_differentiator.r > 0.0, "compensator.tracking_differentiator.r",
          s.tracking_differentiator.r, "must be > 0");
  require(s.tracking_differentiator.h >= s.timing.step, "compensator.tracking_differentiator.h_s",
          s.tracking_differentiator.h, "must be >= timing.step_s = " + format_value(s.timing.step));

  const auto& id = s.identification;
  require(id.amplitude > 0.0, "identification.amplitude_m", id.amplitude, "must be > 0 m");
  require(id.omega > 0.0, "identification.omega_rad_s", id.omega, "must be > 0 rad/s");
  if (id.signal != "sine" && id.signal != "chirp") {
    throw ScenarioError("identification.signal = \"" + excerpt(id.signal) +
                        "\": must be sine (A*sin(omega*t), Eq. 23) or chirp (linear, "
                        "chirp_start_hz to chirp_end_hz)");
  }
  require(id.chirp_start_hz >= 0.0, "identification.chirp_start_hz", id.chirp_start_hz,
          "must be >= 0 Hz");
  require(id.chirp_end_hz > id.chirp_start_hz && id.chirp_end_hz < 0.5 / s.timing.step,
          "identification.chirp_end_hz", id.chirp_end_hz,
          "must be in (chirp_start_hz, 1/(2*timing.step_s)) = (" + format_value(id.chirp_start_hz) +
              ", " + format_value(0.5 / s.timing.step) + ") Hz");
  require(id.na >= 0 && id.na <= 8, "identification.na", id.na, "must be in [0, 8]");
  require(id.nb >= 1 && id.nb <= 8, "identification.nb", id.nb, "must be in [1, 8]");
  require(id.nk >= 0 && id.nk <= 100, "identification.nk", id.nk, "must be in [0, 100]");
  require(id.samples >= 10 * (id.na + id.nb) + id.nk && id.samples <= 10000000,
          "identification.samples", id.samples,
          "must be in [10*(na+nb)+nk, 1e7] = [" + std::to_string(10 * (id.na + id.nb) + id.nk) +
              ", 1e7]");
  for (std::size_t i = 0; i < id.report_frequencies_hz.size(); ++i) {
    require(id.report_frequencies_hz[i] > 0.0,
            "identification.report_frequencies_hz[" + std::to_string(i) + "]",
            id.report_frequencies_hz[i], "must be > 0 Hz");
  }

  require(s.outputs.decimation >= 1, "outputs.decimation", s.outputs.decimation, "must be >= 1");
  require_progress_mode("outputs.progress", s.outputs.progress);
  require_output_format("outputs.format", s.outputs.format);
  if (s.metrics.window > s.timing.duration) {
    const std::string d = format_value(s.timing.duration);
    invalid("metrics.window_s", s.metrics.window,
            "longer than the run (timing.duration_s = " + d + "): give at most " + d +
                " (--set metrics.window_s=" + d + "), or leave metrics.window_s out (" +
                format_value(kDefaultMetricsWindow) + " s, or the whole of a shorter run)");
  }
  require(s.metrics.window > 0.0, "metrics.window_s", s.metrics.window,
          "must be in (0, timing.duration_s]");
  require(s.metrics.diverged_energy_ratio > 1.0, "metrics.diverged_energy_ratio",
          s.metrics.diverged_energy_ratio, "must be > 1");
}

namespace {

// A compensator whose every gain of K_h is 0 (compensator.hpp) compensates nothing.
std::string zero_gain_notice(const SitsScenario& s) {
  const core::CompensatorConfig& c = s.compensator;
  std::string gains;
  switch (c.kind) {
    case core::CompensatorKind::kNone:
      return {};
    case core::CompensatorKind::kFixedGain:
      if (c.k_eps0 != 0.0) return {};
      gains = "k_eps0 = 0";
      break;
    case core::CompensatorKind::kLinearGain:
      if (c.k_eps0 != 0.0 || c.k_eps1 != 0.0) return {};
      gains = "k_eps0 = k_eps1 = 0";
      break;
    case core::CompensatorKind::kSwitching:
      if (c.k_eps0 != 0.0 || c.k_eps1 != 0.0 || c.k_eps2 != 0.0) return {};
      gains = "k_eps0 = k_eps1 = k_eps2 = 0";
      break;
  }
  return "compensator.type = " + std::string(core::to_string(c.kind)) + " with " + gains +
         ": K_h is 0 throughout, so the loop runs uncompensated (as type: none); set the "
         "gains in N*s/m (`hyloop tune SCENARIO` searches them, `hyloop analyze SCENARIO --k-h "
         "K` checks one) or write type: none";
}

}  // namespace

SitsScenario parse_scenario(const std::string& yaml_text, const std::string& origin,
                            const std::vector<std::string>& overrides) {
  const YAML::Node root = load_yaml(yaml_text, origin, overrides);
  SitsScenario s;
  parse_into(root, origin, s);
  if (std::isnan(s.metrics.window)) {
    s.metrics.window = std::min(kDefaultMetricsWindow, s.timing.duration);
    if (s.metrics.window < kDefaultMetricsWindow && s.metrics.window > 0.0) {
      s.notices.push_back(
          "metrics.window_s: the run (timing.duration_s = " + format_value(s.timing.duration) +
          ") is shorter than the default " + format_value(kDefaultMetricsWindow) +
          " s: the summary metrics use the whole run");
    }
  }
  validate_with_origin(origin, [&] { validate(s); });
  if (std::string n = zero_gain_notice(s); !n.empty()) s.notices.push_back(std::move(n));
  return s;
}

SitsScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_scenario_text(path), path, overrides);
}

std::string to_yaml(const SitsScenario& s) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  e << YAML::BeginMap;
  e << YAML::Key << "schema_version" << YAML::Value << s.schema_version;
  e << YAML::Key << "name" << YAML::Value << s.name;
  e << YAML::Key << "description" << YAML::Value << s.description;
  e << YAML::Key << "kind" << YAML::Value << "sits";
  e << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "mass_kg" << YAML::Value << s.model.mass;
  e << YAML::Key << "initial_position_m" << YAML::Value << s.model.initial_position;
  e << YAML::Key << "initial_velocity_mps" << YAML::Value << s.model.initial_velocity;
  e << YAML::EndMap;
  e << YAML::Key << "rig" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "contact" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "stiffness_n_per_m" << YAML::Value << s.rig.contact.stiffness;
  e << YAML::Key << "damping_ns_per_m" << YAML::Value << s.rig.contact.damping;
  e << YAML::EndMap;
  e << YAML::Key << "robot" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "preset" << YAML::Value << s.rig.robot.preset;
  if (s.rig.robot.preset == "custom") {
    e << YAML::Key << "num" << YAML::Value << YAML::Flow << s.rig.robot.num;
    e << YAML::Key << "den" << YAML::Value << YAML::Flow << s.rig.robot.den;
  } else {
    e << YAML::Key << "omega_n_rad_s" << YAML::Value << s.rig.robot.omega_n;
    e << YAML::Key << "zeta" << YAML::Value << s.rig.robot.zeta;
    e << YAML::Key << "omega_z_rad_s" << YAML::Value << s.rig.robot.omega_z;
  }
  e << YAML::EndMap;
  e << YAML::Key << "sensor" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "delay_s" << YAML::Value << s.rig.sensor_delay;
  e << YAML::Key << "force_noise_std_n" << YAML::Value << s.rig.force_noise_std;
  e << YAML::Key << "position_noise_std_m" << YAML::Value << s.rig.position_noise_std;
  e << YAML::Key << "seed" << YAML::Value << s.rig.seed;
  e << YAML::EndMap;
  e << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "position_min_m" << YAML::Value << s.rig.limits.position_min;
  e << YAML::Key << "position_max_m" << YAML::Value << s.rig.limits.position_max;
  e << YAML::Key << "velocity_max_mps" << YAML::Value << s.rig.limits.velocity_max;
  e << YAML::Key << "acceleration_max_mps2" << YAML::Value << s.safety.acceleration_max;
  e << YAML::EndMap;
  e << YAML::Key << "faults" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "corrupt_message_every" << YAML::Value << s.rig.corrupt_message_every;
  e << YAML::EndMap;
  e << YAML::EndMap;
  e << YAML::Key << "acquisition" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "tare" << YAML::Value << s.acquisition.tare;
  e << YAML::Key << "filter_time_constant_s" << YAML::Value << s.acquisition.filter_time_constant;
  e << YAML::EndMap;
  e << YAML::Key << "safety" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "rate_limit_mps" << YAML::Value << s.safety.rate_limit;
  e << YAML::Key << "watchdog_cycles" << YAML::Value << s.safety.watchdog_cycles;
  e << YAML::Key << "stop_deceleration_mps2" << YAML::Value << s.safety.stop_deceleration;
  e << YAML::EndMap;
  e << YAML::Key << "delays" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "force_measurement" << YAML::Value << s.delays.force_measurement;
  e << YAML::Key << "control_cycle" << YAML::Value << s.delays.control_cycle;
  e << YAML::Key << "robot_response" << YAML::Value << s.delays.robot_response;
  e << YAML::EndMap;
  e << YAML::Key << "timing" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "step_s" << YAML::Value << s.timing.step;
  e << YAML::Key << "control_period_s" << YAML::Value << s.timing.control_period;
  e << YAML::Key << "duration_s" << YAML::Value << s.timing.duration;
  e << YAML::EndMap;
  e << YAML::Key << "compensator" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "type" << YAML::Value << std::string(core::to_string(s.compensator.kind));
  e << YAML::Key << "k_eps0" << YAML::Value << s.compensator.k_eps0;
  e << YAML::Key << "k_eps1" << YAML::Value << s.compensator.k_eps1;
  e << YAML::Key << "k_eps2" << YAML::Value << s.compensator.k_eps2;
  e << YAML::Key << "switch_time_s" << YAML::Value << s.compensator.switch_time;
  e << YAML::Key << "bumpless" << YAML::Value << s.compensator.bumpless;
  e << YAML::Key << "tracking_differentiator" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "r" << YAML::Value << s.tracking_differentiator.r;
  e << YAML::Key << "h_s" << YAML::Value << s.tracking_differentiator.h;
  e << YAML::EndMap;
  const core::PhaseCorrectionConfig& p = s.compensator.phase_correction;
  e << YAML::Key << "phase_correction" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "enabled" << YAML::Value << p.enabled;
  e << YAML::Key << "k_x_initial_n_per_m" << YAML::Value << p.k_x_initial;
  e << YAML::Key << "k_x_max_n_per_m" << YAML::Value << p.k_x_max;
  e << YAML::Key << "rate_max_n_per_m_s" << YAML::Value << p.rate_max;
  e << YAML::Key << "bandwidth_rad_s" << YAML::Value << p.bandwidth;
  e << YAML::Key << "damping" << YAML::Value << p.damping;
  e << YAML::Key << "start_time_s" << YAML::Value << p.start_time;
  e << YAML::Key << "min_amplitude_m" << YAML::Value << p.min_amplitude;
  e << YAML::EndMap;
  e << YAML::EndMap;
  e << YAML::Key << "identification" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "signal" << YAML::Value << s.identification.signal;
  e << YAML::Key << "amplitude_m" << YAML::Value << s.identification.amplitude;
  e << YAML::Key << "omega_rad_s" << YAML::Value << s.identification.omega;
  e << YAML::Key << "chirp_start_hz" << YAML::Value << s.identification.chirp_start_hz;
  e << YAML::Key << "chirp_end_hz" << YAML::Value << s.identification.chirp_end_hz;
  e << YAML::Key << "samples" << YAML::Value << s.identification.samples;
  e << YAML::Key << "na" << YAML::Value << s.identification.na;
  e << YAML::Key << "nb" << YAML::Value << s.identification.nb;
  e << YAML::Key << "nk" << YAML::Value << s.identification.nk;
  e << YAML::Key << "method" << YAML::Value << core::to_string(s.identification.method);
  e << YAML::Key << "report_frequencies_hz" << YAML::Value << YAML::Flow
    << s.identification.report_frequencies_hz;
  e << YAML::EndMap;
  e << YAML::Key << "outputs" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "samples" << YAML::Value << s.outputs.samples;
  e << YAML::Key << "decimation" << YAML::Value << s.outputs.decimation;
  e << YAML::Key << "progress" << YAML::Value << s.outputs.progress;
  e << YAML::Key << "format" << YAML::Value << s.outputs.format;
  e << YAML::EndMap;
  e << YAML::Key << "metrics" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "window_s" << YAML::Value << s.metrics.window;
  e << YAML::Key << "diverged_energy_ratio" << YAML::Value << s.metrics.diverged_energy_ratio;
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace hyloop::experiment
