// The SITS6 kind (kind.hpp, issue 28): the six-axis space target. Its loop plan (12 command
// signals: a set point and its rate per axis; 12 measurement signals: the robot's pose, then the
// measured wrench), its rig part over hal::Sits6RigEmulator, its dynamics part over
// Sits6Dynamics, its runner and signal roles. The rig is the emulator, or a robot's whole pose
// over EGM or RSI (rig.driver; rig_driver.hpp's make_wire_pose_rig_part), which `hyloop up
// --emulate-wire` emulates with the same rig stepped at the robot's cycle.
#include <algorithm>
#include <cmath>
#include <memory>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/rig_driver.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/sits6_rig_emulator.hpp"
#include "hyloop/kinds/sits6/sits6_dynamics.hpp"
#include "hyloop/kinds/sits6/sits6_runner.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"

namespace hyloop::experiment {
namespace {

// The robot and its six-axis F/T sensor: the held pose command per axis, one step, then the
// measured pose (noisy) and the measured wrench (delayed, biased, noisy); the truth is the true
// contact wrench and x's held command.
class Sits6Rig final : public RigPart {
 public:
  explicit Sits6Rig(const Sits6Scenario& s) : rig_(sits6_rig_config(s)) {
    rig_.reset(sits6_initial_pose(s));
  }
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    std::array<hal::ActuatorCommand, kSits6Axes> all{};
    for (std::size_t i = 0; i < kSits6Axes; ++i) {
      const auto a = static_cast<Eigen::Index>(i);
      all[i] = {rig_.held_command().pose[a], rig_.held_command().rate[a]};
    }
    all[0] = applied;
    step_axes(all, measurement, truth);
  }
  void step_axes(std::span<const hal::ActuatorCommand> applied, std::span<double> measurement,
                 std::span<double> truth) noexcept override {
    hal::Pose6Command c;
    for (std::size_t i = 0; i < kSits6Axes; ++i) {
      const auto a = static_cast<Eigen::Index>(i);
      c.pose[a] = applied[i].position;
      c.rate[a] = applied[i].velocity;
    }
    (void)rig_.apply(c);  // a rejected command leaves the last good one held (counted)
    rig_.advance();
    for (std::size_t i = 0; i < kSits6Axes; ++i) {
      const auto a = static_cast<Eigen::Index>(i);
      measurement[i] = rig_.robot_pose()[a];
      measurement[kSits6Axes + i] = rig_.measured_wrench()[a];
      truth[i] = rig_.contact_wrench()[a];
    }
    truth[kSits6Axes] = rig_.held_command().pose[0];
  }
  std::vector<std::string> truth_names() const override { return sits6_truth_names(); }
  std::uint64_t rejected_commands() const noexcept override { return rig_.rejected_commands(); }

 private:
  hal::Sits6RigEmulator rig_;
};

class Sits6DynamicsPart final : public DynamicsPart {
 public:
  explicit Sits6DynamicsPart(const Sits6Scenario& s)
      : dynamics_(s), names_(sits6_dynamics_names()) {}
  const std::vector<std::string>& names() const override { return names_; }
  StepStatus step(std::int64_t k, std::span<const double> measurement, std::span<double> values,
                  hal::ActuatorCommand& next) noexcept override {
    std::array<hal::ActuatorCommand, kSits6Axes> all{};
    const StepStatus status = step_axes(k, measurement, values, all);
    next = all[0];
    return status;
  }
  StepStatus step_axes(std::int64_t k, std::span<const double> measurement,
                       std::span<double> values,
                       std::span<hal::ActuatorCommand> next) noexcept override {
    const StopReason r = dynamics_.step(k, measurement, values, next);
    return r == StopReason::kNone ? StepStatus::ok()
                                  : StepStatus::stop(to_string(r).data());  // NUL-terminated
  }

 private:
  Sits6Dynamics dynamics_;
  std::vector<std::string> names_;
};

std::vector<std::string> sits6_notices(const Sits6Scenario& s) { return s.notices; }

// The robot controller of `hyloop up --emulate-wire` (EGM or RSI): the same robot, contact and
// sensor delay (in seconds), stepped at the controller's cycle.
std::unique_ptr<WireEmulator> make_sits6_wire_emulator(const Sits6Scenario& s,
                                                       const hal::WireImpairments& impairments) {
  const RigDriverSettings& d = s.rig.driver;
  if (d.type != "egm" && d.type != "rsi") {
    throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                        ": the sits6 kind emulates an egm or rsi robot's whole pose");
  }
  hal::Sits6RigConfig rig = sits6_rig_config(s);
  rig.step = robot_controller_cycle(d);
  rig.sensor_delay_steps = s.rig.sensor_delay / rig.step;
  rig.engage_cycle = std::llround(s.rig.contact.engage_at / rig.step);
  // The controller supervises the deviation from the start as far as the rig's own limits go.
  double reach = 0.0;
  for (const hal::ActuatorLimits& l : rig.limits) {
    reach = std::max({reach, std::abs(l.position_min), std::abs(l.position_max)});
  }
  return make_robot_pose_emulator(d, std::make_shared<hal::Sits6PosePlant>(rig), reach,
                                  impairments);
}

hal::SignalLayout sits6_measurement() {
  return {{{"x_R", "m", "length"},
           {"y_R", "m", "length"},
           {"z_R", "m", "length"},
           {"rx_R", "rad", "angle"},
           {"ry_R", "rad", "angle"},
           {"rz_R", "rad", "angle"},
           {"f_x", "N", "force"},
           {"f_y", "N", "force"},
           {"f_z", "N", "force"},
           {"m_x", "N*m", "torque"},
           {"m_y", "N*m", "torque"},
           {"m_z", "N*m", "torque"}}};
}

hal::SignalLayout sits6_command() {
  hal::SignalLayout c;
  for (const char* name : {"x_cmd", "y_cmd", "z_cmd", "rx_cmd", "ry_cmd", "rz_cmd"}) {
    const bool rotational = name[0] == 'r';
    for (hal::Signal& s :
         set_point_command(name, rotational ? "rad" : "m", rotational ? "angle" : "length")
             .signals) {
      c.signals.push_back(std::move(s));
    }
  }
  return c;
}

class Sits6Kind final : public Kind {
 public:
  std::string name() const override { return "sits6"; }
  const FieldTable* fields() const override { return &sits6_field_table(); }
  std::unique_ptr<LoadedScenario> load(const YAML::Node& root, const std::string& origin,
                                       const DataSource& /*data*/) const override {
    using Loaded = ParsedScenario<Sits6Scenario, Sits6Runner>;
    return std::make_unique<Loaded>(*this, parse_sits6_scenario(root, origin),
                                    Loaded::Form{.plan = &sits6_loop_plan,
                                                 .rig = &make_sits6_rig_part,
                                                 .dynamics = &make_sits6_dynamics_part,
                                                 .notices = &sits6_notices,
                                                 .yaml = &to_yaml,
                                                 .wire_emulator = &make_sits6_wire_emulator});
  }
  /// The contact frame's x, which the robot (x_robot) reproduces; the twin's x_ideal.
  SignalRoles signal_roles() const override {
    return {.target = "x[m]",
            .measured = "x_robot[m]",
            .ideal = "x_ideal[m]",
            .command = "x_cmd[m]",
            .force = "f_x_meas[N]",
            .velocity = "v_x[m/s]",
            .velocity_ideal = "v_x_ideal[m/s]",
            .force_input = "f_x_input[N]",
            .force_ideal = "f_x_ideal[N]",
            .power = "power[W]",
            .power_ideal = "power_ideal[W]",
            .energy = "energy[J]",
            .energy_ideal = "energy_ideal[J]",
            .gain = "k_h_x[N*s/m]",
            .observed_energy = "eps_h_x[J]"};
  }
  CommandGauges command_gauges() const override { return mechanical_command_gauges(); }
  const Analysis* analysis() const override { return &sits6_analysis(); }
};

}  // namespace

LoopPlan sits6_loop_plan(const Sits6Scenario& s) {
  const std::array<hal::SafetyConfig, kSits6Axes> safety = sits6_safety_configs(s);
  const std::array<hal::ActuatorCommand, kSits6Axes> initial = sits6_initial_commands(s);
  LoopPlan p;
  p.kind = "sits6";
  p.total_steps = s.steps();
  p.step = s.timing.step;
  p.hold_steps = s.hold_steps();
  p.safety = safety[0];
  p.initial = initial[0];
  for (std::size_t i = 1; i < kSits6Axes; ++i) p.extra_axes.push_back({safety[i], initial[i]});
  p.rig_driver = s.rig.driver.type;
  p.measurement = sits6_measurement();
  p.command = sits6_command();
  return p;
}

std::unique_ptr<RigPart> make_sits6_emulated_rig_part(const Sits6Scenario& s) {
  return std::make_unique<Sits6Rig>(s);
}

std::unique_ptr<RigPart> make_sits6_rig_part(const Sits6Scenario& s) {
  if (!is_wire_driver(s.rig.driver.type)) return make_sits6_emulated_rig_part(s);
  const std::array<hal::SafetyConfig, kSits6Axes> safety = sits6_safety_configs(s);
  std::array<hal::ActuatorLimits, kSits6Axes> limits;
  for (std::size_t i = 0; i < kSits6Axes; ++i) limits[i] = safety[i].limits;
  return make_wire_pose_rig_part(s.rig.driver, limits, sits6_truth_names(), kSits6Axes);
}

std::unique_ptr<DynamicsPart> make_sits6_dynamics_part(const Sits6Scenario& s) {
  return std::make_unique<Sits6DynamicsPart>(s);
}

const Kind& sits6_kind() {
  static const Sits6Kind kind;
  return kind;
}

std::unique_ptr<Kind> make_sits6_kind() { return std::make_unique<Sits6Kind>(); }

}  // namespace hyloop::experiment
