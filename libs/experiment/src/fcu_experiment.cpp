#include "hyloop/experiment/fcu_experiment.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "hyloop/experiment/run_export.hpp"
#include "hyloop/experiment/scenario.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace {

FcuCompensatorType parse_type(const std::string& text, MapReader& reader) {
  if (text == "none") return FcuCompensatorType::kNone;
  if (text == "inverse") return FcuCompensatorType::kInverse;
  if (text == "polynomial") return FcuCompensatorType::kPolynomial;
  reader.fail(reader.field("type"),
              "\"" + excerpt(text) + "\": must be one of none, inverse, polynomial");
}

void parse_into(const YAML::Node& root, const std::string& origin, FcuScenario& s) {
  MapReader top(root, "", origin);
  top.integer("schema_version", s.schema_version);
  top.string("name", s.name);
  top.string("description", s.description);
  std::string kind = "fcu";
  top.string("kind", kind);
  if (kind != "fcu") top.fail("kind", "\"" + excerpt(kind) + "\": must be fcu");

  MapReader timing = top.child("timing");
  timing.number("step_s", s.timing.step);
  timing.number("duration_s", s.timing.duration);
  timing.finish();

  MapReader reference = top.child("reference");
  reference.number("offset_deg", s.reference.offset);
  reference.number("ramp_in_s", s.reference.ramp_in);
  const YAML::Node list = reference.get("sinusoids");
  if (list) {
    if (!list.IsSequence()) {
      reference.fail(reference.field("sinusoids"),
                     "must be a list of {amplitude_deg, frequency_hz, phase_rad}");
    }
    s.reference.sinusoids.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      MapReader term(list[i], reference.field("sinusoids") + "[" + std::to_string(i) + "]", origin);
      PlaSinusoid p;
      term.number("amplitude_deg", p.amplitude);
      term.number("frequency_hz", p.frequency);
      term.number("phase_rad", p.phase);
      term.finish();
      s.reference.sinusoids.push_back(p);
    }
  }
  reference.finish();

  MapReader transfer = top.child("transfer");
  transfer.number("motor_delay_s", s.transfer.motor_delay);
  transfer.number("flow_meter_delay_s", s.transfer.flow_meter_delay);
  transfer.number("measurement_noise_std_kg_s", s.transfer.measurement_noise_std);
  transfer.unsigned64("seed", s.transfer.seed);
  transfer.finish();

  MapReader comp = top.child("compensator");
  std::string type(to_string(s.compensator.type));
  comp.string("type", type);
  s.compensator.type = parse_type(type, comp);
  comp.integer("points", s.compensator.points);
  comp.integer("order", s.compensator.order);
  // Absent or null: derived from the total transfer delay.
  if (const YAML::Node p = comp.get("steps_ahead"); p && !p.IsNull()) {
    comp.integer("steps_ahead", s.compensator.steps_ahead);
    s.compensator.steps_ahead_given = true;
  }
  if (const YAML::Node d = comp.get("delay_s"); d && !d.IsNull()) {
    comp.number("delay_s", s.compensator.delay);
    s.compensator.delay_given = true;
  }
  comp.finish();

  MapReader safety = top.child("safety");
  safety.limit("command_min_kg_s", s.safety.command_min, true);
  if (const YAML::Node m = safety.get("command_max_kg_s"); m && !m.IsNull()) {
    safety.limit("command_max_kg_s", s.safety.command_max);
    s.safety.command_max_given = true;
  }
  safety.integer("watchdog_cycles", s.safety.watchdog_cycles);
  safety.limit("command_acceleration_max_kg_s3", s.safety.command_acceleration_max);
  safety.finish();

  MapReader engine = top.child("engine");
  engine.number("idle_speed", s.engine.idle_speed);
  engine.number("idle_fuel_kg_s", s.engine.idle_fuel);
  engine.number("design_fuel_kg_s", s.engine.design_fuel);
  engine.number("idle_time_constant_s", s.engine.idle_time_constant);
  engine.number("design_time_constant_s", s.engine.design_time_constant);
  engine.finish();

  MapReader ecu = top.child("ecu");
  ecu.number("pla_idle_deg", s.ecu.pla_idle);
  ecu.number("pla_max_deg", s.ecu.pla_max);
  ecu.number("max_speed", s.ecu.max_speed);
  ecu.number("kp_kg_s", s.ecu.kp);
  ecu.number("ki_kg_s2", s.ecu.ki);
  ecu.number("accel_ratio", s.ecu.accel_ratio);
  ecu.number("decel_ratio", s.ecu.decel_ratio);
  ecu.finish();

  MapReader fcu = top.child("fcu");
  fcu.number("valve_time_constant_s", s.fcu.valve_time_constant);
  fcu.number("flow_gain_kg_s", s.fcu.flow_gain);
  fcu.finish();

  MapReader metrics = top.child("metrics");
  metrics.number("delay_search_s", s.metrics.delay_search);
  metrics.number("delay_window_s", s.metrics.delay_window);
  metrics.number("speed_limit", s.metrics.speed_limit);
  metrics.finish();

  MapReader out = top.child("outputs");
  out.boolean("samples", s.outputs.samples);
  out.integer("decimation", s.outputs.decimation);
  out.string("progress", s.outputs.progress);
  out.string("format", s.outputs.format);
  out.finish();

  top.finish();
}

/// A delay of the transfer system: 0 (off) or at least one step.
void require_delay(double delay, double step, const std::string& field) {
  require(std::isfinite(delay) && (delay == 0.0 || delay >= step), field, delay,
          "must be 0 (off) or at least one step (timing.step_s = " + format_value(step) + " s)");
  require(delay / step <= core::DelayLine::kMaxDelaySteps, field, delay,
          "must be at most 1e6 steps");
}

std::size_t history_capacity(const FcuScenario& s) {
  const auto window =
      static_cast<std::int64_t>(std::llround(s.metrics.delay_window / s.timing.step));
  return static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(window, s.steps())));
}

nlohmann::json errors_json(const core::TrackingErrors& e) {
  return {{"nrms", e.nrms},
          {"rms", e.rms},
          {"peak", e.peak},
          {"normalised_peak", e.normalised_peak},
          {"command_range", e.command_range},
          {"samples", e.samples}};
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

std::string_view to_string(FcuStopReason reason) noexcept {
  switch (reason) {
    case FcuStopReason::kNone:
      return "none";
    case FcuStopReason::kNotFinite:
      return "not_finite";
    case FcuStopReason::kSpeedLimit:
      return "speed_limit";
    case FcuStopReason::kServiceFault:
      return "service_fault";
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

void validate(const FcuScenario& s) {
  require(s.schema_version == kSchemaVersion, "schema_version", s.schema_version,
          "this hyloop reads schema_version " + std::to_string(kSchemaVersion));
  if (s.name.empty()) throw ScenarioError("name: must not be empty");

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

  require_delay(s.transfer.motor_delay, dt, "transfer.motor_delay_s");
  require_delay(s.transfer.flow_meter_delay, dt, "transfer.flow_meter_delay_s");
  require(s.metrics.speed_limit > 1.0, "metrics.speed_limit", s.metrics.speed_limit,
          "must be > 1 (normalised speed)");
  require(s.transfer.measurement_noise_std >= 0.0, "transfer.measurement_noise_std_kg_s",
          s.transfer.measurement_noise_std, "must be >= 0 kg/s");

  const auto& c = s.compensator;
  if (c.steps_ahead_given) {
    require(c.steps_ahead >= 1 && c.steps_ahead <= 100000, "compensator.steps_ahead", c.steps_ahead,
            "must be in [1, 100000] (P = 0 predicts nothing)");
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
  require(c.order >= 0 && c.order <= 8, "compensator.order", c.order, "must be in [0, 8]");
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

  const double command_max = s.safety.resolved_command_max(s.fcu.flow_gain);
  require(!std::isnan(s.safety.command_min) && !std::isnan(command_max) &&
              s.safety.command_min < command_max,
          "safety.command_max_kg_s", command_max,
          "must be > safety.command_min_kg_s = " + format_value(s.safety.command_min) +
              " (default: fcu.flow_gain_kg_s)");
  require(s.safety.watchdog_cycles >= 1 && s.safety.watchdog_cycles <= 100000,
          "safety.watchdog_cycles", s.safety.watchdog_cycles, "must be in [1, 100000]");
  require(s.safety.command_acceleration_max > 0.0, "safety.command_acceleration_max_kg_s3",
          s.safety.command_acceleration_max, "must be > 0 (.inf: no limit)");

  const auto& g = s.engine;
  require(g.idle_speed > 0.0 && g.idle_speed < 1.0, "engine.idle_speed", g.idle_speed,
          "must be in (0, 1) (normalised speed)");
  require(g.idle_fuel >= 0.0, "engine.idle_fuel_kg_s", g.idle_fuel, "must be >= 0 kg/s");
  require(g.design_fuel > g.idle_fuel, "engine.design_fuel_kg_s", g.design_fuel,
          "must be > engine.idle_fuel_kg_s = " + format_value(g.idle_fuel));
  require(g.idle_time_constant > 0.0, "engine.idle_time_constant_s", g.idle_time_constant,
          "must be > 0 s");
  require(g.design_time_constant > 0.0, "engine.design_time_constant_s", g.design_time_constant,
          "must be > 0 s");
  const auto& u = s.ecu;
  require(u.pla_max > u.pla_idle, "ecu.pla_max_deg", u.pla_max,
          "must be > ecu.pla_idle_deg = " + format_value(u.pla_idle));
  require(u.max_speed > g.idle_speed && u.max_speed < s.metrics.speed_limit, "ecu.max_speed",
          u.max_speed, "must be in (engine.idle_speed, metrics.speed_limit)");
  require(u.kp >= 0.0, "ecu.kp_kg_s", u.kp, "must be >= 0 kg/s per unit speed error");
  require(u.ki >= 0.0, "ecu.ki_kg_s2", u.ki, "must be >= 0 kg/s^2 per unit speed error");
  require(u.accel_ratio >= 1.0, "ecu.accel_ratio", u.accel_ratio, "must be >= 1");
  require(u.decel_ratio > 0.0 && u.decel_ratio <= 1.0, "ecu.decel_ratio", u.decel_ratio,
          "must be in (0, 1]");
  require(s.fcu.valve_time_constant >= 0.0, "fcu.valve_time_constant_s", s.fcu.valve_time_constant,
          "must be >= 0 s");
  require(s.fcu.flow_gain > 0.0, "fcu.flow_gain_kg_s", s.fcu.flow_gain, "must be > 0 kg/s");
  const double w0 = fcu_initial_fuel(s);
  require(w0 <= s.fcu.flow_gain, "fcu.flow_gain_kg_s", s.fcu.flow_gain,
          "the valve cannot meter the initial steady fuel flow " + format_value(w0) + " kg/s");

  require(s.metrics.delay_search >= 2.0 * dt && s.metrics.delay_search < 0.5 * s.timing.duration,
          "metrics.delay_search_s", s.metrics.delay_search, "must be in [2 steps, duration_s/2)");
  require(s.metrics.delay_window > 2.0 * s.metrics.delay_search, "metrics.delay_window_s",
          s.metrics.delay_window, "must be > 2·delay_search_s");
  require(s.outputs.decimation >= 1, "outputs.decimation", s.outputs.decimation, "must be >= 1");
  require_progress_mode("outputs.progress", s.outputs.progress);
  require_output_format("outputs.format", s.outputs.format);
}

FcuScenario parse_fcu_scenario(const std::string& yaml_text, const std::string& origin,
                               const std::vector<std::string>& overrides) {
  const YAML::Node root = load_yaml(yaml_text, origin, overrides);
  FcuScenario s;
  parse_into(root, origin, s);
  validate_with_origin(origin, [&] { validate(s); });
  return s;
}

FcuScenario load_fcu_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_fcu_scenario(read_scenario_text(path), path, overrides);
}

std::string to_yaml(const FcuScenario& s) {
  YAML::Emitter e;
  e.SetDoublePrecision(17);
  const auto kv = [&e](const char* key, auto value) {
    e << YAML::Key << key << YAML::Value << value;
  };
  e << YAML::BeginMap;
  kv("schema_version", s.schema_version);
  kv("name", s.name);
  kv("description", s.description);
  kv("kind", "fcu");
  e << YAML::Key << "timing" << YAML::Value << YAML::BeginMap;
  kv("step_s", s.timing.step);
  kv("duration_s", s.timing.duration);
  e << YAML::EndMap;
  e << YAML::Key << "reference" << YAML::Value << YAML::BeginMap;
  kv("offset_deg", s.reference.offset);
  kv("ramp_in_s", s.reference.ramp_in);
  e << YAML::Key << "sinusoids" << YAML::Value << YAML::BeginSeq;
  for (const PlaSinusoid& p : s.reference.sinusoids) {
    e << YAML::Flow << YAML::BeginMap;
    kv("amplitude_deg", p.amplitude);
    kv("frequency_hz", p.frequency);
    kv("phase_rad", p.phase);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
  e << YAML::EndMap;
  e << YAML::Key << "transfer" << YAML::Value << YAML::BeginMap;
  kv("motor_delay_s", s.transfer.motor_delay);
  kv("flow_meter_delay_s", s.transfer.flow_meter_delay);
  kv("measurement_noise_std_kg_s", s.transfer.measurement_noise_std);
  kv("seed", s.transfer.seed);
  e << YAML::EndMap;
  e << YAML::Key << "compensator" << YAML::Value << YAML::BeginMap;
  kv("type", std::string(to_string(s.compensator.type)));
  kv("points", s.compensator.points);
  kv("order", s.compensator.order);
  if (s.resolved_steps_ahead() >= 1) kv("steps_ahead", s.resolved_steps_ahead());
  if (s.resolved_compensator_delay() >= s.timing.step) {
    kv("delay_s", s.resolved_compensator_delay());
  }
  e << YAML::EndMap;
  e << YAML::Key << "safety" << YAML::Value << YAML::BeginMap;
  kv("command_min_kg_s", s.safety.command_min);
  kv("command_max_kg_s", s.safety.resolved_command_max(s.fcu.flow_gain));
  kv("watchdog_cycles", s.safety.watchdog_cycles);
  kv("command_acceleration_max_kg_s3", s.safety.command_acceleration_max);
  e << YAML::EndMap;
  e << YAML::Key << "engine" << YAML::Value << YAML::BeginMap;
  kv("idle_speed", s.engine.idle_speed);
  kv("idle_fuel_kg_s", s.engine.idle_fuel);
  kv("design_fuel_kg_s", s.engine.design_fuel);
  kv("idle_time_constant_s", s.engine.idle_time_constant);
  kv("design_time_constant_s", s.engine.design_time_constant);
  e << YAML::EndMap;
  e << YAML::Key << "ecu" << YAML::Value << YAML::BeginMap;
  kv("pla_idle_deg", s.ecu.pla_idle);
  kv("pla_max_deg", s.ecu.pla_max);
  kv("max_speed", s.ecu.max_speed);
  kv("kp_kg_s", s.ecu.kp);
  kv("ki_kg_s2", s.ecu.ki);
  kv("accel_ratio", s.ecu.accel_ratio);
  kv("decel_ratio", s.ecu.decel_ratio);
  e << YAML::EndMap;
  e << YAML::Key << "fcu" << YAML::Value << YAML::BeginMap;
  kv("valve_time_constant_s", s.fcu.valve_time_constant);
  kv("flow_gain_kg_s", s.fcu.flow_gain);
  e << YAML::EndMap;
  e << YAML::Key << "metrics" << YAML::Value << YAML::BeginMap;
  kv("delay_search_s", s.metrics.delay_search);
  kv("delay_window_s", s.metrics.delay_window);
  kv("speed_limit", s.metrics.speed_limit);
  e << YAML::EndMap;
  e << YAML::Key << "outputs" << YAML::Value << YAML::BeginMap;
  kv("samples", s.outputs.samples);
  kv("decimation", s.outputs.decimation);
  kv("progress", s.outputs.progress);
  kv("format", s.outputs.format);
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

// ---------------------------------------------------------------------------------- runner

const std::array<std::string_view, kFcuColumns> kFcuColumnHeaders = {
    "time[s]",       "pla[deg]",          "n_demand[%]",           "x_c[kg/s]", "x_p[kg/s]",
    "x_motor[kg/s]", "valve_position[-]", "fuel_flow[kg/s]",       "x_m[kg/s]", "n[%]",
    "n_ideal[%]",    "x_c_ideal[kg/s]",   "fuel_flow_ideal[kg/s]", "e_n[%]",    "e_flow[kg/s]",
    "ti[kg^2/s^2]"};

const std::vector<std::string>& fcu_record_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c(kFcuColumnHeaders.begin(), kFcuColumnHeaders.end());
    c.insert(c.end(), {"speed[-]", "speed_ideal[-]", "ecu_limited[-]", "valve_saturated[-]"});
    return c;
  }();
  return columns;
}

FcuExperiment::FcuExperiment(const FcuScenario& scenario)
    : scenario_(scenario),
      step_(scenario.timing.step),
      total_steps_(scenario.steps()),
      dynamics_(scenario_),
      rig_(fcu_rig_config(scenario)),
      actuator_stage_(1, fcu_safety_config(scenario)),
      record_(kFcuColumns + kFcuExtraColumns, 0.0),
      command_history_(history_capacity(scenario)),
      measured_history_(history_capacity(scenario)),
      samples_(std::vector<std::string>(kFcuColumnHeaders.begin(), kFcuColumnHeaders.end()),
               scenario.outputs.samples
                   ? static_cast<std::size_t>(scenario.steps() / scenario.outputs.decimation + 1)
                   : 0),
      decimation_(scenario.outputs.decimation) {
  // Bumpless start at the steady state of PLA(0).
  rig_.reset(fcu_initial_fuel(scenario));
  command_next_ = dynamics_.initial_command();
  actuator_stage_.reset({command_next_, 0.0});
}

bool FcuExperiment::step() noexcept {
  if (finished()) return false;
  // 4. The actuator passes the command of this cycle; 5–6. the rig.
  const hal::ActuatorCommand offered{command_next_, 0.0};
  const double applied = actuator_stage_.update(cycle_, &offered).command.position;
  const hal::FcuRigSample& r = rig_.step(applied);
  record_[col(FcuColumn::kXMotor)] = r.x_motor;
  record_[col(FcuColumn::kValvePosition)] = r.valve_position;
  record_[col(FcuColumn::kFuelFlow)] = r.fuel_flow;
  record_[kFcuColumns + static_cast<std::size_t>(FcuExtraColumn::kValveSaturated)] =
      r.saturated ? 1.0 : 0.0;
  // 7–8, then 1–3 of the next cycle.
  double next = 0.0;
  const char* reason = dynamics_.step(cycle_, r.x_m, record_, next);
  record_row(record_);
  if (reason != nullptr) {
    record_stop(reason);
    return false;
  }
  command_next_ = next;
  return cycle_ < total_steps_;
}

void FcuExperiment::record_row(std::span<const double> row) noexcept {
  const std::int64_t k = cycle_;
  const double x_c = row[col(FcuColumn::kXc)];
  const double x_m = row[col(FcuColumn::kXm)];
  const auto extra = [&row](FcuExtraColumn c) {
    return row[kFcuColumns + static_cast<std::size_t>(c)];
  };
  flow_errors_.update(x_c, x_m);
  speed_errors_.update(extra(FcuExtraColumn::kSpeedIdeal), extra(FcuExtraColumn::kSpeed));
  if (extra(FcuExtraColumn::kEcuLimited) != 0.0) ++ecu_limited_;
  if (extra(FcuExtraColumn::kValveSaturated) != 0.0) ++valve_saturated_;
  const std::size_t slot = static_cast<std::size_t>(k) % command_history_.size();
  command_history_[slot] = x_c;
  measured_history_[slot] = x_m;
  history_count_ = std::min(history_count_ + 1, command_history_.size());
  std::copy_n(row.begin(), kFcuColumns, row_.begin());
  row_[col(FcuColumn::kTrackingIndicator)] = ti_.update(x_c, x_m);
  // The observers (journal, run.h5) get the row with the tracking indicator the recorder derives,
  // as samples.csv has it (a replay recomputes it from x_c and x_m).
  if (row.data() != record_.data()) std::copy(row.begin(), row.end(), record_.begin());
  record_[col(FcuColumn::kTrackingIndicator)] = row_[col(FcuColumn::kTrackingIndicator)];
  observe_row(record_);
  if (scenario_.outputs.samples && k % decimation_ == 0) samples_.append(row_);
  cycle_ = k + 1;
}

bool FcuExperiment::record_cycle(std::span<const double> row) noexcept {
  if (row.size() != kFcuColumns + kFcuExtraColumns || finished()) return false;
  record_row(row);
  return true;
}

void FcuExperiment::record_stop(std::string_view reason) {
  stop_reason_ = FcuStopReason::kServiceFault;
  for (const FcuStopReason r : {FcuStopReason::kNotFinite, FcuStopReason::kSpeedLimit}) {
    if (reason == to_string(r)) stop_reason_ = r;
  }
}

core::DelayEstimate FcuExperiment::delay_estimate() const {
  const std::size_t count = history_count_;
  const std::size_t cap = command_history_.size();
  std::vector<double> c(count);
  std::vector<double> m(count);
  // Unroll the ring: the oldest stored sample first.
  const std::size_t first =
      static_cast<std::size_t>(cycle_) >= cap ? static_cast<std::size_t>(cycle_) % cap : 0;
  for (std::size_t i = 0; i < count; ++i) {
    c[i] = command_history_[(first + i) % cap];
    m[i] = measured_history_[(first + i) % cap];
  }
  const int max_lag = static_cast<int>(std::llround(scenario_.metrics.delay_search / step_));
  return core::estimate_delay(c, m, std::min(max_lag, static_cast<int>(count) - 2));
}

nlohmann::json FcuExperiment::summary() const {
  const FcuScenario& s = scenario_;
  nlohmann::json j;
  j["compensator"] = std::string(to_string(s.compensator.type));
  j["diverged"] = stopped();
  j["stop_reason"] =
      stopped() ? nlohmann::json(std::string(to_string(stop_reason_))) : nlohmann::json(nullptr);
  j["tracking_indicator"] = {{"ti_kg2_s2", ti_.value()},
                             {"area_kg2_s2", ti_.area()},
                             {"complementary_area_kg2_s2", ti_.complementary_area()}};
  nlohmann::json delay;
  try {
    const core::DelayEstimate d = delay_estimate();
    delay = {{"delay_s", d.delay(step_)},
             {"lag_steps", d.lag_steps},
             {"correlation", d.correlation},
             {"at_boundary", d.at_boundary}};
  } catch (const std::invalid_argument& e) {
    delay = {{"delay_s", nullptr}, {"error", e.what()}};
  }
  delay["transfer_delay_s"] = s.transfer.total_delay();
  delay["valve_time_constant_s"] = s.fcu.valve_time_constant;
  j["delay_estimate"] = delay;
  j["engine_speed_error"] = errors_json(speed_errors());
  j["flow_error_kg_s"] = errors_json(flow_errors());
  nlohmann::json comp = {{"type", std::string(to_string(s.compensator.type))}};
  if (s.compensator.type == FcuCompensatorType::kInverse) {
    comp["alpha"] = alpha();
    comp["delay_s"] = s.resolved_compensator_delay();
  }
  if (s.compensator.type == FcuCompensatorType::kPolynomial) {
    comp["points"] = s.compensator.points;
    comp["order"] = s.compensator.order;
    comp["steps_ahead"] = s.resolved_steps_ahead();
    comp["weights"] = predictor_weights();
  }
  j["compensation"] = comp;
  j["valve_saturated_steps"] = valve_saturated_;
  j["ecu_limited_steps"] = ecu_limited_;
  j["delays"] = {{"motor_s", s.transfer.motor_delay},
                 {"flow_meter_s", s.transfer.flow_meter_delay},
                 {"total_s", s.transfer.total_delay()}};
  j["seed"] = s.transfer.seed;
  return j;
}

}  // namespace hyloop::experiment
