// The RHT scenario (rht_experiment.hpp): its fields declared once (parse, emit, schema, docs).
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/stability_guard_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/rht/rht_dynamics.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"

namespace hyloop::experiment {
namespace {

namespace f = fields;
using R = RhtScenario;

// ATS's and AMB's fields are emitted only for their type: the resolved scenario of every other
// RHT run stays as it was.
BoundField<R> ats(BoundField<R> b) {
  return f::emitted_if(f::used_when(std::move(b), "type", {"ats"}),
                       [](const R& s) { return s.compensator.type == "ats"; });
}
BoundField<R> amb(BoundField<R> b) {
  return f::emitted_if(f::used_when(std::move(b), "type", {"amb"}),
                       [](const R& s) { return s.compensator.type == "amb"; });
}

// The run's name, the structure, the specimen and the ground motion.
void add_rht_header_fields(std::vector<BoundField<R>>& b) {
  for (BoundField<R> x : {
           f::integer<R>(
               "schema_version", "", closed(1, 1), "the scenario format; this hyloop reads 1",
               [](auto& s) -> auto& { return s.schema_version; }),
           f::text<R>(
               "name", FieldType::kString, {}, "names the run",
               [](auto& s) -> auto& { return s.name; }),
           f::text<R>(
               "description", FieldType::kString, {}, "one line for the report",
               [](auto& s) -> auto& { return s.description; }),
           f::kind<R>("rht", true),
           f::number<R>(
               "structure.mass_kg", "kg", closed(1e-3, 1e9), "the storey's mass m",
               [](auto& s) -> auto& { return s.structure.mass; }),
           f::number<R>(
               "structure.damping_ns_per_m", "N*s/m", at_least(0), "numerical damping c",
               [](auto& s) -> auto& { return s.structure.damping; }),
           f::number<R>(
               "structure.numerical_stiffness_n_per_m", "N/m", at_least(0),
               "stiffness kept in the model (the specimen carries the storey's)",
               [](auto& s) -> auto& { return s.structure.numerical_stiffness; }),
           f::number<R>(
               "specimen.stiffness_n_per_m", "N/m", at_least(0),
               "the physical specimen's stiffness (default: period 1 s with 1000 kg)",
               [](auto& s) -> auto& { return s.specimen.stiffness; }),
           f::number<R>(
               "specimen.damping_ns_per_m", "N*s/m", at_least(0), "c of the specimen",
               [](auto& s) -> auto& { return s.specimen.damping; }),
           f::text<R>(
               "ground_motion.file", FieldType::kFile, {},
               "the record: a data file (docs/scenarios.md \"Data files\")",
               [](auto& s) -> auto& { return s.ground_motion.file; }),
           f::text<R>(
               "ground_motion.format", FieldType::kEnum, {"auto", "at2", "two_column"},
               "at2 (PEER) or two_column (time, acceleration); auto: by content",
               [](auto& s) -> auto& { return s.ground_motion.format; }),
           f::text<R>(
               "ground_motion.unit", FieldType::kEnum, {"g", "m/s2", "m/s^2"},
               "acceleration unit of a two-column file",
               [](auto& s) -> auto& { return s.ground_motion.unit; }),
           f::number<R>(
               "ground_motion.peak_g", "g", closed(0, 5),
               "the record is scaled to this peak (0 keeps the record's)",
               [](auto& s) -> auto& { return s.ground_motion.peak_g; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The servo-hydraulic actuator: its G(s), variation, noise and limits.
void add_rht_servo_fields(std::vector<BoundField<R>>& b) {
  for (BoundField<R> x : {
           f::number<R>(
               "servo.omega_rad_s", "rad/s", above(0),
               "omega of the actuator G(s) = omega^2/(s^2 + 2*zeta*omega*s + omega^2)",
               [](auto& s) -> auto& { return s.servo.omega; }),
           f::number<R>(
               "servo.zeta", "", above(0), "zeta of G(s)",
               [](auto& s) -> auto& { return s.servo.zeta; }),
           f::boolean<R>(
               "servo.varying", "omega varies between omega_min_rad_s and omega_max_rad_s",
               [](auto& s) -> auto& { return s.servo.varying; }),
           f::used_when(
               f::number<R>(
                   "servo.omega_min_rad_s", "rad/s", above(0), "lowest omega, <= omega_max_rad_s",
                   [](auto& s) -> auto& { return s.servo.omega_min; }),
               "varying", {"true"}),
           f::used_when(f::number<R>(
                            "servo.omega_max_rad_s", "rad/s", {}, "highest omega",
                            [](auto& s) -> auto& { return s.servo.omega_max; }),
                        "varying", {"true"}),
           f::used_when(f::number<R>(
                            "servo.variation_period_s", "s", above(0), "the period of omega(t)",
                            [](auto& s) -> auto& { return s.servo.period; }),
                        "varying", {"true"}),
           f::number<R>(
               "servo.noise_std_m", "m", at_least(0), "noise on the measured displacement",
               [](auto& s) -> auto& { return s.servo.noise_std; }),
           f::seed<R>(
               "servo.seed", "seed of the noise and the variation",
               [](auto& s) -> auto& { return s.servo.seed; }),
           f::number<R>(
               "servo.stroke_m", "m", above(0),
               "a command beyond +- stroke is never sent and stops the run",
               [](auto& s) -> auto& { return s.servo.stroke; }),
           f::limit<R>(
               "servo.acceleration_max_mps2", "m/s^2", above(0),
               "bound on the command's implied acceleration (.inf: no limit; \"Acceleration "
               "limit\")",
               [](auto& s) -> auto& { return s.servo.acceleration_max; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The compensator's type and the adaptive (RLS inverse model) compensator.
void add_rht_adaptive_fields(std::vector<BoundField<R>>& b) {
  for (BoundField<R> x : {
           f::text<R>(
               "compensator.type", FieldType::kEnum, {"none", "adaptive", "ats", "amb"},
               "adaptive (the paper's RLS inverse model), ats (adaptive time series), amb "
               "(adaptive model-based) or none",
               [](auto& s) -> auto& { return s.compensator.type; }),
           f::used_when(f::text<R>(
                            "compensator.model", FieldType::kEnum, {"p3", "p4", "p7"},
                            "parameters of the loading-system model",
                            [](auto& s) -> auto& { return s.compensator.model; }),
                        "type", {"adaptive"}),
           f::used_when(
               f::number<R>(
                   "compensator.forgetting_factor", "", left_open(0, 1), "lambda of the RLS",
                   [](auto& s) -> auto& { return s.compensator.forgetting_factor; }),
               "type", {"adaptive"}),
           f::used_when(f::number<R>(
                            "compensator.batch_ridge", "", at_least(0),
                            "relative ridge of the offline batch fit (0: plain least squares)",
                            [](auto& s) -> auto& { return s.compensator.batch_ridge; }),
                        "type", {"adaptive"}),
           f::used_when(f::number<R>(
                            "compensator.max_parameter_jump", "", above(0),
                            "RLS guard: an update changing a parameter by more is rejected",
                            [](auto& s) -> auto& { return s.compensator.max_parameter_jump; }),
                        "type", {"adaptive"}),
           f::used_when(
               f::number<R>(
                   "compensator.max_covariance_trace", "", above(0), "RLS guard on trace(P)",
                   [](auto& s) -> auto& { return s.compensator.max_covariance_trace; }),
               "type", {"adaptive"}),
           f::used_when(f::boolean<R>(
                            "compensator.adapt", "adapt online (false: keep the offline model)",
                            [](auto& s) -> auto& { return s.compensator.adapt; }),
                        "type", {"adaptive"}),
           f::used_when(f::number<R>(
                            "compensator.offline_noise_std_m", "m", at_least(0),
                            "measurement noise of the offline run that initialises the model",
                            [](auto& s) -> auto& { return s.compensator.offline_noise_std; }),
                        "type", {"adaptive"}),
       }) {
    b.push_back(std::move(x));
  }
}

// The adaptive time series compensator (emitted only for type ats).
void add_rht_ats_fields(std::vector<BoundField<R>>& b) {
  for (BoundField<R> x : {
           ats(f::number<R>(
               "compensator.ats.window_s", "s", above(0), "least-squares window",
               [](auto& s) -> auto& { return s.compensator.ats.window; })),
           ats(f::integer<R>(
               "compensator.ats.update_every", "", at_least(1), "cycles between fits",
               [](auto& s) -> auto& { return s.compensator.ats.update_every; })),
           ats(f::numbers<R>(
               "compensator.ats.initial", "", {}, "[a0, a1 (s), a2 (s^2)] before the first fit",
               [](auto& s) -> auto& { return s.compensator.ats_initial; })),
           ats(f::numbers<R>(
               "compensator.ats.min", "", {}, "lower bounds of [a0, a1, a2]",
               [](auto& s) -> auto& { return s.compensator.ats_min; })),
           ats(f::numbers<R>(
               "compensator.ats.max", "", {}, "upper bounds of [a0, a1, a2]",
               [](auto& s) -> auto& { return s.compensator.ats_max; })),
           ats(f::numbers<R>(
               "compensator.ats.rate_limit", "", {}, "largest change per fit",
               [](auto& s) -> auto& { return s.compensator.ats_rate_limit; })),
           ats(f::number<R>(
               "compensator.ats.adapt_threshold_m", "m", at_least(0),
               "RMS of d_m over the window below which the coefficients stay",
               [](auto& s) -> auto& { return s.compensator.ats.adapt_threshold; })),
           ats(f::number<R>(
               "compensator.ats.filter_time_constant_s", "s", at_least(0),
               "two one-poles on d_c and d_m before the fit (0: none)",
               [](auto& s) -> auto& { return s.compensator.ats.filter_time_constant; })),
       }) {
    b.push_back(std::move(x));
  }
}

// The adaptive model-based compensator (emitted only for type amb).
void add_rht_amb_fields(std::vector<BoundField<R>>& b) {
  for (BoundField<R> x : {
           amb(f::numbers<R>(
               "compensator.amb.initial", "", {},
               "[a0, a1 (s), a2 (s^2), a3 (s^3)] to start from (default: the inverse of the "
               "paper's servo)",
               [](auto& s) -> auto& { return s.compensator.amb_initial; })),
           amb(f::numbers<R>(
               "compensator.amb.min", "", {}, "lower bounds of [a0 … a3]",
               [](auto& s) -> auto& { return s.compensator.amb_min; })),
           amb(f::numbers<R>(
               "compensator.amb.max", "", {}, "upper bounds of [a0 … a3]",
               [](auto& s) -> auto& { return s.compensator.amb_max; })),
           amb(f::numbers<R>(
               "compensator.amb.gain_per_s", "1/s", {},
               "adaptation gains [G0 … G3] (0 freezes a coefficient)",
               [](auto& s) -> auto& { return s.compensator.amb_gain; })),
           amb(f::number<R>(
               "compensator.amb.filter_cutoff_hz", "Hz", above(0),
               "the error's and regressors' low-pass, < 0.25/timing.step_s",
               [](auto& s) -> auto& { return s.compensator.amb.filter_cutoff; })),
           amb(f::number<R>(
               "compensator.amb.power_time_constant_s", "s", above(0),
               "the regressors' mean-square window",
               [](auto& s) -> auto& { return s.compensator.amb.power_time_constant; })),
           amb(f::number<R>(
               "compensator.amb.adapt_threshold_m", "m", at_least(0),
               "RMS of the filtered target below which the coefficients stay",
               [](auto& s) -> auto& { return s.compensator.amb.adapt_threshold; })),
           amb(f::boolean<R>(
               "compensator.amb.adapt", "false: a fixed model-based feed-forward",
               [](auto& s) -> auto& { return s.compensator.amb.adapt; })),
       }) {
    b.push_back(std::move(x));
  }
}

const BoundTable<R>& rht_table() {
  static const BoundTable<R> table = [] {
    std::vector<BoundField<R>> b;
    add_rht_header_fields(b);
    add_rht_servo_fields(b);
    add_rht_adaptive_fields(b);
    add_rht_ats_fields(b);
    add_rht_amb_fields(b);
    for (auto& x : f::rig_driver<R>([](auto& s) -> auto& { return s.rig.driver; })) {
      b.push_back(std::move(x));
    }
    for (auto& x : f::stability_guard<R>(
             [](auto& s) -> auto& { return s.guard; }, "d_desired", "d_measured")) {
      b.push_back(std::move(x));
    }
    for (BoundField<R> x : {
             f::number<R>(
                 "timing.step_s", "s", left_open(0, 0.1),
                 "central difference step, < T/pi of the structure",
                 [](auto& s) -> auto& { return s.timing.step; }),
             f::number<R>(
                 "timing.duration_s", "s", closed(0, 1e5),
                 "0: the record's duration; duration/step <= 1e6",
                 [](auto& s) -> auto& { return s.timing.duration; }),
             f::number<R>(
                 "metrics.settle_time_s", "s", at_least(0),
                 "errors after this time are reported separately",
                 [](auto& s) -> auto& { return s.metrics.settle_time; }),
             f::number<R>(
                 "metrics.oscillation_threshold", "", left_open(0, 1),
                 "Nyquist share of the command that flags a 2*step oscillation",
                 [](auto& s) -> auto& { return s.metrics.oscillation_threshold; }),
             f::boolean<R>(
                 "outputs.samples", "keep samples.csv",
                 [](auto& s) -> auto& { return s.outputs.samples; }),
             f::text<R>(
                 "outputs.progress", FieldType::kEnum, {"auto", "on", "off"},
                 "progress line on stderr (auto: when a terminal)",
                 [](auto& s) -> auto& { return s.outputs.progress; }),
             f::text<R>(
                 "outputs.format", FieldType::kEnum, {"csv", "hdf5"},
                 "csv (samples.csv) or hdf5 (also run.h5, recorded while the run runs; hyloop "
                 "export "
                 "converts a run afterwards)",
                 [](auto& s) -> auto& { return s.outputs.format; }),
         }) {
      b.push_back(std::move(x));
    }
    return BoundTable<R>("rht",
                         "Real-time hybrid test of a single-storey structure under an earthquake "
                         "with adaptive delay compensation (RHT paper)",
                         std::move(b));
  }();
  return table;
}

template <std::size_t N>
void copy_list(const std::vector<double>& from, std::array<double, N>& to,
               const std::string& field) {
  if (from.size() != N) {
    std::string m = field;  // appended: GCC 105329's false -Wrestrict on operator+ chains
    m += N == 3 ? ": must hold 3 numbers [a0, a1, a2], not " : ": must hold 4 numbers, not ";
    m += std::to_string(from.size());
    throw ScenarioError(m);
  }
  std::copy(from.begin(), from.end(), to.begin());
}

// The ATS and AMB blocks of the compensator (read whatever the type, like the adaptive fields):
// lists copied, step set, the blocks' own checks named by field.
void validate_ats_amb(RhtScenario& s) {
  auto& c = s.compensator.ats;
  copy_list(s.compensator.ats_initial, c.initial, "compensator.ats.initial");
  copy_list(s.compensator.ats_min, c.min, "compensator.ats.min");
  copy_list(s.compensator.ats_max, c.max, "compensator.ats.max");
  copy_list(s.compensator.ats_rate_limit, c.rate_limit, "compensator.ats.rate_limit");
  c.step = s.timing.step;
  auto& m = s.compensator.amb;
  copy_list(s.compensator.amb_initial, m.initial, "compensator.amb.initial");
  copy_list(s.compensator.amb_min, m.min, "compensator.amb.min");
  copy_list(s.compensator.amb_max, m.max, "compensator.amb.max");
  copy_list(s.compensator.amb_gain, m.gain, "compensator.amb.gain_per_s");
  m.step = s.timing.step;
  if (s.compensator.type == "ats") {
    require(c.window / c.step >= 8.0, "compensator.ats.window_s", c.window,
            "must hold at least 8 steps (>= " + format_value(8.0 * c.step) + " s)");
  }
  if (s.compensator.type == "amb") {
    // The block's own limits, named as the scenario spells the fields.
    require(m.filter_cutoff < 0.25 / m.step, "compensator.amb.filter_cutoff_hz", m.filter_cutoff,
            "must be in (0, 0.25/timing.step_s) = (0, " + format_value(0.25 / m.step) + ") Hz");
    for (std::size_t i = 0; i < m.gain.size(); ++i) {
      require(m.gain[i] >= 0.0 && m.gain[i] * m.step <= 0.1,
              "compensator.amb.gain_per_s[" + std::to_string(i) + "]", m.gain[i],
              "must be in [0, 0.1/timing.step_s] = [0, " + format_value(0.1 / m.step) + "] 1/s");
    }
    require(m.power_time_constant / m.step >= 8.0, "compensator.amb.power_time_constant_s",
            m.power_time_constant,
            "must hold at least 8 steps (>= " + format_value(8.0 * m.step) + " s)");
  }
  const auto check = [](const char* block, const auto& build) {
    try {
      build();
    } catch (const std::invalid_argument& e) {
      throw ScenarioError(std::string(block) + "." + e.what());
    }
  };
  // The blocks' own checks depend on the step (AMB's cut-off below 0.25/step): only the block
  // the run uses is checked, so another type's scenario stays valid at any step.
  if (s.compensator.type == "ats")
    check("compensator.ats", [&] { (void)core::AdaptiveTimeSeries(c); });
  if (s.compensator.type == "amb")
    check("compensator.amb", [&] { (void)core::AdaptiveModelBased(m); });
}

}  // namespace

core::AdaptiveTimeSeriesConfig RhtScenario::default_ats() {
  core::AdaptiveTimeSeriesConfig c;
  c.step = 0.01;       // the RHT paper's step
  c.window = 1.0;      // as published
  c.update_every = 1;  // published: 16 samples at 2048 Hz = 7.8 ms, under one 10 ms step
  c.initial = {1.0, 0.0, 0.0};
  c.min = {0.9, 0.0, 0.0};  // as published
  c.max = {1.1, 0.06, 0.0032};
  // The published per-update limits (vrths: 0.01, 0.001 s, 5e-5 s² per 7.8 ms) per 10 ms.
  c.rate_limit = {0.0128, 0.00128, 6.4e-5};
  c.adapt_threshold = 1e-4;
  c.filter_time_constant = 0.05;  // corner 3.2 Hz: above the storey's 1 Hz (header)
  return c;
}

core::StabilityGuardConfig RhtScenario::default_guard() {
  core::StabilityGuardConfig c;
  c.step = 0.01;
  c.window = 2.0;              // two periods of the 1 s storey
  c.max_tracking_ratio = 0.1;  // 2*sin(pi*f*tau) at f = 1 Hz: tau = 16 ms of residual lag
  c.amplitude_floor = 2e-3;    // sigma = 0.1 mm of noise alone gives 0.05 at the floor
  c.hold = 1;
  return c;
}

core::AdaptiveModelBasedConfig RhtScenario::default_amb() {
  core::AdaptiveModelBasedConfig c;
  c.step = 0.01;
  constexpr double kOmega = 50.0, kZeta = 0.8;  // the paper's servo
  c.initial = {1.0, 2.0 * kZeta / kOmega, 1.0 / (kOmega * kOmega), 0.0};
  for (std::size_t i = 0; i < 3; ++i) {
    c.min[i] = 0.5 * c.initial[i];
    c.max[i] = 1.5 * c.initial[i];
  }
  c.min[3] = 0.0;
  c.max[3] = 0.0;
  c.gain = {2.0, 2.0, 2.0, 0.0};
  c.filter_cutoff = 20.0;  // as the vrths kind's (< 0.25/step = 25 Hz)
  c.power_time_constant = 1.0;
  c.adapt_threshold = 1e-4;
  return c;
}

RhtScenario load_rht_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_rht_scenario(read_scenario_text(path), path, overrides,
                            DataSource::local_file(path));
}

// An e-stop's ramp (rht_safety_config) ends within kMaxStopTime across the stroke.
void validate_rht_stop_time(const RhtScenario& s) {
  const hal::SafetyConfig safety = rht_safety_config(s);
  const double t = hal::kMaxStopTime;
  const double stroke_max = safety.stop_deceleration * t * t / 4.0;  // 2W/t² <= d, W = 2 stroke
  require(s.servo.stroke <= stroke_max, "servo.stroke_m", s.servo.stroke,
          "must be <= " + format_value(stroke_max) + " m so that an e-stop, ramping at " +
              format_value(safety.stop_deceleration) + " m/s^2, reaches rest within " +
              format_value(t) + " s across +-stroke_m");
  require_stop_deceleration(safety, "servo.acceleration_max_mps2", s.servo.acceleration_max,
                            "m/s^2", "none", "2 * servo.stroke_m");
}

RhtScenario parse_rht_scenario(const std::string& text, const std::string& path,
                               const std::vector<std::string>& overrides, const DataSource& data) {
  return parse_rht_scenario(load_yaml(text, path, overrides), path, data);
}

RhtScenario parse_rht_scenario(const YAML::Node& root, const std::string& path,
                               const DataSource& data) {
  RhtScenario s;
  s.origin = path;
  s.data = data;
  rht_table().parse(root, path, s);

  validate_with_origin(path, [&] {
    require(s.schema_version == 1, "schema_version", s.schema_version, "this hyloop reads 1");
    require(s.servo.omega_min > 0.0 && s.servo.omega_min <= s.servo.omega_max,
            "servo.omega_min_rad_s", s.servo.omega_min, "must be > 0 and <= omega_max_rad_s");
    validate_rht_stop_time(s);
    require(s.timing.step > 0.0 && s.timing.step <= 0.1, "timing.step_s", s.timing.step,
            "must be in (0, 0.1] s");
    require(s.timing.duration >= 0.0 && s.timing.duration <= 1e5, "timing.duration_s",
            s.timing.duration, "must be in [0, 1e5] s (0: the record's duration)");
    require(s.timing.duration / s.timing.step <= kMaxRhtSteps, "timing.duration_s",
            s.timing.duration, "duration/step must be <= " + format_value(kMaxRhtSteps) + " steps");
    const double k_total = s.structure.numerical_stiffness + s.specimen.stiffness;
    if (k_total > 0.0) {
      const double t_min = 2.0 * std::numbers::pi * std::sqrt(s.structure.mass / k_total);
      require(s.timing.step < t_min / std::numbers::pi, "timing.step_s", s.timing.step,
              "central difference needs step < T/pi = " + format_value(t_min / std::numbers::pi) +
                  " s");
    }
    require_progress_mode("outputs.progress", s.outputs.progress);
    require_output_format("outputs.format", s.outputs.format);
    validate_ats_amb(s);
    validate_stability_guard(s.guard, s.timing.step);
    validate_rig_driver(s.rig.driver, s.timing.step);
  });
  return s;
}

std::string to_yaml(const RhtScenario& s) { return rht_table().emit(s); }

const FieldTable& rht_field_table() { return rht_table().table(); }

}  // namespace hyloop::experiment
