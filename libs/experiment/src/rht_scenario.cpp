// The RHT scenario (rht_experiment.hpp): its fields declared once (parse, emit, schema, docs).
#include <cmath>
#include <numbers>

#include "hyloop/experiment/rht_experiment.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace {

namespace f = fields;
using R = RhtScenario;

const BoundTable<R>& rht_table() {
  static const BoundTable<R> table(
      "rht",
      "Real-time hybrid test of a single-storey structure under an earthquake with adaptive "
      "delay compensation (RHT paper)",
      {
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
          f::text<R>(
              "compensator.type", FieldType::kEnum, {"none", "adaptive"},
              "adaptive inverse compensation or none",
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
              "csv (samples.csv) or hdf5 (also run.h5, recorded while the run runs; hyloop export "
              "converts a run afterwards)",
              [](auto& s) -> auto& { return s.outputs.format; }),
      });
  return table;
}

}  // namespace

RhtScenario load_rht_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_rht_scenario(read_scenario_text(path), path, overrides,
                            DataSource::local_file(path));
}

RhtScenario parse_rht_scenario(const std::string& text, const std::string& path,
                               const std::vector<std::string>& overrides, const DataSource& data) {
  const YAML::Node root = load_yaml(text, path, overrides);
  RhtScenario s;
  s.origin = path;
  s.data = data;
  rht_table().parse(root, path, s);

  const auto fail = [&](const std::string& msg) { throw ScenarioError(path + ": " + msg); };
  validate_with_origin(path, [&] {
    require(s.schema_version == 1, "schema_version", s.schema_version, "this hyloop reads 1");
    require(s.structure.mass >= 1e-3 && s.structure.mass <= 1e9, "structure.mass_kg",
            s.structure.mass, "must be in [1e-3, 1e9] kg");
    require(s.structure.damping >= 0.0, "structure.damping_ns_per_m", s.structure.damping,
            "must be >= 0");
    require(s.structure.numerical_stiffness >= 0.0, "structure.numerical_stiffness_n_per_m",
            s.structure.numerical_stiffness, "must be >= 0");
    require(s.specimen.stiffness >= 0.0, "specimen.stiffness_n_per_m", s.specimen.stiffness,
            "must be >= 0");
    require(s.specimen.damping >= 0.0, "specimen.damping_ns_per_m", s.specimen.damping,
            "must be >= 0");
    require(s.ground_motion.peak_g >= 0.0 && s.ground_motion.peak_g <= 5.0, "ground_motion.peak_g",
            s.ground_motion.peak_g, "must be in [0, 5] g (0 keeps the record's peak)");
    require(s.servo.omega > 0.0, "servo.omega_rad_s", s.servo.omega, "must be > 0");
    require(s.servo.zeta > 0.0, "servo.zeta", s.servo.zeta, "must be > 0");
    require(s.servo.omega_min > 0.0 && s.servo.omega_min <= s.servo.omega_max,
            "servo.omega_min_rad_s", s.servo.omega_min, "must be > 0 and <= omega_max_rad_s");
    require(s.servo.period > 0.0, "servo.variation_period_s", s.servo.period, "must be > 0");
    require(s.servo.noise_std >= 0.0, "servo.noise_std_m", s.servo.noise_std, "must be >= 0 m");
    require(s.servo.stroke > 0.0, "servo.stroke_m", s.servo.stroke, "must be > 0 m");
    require(s.servo.acceleration_max > 0.0, "servo.acceleration_max_mps2", s.servo.acceleration_max,
            "must be > 0 (.inf: no limit)");
    if (s.compensator.type != "none" && s.compensator.type != "adaptive") {
      fail("compensator.type = \"" + excerpt(s.compensator.type) + "\": must be none or adaptive");
    }
    if (s.compensator.model != "p3" && s.compensator.model != "p4" && s.compensator.model != "p7") {
      fail("compensator.model = \"" + excerpt(s.compensator.model) + "\": must be p3, p4 or p7");
    }
    require(s.compensator.forgetting_factor > 0.0 && s.compensator.forgetting_factor <= 1.0,
            "compensator.forgetting_factor", s.compensator.forgetting_factor, "must be in (0, 1]");
    require(s.compensator.offline_noise_std >= 0.0, "compensator.offline_noise_std_m",
            s.compensator.offline_noise_std, "must be >= 0 m");
    require(s.compensator.batch_ridge >= 0.0, "compensator.batch_ridge", s.compensator.batch_ridge,
            "must be >= 0");
    require(s.compensator.max_parameter_jump > 0.0, "compensator.max_parameter_jump",
            s.compensator.max_parameter_jump, "must be > 0");
    require(s.compensator.max_covariance_trace > 0.0, "compensator.max_covariance_trace",
            s.compensator.max_covariance_trace, "must be > 0");
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
    require(s.metrics.settle_time >= 0.0, "metrics.settle_time_s", s.metrics.settle_time,
            "must be >= 0");
    require(s.metrics.oscillation_threshold > 0.0 && s.metrics.oscillation_threshold <= 1.0,
            "metrics.oscillation_threshold", s.metrics.oscillation_threshold, "must be in (0, 1]");
    require_progress_mode("outputs.progress", s.outputs.progress);
    require_output_format("outputs.format", s.outputs.format);
  });
  return s;
}

std::string to_yaml(const RhtScenario& s) { return rht_table().emit(s); }

const FieldTable& rht_field_table() { return rht_table().table(); }

}  // namespace hyloop::experiment
