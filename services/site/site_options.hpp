#pragma once
// The site's command-line options, shared by the hyloop-site binary and `hyloop site`.

#include <memory>
#include <string>
#include <vector>

#include "site/site_component.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::services {

struct SiteCliOptions {
  SiteOptions site = default_site_options();
  std::int64_t idle_timeout_ms = 0;
  std::string transport = "tcp";
  std::int64_t udp_timeout_ms = 5000;
  /// An opensees_site scenario (site_kind.hpp) and its --set overrides: the site's configuration
  /// then comes from it (the site and rig options are not used; --runs-dir is).
  std::string scenario;
  std::vector<std::string> overrides;
  bool serve_at_start = false;
};

/// Declares the site's options on `app` (each names its default in --help).
void add_site_options(CLI::App& app, SiteCliOptions& options);

/// The component from the parsed options; with serve_at_start configured and activated, its
/// address printed on stdout as "hyloop-site openfresco HOST:PORT" ("openfresco-udp" over UDP).
/// @throws std::runtime_error with the component's message when it cannot configure or activate.
std::unique_ptr<SiteComponent> make_site_component(const SiteCliOptions& options);
/// `component`, configured, activated and its address printed when `serve`; as it is else.
std::unique_ptr<SiteComponent> serve_if_asked(std::unique_ptr<SiteComponent> component, bool serve);

}  // namespace hyloop::services
