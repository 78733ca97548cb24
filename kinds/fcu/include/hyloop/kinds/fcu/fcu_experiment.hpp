#pragma once
// The FCU hardware-in-the-loop test (FCU paper; DESIGN.md §3.3), experiment kind `fcu`.
//
// Numerical substructure: the turbojet and its ECU (hyloop/core/turbojet_model.hpp). Physical
// substructure: the fuel control unit (its metering valve). Transfer system: an AC motor (pure
// delay τ_A = 0.169 s) carrying the command to the FCU and a flow meter with its filter (pure
// delay τ_F = 0.008 s, optional white noise) carrying the fuel flow back. In cycle k (t_k = k·Δt):
//   1. PLA[k] = offset + Σ a_i·sin(2π f_i t_k + φ_i)               the reference (deg)
//   2. the ECU turns the speed error n_dem(PLA[k]) − n[k] into the desired FCU command
//      x_c[k] (a fuel-flow demand, kg/s)
//   3. the compensator gives x_p[k]: none x_p = x_c; inverse x_p[k] = α·x_c[k] − (α − 1)·x_c[k−1]
//      with α = τ/Δt + 1; polynomial x_p[k] = Σ ā_i·x_c[k−i], the degree-N fit of the last n
//      commands evaluated P steps ahead
//   4. the actuator's safety layer passes x_p[k] (finite, within safety.command_*; otherwise it
//      holds the last command), and the AC motor delivers x_a[k] = x_p[k − τ_A/Δt] to the FCU
//   5. the FCU's valve follows the command x_a[k]/K_v; it meters w_f[k] (kg/s, end of the step)
//   6. the flow meter gives x_m[k] = w_f[k − τ_F/Δt] (+ noise)
//   7. the engine advances one step under the held fuel flow x_m[k] (RK4): n[k+1]
//   8. the ideal twin (the same ECU, FCU model and engine, no transfer system, no compensator)
//      advances one step: its speed is the "desired engine output"
// With both delays 0, no noise and no compensator the loop reproduces the twin bit for bit.
// The run starts bumpless: engine and twin at the steady state of the PLA at t = 0, every delay
// line, the compensator and the valve at that state's fuel flow.
//
// Summary (DESIGN.md §7): Mercan's tracking indicator on (x_c, x_m) computed as written, the
// delay between x_c and x_m by cross-correlation, NRMS and peak errors of the engine speed
// against the twin and of x_m against x_c, α or the predictor weights, stop reason.
// The numerical side (1–3, 7, 8) is FcuDynamics (fcu_dynamics.hpp), which computes cycle k+1's
// command at the end of cycle k; the rig (4–6) is hal::FcuRigEmulator. The dynamics and rig
// emulator services run the same two objects, so a lockstep distributed run records the same
// samples. step() is RT-safe: everything is allocated by the constructor.

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/core/tracking_metrics.hpp"
#include "hyloop/core/turbojet_model.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_experiment.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/hal/fcu_rig_emulator.hpp"
#include "hyloop/kinds/fcu/fcu_dynamics.hpp"

namespace YAML {
class Node;
}  // namespace YAML

namespace hyloop::experiment {

struct FieldTable;

enum class FcuCompensatorType : std::uint8_t { kNone, kInverse, kPolynomial };
std::string_view to_string(FcuCompensatorType type) noexcept;

/// One term a·sin(2π·f·t + φ) of the power-lever reference.
struct PlaSinusoid {
  double amplitude = 0.0;  ///< deg, ≥ 0
  double frequency = 0.0;  ///< Hz, in [0, 1/(2Δt))
  double phase = 0.0;      ///< rad
};

struct FcuScenario {
  int schema_version = 1;
  std::string name = "fcu";
  std::string description;

  struct Timing {
    double step = 0.001;     ///< Δt, s
    double duration = 40.0;  ///< s
  } timing;

  /// PLA(t) = offset + r(t)·Σ a_i·sin(2π f_i t + φ_i), deg, with the ramp-in window
  /// r(t) = ½(1 − cos(π t/T_r)) for t < T_r, else 1 (T_r = 0: no ramp). The window starts the
  /// lever with zero rate, so that the predictors see no kink at t = 0 (a bumpless start). The
  /// paper's sinusoids are not given: these are ours (a slow excursion over most of the lever's
  /// range plus faster content up to 0.7 Hz, where 0.177 s is 45° of phase).
  struct Reference {
    double offset = 55.0;  ///< deg
    double ramp_in = 0.0;  ///< T_r, s
    std::vector<PlaSinusoid> sinusoids{
        {12.0, 0.05, 0.0}, {8.0, 0.13, 1.0}, {5.0, 0.31, 2.0}, {3.0, 0.7, 0.5}};
    [[nodiscard]] double at(double t) const noexcept;
  } reference;

  struct Transfer {
    double motor_delay = 0.169;          ///< τ_A, s (0: off; otherwise ≥ one step)
    double flow_meter_delay = 0.008;     ///< τ_F, s (0: off; otherwise ≥ one step)
    double measurement_noise_std = 0.0;  ///< flow-meter noise, kg/s
    std::uint64_t seed = 1;
    [[nodiscard]] double total_delay() const noexcept { return motor_delay + flow_meter_delay; }
  } transfer;

  struct Compensator {
    FcuCompensatorType type = FcuCompensatorType::kNone;
    int points = 3;       ///< n
    int order = 2;        ///< N
    int steps_ahead = 0;  ///< P; 0 in a file means "round(total delay / step)"
    double delay = 0.0;   ///< τ of the inverse compensator, s; 0 means "total delay"
    bool steps_ahead_given = false;
    bool delay_given = false;
  } compensator;

  /// The actuator's safety layer (hal/actuator_safety.hpp) on the command x_p it passes to the
  /// AC motor: a command outside [command_min, command_max] or not finite is rejected and the
  /// last one held; after watchdog_cycles such cycles in a row the actuator holds for good. The
  /// window defaults to what the valve can meter, [0, fcu.flow_gain_kg_s]; ±.inf: unbounded.
  struct Safety {
    double command_min = 0.0;  ///< kg/s
    double command_max = 0.0;  ///< kg/s; fcu.flow_gain unless given
    bool command_max_given = false;
    int watchdog_cycles = 10;
    /// |second difference| bound of the command, kg/s³ (the window's acceleration_max);
    /// .inf: no limit.
    double command_acceleration_max = hal::kFuelMeteringCommandAccelerationMax;
    [[nodiscard]] double resolved_command_max(double flow_gain) const noexcept {
      return command_max_given ? command_max : flow_gain;
    }
  } safety;

  core::TurbojetConfig engine;
  core::EngineControlUnitConfig ecu;
  core::FuelControlUnitConfig fcu;

  struct Metrics {
    double delay_search = 1.0;    ///< largest lag searched by the delay estimate, s
    double delay_window = 600.0;  ///< the estimate uses the final window of this length, s
    double speed_limit = 1.2;     ///< the run stops if n leaves [0, speed_limit]
  } metrics;

  struct Outputs {
    bool samples = true;
    int decimation = 1;
    std::string progress = "auto";  ///< auto | on | off
    std::string format = "csv";     ///< csv | hdf5 (run_export.hpp)
  } outputs;

  [[nodiscard]] std::int64_t steps() const;  ///< duration / step
  /// P after defaults: round(total delay / step) unless given.
  [[nodiscard]] int resolved_steps_ahead() const;
  /// τ of the inverse compensator after defaults: the total delay unless given.
  [[nodiscard]] double resolved_compensator_delay() const;
};

/// Parses and validates ("dotted.path=value" overrides first). @throws ScenarioError.
FcuScenario parse_fcu_scenario(const std::string& yaml_text, const std::string& origin,
                               const std::vector<std::string>& overrides = {});
/// The same from the parsed YAML (overrides applied): Kind::load's one parse.
FcuScenario parse_fcu_scenario(const YAML::Node& root, const std::string& origin);
FcuScenario load_fcu_scenario(const std::string& path,
                              const std::vector<std::string>& overrides = {});
/// @throws ScenarioError "field = value: allowed".
void validate(const FcuScenario& scenario);
/// Every field, defaults resolved; parse_fcu_scenario() reads it back.
std::string to_yaml(const FcuScenario& scenario);
/// The FCU field table (fcu_scenario.cpp): parse, to_yaml, schema and docs walk it.
const FieldTable& fcu_field_table();

enum class FcuColumn : std::uint8_t {
  kTime,
  kPla,
  kSpeedDemand,
  kXc,
  kXp,
  kXMotor,
  kValvePosition,
  kFuelFlow,
  kXm,
  kSpeed,
  kSpeedIdeal,
  kXcIdeal,
  kFuelFlowIdeal,
  kSpeedError,
  kFlowError,
  kTrackingIndicator,
  kCount
};
inline constexpr std::size_t kFcuColumns = static_cast<std::size_t>(FcuColumn::kCount);
constexpr std::size_t col(FcuColumn c) noexcept { return static_cast<std::size_t>(c); }
/// "name[unit]" headers of samples.csv.
extern const std::array<std::string_view, kFcuColumns> kFcuColumnHeaders;
/// The columns only the rig knows (the motor's output, the valve, the metered flow).
inline constexpr std::array<FcuColumn, 3> kFcuRigColumns = {
    FcuColumn::kXMotor, FcuColumn::kValvePosition, FcuColumn::kFuelFlow};
/// The column the recorder computes itself (from x_c and x_m; its accumulator gives the summary).
inline constexpr FcuColumn kFcuRecorderColumn = FcuColumn::kTrackingIndicator;
/// "name[unit]" of the record row: samples.csv's columns, then FcuExtraColumn's
/// (fcu_dynamics.hpp).
const std::vector<std::string>& fcu_record_columns();

/// kServiceFault: a distributed run stopped for a reason that is neither of the loop's own.

/// The FCU loop plan and parts (fcu_kind.cpp), for the services and the runner.
LoopPlan fcu_loop_plan(const FcuScenario& s);
std::unique_ptr<RigPart> make_fcu_rig_part(const FcuScenario& s);
std::unique_ptr<DynamicsPart> make_fcu_dynamics_part(const FcuScenario& s);

/// The FCU experiment: its parts stepped by the generic LoopChain, recorded here.
class FcuExperiment final : public Experiment {
 public:
  explicit FcuExperiment(const FcuScenario& scenario);
  /// The streamed recorder (the coordinator's): samples.csv written as rows arrive
  /// (stream_tables), not kept.
  FcuExperiment(const FcuScenario& scenario, SampleTable::Streamed);
  // The chain records into this experiment: it stays where it was built.
  FcuExperiment(const FcuExperiment&) = delete;
  FcuExperiment& operator=(const FcuExperiment&) = delete;

  /// Runs cycle k. False when the run is over (finished or stopped). RT-safe.
  bool step() noexcept override { return chain_.step(*this); }

  [[nodiscard]] std::int64_t cycle() const noexcept override { return cycle_; }
  [[nodiscard]] std::int64_t total_steps() const noexcept override { return total_steps_; }
  [[nodiscard]] double step_size() const noexcept override { return step_; }
  [[nodiscard]] const SampleTable& samples() const noexcept override { return samples_; }
  void stream_tables(const std::filesystem::path& dir) override {
    if (samples_.streamed()) samples_.stream_to(dir / "samples.csv");
  }
  [[nodiscard]] std::string name() const override { return scenario_.name; }
  [[nodiscard]] std::string kind() const override { return "fcu"; }
  [[nodiscard]] nlohmann::json summary() const override;
  [[nodiscard]] std::string resolved_yaml() const override { return to_yaml(scenario_); }
  [[nodiscard]] std::string progress_mode() const override { return scenario_.outputs.progress; }
  [[nodiscard]] std::string output_format() const override { return scenario_.outputs.format; }
  [[nodiscard]] std::vector<std::string> record_columns() const override {
    return fcu_record_columns();
  }
  bool record_cycle(std::span<const double> row) noexcept override;
  void record_stop(std::string_view reason) noexcept override;

  [[nodiscard]] bool finished() const noexcept { return cycle_ >= total_steps_ || stopped(); }
  [[nodiscard]] bool stopped() const noexcept { return stop_reason_ != StopReason::kNone; }
  [[nodiscard]] StopReason stop_reason() const noexcept { return stop_reason_; }
  [[nodiscard]] const FcuScenario& scenario() const noexcept { return scenario_; }
  [[nodiscard]] const std::array<double, kFcuColumns>& last_row() const noexcept { return row_; }
  [[nodiscard]] double tracking_indicator() const noexcept { return ti_.value(); }
  /// Engine speed n against the twin's n_i (normalised speed).
  [[nodiscard]] core::TrackingErrors speed_errors() const noexcept {
    return speed_errors_.result();
  }
  /// Measured flow x_m against the command x_c (kg/s).
  [[nodiscard]] core::TrackingErrors flow_errors() const noexcept { return flow_errors_.result(); }
  /// Cross-correlation delay of x_m behind x_c over the recorded window. Not RT (allocates).
  [[nodiscard]] core::DelayEstimate delay_estimate() const;
  /// α of the inverse compensator (0 unless type inverse).
  [[nodiscard]] double alpha() const noexcept { return dynamics_.alpha(); }
  /// ā of the polynomial predictor (empty unless type polynomial).
  [[nodiscard]] std::vector<double> predictor_weights() const {
    return dynamics_.predictor_weights();
  }
  [[nodiscard]] std::int64_t valve_saturated_steps() const noexcept { return valve_saturated_; }
  [[nodiscard]] std::int64_t ecu_limited_steps() const noexcept { return ecu_limited_; }

 private:
  FcuExperiment(const FcuScenario& scenario, bool streamed);
  void record_row(std::span<const double> row) noexcept;

  FcuScenario scenario_;
  double step_;
  std::int64_t total_steps_;
  FcuDynamics dynamics_;        ///< its compensator's figures for the summary (α, weights)
  std::vector<double> record_;  // the record row: kFcuColumns, then kFcuExtraColumns
  core::TrackingIndicator ti_;  // the ti column: the recorder's, in process and distributed
  core::TrackingErrorAccumulator speed_errors_;
  core::TrackingErrorAccumulator flow_errors_;
  // Full-rate x_c and x_m over the final delay window (ring buffers), for the delay estimate.
  std::vector<double> command_history_;
  std::vector<double> measured_history_;
  std::size_t history_count_ = 0;
  SampleTable samples_;
  LoopChain chain_;
  std::int64_t decimation_;
  std::int64_t cycle_ = 0;
  std::array<double, kFcuColumns> row_{};
  StopReason stop_reason_ = StopReason::kNone;
  std::int64_t valve_saturated_ = 0;
  std::int64_t ecu_limited_ = 0;
};

}  // namespace hyloop::experiment
