// hyloop-identification: hosts the IdentificationComponent behind the lifecycle gRPC API, with
// the hyloop.v1.Identification and hyloop.v1.Analysis services.
#include <iostream>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/runtime/service_main.hpp"
#include "identification/identification_component.hpp"

int main(int argc, char** argv) {
  using namespace hyloop;
  // --data-dir DIR (repeatable): where a scenario's data files are looked up by name.
  if (const std::string error = experiment::take_data_dir_options(argc, argv); !error.empty()) {
    std::cerr << "hyloop-identification: " << error << '\n';
    return 1;
  }
  return runtime::run_service_main(
      argc, argv, "identification",
      [] { return std::make_unique<services::IdentificationComponent>(); },
      [](runtime::ServiceHost& host, runtime::Component& component) {
        host.add_service(services::make_identification_service(
            static_cast<services::IdentificationComponent&>(component)));
        host.add_service(services::make_analysis_service());
      });
}
