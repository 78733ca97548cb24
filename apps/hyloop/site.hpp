// `hyloop site [--site-address A] [--site-port P] [--runs-dir DIR] [rig options] [--sessions N]`:
// hyloop as the experimental site of an OpenSees/OpenFresco model (docs/opensees.md), in this
// process: the site component (services/site) configured and activated, each client session
// recorded as a run directory in --runs-dir, until Ctrl-C (or N sessions have ended).
#pragma once

#include <cstddef>

#include "site/site_options.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct SiteOptions {
  services::SiteCliOptions site;
  std::size_t sessions = 0;  ///< exit after this many sessions ended; 0: until Ctrl-C
};

// Declares the "site" subcommand of `app`, writing into `options`, and registers the site's
// run kind (opensees_site, services/site/site_kind.hpp) so that summary --recover, validate and
// report read a site run directory like any other.
CLI::App* add_site_subcommand(CLI::App& app, SiteOptions& options);

// 0 after a clean stop; 1 when the site cannot start (message on stderr); 3 when a session
// ended other than by terminate (with --sessions).
int run_site(const SiteOptions& options);

}  // namespace hyloop::app
