// hyloop-coordinator: the Experiment gRPC API over the loop services given by
// --services rig-emulator=ADDR,actuator=ADDR,dynamics=ADDR,sensor=ADDR (or HYLOOP_SERVICES) and
// --endpoint-prefix (ZeroMQ address prefix of the loop channels; or HYLOOP_ENDPOINT_PREFIX) and
// --endpoints name=tcp://host:port,... (per channel, multi-host; or HYLOOP_ENDPOINTS) and
// --runs-dir DIR (where run directories are created; or HYLOOP_RUNS_DIR).
// With --security-dir DIR it serves TLS and reaches its services with DIR/ca.crt and
// DIR/tokens/coordinator.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "coordinator/coordinator_component.hpp"
#include "hyloop/experiment/data_source.hpp"
#include "hyloop/runtime/service_main.hpp"

namespace {
// Removes "--name VALUE" from argv (the rest goes to run_service_main).
std::string take_option(int& argc, char** argv, const char* name, const char* env) {
  std::string value = std::getenv(env) != nullptr ? std::getenv(env) : "";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) {
      value = argv[i + 1];
      for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  return value;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace hyloop;
  const std::string spec = take_option(argc, argv, "--services", "HYLOOP_SERVICES");
  services::CoordinatorOptions options;
  options.endpoint_prefix = take_option(argc, argv, "--endpoint-prefix", "HYLOOP_ENDPOINT_PREFIX");
  const std::string endpoints = take_option(argc, argv, "--endpoints", "HYLOOP_ENDPOINTS");
  // --runs-dir DIR: Start.out_dir names a run directory in it (default: the working directory).
  options.runs_dir = take_option(argc, argv, "--runs-dir", "HYLOOP_RUNS_DIR");
  // --data-dir DIR (repeatable): where a scenario's data files are looked up by name.
  if (const std::string error = experiment::take_data_dir_options(argc, argv); !error.empty()) {
    std::cerr << "hyloop-coordinator: " << error << '\n';
    return 1;
  }
  try {
    options.endpoints = services::parse_endpoints(endpoints);
  } catch (const std::exception& e) {
    std::cerr << "hyloop-coordinator: " << e.what() << '\n';
    return 1;
  }
  zmq::context_t context;
  std::unique_ptr<services::Coordinator> coordinator;
  return runtime::run_service_main(
      argc, argv, "coordinator",
      [&] {
        // After the configuration is loaded: the handles reach the services with TLS and the
        // coordinator token of its --security-dir (service_handle.hpp). Not before
        // run_service_main: gRPC's threads must inherit its signal mask, or a SIGTERM kills the
        // process instead of shutting it down.
        coordinator = std::make_unique<services::Coordinator>(services::grpc_service_handles(spec),
                                                              context, options);
        return std::make_unique<services::CoordinatorComponent>(*coordinator);
      },
      [&coordinator](runtime::ServiceHost& host, runtime::Component& /*component*/) {
        host.add_service(services::make_experiment_service(*coordinator));
        host.add_service(services::make_coordinator_identification_service(*coordinator));
      });
}
