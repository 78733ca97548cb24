// hyloop-identification: hosts the IdentificationComponent behind the lifecycle gRPC API, with
// the hyloop.v1.Identification and hyloop.v1.Analysis services.
#include <CLI/CLI.hpp>
#include <vector>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "identification/identification_component.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-identification"))
    return 2;
  using namespace hyloop;
  std::vector<std::string> data_dirs;
  return runtime::run_service_main(
      argc, argv, "identification",
      [&data_dirs] {
        if (!data_dirs.empty()) {
          experiment::set_server_data_directories({data_dirs.begin(), data_dirs.end()});
        }
        return std::make_unique<services::IdentificationComponent>();
      },
      [](runtime::ServiceHost& host, runtime::Component& component) {
        host.add_service(services::make_identification_service(
            static_cast<services::IdentificationComponent&>(component)));
        host.add_service(services::make_analysis_service());
      },
      [&data_dirs](CLI::App& app) {
        app.add_option("--data-dir", data_dirs,
                       "where a scenario's data files are looked up by name (repeatable; "
                       "default: HYLOOP_DATA_DIRS, else the project's data/)");
      });
}
