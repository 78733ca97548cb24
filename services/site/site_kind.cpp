#include "site/site_kind.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "site/site_recorder.hpp"

namespace hyloop::services {

namespace {

namespace ex = experiment;

// Reads the site's scenario tree field by field, naming each by its dotted path.
class SiteYamlReader {
 public:
  explicit SiteYamlReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw ex::ScenarioError(origin_ + ": " + field + ": " + why);
  }
  void only(const YAML::Node& map, const std::string& path,
            std::initializer_list<const char*> keys) const {
    if (!map.IsMap()) fail(path.empty() ? "(document)" : path, "must be a map");
    for (const auto& entry : map) {
      const auto key = entry.first.as<std::string>();
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
        fail(path.empty() ? key : path + "." + key, "unknown field of an opensees_site scenario");
      }
    }
  }
  template <typename T>
  T get(const YAML::Node& map, const std::string& path, const char* key, bool required,
        T fallback) const {
    const std::string field = path.empty() ? std::string(key) : path + "." + key;
    const YAML::Node node = map[key];
    if (!node) {
      if (required) fail(field, "is missing");
      return fallback;
    }
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(field, "'" + ex::excerpt(YAML::Dump(node)) + "' is not of the expected type");
    }
  }
  /// A number; "inf"/"-inf" too (how runs recorded before .inf wrote an infinity).
  double number(const YAML::Node& map, const std::string& path, const char* key) const {
    const YAML::Node node = map[key];
    if (node && node.IsScalar() && (node.Scalar() == "inf" || node.Scalar() == "-inf")) {
      return node.Scalar() == "inf" ? std::numeric_limits<double>::infinity()
                                    : -std::numeric_limits<double>::infinity();
    }
    return get<double>(map, path, key, true, 0.0);
  }

 private:
  std::string origin_;
};

void read_site_server(const SiteYamlReader& r, const YAML::Node& site,
                      hal::openfresco::SiteServerConfig& s) {
  r.only(site, "site",
         {"transport", "address", "port", "idle_timeout_ms", "udp_timeout_ms", "allowed_peers"});
  try {
    s.transport = hal::openfresco::site_transport_from(
        r.get<std::string>(site, "site", "transport", false, "tcp"), "site.transport");
  } catch (const std::invalid_argument& e) {
    r.fail("site.transport", e.what());
  }
  s.address = r.get<std::string>(site, "site", "address", true, "");
  s.port = r.get<std::uint16_t>(site, "site", "port", true, 0);
  s.idle_timeout =
      std::chrono::milliseconds(r.get<std::int64_t>(site, "site", "idle_timeout_ms", true, 0));
  s.udp_timeout = std::chrono::milliseconds(
      r.get<std::int64_t>(site, "site", "udp_timeout_ms", false, s.udp_timeout.count()));
  s.allowed_peers = r.get<std::vector<std::string>>(site, "site", "allowed_peers", false, {});
}

void read_site_rig(const SiteYamlReader& r, const YAML::Node& rig,
                   hal::openfresco::ServoRigConfig& c) {
  r.only(rig, "rig", {"driver", "servo", "steps_per_trial", "rest_steps", "safety"});
  const auto driver = r.get<std::map<std::string, std::string>>(rig, "rig", "driver", true, {});
  if (driver.size() != 1 || driver.begin()->first != "type" ||
      driver.begin()->second != "emulator") {
    r.fail("rig.driver", "must be {type: emulator} (the site's servo-hydraulic emulator)");
  }
  const YAML::Node servo = rig["servo"];
  r.only(servo, "rig.servo",
         {"step", "omega", "zeta", "noise_std", "seed", "specimen_stiffness", "specimen_damping"});
  c.servo.step = r.number(servo, "rig.servo", "step");
  c.servo.omega = r.number(servo, "rig.servo", "omega");
  c.servo.zeta = r.number(servo, "rig.servo", "zeta");
  c.servo.noise_std = r.number(servo, "rig.servo", "noise_std");
  c.servo.seed = r.get<std::uint64_t>(servo, "rig.servo", "seed", true, 0);
  c.servo.specimen_stiffness = r.number(servo, "rig.servo", "specimen_stiffness");
  c.servo.specimen_damping = r.number(servo, "rig.servo", "specimen_damping");
  c.steps_per_trial = r.get<std::int32_t>(rig, "rig", "steps_per_trial", true, 0);
  c.rest_steps = r.get<std::int32_t>(rig, "rig", "rest_steps", true, 0);
  const YAML::Node safety = rig["safety"];
  r.only(safety, "rig.safety",
         {"position_min", "position_max", "velocity_max", "acceleration_max", "rate_limit",
          "stop_deceleration"});
  c.safety.step = c.servo.step;
  c.safety.limits.position_min = r.number(safety, "rig.safety", "position_min");
  c.safety.limits.position_max = r.number(safety, "rig.safety", "position_max");
  c.safety.limits.velocity_max = r.number(safety, "rig.safety", "velocity_max");
  c.safety.limits.acceleration_max = r.number(safety, "rig.safety", "acceleration_max");
  c.safety.rate_limit = r.number(safety, "rig.safety", "rate_limit");
  c.safety.stop_deceleration = r.number(safety, "rig.safety", "stop_deceleration");
}

}  // namespace

SiteOptions site_options_from_yaml(const std::string& text, const std::string& origin,
                                   const std::vector<std::string>& overrides) {
  return site_options_from_node(ex::load_yaml(text, origin, overrides), origin);
}

SiteOptions site_options_from_node(const YAML::Node& root, const std::string& origin) {
  const SiteYamlReader r(origin);
  r.only(root, "", {"kind", "name", "site", "rig", "max_rows"});
  if (r.get<std::string>(root, "", "kind", true, "") != "opensees_site") {
    r.fail("kind", "must be opensees_site");
  }
  SiteOptions o = default_site_options();
  o.name = r.get<std::string>(root, "", "name", true, "");
  o.max_rows = r.get<std::size_t>(root, "", "max_rows", false, o.max_rows);
  read_site_server(r, root["site"], o.server);
  read_site_rig(r, root["rig"], o.rig);
  try {
    validate(o);
  } catch (const std::invalid_argument& e) {
    throw ex::ScenarioError(origin + ": " + e.what());
  }
  return o;
}

namespace {

/// A site's scenario: its options, a SiteRun for the journal's rows; no distributed form.
class SiteScenario final : public ex::LoadedScenario {
 public:
  SiteScenario(const ex::Kind& kind, SiteOptions options)
      : LoadedScenario(kind), o_(std::move(options)) {}
  std::vector<std::string> notices() const override {
    return {
        "an opensees_site scenario is a site's configuration: its runs are made by an OpenSees "
        "peer driving the site that `hyloop up`, `hyloop site` or hyloop-site serve "
        "(docs/opensees.md); `hyloop run` records no cycle"};
  }

 protected:
  std::unique_ptr<ex::Experiment> make_experiment() const override {
    return std::make_unique<SiteRun>(o_.name, site_yaml(o_),
                                     o_.rig.servo.step * o_.rig.steps_per_trial, o_.max_rows);
  }

 private:
  SiteOptions o_;
};

}  // namespace

std::unique_ptr<ex::LoadedScenario> SiteKind::load(const YAML::Node& root,
                                                   const std::string& origin,
                                                   const ex::DataSource& /*data*/) const {
  return std::make_unique<SiteScenario>(*this, site_options_from_node(root, origin));
}

ex::SignalRoles SiteKind::signal_roles() const { return site_signal_roles(); }

bool is_site_scenario(const std::string& text) {
  try {
    return dynamic_cast<const SiteKind*>(&ex::find_scenario_kind(text)) != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

void register_site_kind() {
  static std::once_flag once;
  std::call_once(once, [] { ex::register_kind(std::make_unique<SiteKind>()); });
}

}  // namespace hyloop::services
