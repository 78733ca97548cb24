#include "certs.hpp"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "hyloop/runtime/security.hpp"

namespace hyloop::app {

CLI::App* add_certs_subcommand(CLI::App& app, CertsCliOptions& options) {
  CLI::App* certs = app.add_subcommand(
      "certs",
      "make a lab's security directory: CA, TLS certificate and CURVE keys per service, "
      "role tokens (docs/security.md)");
  certs->add_option("--out", options.out, "directory to write (created 0700)")->required();
  certs
      ->add_option("--hosts", options.hosts,
                   "host names or IP addresses the services are reached at, comma-separated "
                   "(added to every certificate beside localhost, 127.0.0.1 and the service "
                   "name)")
      ->delimiter(',');
  certs->add_option("--days", options.days, "validity of the certificates (1..3650)")
      ->capture_default_str();
  certs->add_flag("--force", options.force, "replace the files of an existing directory");
  certs
      ->add_option("--rotate-token", options.rotate_token,
                   "only replace DIR/tokens/ROLE of an existing directory by a new token "
                   "(restart the services that hold it)")
      ->check(CLI::IsMember({"observer", "operator", "coordinator"}));
  return certs;
}

int run_certs(const CertsCliOptions& options) {
  if (!options.rotate_token.empty()) {
    try {
      const auto path =
          runtime::rotate_token(options.out, runtime::parse_role(options.rotate_token));
      std::cout << "new token: " << path.string()
                << " (copy it where the old one was; restart the services that read it)\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
  }
  runtime::CertsOptions o;
  o.out = options.out;
  o.hosts = options.hosts;
  o.days = options.days;
  o.force = options.force;
  try {
    runtime::create_security_dir(o);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "security directory: " << options.out << " (keep it private: keys and tokens)\n"
            << "  ca.crt                 give to every client (hyloop ctl --ca, Python client)\n"
            << "  <service>.crt/.key     one per service:";
  for (const std::string_view n : runtime::kSecurityNames) std::cout << " " << n;
  std::cout << "\n  tokens/observer        status, telemetry, summaries\n"
            << "  tokens/operator        + load, start, stop, reset\n"
            << "  tokens/coordinator     the coordinator's token for its services' lifecycle\n"
            << "  curve/                 ZeroMQ CURVE keys of the loop plane\n"
            << "services: --security-dir " << options.out << "; hyloop ctl ADDRESS --security-dir "
            << options.out << " (or --ca ca.crt --token-file tokens/operator)\n";
  return 0;
}

}  // namespace hyloop::app
