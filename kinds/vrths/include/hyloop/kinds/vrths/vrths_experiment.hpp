#pragma once
// The virtual RTHS benchmark as an experiment kind (`kind: vrths`; issue 13 §1; the models and
// criteria in core/rths_benchmark.hpp).
//
// Rig part (the physical substructure and its actuator, emulated): the servo-hydraulic control
// plant (perturbed by perturbation.seed, 0 = nominal) holds the command u over a step T and
// measures at its end
//   x_m = x + σ_x·n,     f_e = k_e·x + c_e·ẋ_b + m_e·ẍ_b + σ_f·n            (ẋ_b, ẍ_b backward
// differences of x; the same normalised noise n on both channels, as the package's two blocks
// share one seed). Truth columns: x, ẋ and the actuator force F.
// Dynamics part (the numerical substructure, the reference structure and the tracking
// controller): cycle k receives the measurement at t_{k+1}, advances the numerical substructure
// t_k → t_{k+1} under a_g (linear between the record's samples, scaled, padded with zeros) and
// the force measured at t_{k−1} (the package's unit delay), the reference likewise with no
// force, and computes the command held over [t_{k+1}, t_{k+2}] from y_1(t_{k+1}) and
// x_m(t_{k+1}):
//   none     u = y_1
//   sample   the benchmark's PI + phase lead (core::rths::SampleController)
//   ats      adaptive time series (core::AdaptiveTimeSeries) on y_1 and its backward
//            differences; fitted on (u, x_m) pairs, started at the nominal plant's inverse
//   amb      adaptive model-based compensation (core::AdaptiveModelBased) on y_1, its
//            coefficients started at the nominal plant's inverse
// A stability guard (core::StabilityGuard on y_1 and x_m; guard.*) stops the run, reason
// stability_guard, when the loop leaves its target (the actuator then ramps to rest).
// The recorder keeps x_m, y_1..3 and r_1..3 at full rate and gives J1–J9 (core::rths::evaluate)
// in the summary, in process and distributed alike.

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hyloop/core/adaptive_model_based.hpp"
#include "hyloop/core/adaptive_time_series.hpp"
#include "hyloop/core/ground_motion.hpp"
#include "hyloop/core/rths_benchmark.hpp"
#include "hyloop/core/stability_guard.hpp"
#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/experiment/rig_driver_fields.hpp"
#include "hyloop/experiment/scenario_fields.hpp"
#include "hyloop/experiment/stability_guard_fields.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/hal/servo_actuator_emulator.hpp"
#include "hyloop/hal/wire_impairment.hpp"

namespace hyloop::experiment {

/// The most cycles a vrths run may have (the record and the criteria's series are in memory).
inline constexpr double kMaxVrthsSteps = 1e6;

struct VrthsScenario {
  int schema_version = 1;
  std::string name = "vrths";
  std::string origin = "scenario";
  DataSource data;
  int building_case = 1;  ///< structure.case, 1–4
  struct {
    std::string file = "data/ground_motion/elcentro_ns_1940.txt";
    std::string format = "auto";
    std::string unit = "g";
    double scale = 0.4;    ///< a_g = scale·record (the package's eq_intensity)
    double padding = 5.0;  ///< s of zeros before and after the record
  } ground_motion;
  struct {
    double step = core::rths::kBenchmarkStep;  ///< s
    double duration = 0.0;                     ///< s; 0: padding + record + padding
  } timing;
  core::rths::PlantParameters plant;
  struct {
    std::uint64_t seed = 0;  ///< 0: the nominal plant; else the draw of this seed
    core::rths::PlantUncertainty sigma;
  } perturbation;
  struct {
    double displacement_noise = 1.6e-5;  ///< m (RMS)
    double force_noise = 2.18;           ///< N (RMS)
    std::uint64_t seed = 123;
    double resolution = 1.0 / 262144.0;  ///< the converters' quantum, m
    double converter_limit = 3.8;        ///< saturation of the converters, m
  } sensors;
  struct {
    std::string type = "sample";  ///< none | sample | ats | amb
    core::rths::SampleControllerGains sample;
    core::AdaptiveTimeSeriesConfig ats = default_ats();
    core::AdaptiveModelBasedConfig amb = default_amb();
  } controller;
  // controller.ats's lists as the file spells them (copied into controller.ats by the parser).
  std::vector<double> ats_initial = as_vector3(default_ats().initial);
  std::vector<double> ats_min{0.9, 0.0, 0.0};
  std::vector<double> ats_max{1.1, 0.06, 0.0032};
  std::vector<double> ats_rate_limit{0.01, 0.001, 5e-5};
  // controller.amb's lists likewise (default initial: the nominal plant's truncated inverse).
  std::vector<double> amb_initial = as_vector(default_amb().initial);
  std::vector<double> amb_min = as_vector(default_amb().min);
  std::vector<double> amb_max = as_vector(default_amb().max);
  std::vector<double> amb_gain = as_vector(default_amb().gain);
  StabilityGuardSettings guard{.enabled = true, .config = default_guard()};
  struct {
    /// rig.driver: the device standing for the actuator and specimen (emulator: the plant in
    /// this process; udp: a real-time target on the wire, rig_driver_fields.hpp).
    RigDriverSettings driver;
  } rig;
  struct {
    double stroke = 0.007;                                      ///< m
    double velocity = 0.3;                                      ///< m/s
    double acceleration = hal::kServoHydraulicAccelerationMax;  ///< m/s², the command's |a|
    double force = 8900.0;  ///< N, the actuator's capacity (reported)
  } limits;
  struct {
    bool samples = true;
    int decimation = 4;  ///< samples.csv keeps every n-th cycle
    std::string progress = "auto";
    std::string format = "csv";
  } outputs;

  /// The plant of this run (nominal, or perturbed by perturbation.seed).
  [[nodiscard]] core::rths::PlantParameters run_plant() const;
  [[nodiscard]] std::int64_t steps(const core::GroundMotion& motion) const;
  static core::AdaptiveTimeSeriesConfig default_ats();
  static core::StabilityGuardConfig default_guard();
  static std::vector<double> as_vector3(const std::array<double, 3>& a) {
    return {a.begin(), a.end()};
  }
  /// AMB from the nominal plant x/u = g/(A0 + A1·s + … + A5·s⁵): a_i = A_i/g, i = 0…3 (its
  /// inverse truncated after s³), bounds ±50 % around them, gains 2/s.
  static core::AdaptiveModelBasedConfig default_amb();
  static std::vector<double> as_vector(const std::array<double, 4>& a) {
    return {a.begin(), a.end()};
  }
};

/// @throws ScenarioError naming the field.
VrthsScenario parse_vrths_scenario(const std::string& text, const std::string& origin,
                                   const std::vector<std::string>& overrides,
                                   const DataSource& data = DataSource::server());
/// The same from the parsed YAML (overrides applied): Kind::load's one parse.
VrthsScenario parse_vrths_scenario(const YAML::Node& root, const std::string& origin,
                                   const DataSource& data);
std::string to_yaml(const VrthsScenario& scenario);
const FieldTable& vrths_field_table();

/// The record as the run uses it: read, in m/s². @throws ScenarioError naming ground_motion.
core::GroundMotion load_vrths_ground_motion(const VrthsScenario& s);

/// The actuator safety layer: the command's window +-limits.stroke_m, its acceleration bound and
/// a servo-hydraulic ramp to rest.
hal::SafetyConfig vrths_safety_config(const VrthsScenario& s);
LoopPlan vrths_loop_plan(const VrthsScenario& s);
/// The rig part rig.driver selects: the plant in this process, or the device on the wire.
std::unique_ptr<RigPart> make_vrths_rig_part(const VrthsScenario& s);
/// The plant in this process whatever rig.driver says: the in-process runner's.
std::unique_ptr<RigPart> make_vrths_emulated_rig_part(const VrthsScenario& s);
std::unique_ptr<DynamicsPart> make_vrths_dynamics_part(const VrthsScenario& s);
/// The udp target of rig.driver on a real socket (hyloop up --emulate-wire), stepping the
/// benchmark's actuator and specimen (VrthsAxisPlant) at the scenario's step.
std::unique_ptr<WireEmulator> make_vrths_wire_emulator(const VrthsScenario& s,
                                                       const hal::WireImpairments& impairments);

/// The benchmark's servo-hydraulic actuator with its specimen as one axis (hal::AxisPlant), as
/// the rig measures it each step (x_m, f_e with the sensors' common noise draw n):
///   x_m = x + σ_x·n,  f_e = k_e·x + c_e·ẋ_d + m_e·ẍ_d + σ_f·n
/// where ẋ_d, ẍ_d are backward differences of x over the step. The in-process rig and the
/// udp target emulator step this same object.
class VrthsAxisPlant final : public hal::AxisPlant {
 public:
  explicit VrthsAxisPlant(const VrthsScenario& s);
  void reset(double position) noexcept override;  ///< the benchmark starts at rest at 0
  const hal::ServoMeasurement& step(double command) noexcept override;
  [[nodiscard]] const hal::ServoMeasurement& measurement() const noexcept override {
    return measurement_;
  }
  [[nodiscard]] const core::rths::ServoHydraulicPlant& plant() const noexcept { return plant_; }

 private:
  core::rths::ServoHydraulicPlant plant_;
  double c_e_, step_, sigma_x_, sigma_f_;
  std::uint64_t seed_;
  std::mt19937_64 random_;
  std::normal_distribution<double> noise_{0.0, 1.0};
  double x1_ = 0.0, v1_ = 0.0;
  hal::ServoMeasurement measurement_;
};
/// The recorder's columns: the dynamics part's, then the rig's truth.
std::vector<std::string> vrths_record_columns();

/// `hyloop tune` of a vrths scenario (vrths_tune.cpp): a coarse grid of controller.type amb's
/// (a scale on gain_per_s × filter_cutoff_hz) or ats's (filter_time_constant_s × window_s)
/// parameters, the scenario's own values among them, each run on request.runs perturbed plants
/// (kind.monte_carlo_overrides(1..runs)) and scored by its mean J2; a candidate with a run that
/// stops is disqualified. @throws ScenarioError naming controller.type (none, sample) or the
/// field with nothing to tune; std::invalid_argument for runs out of [1, kMaxTuneRuns].
TuneResult tune_vrths(const Kind& kind, const TuneRequest& request, std::ostream& log);
/// What tune_vrths tunes (Kind::tuning).
std::string vrths_tuning();

class VrthsExperiment final : public Experiment {
 public:
  explicit VrthsExperiment(const VrthsScenario& scenario);
  /// The streamed recorder (the coordinator's): samples.csv written as rows arrive
  /// (stream_tables), not kept.
  VrthsExperiment(const VrthsScenario& scenario, SampleTable::Streamed);
  VrthsExperiment(const VrthsExperiment&) = delete;
  VrthsExperiment& operator=(const VrthsExperiment&) = delete;

  bool step() noexcept override { return chain_.step(*this); }
  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return total_steps_; }
  [[nodiscard]] double step_size() const noexcept override { return scenario_.timing.step; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  void stream_tables(const std::filesystem::path& dir) override {
    if (samples_.streamed()) samples_.stream_to(dir / "samples.csv");
  }
  [[nodiscard]] std::string name() const override { return scenario_.name; }
  [[nodiscard]] std::string kind() const override { return "vrths"; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return to_yaml(scenario_); }
  [[nodiscard]] std::string progress_mode() const override { return scenario_.outputs.progress; }
  [[nodiscard]] std::string output_format() const override { return scenario_.outputs.format; }
  [[nodiscard]] std::vector<std::string> record_columns() const override {
    return vrths_record_columns();
  }
  bool record_cycle(std::span<const double> row) noexcept override;
  void record_stop(std::string_view reason) noexcept override;

  /// J1 (ms), J2–J9 (%) over the recorded cycles. @throws std::invalid_argument when fewer
  /// than 52 were recorded.
  [[nodiscard]] core::rths::Criteria criteria() const;
  [[nodiscard]] bool stopped() const noexcept { return stop_reason_ != StopReason::kNone; }
  [[nodiscard]] const VrthsScenario& scenario() const noexcept { return scenario_; }

 private:
  VrthsExperiment(const VrthsScenario& scenario, bool streamed);
  VrthsScenario scenario_;
  std::int64_t total_steps_;
  std::array<std::vector<double>, 7> series_;  // x_m, y1, y2, y3, r1, r2, r3 (full rate)
  double peak_force_ = 0.0, peak_command_ = 0.0, peak_x_ = 0.0, peak_v_ = 0.0;
  std::array<double, 4> coefficients_{};
  SampleTable samples_;
  LoopChain chain_;
  std::int64_t cycle_ = 0;
  StopReason stop_reason_ = StopReason::kNone;
  core::StabilityGuard guard_;  // the dynamics' guard replayed from the rows (the summary's ρ)
};

}  // namespace hyloop::experiment
