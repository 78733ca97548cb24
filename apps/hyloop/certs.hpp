// `hyloop certs --out DIR [--hosts h1,h2] [--days N] [--force]`: the security directory of a lab
// (runtime/security.hpp, docs/security.md): CA, a certificate and CURVE keys per service, tokens.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct CertsCliOptions {
  std::string out;
  std::vector<std::string> hosts;
  int days = 365;
  bool force = false;
  std::string rotate_token;  ///< a role: replace only DIR/tokens/<role>
};

// Declares the "certs" subcommand of `app`, writing into `options`.
CLI::App* add_certs_subcommand(CLI::App& app, CertsCliOptions& options);

// Writes the directory and prints what it holds. 0 done, 1 refused or failed (message on stderr).
int run_certs(const CertsCliOptions& options);

}  // namespace hyloop::app
