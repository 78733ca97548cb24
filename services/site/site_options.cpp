#include "site/site_options.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <stdexcept>

#include "hyloop/experiment/yaml_fields.hpp"
#include "site/site_kind.hpp"

namespace hyloop::services {

namespace {

void add_rig_options(CLI::App& app, SiteCliOptions& o) {
  auto& servo = o.site.rig.servo;
  auto& safety = o.site.rig.safety;
  app.add_option("--servo-step", servo.step, "the rig's step Δt, s (also the safety layer's)")
      ->capture_default_str();
  app.add_option("--omega", servo.omega, "the servo's natural frequency ω, rad/s")
      ->capture_default_str();
  app.add_option("--zeta", servo.zeta, "the servo's damping ratio ζ")->capture_default_str();
  app.add_option("--stiffness", servo.specimen_stiffness, "the specimen's stiffness k, N/m")
      ->capture_default_str();
  app.add_option("--damping", servo.specimen_damping, "the specimen's damping c, N·s/m")
      ->capture_default_str();
  app.add_option("--noise-std", servo.noise_std, "displacement measurement noise σ, m")
      ->capture_default_str();
  app.add_option("--seed", servo.seed, "the noise generator's seed")->capture_default_str();
  app.add_option("--steps-per-trial", o.site.rig.steps_per_trial,
                 "rig steps per trial (one trial = this many Δt of rig time)")
      ->capture_default_str();
  app.add_option("--rest-steps", o.site.rig.rest_steps,
                 "rig steps run at the end of every session to bring the rig to rest")
      ->capture_default_str();
  app.add_option("--position-min", safety.limits.position_min, "safety window: lowest position, m")
      ->capture_default_str();
  app.add_option("--position-max", safety.limits.position_max, "safety window: highest position, m")
      ->capture_default_str();
  app.add_option("--velocity-max", safety.limits.velocity_max, "safety: largest |velocity|, m/s")
      ->capture_default_str();
  app.add_option("--stop-deceleration", safety.stop_deceleration,
                 "safety: deceleration of the ramp to rest, m/s²")
      ->capture_default_str();
}

}  // namespace

void add_site_options(CLI::App& app, SiteCliOptions& o) {
  app.add_option("--site-address", o.site.server.address,
                 "the numeric address OpenSees clients connect to (only it is bound)")
      ->capture_default_str();
  app.add_option("--site-transport", o.transport,
                 "tcp, or udp (OpenFresco's -udp: a datagram per message, silence cuts)")
      ->capture_default_str();
  app.add_option("--site-port", o.site.server.port, "the OpenSees/OpenFresco port (0: any)")
      ->capture_default_str();
  app.add_option("--allow-peer", o.site.server.allowed_peers,
                 "a numeric address a client may connect from (repeatable; default: any)");
  app.add_option("--idle-timeout-ms", o.idle_timeout_ms,
                 "cut a session whose peer sends nothing for this long, ms (0: never)")
      ->capture_default_str();
  app.add_option("--udp-timeout-ms", o.udp_timeout_ms,
                 "udp: cut a session whose peer sends no datagram for this long, ms (> 0)")
      ->capture_default_str();
  app.add_option("--runs-dir", o.site.runs_dir, "where each session's run directory is written")
      ->capture_default_str();
  app.add_option("--name", o.site.name, "the runs' name (run ids, summary \"scenario\")")
      ->capture_default_str();
  app.add_option("--max-rows", o.site.max_rows,
                 "samples.csv rows kept per session (the journal keeps every row)")
      ->capture_default_str();
  app.add_option("--scenario", o.scenario,
                 "an opensees_site scenario (a site run's scenario.yaml): the site's configuration "
                 "from it instead of the site and rig options (hyloop up starts the site so)");
  app.add_option("--set", o.overrides, "with --scenario: override a field, dotted.path=value");
  add_rig_options(app, o);
}

namespace {

// The options from --scenario (with its overrides), --runs-dir and the log kept from the CLI.
SiteOptions scenario_site_options(const SiteCliOptions& o) {
  SiteOptions site =
      site_options_from_yaml(experiment::read_scenario_text(o.scenario), o.scenario, o.overrides);
  site.runs_dir = o.site.runs_dir;
  site.server.log = o.site.server.log;
  return site;
}

}  // namespace

std::unique_ptr<SiteComponent> make_site_component(const SiteCliOptions& o) {
  if (!o.scenario.empty()) {
    return serve_if_asked(std::make_unique<SiteComponent>(scenario_site_options(o)),
                          o.serve_at_start);
  }
  if (!o.overrides.empty()) throw std::invalid_argument("--set goes with --scenario");
  SiteOptions site = o.site;
  if (o.idle_timeout_ms < 0) {
    throw std::invalid_argument("--idle-timeout-ms = " + std::to_string(o.idle_timeout_ms) +
                                ": must be >= 0 (0: never)");
  }
  site.server.idle_timeout = std::chrono::milliseconds(o.idle_timeout_ms);
  site.server.transport = hal::openfresco::site_transport_from(o.transport, "--site-transport");
  site.server.udp_timeout = std::chrono::milliseconds(o.udp_timeout_ms);
  site.rig.safety.step = site.rig.servo.step;
  return serve_if_asked(std::make_unique<SiteComponent>(site), o.serve_at_start);
}

std::unique_ptr<SiteComponent> serve_if_asked(std::unique_ptr<SiteComponent> component,
                                              bool serve) {
  if (!serve) return component;
  const auto& server = component->options().server;
  const auto check = [](const v1::LifecycleReply& reply, v1::LifecycleState want) {
    if (reply.state() != want) throw std::runtime_error(reply.message());
  };
  check(component->configure({}), v1::LIFECYCLE_STATE_INACTIVE);
  check(component->activate(), v1::LIFECYCLE_STATE_ACTIVE);
  std::cout << "hyloop-site openfresco"
            << (server.transport == hal::openfresco::SiteTransport::kUdp ? "-udp " : " ")
            << server.address << ":" << component->port() << std::endl;
  return component;
}

}  // namespace hyloop::services
