// hyloop-site: hosts the SiteComponent (an OpenSees/OpenFresco experimental site) behind the
// lifecycle gRPC API. The site is configured by its options (docs/opensees.md); --serve-at-start
// configures and activates it at once (a site without a coordinator: compose, `hyloop site`).
#include <CLI/CLI.hpp>

#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "site/site_component.hpp"
#include "site/site_options.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-site")) return 2;
  using namespace hyloop;
  services::SiteCliOptions cli;
  return runtime::run_service_main(
      argc, argv, "site", [&] { return services::make_site_component(cli); }, {},
      [&](CLI::App& app) {
        services::add_site_options(app, cli);
        app.add_flag("--serve-at-start", cli.serve_at_start,
                     "configure and activate at start, without a coordinator");
      });
}
