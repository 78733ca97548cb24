#include "hyloop/experiment/rig_driver.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <thread>
#include <utility>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/stop_reason.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/hal/egm_driver.hpp"
#include "hyloop/hal/egm_robot_emulator.hpp"
#include "hyloop/hal/openfresco_client.hpp"
#include "hyloop/hal/openfresco_servo_site.hpp"
#include "hyloop/hal/rsi_controller_emulator.hpp"
#include "hyloop/hal/rsi_driver.hpp"
#include "hyloop/hal/udp_socket.hpp"
#include "hyloop/hal/udp_target_driver.hpp"
#include "hyloop/hal/udp_target_emulator.hpp"

namespace hyloop::experiment {

bool is_wire_driver(const std::string& type) noexcept { return type != "emulator"; }

bool is_clocked_device(const std::string& type) noexcept {
  return type == "udp" || type == "egm" || type == "rsi";
}

std::string wire_refusal(const std::string& type, const std::string& how) {
  const std::string head = "rig.driver.type = " + type + ": ";
  if (how == "in_process") {
    return head +
           "hyloop run steps the rig in this process, cycle by cycle in lockstep, and a device on "
           "the wire runs on its own clock; run it through the services in real time (hyloop up "
           "--mode real_time), or set rig.driver.type=emulator";
  }
  return head +
         "a lockstep run waits for every cycle, and a device on the wire does not wait (it runs "
         "on its own clock and stops when commands stop); start the run with --mode real_time "
         "(CLOCK_MODE_REAL_TIME), or set rig.driver.type=emulator";
}

std::string rig_driver_type(const LoadedScenario& loaded) {
  try {
    return loaded.loop_plan().rig_driver;
  } catch (const std::invalid_argument&) {
    return "emulator";  // a kind without a distributed form has no rig driver
  }
}

namespace {

// The client of an openfresco rig.driver: the site's address, transport and timeouts.
hal::openfresco::SiteClientConfig site_client_config(const RigDriverSettings& d) {
  hal::openfresco::SiteClientConfig c;
  c.transport = hal::openfresco::site_transport_from(d.openfresco_transport,
                                                     "rig.driver.openfresco.transport");
  c.address = d.peer_address;
  c.port = static_cast<std::uint16_t>(d.peer_port);
  const auto timeout =
      std::chrono::milliseconds(std::max<std::int64_t>(1, std::llround(d.timeout_s * 1e3)));
  c.connect_timeout = timeout;
  c.reply_timeout = timeout;
  return c;
}

}  // namespace

// A force channel for a device that measures none: reads 0 N.
class WireRig::NoForce final : public hal::ForceSensorDriver {
 public:
  hal::DriverStatus read(hal::ForceSample& sample) noexcept override {
    sample.force = 0.0;
    return hal::DriverStatus::kOk;
  }
  void tare() override {}
};

class WireRig::Device {
 public:
  std::unique_ptr<hal::UdpTargetDriver> udp;
  std::unique_ptr<hal::RsiDriver> rsi;
  std::unique_ptr<hal::EgmDriver> egm;
  std::unique_ptr<hal::openfresco::SiteClient> site;
  std::unique_ptr<hal::openfresco::SiteDriver> site_driver;
  hal::ActuatorDriver* actuator = nullptr;
  hal::ForceSensorDriver* force = nullptr;
  NoForce no_force;
  bool echo = false;  ///< udp: the measurement names the command it applied
  double wait = 0.0;  ///< s, the longest wait for the reply to this cycle's command
};

WireRig::WireRig(const RigDriverSettings& d, const hal::ActuatorLimits& limits, double period,
                 bool needs_force)
    : device_(std::make_unique<Device>()) {
  Device& v = *device_;
  v.force = &v.no_force;
  if (d.type == "udp") {
    v.udp = std::make_unique<hal::UdpTargetDriver>(udp_target_config(d, limits, period));
    v.actuator = v.udp.get();
    if (!d.signals.measured_force.empty()) v.force = &v.udp->force_sensor();
    v.echo = !d.signals.command_echo.empty();
    v.wait = kReplyWaitShare * period;
  } else if (d.type == "rsi") {
    v.rsi = std::make_unique<hal::RsiDriver>(rsi_driver_config(d, limits));
    v.actuator = v.rsi.get();
    if (!d.rsi_force_tag.empty()) v.force = &v.rsi->force_sensor();
  } else if (d.type == "egm") {
    v.egm = std::make_unique<hal::EgmDriver>(egm_driver_config(d, limits));
    v.actuator = v.egm.get();
    if (egm_force_index(d.egm_force) >= 0) v.force = &v.egm->force_sensor();
  } else if (d.type == "openfresco") {
    v.site = std::make_unique<hal::openfresco::SiteClient>(site_client_config(d),
                                                           hal::openfresco::servo_client_setup());
    v.site_driver = std::make_unique<hal::openfresco::SiteDriver>(*v.site, limits);
    v.actuator = v.site_driver.get();
    v.force = v.site_driver.get();
  } else {
    throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                        ": a kind's rig part drives udp, egm, rsi and openfresco devices");
  }
  if (needs_force && v.force == &v.no_force) {
    const std::string field = d.type == "udp"   ? "udp.signals.measured_force"
                              : d.type == "egm" ? "egm.force"
                                                : "rsi.force_tag";
    throw ScenarioError("rig.driver." + field +
                        ": this kind's loop needs the measured force, and the device's packet "
                        "carries none");
  }
}

WireRig::~WireRig() {
  // A run's end is the site session's end: terminate (code 99), recorded by the site as such;
  // without it a UDP session would wait for the site's timeout.
  if (device_ && device_->site) {
    try {
      device_->site->terminate();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a dead link has nothing left to end
    }
  }
}

hal::DriverStatus WireRig::step(const hal::ActuatorCommand& applied,
                                std::span<double, 3> out) noexcept {
  Device& v = *device_;
  const hal::DriverStatus commanded = v.actuator->command(applied);
  if (v.echo && commanded == hal::DriverStatus::kOk) {
    // Poll (no lock, no allocation) until the measurement that applied this command is here,
    // yielding the CPU to the driver's I/O thread (on a 2-core machine a pure spin starves it).
    const std::uint64_t sent = v.udp->commands_sent_sequence();
    const double until = hal::monotonic_seconds() + v.wait;
    while (v.udp->latest().echo < sent) {
      if (hal::monotonic_seconds() > until) {
        ++late_replies_;
        break;
      }
      std::this_thread::yield();
    }
  }
  const hal::ActuatorState state = v.actuator->state();
  hal::ForceSample force{};
  const hal::DriverStatus read = v.force->read(force);
  out[0] = state.position;
  out[1] = state.velocity;
  out[2] = force.force;
  // The site's step ends with the commit (code 5, no reply).
  const hal::DriverStatus committed =
      v.site_driver ? v.site_driver->commit() : hal::DriverStatus::kOk;
  return commanded == hal::DriverStatus::kFault || read == hal::DriverStatus::kFault ||
                 committed == hal::DriverStatus::kFault
             ? hal::DriverStatus::kFault
             : hal::DriverStatus::kOk;
}

std::uint64_t WireRig::rejected_commands() const noexcept {
  const Device& v = *device_;
  if (v.udp) return v.udp->metrics().rejected_commands;
  if (v.rsi) return v.rsi->metrics().rejected_commands;
  if (v.egm) return v.egm->metrics().rejected_commands;
  if (v.site_driver) return v.site_driver->rejected_commands();
  return 0;
}

namespace {

class WireRigPart final : public RigPart {
 public:
  WireRigPart(const RigDriverSettings& d, const hal::ActuatorLimits& limits, double period,
              WireRigShape shape, std::vector<std::string> truth_names)
      : rig_(d, limits, period, shape.needs_force),
        shape_(shape),
        truth_names_(std::move(truth_names)) {}
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    std::array<double, 3> m{};
    if (rig_.step(applied, m) == hal::DriverStatus::kFault) {
      fault_ = to_string(StopReason::kDriverFault).data();  // NUL-terminated
    }
    measurement[0] = m[0];
    if (shape_.velocity) {
      measurement[1] = m[1];
      measurement[2] = m[2];
    } else {
      measurement[1] = m[2];
    }
    if (!truth.empty()) truth[0] = shape_.command_truth ? applied.position : m[0];
    for (std::size_t i = 1; i < truth.size(); ++i) {
      truth[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  std::vector<std::string> truth_names() const override { return truth_names_; }
  const char* fault() const noexcept override { return fault_; }
  std::uint64_t rejected_commands() const noexcept override { return rig_.rejected_commands(); }

 private:
  WireRig rig_;
  WireRigShape shape_;
  std::vector<std::string> truth_names_;
  const char* fault_ = nullptr;
};

// Six axes over an EGM robot's whole pose (make_wire_pose_rig_part).
class WirePoseRigPart final : public RigPart {
 public:
  WirePoseRigPart(const RigDriverSettings& d, std::span<const hal::ActuatorLimits, 6> limits,
                  std::vector<std::string> truth_names, int command_truth)
      : truth_names_(std::move(truth_names)), command_truth_(command_truth) {
    if (d.type == "rsi") {
      hal::RsiDriverConfig c = rsi_driver_config(d, {});
      if (c.axis.mode != hal::RsiMode::kPose || !c.wrench) {
        throw ScenarioError(
            "rig.driver.rsi.axis/force_tag: a six-axis rig needs axis pose and a force tag");
      }
      std::copy(limits.begin(), limits.end(), c.pose_limits.begin());
      rsi_ = std::make_unique<hal::RsiDriver>(c);
      return;
    }
    hal::EgmDriverConfig c = egm_driver_config(d, {});
    if (d.type != "egm" || c.axis.mode != hal::EgmMode::kPose || !c.wrench) {
      throw ScenarioError(
          "rig.driver: a six-axis rig needs egm (axis pose, force wrench) or rsi (axis pose)");
    }
    std::copy(limits.begin(), limits.end(), c.pose_limits.begin());
    egm_ = std::make_unique<hal::EgmDriver>(c);
  }
  void step(const hal::ActuatorCommand& applied, std::span<double> measurement,
            std::span<double> truth) noexcept override {
    std::array<hal::ActuatorCommand, hal::egm::kPoseAxes> all = last_;
    all[0] = applied;
    step_axes(all, measurement, truth);
  }
  void step_axes(std::span<const hal::ActuatorCommand> applied, std::span<double> measurement,
                 std::span<double> truth) noexcept override {
    constexpr std::size_t kAxes = hal::egm::kPoseAxes;
    std::copy_n(applied.begin(), kAxes, last_.begin());
    const std::span<const hal::ActuatorCommand, kAxes> pose(last_);
    if ((egm_ ? egm_->command_pose(pose) : rsi_->command_pose(pose)) == hal::DriverStatus::kFault) {
      fault_ = to_string(StopReason::kDriverFault).data();  // NUL-terminated
    }
    if (egm_) {
      write(egm_->latest(), measurement);
    } else {
      write(rsi_->latest(), measurement);
    }
    for (std::size_t i = 0; i < truth.size(); ++i) {
      truth[i] = std::numeric_limits<double>::quiet_NaN();
    }
    if (command_truth_ >= 0) truth[static_cast<std::size_t>(command_truth_)] = applied[0].position;
  }
  std::vector<std::string> truth_names() const override { return truth_names_; }
  const char* fault() const noexcept override { return fault_; }
  std::uint64_t rejected_commands() const noexcept override {
    return egm_ ? egm_->metrics().rejected_commands : rsi_->metrics().rejected_commands;
  }

 private:
  /// The pose (six), then the wrench (six).
  template <typename Sample>
  static void write(const Sample& s, std::span<double> measurement) noexcept {
    std::copy(s.pose.begin(), s.pose.end(), measurement.begin());
    std::copy(s.wrench.begin(), s.wrench.end(), measurement.begin() + hal::kPoseAxes);
  }

  std::unique_ptr<hal::EgmDriver> egm_;  ///< one of the two
  std::unique_ptr<hal::RsiDriver> rsi_;
  std::array<hal::ActuatorCommand, hal::egm::kPoseAxes> last_{};
  std::vector<std::string> truth_names_;
  int command_truth_;
  const char* fault_ = nullptr;
};

class SiteWireEmulator final : public WireEmulator {
 public:
  SiteWireEmulator(hal::openfresco::SiteServerConfig server,
                   const hal::openfresco::ServoRigConfig& rig)
      : site_(std::move(server), rig) {}
  std::string report() const override {
    const hal::openfresco::ServoSite& site = site_;
    // The client's terminate may still be on its way through the site's thread.
    (void)site.rig().wait_for_sessions(1, std::chrono::milliseconds(500));
    std::string line = "openfresco site: " + std::to_string(site.server().sessions_served()) +
                       " sessions, " + std::to_string(site.rig().commits()) + " commits";
    for (const hal::openfresco::SessionReport& r : site.rig().reports()) {
      line += "; " + std::to_string(r.trials) + " trials, " + std::string(to_string(r.end));
      if (!r.reason.empty()) line += " (" + r.reason + ")";
    }
    return line;
  }

 private:
  hal::openfresco::ServoSite site_;
};

class UdpTargetWireEmulator final : public WireEmulator {
 public:
  explicit UdpTargetWireEmulator(const hal::UdpTargetEmulatorConfig& c) : target_(c) {}
  std::string report() const override {
    const hal::UdpTargetEmulatorStats s = target_.stats();
    return "udp target emulator: " + std::to_string(s.steps) + " steps, " +
           std::to_string(s.commands) + " commands, " + std::to_string(s.fallback_steps) +
           " steps on a held command, " + std::to_string(s.late_commands) + " late, " +
           std::to_string(s.dropped_in + s.dropped_out) + " dropped by the wire, " +
           std::to_string(s.rejected_foreign + s.rejected_malformed + s.rejected_limits) +
           " rejected" + (s.stopped ? ", stopped by its reflex" : "");
  }

 private:
  hal::UdpTargetEmulator target_;
};

class EgmWireEmulator final : public WireEmulator {
 public:
  explicit EgmWireEmulator(const hal::EgmRobotEmulatorConfig& c) : robot_(c) {}
  std::string report() const override {
    const hal::EgmRobotEmulatorStats s = robot_.stats();
    return "egm robot emulator: " + std::to_string(s.sent) + " EgmRobot, " +
           std::to_string(s.corrections) + " corrections, " + std::to_string(s.missing_replies) +
           " cycles without one, " + std::to_string(s.dropped_in + s.dropped_out) +
           " dropped by the wire, " +
           std::to_string(s.rejected_foreign + s.rejected_malformed + s.stale + s.refused) +
           " rejected" + (s.stopped ? ", EGM stopped by its reflex" : "");
  }

 private:
  hal::EgmRobotEmulator robot_;
};

class RsiWireEmulator final : public WireEmulator {
 public:
  explicit RsiWireEmulator(const hal::RsiControllerEmulatorConfig& c) : controller_(c) {}
  std::string report() const override {
    const hal::RsiControllerEmulatorStats s = controller_.stats();
    return "rsi controller emulator: " + std::to_string(s.sent) + " <Rob>, " +
           std::to_string(s.corrections) + " corrections, " + std::to_string(s.late) +
           " late (Delay.D), " + std::to_string(s.dropped_in + s.dropped_out) +
           " dropped by the wire, " + std::to_string(s.rejected_foreign + s.rejected_malformed) +
           " rejected" + (s.stopped ? ", RSI stopped by its reflex" : "");
  }

 private:
  hal::RsiControllerEmulator controller_;
};

}  // namespace

std::unique_ptr<RigPart> make_wire_rig_part(const RigDriverSettings& d,
                                            const hal::ActuatorLimits& limits, double period,
                                            WireRigShape shape,
                                            std::vector<std::string> truth_names) {
  return std::make_unique<WireRigPart>(d, limits, period, shape, std::move(truth_names));
}

std::unique_ptr<WireEmulator> make_openfresco_site_emulator(const RigDriverSettings& d,
                                                            const hal::ServoActuatorConfig& plant,
                                                            const hal::SafetyConfig& safety) {
  if (d.type != "openfresco") {
    throw ScenarioError("rig.driver.type = " + excerpt(d.type) + ": not an openfresco site");
  }
  hal::openfresco::SiteServerConfig server;
  server.transport = hal::openfresco::site_transport_from(d.openfresco_transport,
                                                          "rig.driver.openfresco.transport");
  server.address = d.peer_address;
  server.port = static_cast<std::uint16_t>(d.peer_port);
  hal::openfresco::ServoRigConfig rig;
  rig.servo = plant;
  rig.safety = safety;
  rig.safety.step = plant.step;
  return std::make_unique<SiteWireEmulator>(std::move(server), rig);
}

std::unique_ptr<WireEmulator> make_udp_target_emulator(const RigDriverSettings& d,
                                                       std::shared_ptr<hal::AxisPlant> plant,
                                                       double period, double initial_position,
                                                       const hal::ActuatorLimits& limits,
                                                       const hal::WireImpairments& impairments) {
  if (d.type != "udp") {
    throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                        ": this kind emulates a udp real-time target only");
  }
  require(d.local_port > 0, "rig.driver.local_port", d.local_port,
          "must be 1..65535 for the emulated target to answer it");
  hal::UdpTargetEmulatorConfig c;
  c.local = {d.peer_address, static_cast<std::uint16_t>(d.peer_port)};
  c.host = {d.local_address, static_cast<std::uint16_t>(d.local_port)};
  c.command = {d.command, d.command_sequence};
  c.measurement = {d.measurement, d.measurement_sequence};
  c.signals = d.signals;
  c.plant.step = period;
  c.axis_plant = std::move(plant);
  c.initial_position = initial_position;
  c.command_timeout = d.timeout_s;
  c.limits = limits;
  c.impairments = impairments;
  return std::make_unique<UdpTargetWireEmulator>(c);
}

std::unique_ptr<RigPart> make_wire_pose_rig_part(const RigDriverSettings& d,
                                                 std::span<const hal::ActuatorLimits, 6> limits,
                                                 std::vector<std::string> truth_names,
                                                 int command_truth) {
  return std::make_unique<WirePoseRigPart>(d, limits, std::move(truth_names), command_truth);
}

namespace {

// The controller's side of the driver the block describes: the endpoints swapped, the same axis,
// cycle, tags and force (a plant still to set). @throws ScenarioError naming the field.
hal::EgmRobotEmulatorConfig egm_robot_config(const RigDriverSettings& d,
                                             const hal::WireImpairments& impairments) {
  require(d.local_port > 0, "rig.driver.local_port", d.local_port,
          "must be 1..65535 for the emulated controller to reach the driver");
  const hal::EgmDriverConfig driver = egm_driver_config(d, {});
  hal::EgmRobotEmulatorConfig c;
  c.local = driver.robot;
  c.sensor = driver.local;
  c.axis = driver.axis;
  c.plant.step = driver.period;  // the robot's own cycle
  c.reply_timeout = std::max(2.0 * driver.period, d.timeout_s);
  c.force_index = driver.force_index;
  c.wrench = driver.wrench;
  c.impairments = impairments;
  return c;
}

hal::RsiControllerEmulatorConfig rsi_controller_config(const RigDriverSettings& d,
                                                       const hal::WireImpairments& impairments) {
  require(d.local_port > 0, "rig.driver.local_port", d.local_port,
          "must be 1..65535 for the emulated controller to reach the driver");
  const hal::RsiDriverConfig driver = rsi_driver_config(d, {});
  hal::RsiControllerEmulatorConfig c;
  c.local = driver.robot;
  c.sensor = driver.local;
  c.axis = driver.axis;
  c.sen_type = driver.sen_type;
  c.correction_tag = driver.correction_tag;
  c.plant.step = driver.period;  // the controller's own cycle (4 or 12 ms)
  if (driver.late_limit > 0) c.late_limit = driver.late_limit;
  c.force_tag = driver.force_tag;
  c.force_attribute = driver.force_attribute;
  c.force_scale = driver.force_scale;
  c.wrench = driver.wrench;
  c.impairments = impairments;
  return c;
}

}  // namespace

std::unique_ptr<WireEmulator> make_robot_pose_emulator(const RigDriverSettings& d,
                                                       std::shared_ptr<hal::PosePlant> plant,
                                                       double max_deviation,
                                                       const hal::WireImpairments& impairments) {
  if (d.type == "rsi") {
    hal::RsiControllerEmulatorConfig c = rsi_controller_config(d, impairments);
    c.pose_plant = std::move(plant);
    // The correction's clip (mm and degrees) as far as the rig's own limits reach.
    c.correction_limit = std::max(c.axis.scale, 180.0 / std::numbers::pi) * max_deviation;
    c.monitor_limit = 2.0 * c.correction_limit;
    return std::make_unique<RsiWireEmulator>(c);
  }
  hal::EgmRobotEmulatorConfig c = egm_robot_config(d, impairments);
  c.pose_plant = std::move(plant);
  c.max_deviation = max_deviation;
  return std::make_unique<EgmWireEmulator>(c);
}

double robot_controller_cycle(const RigDriverSettings& d) {
  if (d.type == "egm") return egm_driver_config(d, {}).period;
  if (d.type == "rsi") return rsi_driver_config(d, {}).period;
  throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                      ": not a robot controller (egm or rsi)");
}

std::unique_ptr<WireEmulator> make_robot_controller_emulator(
    const RigDriverSettings& d, std::shared_ptr<hal::AxisPlant> plant,
    const hal::WireImpairments& impairments) {
  if (d.type == "egm") {
    hal::EgmRobotEmulatorConfig c = egm_robot_config(d, impairments);
    c.axis_plant = std::move(plant);
    return std::make_unique<EgmWireEmulator>(c);
  }
  if (d.type == "rsi") {
    hal::RsiControllerEmulatorConfig c = rsi_controller_config(d, impairments);
    c.axis_plant = std::move(plant);
    return std::make_unique<RsiWireEmulator>(c);
  }
  throw ScenarioError("rig.driver.type = " + excerpt(d.type) +
                      ": not a robot controller (egm or rsi)");
}

}  // namespace hyloop::experiment
