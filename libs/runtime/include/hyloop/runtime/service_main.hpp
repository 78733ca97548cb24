#pragma once
// The whole main() of a service binary:
//
//   int main(int argc, char** argv) {
//     return hyloop::runtime::run_service_main(argc, argv, "sensor",
//                                              [] { return std::make_unique<SensorComponent>(); });
//   }
//
// Options: --config FILE (service_config.hpp), --grpc-address ADDR, --metrics-address ADDR,
// --log-level LEVEL, --security-dir DIR, --insecure and --reflection (override the file), --help
// (lists every option and exits 0).
// It refuses to start (returns 1) without a security directory (TLS with the certificate named
// after `service_name`, tokens checked on every call; security.hpp, auth.hpp) or --insecure. Once
// serving it prints one line to stdout, "hyloop-<service_name> grpc <address>", which a parent
// process reads to find the port, and, when metrics are served (--metrics-address HOST:PORT; off by
// default), a second one, "hyloop-<service_name> metrics <host:port>" (the bound port in place of
// 0): the component's MetricsRegistry at http://host:port/metrics (docs/metrics.md). It returns
// when the Lifecycle.Shutdown RPC, SIGINT or SIGTERM arrives, after shutting the component down: 0,
// or 1 on a configuration or start error (message on stderr).

#include <functional>
#include <memory>
#include <string>

#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/service_config.hpp"
#include "hyloop/runtime/service_host.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::runtime {

/// `add_options` declares the binary's own options beside the common ones (so that --help lists
/// them); they are parsed before make_component is called.
int run_service_main(int argc, char** argv, const std::string& service_name,
                     const std::function<std::unique_ptr<Component>()>& make_component,
                     const std::function<void(ServiceHost&, Component&)>& add_services = {},
                     const std::function<void(CLI::App&)>& add_options = {});

/// The configuration run_service_main loaded (defaults before it has): a component's loop
/// thread calls apply_rt_setup(service_config().rt) when it starts.
[[nodiscard]] const ServiceConfig& service_config();

}  // namespace hyloop::runtime
