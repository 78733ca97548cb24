// The FCU scenario (fcu_experiment.hpp): its fields declared once (parse, emit, schema, docs)
// and its validation.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/fcu/fcu_dynamics.hpp"
#include "hyloop/kinds/fcu/fcu_experiment.hpp"

namespace hyloop::experiment {
namespace {

FcuCompensatorType parse_type(const std::string& text, MapReader& reader) {
  if (text == "none") return FcuCompensatorType::kNone;
  if (text == "inverse") return FcuCompensatorType::kInverse;
  if (text == "polynomial") return FcuCompensatorType::kPolynomial;
  reader.fail(reader.field("type"),
              "\"" + excerpt(text) + "\": must be one of none, inverse, polynomial");
}

namespace f = fields;
using F = FcuScenario;

BoundField<F> compensator_type() {
  BoundField<F> b{
      f::spec("compensator.type", "", FieldType::kEnum, {},
              "none (x_p = x_c), inverse (x_p = alpha*x_c[k] - (alpha - 1)*x_c[k-1], alpha = "
              "delay/step + 1) or polynomial (degree-order fit of the last points commands, "
              "steps_ahead steps ahead)"),
      [](MapReader& r, const std::string& k, F& s) {
        std::string type(to_string(s.compensator.type));
        r.string(k, type);
        s.compensator.type = parse_type(type, r);
      },
      [](YAML::Emitter& e, const std::string& k, const F& s) {
        e << YAML::Key << k << YAML::Value << std::string(to_string(s.compensator.type));
      },
      [](const F& s) { return nlohmann::json(std::string(to_string(s.compensator.type))); }};
  b.spec.values = {"none", "inverse", "polynomial"};
  return b;
}

BoundField<F> sinusoids() {
  BoundField<F> b{
      f::spec("reference.sinusoids", "", FieldType::kObjectList, {},
              "the terms a*sin(2*pi*f*t + phi) of the power-lever reference"),
      [](MapReader& r, const std::string& k, F& s) {
        const YAML::Node list = r.get(k);
        if (!list) return;
        if (!list.IsSequence()) {
          r.fail(r.field(k), "must be a list of {amplitude_deg, frequency_hz, phase_rad}");
        }
        s.reference.sinusoids.clear();
        for (std::size_t i = 0; i < list.size(); ++i) {
          MapReader term(list[i], r.field(k) + "[" + std::to_string(i) + "]", r.origin());
          PlaSinusoid p;
          term.number("amplitude_deg", p.amplitude);
          term.number("frequency_hz", p.frequency);
          term.number("phase_rad", p.phase);
          term.finish();
          s.reference.sinusoids.push_back(p);
        }
      },
      [](YAML::Emitter& e, const std::string& k, const F& s) {
        e << YAML::Key << k << YAML::Value << YAML::BeginSeq;
        for (const PlaSinusoid& p : s.reference.sinusoids) {
          e << YAML::Flow << YAML::BeginMap;
          e << YAML::Key << "amplitude_deg" << YAML::Value << p.amplitude;
          e << YAML::Key << "frequency_hz" << YAML::Value << p.frequency;
          e << YAML::Key << "phase_rad" << YAML::Value << p.phase;
          e << YAML::EndMap;
        }
        e << YAML::EndSeq;
      },
      [](const F& s) {
        nlohmann::json list = nlohmann::json::array();
        for (const PlaSinusoid& p : s.reference.sinusoids) {
          list.push_back({{"amplitude_deg", p.amplitude},
                          {"frequency_hz", p.frequency},
                          {"phase_rad", p.phase}});
        }
        return list;
      }};
  b.spec.items = {f::spec("amplitude_deg", "deg", FieldType::kNumber, at_least(0), "a"),
                  f::spec("frequency_hz", "Hz", FieldType::kNumber, at_least(0),
                          "f, below 1/(2*timing.step_s)"),
                  f::spec("phase_rad", "rad", FieldType::kNumber, {}, "phi")};
  return b;
}

/// A field that may be left out or null ("derived"); `given` records that the file gave it.
template <typename Read, typename Write>
BoundField<F> derived(FieldSpec spec, std::string derived_text, Read read, Write write) {
  spec.nullable = true;
  spec.default_text = std::move(derived_text);
  return {std::move(spec),
          [read](MapReader& r, const std::string& k, F& s) {
            if (const YAML::Node n = r.get(k); n && !n.IsNull()) read(r, k, s);
          },
          write,
          {}};
}

// The run's name and its timing.
void add_fcu_header_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           f::integer<F>(
               "schema_version", "", closed(1, 1), "the scenario format; this hyloop reads 1",
               [](auto& s) -> auto& { return s.schema_version; }),
           f::text<F>(
               "name", FieldType::kString, {}, "names the run (non-empty)",
               [](auto& s) -> auto& { return s.name; }),
           f::text<F>(
               "description", FieldType::kString, {}, "one line for the report",
               [](auto& s) -> auto& { return s.description; }),
           f::kind<F>("fcu", true),
           f::number<F>(
               "timing.step_s", "s", left_open(0, 1), "Delta t",
               [](auto& s) -> auto& { return s.timing.step; }),
           f::number<F>(
               "timing.duration_s", "s", closed(0, 1e6),
               "the run, >= 10 steps and at most 5e7 steps",
               [](auto& s) -> auto& { return s.timing.duration; }),
           f::number<F>(
               "reference.offset_deg", "deg", {},
               "PLA offset; offset +- the sum of the amplitudes within [ecu.pla_idle_deg, "
               "ecu.pla_max_deg]",
               [](auto& s) -> auto& { return s.reference.offset; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The reference fuel flow and the transfer system (motor, flow meter, noise).
void add_fcu_reference_and_transfer_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           f::number<F>(
               "reference.ramp_in_s", "s", at_least(0),
               "T_r of the raised-cosine ramp-in of the lever, < timing.duration_s (0: none)",
               [](auto& s) -> auto& { return s.reference.ramp_in; }),
           sinusoids(),
           f::number<F>(
               "transfer.motor_delay_s", "s", at_least(0),
               "tau_A of the AC motor: 0 (off) or at least one step, at most 1e6 steps",
               [](auto& s) -> auto& { return s.transfer.motor_delay; }),
           f::number<F>(
               "transfer.flow_meter_delay_s", "s", at_least(0),
               "tau_F of the flow meter: 0 (off) or at least one step",
               [](auto& s) -> auto& { return s.transfer.flow_meter_delay; }),
           f::number<F>(
               "transfer.measurement_noise_std_kg_s", "kg/s", at_least(0), "flow-meter noise",
               [](auto& s) -> auto& { return s.transfer.measurement_noise_std; }),
           f::seed<F>(
               "transfer.seed", "seed of the flow-meter noise",
               [](auto& s) -> auto& { return s.transfer.seed; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The compensator: inverse compensation or polynomial extrapolation.
void add_fcu_compensator_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           compensator_type(),
           f::used_when(
               f::integer<F>(
                   "compensator.points", "", closed(1, core::PolynomialPredictor::kMaxPoints),
                   "n, in [order + 1, " + std::to_string(core::PolynomialPredictor::kMaxPoints) +
                       "]",
                   [](auto&s) -> auto& { return s.compensator.points; }),
               "type", {"polynomial"}),
           f::used_when(f::integer<F>(
                            "compensator.order", "", closed(0, 8), "N, the degree",
                            [](auto&s) -> auto& { return s.compensator.order; }),
                        "type", {"polynomial"}),
           f::used_when(derived(
                            f::spec("compensator.steps_ahead", "", FieldType::kInteger,
                                    closed(1, 100000), "P, the prediction horizon in steps"),
                            "round(total transfer delay / step)",
                            [](MapReader&r, const std::string&k, F&s) {
                              r.integer(k, s.compensator.steps_ahead);
                              s.compensator.steps_ahead_given = true;
                            },
                            [](YAML::Emitter&e, const std::string&k, const F&s) {
                              if (s.resolved_steps_ahead() >= 1) {
                                e << YAML::Key << k << YAML::Value << s.resolved_steps_ahead();
                              }
                            }),
                        "type", {"polynomial"}),
           f::used_when(
               derived(
                   f::spec("compensator.delay_s", "s", FieldType::kNumber, above(0),
                           "tau of the inverse compensator, in [timing.step_s, 1e6 steps]"),
                   "the total transfer delay",
                   [](MapReader&r, const std::string&k, F&s) {
                     r.number(k, s.compensator.delay);
                     s.compensator.delay_given = true;
                   },
                   [](YAML::Emitter&e, const std::string&k, const F&s) {
                     if (s.resolved_compensator_delay() >= s.timing.step) {
                       e << YAML::Key << k << YAML::Value << s.resolved_compensator_delay();
                     }
                   }),
               "type", {"inverse"}),
       }) {
    b.push_back(std::move(x));
  }
}

// The command limits and the watchdog.
void add_fcu_safety_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           f::limit<F>(
               "safety.command_min_kg_s", "kg/s", {},
               "lower end of the command window; a command outside is rejected and the last one "
               "held (-.inf: unbounded)",
               [](auto&s) -> auto& { return s.safety.command_min; }, true),
           derived(
               f::spec("safety.command_max_kg_s", "kg/s", FieldType::kLimit, {},
                       "upper end of the command window, > command_min_kg_s (.inf: "
                       "unbounded)"),
               "fcu.flow_gain_kg_s",
               [](MapReader&r, const std::string&k, F&s) {
                 r.limit(k, s.safety.command_max);
                 s.safety.command_max_given = true;
               },
               [](YAML::Emitter&e, const std::string&k, const F&s) {
                 e << YAML::Key << k << YAML::Value
                   << s.safety.resolved_command_max(s.fcu.flow_gain);
               }),
           f::integer<F>(
               "safety.watchdog_cycles", "", closed(1, 100000),
               "rejected cycles in a row before the actuator holds for good",
               [](auto&s) -> auto& { return s.safety.watchdog_cycles; }),
           f::limit<F>(
               "safety.command_acceleration_max_kg_s3", "kg/s^3", above(0),
               "|second difference| bound of the command (.inf: no limit)",
               [](auto&s) -> auto& { return s.safety.command_acceleration_max; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The numerical engine and ECU models.
void add_fcu_plant_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           f::number<F>(
               "engine.idle_speed", "", FieldRange{0, 1, true, true}, "n_idle, normalised",
               [](auto& s) -> auto& { return s.engine.idle_speed; }),
           f::number<F>(
               "engine.idle_fuel_kg_s", "kg/s", at_least(0), "w_idle",
               [](auto& s) -> auto& { return s.engine.idle_fuel; }),
           f::number<F>(
               "engine.design_fuel_kg_s", "kg/s", {}, "w_design, > idle_fuel_kg_s",
               [](auto& s) -> auto& { return s.engine.design_fuel; }),
           f::number<F>(
               "engine.idle_time_constant_s", "s", above(0), "tau_idle",
               [](auto& s) -> auto& { return s.engine.idle_time_constant; }),
           f::number<F>(
               "engine.design_time_constant_s", "s", above(0), "tau_design",
               [](auto& s) -> auto& { return s.engine.design_time_constant; }),
           f::number<F>(
               "ecu.pla_idle_deg", "deg", {}, "PLA at idle demand",
               [](auto& s) -> auto& { return s.ecu.pla_idle; }),
           f::number<F>(
               "ecu.pla_max_deg", "deg", {}, "PLA at maximum demand, > pla_idle_deg",
               [](auto& s) -> auto& { return s.ecu.pla_max; }),
           f::number<F>(
               "ecu.max_speed", "", {},
               "n_max demanded at pla_max, in (engine.idle_speed, metrics.speed_limit)",
               [](auto& s) -> auto& { return s.ecu.max_speed; }),
           f::number<F>(
               "ecu.kp_kg_s", "kg/s", at_least(0), "K_p per unit speed error",
               [](auto& s) -> auto& { return s.ecu.kp; }),
           f::number<F>(
               "ecu.ki_kg_s2", "kg/s^2", at_least(0), "K_i per unit speed error",
               [](auto& s) -> auto& { return s.ecu.ki; }),
           f::number<F>(
               "ecu.accel_ratio", "", at_least(1), "acceleration limit r_acc*w_ss(n)",
               [](auto& s) -> auto& { return s.ecu.accel_ratio; }),
           f::number<F>(
               "ecu.decel_ratio", "", left_open(0, 1), "deceleration limit r_dec*w_ss(n)",
               [](auto& s) -> auto& { return s.ecu.decel_ratio; }),
           f::number<F>(
               "fcu.valve_time_constant_s", "s", at_least(0), "of the metering valve",
               [](auto& s) -> auto& { return s.fcu.valve_time_constant; }),
           f::number<F>(
               "fcu.flow_gain_kg_s", "kg/s", above(0),
               "K_v, the fuel flow at a fully open valve; must meter the initial fuel flow",
               [](auto& s) -> auto& { return s.fcu.flow_gain; }),
       }) {
    b.push_back(std::move(x));
  }
}

// The metrics and the outputs.
void add_fcu_metrics_and_output_fields(std::vector<BoundField<F>>& b) {
  for (BoundField<F> x : {
           f::number<F>(
               "metrics.delay_search_s", "s", {},
               "largest lag of the delay estimate, in [2 steps, duration_s/2)",
               [](auto& s) -> auto& { return s.metrics.delay_search; }),
           f::number<F>(
               "metrics.delay_window_s", "s", {},
               "the final window of the delay estimate, > 2*delay_search_s",
               [](auto& s) -> auto& { return s.metrics.delay_window; }),
           f::number<F>(
               "metrics.speed_limit", "", above(1), "the run stops if n leaves [0, speed_limit]",
               [](auto& s) -> auto& { return s.metrics.speed_limit; }),
           f::boolean<F>(
               "outputs.samples", "keep samples.csv",
               [](auto& s) -> auto& { return s.outputs.samples; }),
           f::integer<F>(
               "outputs.decimation", "", at_least(1), "record every n-th step",
               [](auto& s) -> auto& { return s.outputs.decimation; }),
           f::text<F>(
               "outputs.progress", FieldType::kEnum, {"auto", "on", "off"},
               "progress line on stderr (auto: when a terminal)",
               [](auto& s) -> auto& { return s.outputs.progress; }),
           f::text<F>(
               "outputs.format", FieldType::kEnum, {"csv", "hdf5"},
               "csv (samples.csv) or hdf5 (also run.h5, recorded while the run runs; hyloop export "
               "converts a run afterwards)",
               [](auto& s) -> auto& { return s.outputs.format; }),
       }) {
    b.push_back(std::move(x));
  }
}

const BoundTable<F>& fcu_table() {
  static const BoundTable<F> table = [] {
    std::vector<BoundField<F>> b;
    add_fcu_header_fields(b);
    add_fcu_reference_and_transfer_fields(b);
    add_fcu_compensator_fields(b);
    add_fcu_safety_fields(b);
    add_fcu_plant_fields(b);
    add_fcu_metrics_and_output_fields(b);
    return BoundTable<F>(
        "fcu",
        "Fuel control unit hardware-in-the-loop test: turbojet and ECU numerical, the FCU's "
        "metering valve physical (FCU paper)",
        std::move(b));
  }();
  return table;
}

void parse_into(const YAML::Node& root, const std::string& origin, FcuScenario& s) {
  fcu_table().parse(root, origin, s);
}

/// A delay of the transfer system: 0 (off) or at least one step.
void require_delay(double delay, double step, const std::string& field) {
  require(std::isfinite(delay) && (delay == 0.0 || delay >= step), field, delay,
          "must be 0 (off) or at least one step (timing.step_s = " + format_value(step) + " s)");
  require(delay / step <= core::DelayLine::kMaxDelaySteps, field, delay,
          "must be at most 1e6 steps");
}

}  // namespace

std::string_view to_string(FcuCompensatorType type) noexcept {
  switch (type) {
    case FcuCompensatorType::kNone:
      return "none";
    case FcuCompensatorType::kInverse:
      return "inverse";
    case FcuCompensatorType::kPolynomial:
      return "polynomial";
  }
  return "unknown";
}

double FcuScenario::Reference::at(double t) const noexcept {
  double sum = 0.0;
  for (const PlaSinusoid& p : sinusoids) {
    sum += p.amplitude * std::sin(2.0 * std::numbers::pi * p.frequency * t + p.phase);
  }
  const double window = t < ramp_in ? 0.5 * (1.0 - std::cos(std::numbers::pi * t / ramp_in)) : 1.0;
  return offset + window * sum;
}

std::int64_t FcuScenario::steps() const {
  return static_cast<std::int64_t>(std::llround(timing.duration / timing.step));
}

int FcuScenario::resolved_steps_ahead() const {
  if (compensator.steps_ahead_given) return compensator.steps_ahead;
  return static_cast<int>(std::lround(transfer.total_delay() / timing.step));
}

double FcuScenario::resolved_compensator_delay() const {
  return compensator.delay_given ? compensator.delay : transfer.total_delay();
}

namespace {

// The timing and the reference (its sinusoids within the ECU's PLA range).
void validate_fcu_timing_and_reference(const FcuScenario& s) {
  const double dt = s.timing.step;
  require(dt > 0.0 && dt <= 1.0, "timing.step_s", dt, "must be in (0, 1] s");
  require(s.timing.duration >= 10.0 * dt && s.timing.duration <= 1e6, "timing.duration_s",
          s.timing.duration, "must be in [10 steps, 1e6 s]");
  require(s.timing.duration / dt <= 5e7, "timing.duration_s", s.timing.duration,
          "duration/step must be <= 5e7 steps");

  require(s.reference.ramp_in >= 0.0 && s.reference.ramp_in < s.timing.duration,
          "reference.ramp_in_s", s.reference.ramp_in, "must be in [0, timing.duration_s)");
  double amplitude_sum = 0.0;
  for (std::size_t i = 0; i < s.reference.sinusoids.size(); ++i) {
    const PlaSinusoid& p = s.reference.sinusoids[i];
    const std::string f = "reference.sinusoids[" + std::to_string(i) + "].";
    require(p.amplitude >= 0.0, f + "amplitude_deg", p.amplitude, "must be >= 0 deg");
    require(p.frequency >= 0.0 && p.frequency < 0.5 / dt, f + "frequency_hz", p.frequency,
            "must be in [0, " + format_value(0.5 / dt) + ") Hz (below the Nyquist frequency)");
    amplitude_sum += p.amplitude;
  }
  require(s.reference.offset - amplitude_sum >= s.ecu.pla_idle &&
              s.reference.offset + amplitude_sum <= s.ecu.pla_max,
          "reference.offset_deg", s.reference.offset,
          "offset ± the sum of the amplitudes (" + format_value(amplitude_sum) +
              " deg) must stay within [ecu.pla_idle_deg, ecu.pla_max_deg] = [" +
              format_value(s.ecu.pla_idle) + ", " + format_value(s.ecu.pla_max) + "]");
}

// The transfer system's delays and noise, the speed limit, the compensator and its derived values.
void validate_fcu_transfer_and_compensator(const FcuScenario& s) {
  const double dt = s.timing.step;
  require_delay(s.transfer.motor_delay, dt, "transfer.motor_delay_s");
  require_delay(s.transfer.flow_meter_delay, dt, "transfer.flow_meter_delay_s");

  const auto& c = s.compensator;
  if (c.steps_ahead_given) {
  }
  // The derived values are written into the resolved scenario: they must read back.
  if (!c.steps_ahead_given) {
    require(s.resolved_steps_ahead() <= 100000, "compensator.steps_ahead", s.resolved_steps_ahead(),
            "derived as round(total transfer delay / step): must be <= 100000 (give steps_ahead "
            "or shorten the transfer delays)");
  }
  if (!c.delay_given) {
    require(s.resolved_compensator_delay() / dt <= 1e6, "compensator.delay_s",
            s.resolved_compensator_delay(),
            "derived as the total transfer delay: must be at most 1e6 steps (give delay_s)");
  }
  if (c.delay_given) {
    require(c.delay >= dt && c.delay / dt <= 1e6, "compensator.delay_s", c.delay,
            "must be at least one step (timing.step_s = " + format_value(dt) +
                " s) and at most 1e6 steps");
  }
  require(c.points > c.order && c.points <= core::PolynomialPredictor::kMaxPoints,
          "compensator.points", c.points,
          "must be in [order + 1, " + std::to_string(core::PolynomialPredictor::kMaxPoints) + "]");
  if (c.type == FcuCompensatorType::kPolynomial) {
    require(s.resolved_steps_ahead() >= 1, "compensator.steps_ahead", s.resolved_steps_ahead(),
            "round(total transfer delay / step) is 0: give steps_ahead >= 1");
  }
  if (c.type == FcuCompensatorType::kInverse) {
    require(s.resolved_compensator_delay() >= dt, "compensator.delay_s",
            s.resolved_compensator_delay(),
            "the total transfer delay is shorter than a step: give delay_s >= timing.step_s");
  }
}

// The command limits and the watchdog.
void validate_fcu_safety(const FcuScenario& s) {
  const double command_max = s.safety.resolved_command_max(s.fcu.flow_gain);
  require(!std::isnan(s.safety.command_min) && !std::isnan(command_max) &&
              s.safety.command_min < command_max,
          "safety.command_max_kg_s", command_max,
          "must be > safety.command_min_kg_s = " + format_value(s.safety.command_min) +
              " (default: fcu.flow_gain_kg_s)");
  // The ramp to rest (fcu_safety_config: at the acceleration bound) ends within kMaxStopTime.
  require_stop_deceleration(fcu_safety_config(s), "safety.command_acceleration_max_kg_s3",
                            s.safety.command_acceleration_max, "kg/s^3", "none",
                            "safety.command_max_kg_s - command_min_kg_s");
}

// The engine, ECU and FCU models.
void validate_fcu_plant(const FcuScenario& s) {
  const auto& g = s.engine;
  require(g.design_fuel > g.idle_fuel, "engine.design_fuel_kg_s", g.design_fuel,
          "must be > engine.idle_fuel_kg_s = " + format_value(g.idle_fuel));
  const auto& u = s.ecu;
  require(u.pla_max > u.pla_idle, "ecu.pla_max_deg", u.pla_max,
          "must be > ecu.pla_idle_deg = " + format_value(u.pla_idle));
  require(u.max_speed > g.idle_speed && u.max_speed < s.metrics.speed_limit, "ecu.max_speed",
          u.max_speed, "must be in (engine.idle_speed, metrics.speed_limit)");
  const double w0 = fcu_initial_fuel(s);
  require(w0 <= s.fcu.flow_gain, "fcu.flow_gain_kg_s", s.fcu.flow_gain,
          "the valve cannot meter the initial steady fuel flow " + format_value(w0) + " kg/s");
}

// The metrics and the outputs.
void validate_fcu_metrics_and_outputs(const FcuScenario& s) {
  const double dt = s.timing.step;
  require(s.metrics.delay_search >= 2.0 * dt && s.metrics.delay_search < 0.5 * s.timing.duration,
          "metrics.delay_search_s", s.metrics.delay_search, "must be in [2 steps, duration_s/2)");
  require(s.metrics.delay_window > 2.0 * s.metrics.delay_search, "metrics.delay_window_s",
          s.metrics.delay_window, "must be > 2·delay_search_s");
  require(s.outputs.decimation >= 1, "outputs.decimation", s.outputs.decimation, "must be >= 1");
  require_progress_mode("outputs.progress", s.outputs.progress);
  require_output_format("outputs.format", s.outputs.format);
}

}  // namespace

void validate(const FcuScenario& s) {
  require(s.schema_version == kSchemaVersion, "schema_version", s.schema_version,
          "this hyloop reads schema_version " + std::to_string(kSchemaVersion));
  if (s.name.empty()) throw ScenarioError("name: must not be empty");

  validate_fcu_timing_and_reference(s);
  validate_fcu_transfer_and_compensator(s);
  validate_fcu_safety(s);
  validate_fcu_plant(s);
  validate_fcu_metrics_and_outputs(s);
}

FcuScenario parse_fcu_scenario(const std::string& yaml_text, const std::string& origin,
                               const std::vector<std::string>& overrides) {
  return parse_fcu_scenario(load_yaml(yaml_text, origin, overrides), origin);
}

FcuScenario parse_fcu_scenario(const YAML::Node& root, const std::string& origin) {
  FcuScenario s;
  parse_into(root, origin, s);
  validate_with_origin(origin, [&] { validate(s); });
  return s;
}

FcuScenario load_fcu_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_fcu_scenario(read_scenario_text(path), path, overrides);
}

std::string to_yaml(const FcuScenario& s) { return fcu_table().emit(s); }

const FieldTable& fcu_field_table() { return fcu_table().table(); }

}  // namespace hyloop::experiment
