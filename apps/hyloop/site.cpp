#include "site.hpp"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "hyloop/runtime/logging.hpp"
#include "site/site_kind.hpp"

namespace hyloop::app {
namespace {

std::atomic<int> g_site_signal{0};
void on_site_signal(int s) { g_site_signal.store(s); }

}  // namespace

CLI::App* add_site_subcommand(CLI::App& app, SiteOptions& options) {
  services::register_site_kind();
  auto* site = app.add_subcommand(
      "site",
      "serve as the experimental site of an OpenSees/OpenFresco model (expControl GenericTCP, "
      "element genericClient) with the servo-hydraulic emulator; each session is recorded as a "
      "run directory (docs/opensees.md)");
  services::add_site_options(*site, options.site);
  site->add_option("--sessions", options.sessions,
                   "exit after this many client sessions have ended (default: until Ctrl-C)");
  return site;
}

int run_site(const SiteOptions& options) {
  struct sigaction sa {};
  sa.sa_handler = on_site_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  runtime::init_logging("site", "info");  // the site's log on stderr; stdout has its address
  auto cli = options.site;
  cli.serve_at_start = true;
  std::unique_ptr<services::SiteComponent> site;
  try {
    site = services::make_site_component(cli);
  } catch (const std::exception& e) {
    std::cerr << "hyloop site: " << e.what() << "\n";
    return 1;
  }
  const auto& served = site->options();
  std::cerr << "hyloop site: serving OpenSees/OpenFresco clients on "
            << hal::openfresco::to_string(served.server.transport) << " " << served.server.address
            << ":" << site->port() << "; run directories in " << served.runs_dir.string()
            << (options.sessions > 0 ? "" : "; Ctrl-C to stop") << "\n";
  while (g_site_signal.load() == 0) {
    if (options.sessions > 0 &&
        site->recorder()->wait_for_runs(options.sessions, std::chrono::milliseconds(100))) {
      break;
    }
    if (options.sessions == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto runs = site->recorder()->runs();
  (void)site->shutdown();
  int rc = 0;
  for (const auto& r : runs) {
    std::cerr << "hyloop site: session " << hal::openfresco::to_string(r.report.end) << ": "
              << r.report.reason << (r.dir.empty() ? "" : "; run directory: " + r.dir.string())
              << "\n";
    if (r.report.end != hal::openfresco::SessionEnd::kTerminated) rc = 3;
  }
  return options.sessions > 0 ? rc : 0;
}

}  // namespace hyloop::app
