#include "hyloop/hal/openfresco_servo_site.hpp"

#include <stdexcept>
#include <string>

namespace hyloop::hal::openfresco {

namespace {

const ServoRigConfig& checked(const ServoRigConfig& c) {
  if (c.safety.step != c.servo.step) {
    throw std::invalid_argument("safety.step = " + std::to_string(c.safety.step) +
                                " s: must equal servo.step = " + std::to_string(c.servo.step) +
                                " s (the safety layer runs at the rig's step)");
  }
  if (c.steps_per_trial < 1) {
    throw std::invalid_argument("steps_per_trial = " + std::to_string(c.steps_per_trial) +
                                ": must be >= 1");
  }
  if (c.rest_steps < 1) {
    throw std::invalid_argument("rest_steps = " + std::to_string(c.rest_steps) + ": must be >= 1");
  }
  return c;
}

}  // namespace

RigSignalLayout servo_rig_layout() {
  RigSignalLayout layout;
  layout.dofs = 1;
  layout.ctrl = {true, true, true, false, true};
  layout.drive = Quantity::kDisp;
  layout.daq = {true, true, false, true, true};
  return layout;
}

SiteMatrices servo_rig_matrices(const hal::ServoActuatorConfig& servo) {
  SiteMatrices m;
  m.initial_stiffness = {{servo.specimen_stiffness}};
  m.tangent_stiffness = {{servo.specimen_stiffness}};
  m.damping = {{servo.specimen_damping}};
  m.mass = {{0.0}};
  return m;
}

ServoRig::ServoRig(const ServoRigConfig& config)
    : config_(checked(config)),
      servo_(config.servo),
      safety_(config.safety),
      records_(config.record_capacity) {
  servo_.reset(0.0);
  safety_.reset(0.0);
}

void ServoRig::begin_session(const SetupId& /*setup*/) {
  const std::lock_guard lock(mutex_);
  session_ = reports_.size();
  trial_ = 0;
  at_rest_ = false;
  safety_.reset(servo_.measurement().displacement);
}

hal::DriverStatus ServoRig::trial(const TrialView& trial) noexcept {
  const auto disp = trial.of(Quantity::kDisp);
  const auto vel = trial.of(Quantity::kVel);
  if (disp.empty()) {
    return hal::DriverStatus::kFault;
  }
  const hal::ActuatorCommand command{disp[0], vel.empty() ? 0.0 : vel[0]};
  auto status = hal::DriverStatus::kOk;
  hal::SafetyOutput out;
  for (std::int32_t s = 0; s < config_.steps_per_trial; ++s) {
    out = safety_.filter(&command);
    servo_.step(out.command.position);
    if (out.event != hal::SafetyEvent::kNone) {
      status = hal::DriverStatus::kRejected;
    }
  }
  if (out.estopped || out.watchdog) {
    status = hal::DriverStatus::kFault;
  }
  ++trial_;
  last_ = {session_,
           trial_,
           command.position,
           command.velocity,
           out.command.position,
           out.event,
           servo_.measurement()};
  const std::size_t n = count_.load(std::memory_order_relaxed);
  if (n < records_.size()) {
    records_[n] = last_;
    count_.store(n + 1, std::memory_order_release);
  } else {
    dropped_records_.fetch_add(1, std::memory_order_relaxed);
  }
  return status;
}

void ServoRig::measure(const DaqView& daq) noexcept {
  const auto& m = servo_.measurement();
  const auto put = [&](Quantity q, double value) {
    for (double& v : daq.of(q)) {
      v = value;
    }
  };
  put(Quantity::kDisp, m.displacement);
  put(Quantity::kVel, m.velocity);
  put(Quantity::kForce, m.force);
  put(Quantity::kTime, m.time);
}

void ServoRig::commit() noexcept { commits_.fetch_add(1, std::memory_order_relaxed); }

void ServoRig::end_session(const SessionReport& report) {
  for (std::int32_t s = 0; s < config_.rest_steps; ++s) {
    servo_.step(safety_.filter(nullptr).command.position);
  }
  const std::lock_guard lock(mutex_);
  at_rest_ = safety_.at_rest();
  reports_.push_back(report);
  ended_.notify_all();
}

std::vector<TrialRecord> ServoRig::records() const {
  const std::size_t n = count_.load(std::memory_order_acquire);
  return {records_.begin(), records_.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<SessionReport> ServoRig::reports() const {
  const std::lock_guard lock(mutex_);
  return reports_;
}

bool ServoRig::wait_for_sessions(std::size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return ended_.wait_for(lock, timeout, [&] { return reports_.size() >= count; });
}

bool ServoRig::at_rest() const {
  const std::lock_guard lock(mutex_);
  return at_rest_;
}

ServoSite::ServoSite(SiteServerConfig server, const ServoRigConfig& rig)
    : rig_(rig),
      server_(std::move(server), servo_rig_layout(), servo_rig_matrices(rig.servo), rig_),
      thread_([this] { server_.run(); }) {}

ServoSite::~ServoSite() {
  server_.stop();
  thread_.join();
}

}  // namespace hyloop::hal::openfresco
