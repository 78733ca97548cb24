#include "site/site_component.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "hyloop/hal/actuator_limits.hpp"
#include "hyloop/recording/run_directory.hpp"
#include "hyloop/runtime/logging.hpp"

namespace hyloop::services {

namespace of = hal::openfresco;

SiteOptions default_site_options() {
  SiteOptions o;
  o.server.address = "127.0.0.1";
  o.server.port = 44000;
  o.rig.servo.step = 0.01;
  o.rig.servo.omega = 50.0;
  o.rig.servo.zeta = 0.8;
  o.rig.servo.specimen_stiffness = 2.0e5;
  o.rig.servo.specimen_damping = 500.0;
  o.rig.safety.step = 0.01;
  o.rig.safety.limits = {.position_min = -0.1,
                         .position_max = 0.1,
                         .velocity_max = 1.0,
                         .acceleration_max = hal::kServoHydraulicAccelerationMax};
  o.rig.safety.stop_deceleration = 5.0;
  o.rig.record_capacity = 1;  // the recorder keeps the samples; ServoRig's own list unused
  return o;
}

void validate(const SiteOptions& o) {
  if (o.max_rows < 1) throw std::invalid_argument("max_rows = 0: must be >= 1");
  if (o.runs_dir.empty()) throw std::invalid_argument("runs_dir is empty: name a directory");
  recording::check_run_name(o.name, "name");
  // The rig and the safety layer validate their own fields (their constructors name them).
  of::ServoRig check(o.rig);
}

std::string site_yaml(const SiteOptions& o) {
  // 17 significant digits; an infinity as YAML spells it (.inf), so that it reads back.
  const auto n = [](double v) {
    return std::isinf(v) ? std::string(v > 0 ? ".inf" : "-.inf") : experiment::format_number(v);
  };
  const auto& s = o.rig.servo;
  const auto& l = o.rig.safety.limits;
  std::ostringstream y;
  y << "kind: opensees_site\nname: " << o.name
    << "\nsite:\n  transport: " << of::to_string(o.server.transport) << "\n  address: \""
    << o.server.address << "\"\n  port: " << o.server.port
    << "\n  idle_timeout_ms: " << o.server.idle_timeout.count()
    << "\n  udp_timeout_ms: " << o.server.udp_timeout.count() << "\n  allowed_peers: [";
  for (std::size_t i = 0; i < o.server.allowed_peers.size(); ++i) {
    y << (i > 0 ? ", " : "") << '"' << o.server.allowed_peers[i] << '"';
  }
  y << "]\nrig:\n  driver: {type: emulator}\n  servo:\n    step: " << n(s.step)
    << "\n    omega: " << n(s.omega) << "\n    zeta: " << n(s.zeta)
    << "\n    noise_std: " << n(s.noise_std) << "\n    seed: " << s.seed
    << "\n    specimen_stiffness: " << n(s.specimen_stiffness)
    << "\n    specimen_damping: " << n(s.specimen_damping)
    << "\n  steps_per_trial: " << o.rig.steps_per_trial << "\n  rest_steps: " << o.rig.rest_steps
    << "\n  safety:\n    position_min: " << n(l.position_min)
    << "\n    position_max: " << n(l.position_max) << "\n    velocity_max: " << n(l.velocity_max)
    << "\n    acceleration_max: " << n(l.acceleration_max)
    << "\n    rate_limit: " << n(o.rig.safety.rate_limit)
    << "\n    stop_deceleration: " << n(o.rig.safety.stop_deceleration)
    << "\nmax_rows: " << o.max_rows << "\n";
  return y.str();
}

SiteComponent::SiteComponent(SiteOptions options)
    : runtime::Component("site"), options_(std::move(options)) {
  auto& m = metrics();
  for (std::size_t e = 1; e < sessions_.size(); ++e) {
    std::string end(of::to_string(static_cast<of::SessionEnd>(e)));
    for (char& c : end) c = c == ' ' ? '_' : c;
    sessions_[e] = m.counter("hyloop_site_sessions_total",
                             "OpenSees/OpenFresco client sessions ended, by how they ended",
                             {{"service", "site"}, {"end", end}});
  }
  trials_ = m.counter("hyloop_site_trials_total", "Trials (code 3) the site's rig carried out",
                      {{"service", "site"}});
  dropped_ = m.counter("hyloop_site_dropped_datagrams_total",
                       "UDP datagrams dropped in sessions (wrong size or not from the peer)",
                       {{"service", "site"}});
}

SiteComponent::~SiteComponent() {
  stop_serving();
  release();
}

void SiteComponent::count_session(const SiteRunRecord& run) {
  sessions_.at(static_cast<std::size_t>(run.report.end)).add();
  trials_.add(run.report.trials);
  dropped_.add(run.report.wrong_size_datagrams + run.report.foreign_datagrams);
}

void SiteComponent::on_configure(const v1::ConfigureRequest& /*request*/) {
  stop_serving();
  release();
  validate(options_);
  const auto log = [user = options_.server.log](std::string_view line) {
    runtime::logger()->info("{}", line);
    if (user) user(line);
  };
  auto rig = std::make_unique<of::ServoRig>(options_.rig);
  SiteRecorderConfig rc;
  rc.runs_dir = options_.runs_dir;
  rc.name = options_.name;
  rc.resolved_yaml = site_yaml(options_);
  rc.max_rows = options_.max_rows;
  rc.log = log;
  rc.ended = [this](const SiteRunRecord& run) { count_session(run); };
  auto recorder = std::make_unique<SiteRecorder>(*rig, rc);
  auto config = options_.server;
  config.log = log;
  auto server = std::make_unique<of::SiteServer>(
      config, of::servo_rig_layout(), of::servo_rig_matrices(options_.rig.servo), *recorder);
  const std::lock_guard lock(objects_mutex_);
  rig_ = std::move(rig);
  recorder_ = std::move(recorder);
  server_ = std::move(server);
}

void SiteComponent::on_activate() {
  if (!server_) throw std::logic_error("not configured");
  server_->resume();
  thread_ = std::thread([this] { server_->run(); });
}

void SiteComponent::on_deactivate() { stop_serving(); }

void SiteComponent::on_shutdown() {
  stop_serving();
  release();
}

void SiteComponent::on_cleanup() noexcept {
  stop_serving();
  release();
}

void SiteComponent::on_emergency_stop(std::string_view reason) noexcept {
  const std::lock_guard lock(objects_mutex_);  // held for three non-blocking calls
  if (!rig_ || !server_) return;
  rig_->emergency_stop();
  try {
    recorder_->note_emergency_stop("emergency stop: " + std::string(reason));
  } catch (...) {  // NOLINT(bugprone-empty-catch): the rig is stopped either way
  }
  server_->abort_session();
}

std::uint16_t SiteComponent::port() const noexcept { return server_ ? server_->port() : 0; }

void SiteComponent::stop_serving() noexcept {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void SiteComponent::release() noexcept {
  const std::lock_guard lock(objects_mutex_);
  server_.reset();
  recorder_.reset();
  rig_.reset();
}

}  // namespace hyloop::services
