#include "hyloop/kinds/sits/sits_scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <set>
#include <sstream>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/stability_guard_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/sits/sits_dynamics.hpp"

namespace hyloop::experiment {
namespace {

namespace f = fields;
using S = SitsScenario;

// compensator.type and identification.method: enums held as C++ enums.
BoundField<S> compensator_type() {
  BoundField<S> b{
      f::spec("compensator.type", "", FieldType::kEnum, {},
              "the schedule of K_h (see \"Compensators and how to pick a gain\")"),
      [](MapReader& r, const std::string& k, S& s) {
        std::string type(core::to_string(s.compensator.kind));
        r.string(k, type);
        try {
          s.compensator.kind = core::parse_compensator_kind(type);
        } catch (const std::invalid_argument& e) {
          r.fail(r.field(k), excerpt(e.what()));
        }
      },
      [](YAML::Emitter& e, const std::string& k, const S& s) {
        e << YAML::Key << k << YAML::Value << std::string(core::to_string(s.compensator.kind));
      },
      [](const S& s) { return nlohmann::json(std::string(core::to_string(s.compensator.kind))); }};
  b.spec.values = {"none", "fgc", "lgc", "scvg", "tdpa"};
  return b;
}

BoundField<S> identification_method() {
  BoundField<S> b{
      f::spec("identification.method", "", FieldType::kEnum, {},
              "the estimator (docs/identification.md): oe (output error), iv (refined "
              "instrumental variable) or arx (equation error, biased by output noise)"),
      [](MapReader& r, const std::string& k, S& s) {
        std::string method = core::to_string(s.identification.method);
        r.string(k, method);
        try {
          s.identification.method = core::parse_fit_method(method, "identification.method");
        } catch (const std::invalid_argument& e) {
          throw ScenarioError(e.what());
        }
      },
      [](YAML::Emitter& e, const std::string& k, const S& s) {
        e << YAML::Key << k << YAML::Value << core::to_string(s.identification.method);
      },
      [](const S& s) { return nlohmann::json(core::to_string(s.identification.method)); }};
  b.spec.values = {"oe", "iv", "arx"};
  return b;
}

// The fields, then the rig driver's block (rig_driver_fields.hpp) and the stability guard's
// (stability_guard_fields.hpp).
std::vector<BoundField<S>> with_guard(std::vector<BoundField<S>> b) {
  for (auto& x : f::rig_driver<S>([](auto& s) -> auto& { return s.rig.driver; })) {
    b.push_back(std::move(x));
  }
  for (auto& x : f::energy_guard<S>(
           [](auto& s) -> auto& { return s.guard; }, "energy")) {
    b.push_back(std::move(x));
  }
  return b;
}

const BoundTable<S>& sits_table() {
  static const BoundTable<S> table(
      "sits",
      "Structure-in-the-SITS loop: a numerical mass in contact with a rig through a robot (SITS "
      "paper)",
      with_guard({
          f::integer<S>(
              "schema_version", "", closed(1, 1), "the scenario format; this hyloop reads 1",
              [](auto& s) -> auto& { return s.schema_version; }),
          f::text<S>(
              "name", FieldType::kString, {}, "names the run (non-empty)",
              [](auto& s) -> auto& { return s.name; }),
          f::text<S>(
              "description", FieldType::kString, {}, "one line for the report",
              [](auto& s) -> auto& { return s.description; }),
          f::kind<S>("sits", true),
          f::number<S>(
              "model.mass_kg", "kg", closed(1e-3, 1e7), "m_e of the numerical target",
              [](auto& s) -> auto& { return s.model.mass; }),
          f::number<S>(
              "model.initial_position_m", "m", {}, "x(0); must lie within rig.limits",
              [](auto& s) -> auto& { return s.model.initial_position; }),
          f::number<S>(
              "model.initial_velocity_mps", "m/s", {}, "V0, what sets the loop vibrating",
              [](auto& s) -> auto& { return s.model.initial_velocity; }),
          f::number<S>(
              "rig.contact.stiffness_n_per_m", "N/m", left_open(0, 1e10),
              "K_tc, the contact stiffness",
              [](auto& s) -> auto& { return s.rig.contact.stiffness; }),
          f::number<S>(
              "rig.contact.damping_ns_per_m", "N*s/m", at_least(0), "B_tc, the contact damping",
              [](auto& s) -> auto& { return s.rig.contact.damping; }),
          BoundField<S>{[] {
                          FieldSpec p =
                              f::spec("rig.robot.preset", "", FieldType::kEnum, {},
                                      "G_R(s) of the robot: default (omega_n = 2*pi*40, zeta = "
                                      "0.6, omega_z = 300), paper (2*pi*30, 0.35, 299.76), "
                                      "second_order (the given omega_n, zeta, omega_z), custom "
                                      "(num, den)");
                          p.values = {"default", "paper", "second_order", "custom"};
                          return p;
                        }(),
                        [](MapReader& r, const std::string& k, S& s) {
                          r.string(k, s.rig.robot.preset);
                          if (s.rig.robot.preset == "paper") {
                            s.rig.robot.omega_n = 2.0 * std::numbers::pi * 30.0;
                            s.rig.robot.zeta = 0.35;
                            s.rig.robot.omega_z = 299.76;
                          }
                        },
                        [](YAML::Emitter& e, const std::string& k, const S& s) {
                          e << YAML::Key << k << YAML::Value << s.rig.robot.preset;
                        },
                        [](const S& s) { return nlohmann::json(s.rig.robot.preset); }},
          f::emitted_if(f::used_when(f::number<S>(
                                         "rig.robot.omega_n_rad_s", "rad/s", above(0),
                                         "omega_n of the second-order form (paper: 2*pi*30)",
                                         [](auto& s) -> auto& { return s.rig.robot.omega_n; }),
                                     "preset", {"default", "paper", "second_order"}),
                        [](const S& s) { return s.rig.robot.preset != "custom"; }),
          f::emitted_if(f::used_when(f::number<S>(
                                         "rig.robot.zeta", "", above(0),
                                         "zeta of the second-order form (paper: 0.35)",
                                         [](auto& s) -> auto& { return s.rig.robot.zeta; }),
                                     "preset", {"default", "paper", "second_order"}),
                        [](const S& s) { return s.rig.robot.preset != "custom"; }),
          f::emitted_if(f::used_when(f::number<S>(
                                         "rig.robot.omega_z_rad_s", "rad/s", above(0),
                                         "omega_z, the zero (paper: 299.76)",
                                         [](auto& s) -> auto& { return s.rig.robot.omega_z; }),
                                     "preset", {"default", "paper", "second_order"}),
                        [](const S& s) { return s.rig.robot.preset != "custom"; }),
          f::emitted_if(f::required_when(f::numbers<S>(
                                             "rig.robot.num", "", {},
                                             "numerator, descending powers of s (length <= den's)",
                                             [](auto& s) -> auto& { return s.rig.robot.num; }),
                                         "preset", {"custom"}),
                        [](const S& s) { return s.rig.robot.preset == "custom"; }),
          f::emitted_if(
              f::required_when(f::numbers<S>(
                                   "rig.robot.den", "", {},
                                   "denominator, descending powers of s (den[0] != 0, order <= " +
                                       std::to_string(core::kMaxLtiOrder) + ")",
                                   [](auto& s) -> auto& { return s.rig.robot.den; }),
                               "preset", {"custom"}),
              [](const S& s) { return s.rig.robot.preset == "custom"; }),
          f::number<S>(
              "rig.sensor.delay_s", "s", at_least(0),
              "tau_s of the force measurement, at most 1e6 steps (fractional steps interpolate)",
              [](auto& s) -> auto& { return s.rig.sensor_delay; }),
          f::number<S>(
              "rig.sensor.force_noise_std_n", "N", at_least(0), "white noise on the measured force",
              [](auto& s) -> auto& { return s.rig.force_noise_std; }),
          f::number<S>(
              "rig.sensor.position_noise_std_m", "m", at_least(0),
              "white noise on the measured position",
              [](auto& s) -> auto& { return s.rig.position_noise_std; }),
          f::seed<S>(
              "rig.sensor.seed", "seed of the sensor noise",
              [](auto& s) -> auto& { return s.rig.seed; }),
          f::number<S>(
              "rig.limits.position_min_m", "m", {},
              "lower end of the stroke, < position_max_m; leaving the stroke stops the run",
              [](auto& s) -> auto& { return s.rig.limits.position_min; }),
          f::number<S>(
              "rig.limits.position_max_m", "m", {}, "upper end of the stroke",
              [](auto& s) -> auto& { return s.rig.limits.position_max; }),
          f::number<S>(
              "rig.limits.velocity_max_mps", "m/s", above(0),
              "|v| bound; faster commands are rejected",
              [](auto& s) -> auto& { return s.rig.limits.velocity_max; }),
          f::limit<S>(
              "rig.limits.acceleration_max_mps2", "m/s^2", above(0),
              "the safety window's bound on the command's implied acceleration (.inf: no limit; "
              "docs/scenarios.md \"Acceleration limit\")",
              [](auto& s) -> auto& { return s.safety.acceleration_max; }),
          f::integer<S>(
              "rig.faults.corrupt_message_every", "", at_least(0),
              "the rig emulator service sends every n-th measurement message corrupted (a bad "
              "link; the sensor service rejects and counts it; hyloop run has no link and ignores "
              "it); 0: off",
              [](auto& s) -> auto& { return s.rig.corrupt_message_every; }),
          f::boolean<S>(
              "acquisition.tare",
              "the sensor service zeroes the force at the first sample before arming",
              [](auto& s) -> auto& { return s.acquisition.tare; }),
          f::number<S>(
              "acquisition.filter_time_constant_s", "s", at_least(0),
              "tau_f of the sensor's first-order anti-aliasing low-pass (0: off; its delay adds to "
              "the measured delay)",
              [](auto& s) -> auto& { return s.acquisition.filter_time_constant; }),
          f::limit<S>(
              "safety.rate_limit_mps", "m/s", above(0),
              "the actuator's bound on |dx|/T of the command (.inf: no limit)",
              [](auto& s) -> auto& { return s.safety.rate_limit; }),
          f::integer<S>(
              "safety.watchdog_cycles", "", closed(1, 100000),
              "cycles without a valid command before the actuator's watchdog trips",
              [](auto& s) -> auto& { return s.safety.watchdog_cycles; }),
          f::number<S>(
              "safety.stop_deceleration_mps2", "m/s^2", above(0),
              "the ramp to rest on a watchdog trip or an e-stop; it must reach rest within 1 s "
              "(docs/scenarios.md \"Stop time\")",
              [](auto& s) -> auto& { return s.safety.stop_deceleration; }),
          f::boolean<S>(
              "delays.force_measurement", "the sensor delay is on (off: d = 0)",
              [](auto& s) -> auto& { return s.delays.force_measurement; }),
          f::boolean<S>(
              "delays.control_cycle", "the command is held for control_period_s (off: h = 1)",
              [](auto& s) -> auto& { return s.delays.control_cycle; }),
          f::boolean<S>(
              "delays.robot_response", "the robot's G_R is on (off: the robot is bypassed)",
              [](auto& s) -> auto& { return s.delays.robot_response; }),
          f::number<S>(
              "timing.step_s", "s", closed(1e-6, 1), "T, the step",
              [](auto& s) -> auto& { return s.timing.step; }),
          f::number<S>(
              "timing.control_period_s", "s", {}, "Tc, a whole multiple (>= 1) of step_s",
              [](auto& s) -> auto& { return s.timing.control_period; }),
          f::number<S>(
              "timing.duration_s", "s", closed(1e-6, 1e6),
              "the run, >= step_s and at most 5e7 steps",
              [](auto& s) -> auto& { return s.timing.duration; }),
          compensator_type(),
          f::used_when(f::number<S>(
                           "compensator.k_eps0", "N*s/m", {}, "K_eps0",
                           [](auto& s) -> auto& { return s.compensator.k_eps0; }),
                       "type", {"fgc", "lgc", "scvg"}),
          f::used_when(f::number<S>(
                           "compensator.k_eps1", "N*s/m per s", {}, "K_eps1",
                           [](auto& s) -> auto& { return s.compensator.k_eps1; }),
                       "type", {"lgc", "scvg"}),
          f::used_when(f::number<S>(
                           "compensator.k_eps2", "N*s/m per J*s", {}, "K_eps2",
                           [](auto& s) -> auto& { return s.compensator.k_eps2; }),
                       "type", {"scvg"}),
          f::used_when(f::number<S>(
                           "compensator.switch_time_s", "s", at_least(0), "t_eps of SCVG",
                           [](auto& s) -> auto& { return s.compensator.switch_time; }),
                       "type", {"scvg"}),
          f::used_when(
              f::boolean<S>(
                  "compensator.bumpless", "SCVG continues from K_eps0 + K_eps1*t_eps at the switch",
                  [](auto& s) -> auto& { return s.compensator.bumpless; }),
              "type", {"scvg"}),
          f::emitted_if(  // only for tdpa: the other kinds' resolved scenarios stay as they were
              f::used_when(f::number<S>(
                               "compensator.max_damping_ns_per_m", "N*s/m", above(0),
                               "TDPA: the passivity controller's largest damping alpha",
                               [](auto& s) -> auto& { return s.compensator.max_damping; }),
                           "type", {"tdpa"}),
              [](const S& s) { return s.compensator.kind == core::CompensatorKind::kPassivity; }),
          f::number<S>(
              "compensator.tracking_differentiator.r", "", above(0),
              "velocity factor r of the tracking differentiator",
              [](auto& s) -> auto& { return s.tracking_differentiator.r; }),
          f::number<S>(
              "compensator.tracking_differentiator.h_s", "s", {},
              "filtering factor h, >= timing.step_s",
              [](auto& s) -> auto& { return s.tracking_differentiator.h; }),
          f::boolean<S>(
              "compensator.phase_correction.enabled",
              "adds the stiffness correction K_x*X_R to F' (any type; core/phase_correction.hpp)",
              [](auto& s) -> auto& { return s.compensator.phase_correction.enabled; }),
          f::number<S>(
              "compensator.phase_correction.k_x_initial_n_per_m", "N/m", {},
              "K_x at the start, |value| <= k_x_max_n_per_m",
              [](auto& s) -> auto& { return s.compensator.phase_correction.k_x_initial; }),
          f::number<S>(
              "compensator.phase_correction.k_x_max_n_per_m", "N/m", at_least(0), "|K_x| bound",
              [](auto& s) -> auto& { return s.compensator.phase_correction.k_x_max; }),
          f::number<S>(
              "compensator.phase_correction.rate_max_n_per_m_s", "N/m/s", above(0),
              "bound on |dK_x/dt|",
              [](auto& s) -> auto& { return s.compensator.phase_correction.rate_max; }),
          f::number<S>(
              "compensator.phase_correction.bandwidth_rad_s", "rad/s", left_open(0, 100),
              "omega_a of the phase-locked loop",
              [](auto& s) -> auto& { return s.compensator.phase_correction.bandwidth; }),
          f::number<S>(
              "compensator.phase_correction.damping", "", left_open(0, 10),
              "zeta_a of the phase-locked loop",
              [](auto& s) -> auto& { return s.compensator.phase_correction.damping; }),
          f::number<S>(
              "compensator.phase_correction.start_time_s", "s", at_least(0),
              "K_x adapts from this time",
              [](auto& s) -> auto& { return s.compensator.phase_correction.start_time; }),
          f::number<S>(
              "compensator.phase_correction.min_amplitude_m", "m", at_least(0),
              "K_x adapts only while both the target's and the twin's amplitudes exceed it",
              [](auto& s) -> auto& { return s.compensator.phase_correction.min_amplitude; }),
          f::text<S>(
              "identification.signal", FieldType::kEnum, {"sine", "chirp"},
              "sine: A*sin(omega*t) (Eq. 23); chirp: linear from chirp_start_hz to "
              "chirp_end_hz",
              [](auto& s) -> auto& { return s.identification.signal; }),
          f::number<S>(
              "identification.amplitude_m", "m", above(0), "A_R",
              [](auto& s) -> auto& { return s.identification.amplitude; }),
          f::used_when(f::number<S>(
                           "identification.omega_rad_s", "rad/s", above(0), "omega_R",
                           [](auto& s) -> auto& { return s.identification.omega; }),
                       "signal", {"sine"}),
          f::used_when(f::number<S>(
                           "identification.chirp_start_hz", "Hz", at_least(0), "f0",
                           [](auto& s) -> auto& { return s.identification.chirp_start_hz; }),
                       "signal", {"chirp"}),
          f::used_when(f::number<S>(
                           "identification.chirp_end_hz", "Hz", above(0),
                           "f1, in (chirp_start_hz, 1/(2*timing.step_s))",
                           [](auto& s) -> auto& { return s.identification.chirp_end_hz; }),
                       "signal", {"chirp"}),
          f::integer<S>(
              "identification.samples", "", closed(0, 1e7), "N_R, in [10*(na+nb)+nk, 1e7]",
              [](auto& s) -> auto& { return s.identification.samples; }),
          f::integer<S>(
              "identification.na", "", closed(0, 8), "ARX order of A",
              [](auto& s) -> auto& { return s.identification.na; }),
          f::integer<S>(
              "identification.nb", "", closed(1, 8), "ARX order of B",
              [](auto& s) -> auto& { return s.identification.nb; }),
          f::integer<S>(
              "identification.nk", "", closed(0, 100), "input delay, steps",
              [](auto& s) -> auto& { return s.identification.nk; }),
          identification_method(),
          f::numbers<S>(
              "identification.report_frequencies_hz", "Hz", above(0),
              "where the identification report compares the fit with G_R",
              [](auto& s) -> auto& { return s.identification.report_frequencies_hz; }),
          f::boolean<S>(
              "outputs.samples", "keep samples.csv",
              [](auto& s) -> auto& { return s.outputs.samples; }),
          f::integer<S>(
              "outputs.decimation", "", at_least(1), "record every n-th step",
              [](auto& s) -> auto& { return s.outputs.decimation; }),
          f::text<S>(
              "outputs.progress", FieldType::kEnum, {"auto", "on", "off"},
              "progress line on stderr (auto: when a terminal)",
              [](auto& s) -> auto& { return s.outputs.progress; }),
          f::text<S>(
              "outputs.format", FieldType::kEnum, {"csv", "hdf5"},
              "csv (samples.csv) or hdf5 (also run.h5, recorded while the run runs; hyloop export "
              "converts a run afterwards)",
              [](auto& s) -> auto& { return s.outputs.format; }),
          f::with_default(
              BoundField<S>{
                  f::spec("metrics.window_s", "s", FieldType::kNumber, above(0),
                          "final window of the summary metrics, in (0, timing.duration_s]"),
                  [](MapReader& r, const std::string& k, S& s) {
                    s.metrics.window = std::numeric_limits<double>::quiet_NaN();  // left out
                    r.number(k, s.metrics.window);
                  },
                  [](YAML::Emitter& e, const std::string& k, const S& s) {
                    e << YAML::Key << k << YAML::Value << s.metrics.window;
                  },
                  {}},
              kDefaultMetricsWindow, "5, or the whole run when shorter"),
          f::number<S>(
              "metrics.diverged_energy_ratio", "", above(1),
              "diverged when energy_ratio exceeds it",
              [](auto& s) -> auto& { return s.metrics.diverged_energy_ratio; }),
      }));
  return table;
}

void parse_into(const YAML::Node& root, const std::string& origin, SitsScenario& s) {
  sits_table().parse(root, origin, s);
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
  }
  require(s.rig.limits.position_min < s.rig.limits.position_max, "rig.limits.position_min_m",
          s.rig.limits.position_min, "must be < position_max_m");
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
  // An e-stop's ramp, at min(stop deceleration, acceleration bound), ends within kMaxStopTime.
  const hal::SafetyConfig safety = sits_safety_config(s);
  const std::string speed = "min(rig.limits.velocity_max_mps, safety.rate_limit_mps)";
  const std::string window = "rig.limits.position_max_m - position_min_m";
  require_stop_deceleration(safety, "safety.stop_deceleration_mps2", s.safety.stop_deceleration,
                            "m/s^2", speed, window);
  require_stop_deceleration(safety, "rig.limits.acceleration_max_mps2", s.safety.acceleration_max,
                            "m/s^2", speed, window);

  const auto& c = s.compensator;
  try {
    core::validate(c.phase_correction);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(std::string("compensator.phase_correction.") + e.what());
  }
  require(s.tracking_differentiator.h >= s.timing.step, "compensator.tracking_differentiator.h_s",
          s.tracking_differentiator.h, "must be >= timing.step_s = " + format_value(s.timing.step));

  const auto& id = s.identification;
  if (id.signal != "sine" && id.signal != "chirp") {
    throw ScenarioError("identification.signal = \"" + excerpt(id.signal) +
                        "\": must be sine (A*sin(omega*t), Eq. 23) or chirp (linear, "
                        "chirp_start_hz to chirp_end_hz)");
  }
  require(id.chirp_end_hz > id.chirp_start_hz && id.chirp_end_hz < 0.5 / s.timing.step,
          "identification.chirp_end_hz", id.chirp_end_hz,
          "must be in (chirp_start_hz, 1/(2*timing.step_s)) = (" + format_value(id.chirp_start_hz) +
              ", " + format_value(0.5 / s.timing.step) + ") Hz");
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
  validate_energy_guard(s.guard.config);
  validate_rig_driver(s.rig.driver, s.timing.step);
}

namespace {

// A compensator whose every gain of K_h is 0 (compensator.hpp) compensates nothing.
std::string zero_gain_notice(const SitsScenario& s) {
  const core::CompensatorConfig& c = s.compensator;
  std::string gains;
  switch (c.kind) {
    case core::CompensatorKind::kNone:
    case core::CompensatorKind::kPassivity:  // no gains: its damping follows the observed energy
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
  return parse_scenario(load_yaml(yaml_text, origin, overrides), origin);
}

SitsScenario parse_scenario(const YAML::Node& root, const std::string& origin) {
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

std::string to_yaml(const SitsScenario& s) { return sits_table().emit(s); }

const FieldTable& sits_field_table() { return sits_table().table(); }

}  // namespace hyloop::experiment
