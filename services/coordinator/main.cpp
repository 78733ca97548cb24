// hyloop-coordinator: the Experiment gRPC API over the loop services given by
// --services rig-emulator=ADDR,actuator=ADDR,dynamics=ADDR,sensor=ADDR (or HYLOOP_SERVICES) and
// --endpoint-prefix (ZeroMQ address prefix of the loop channels; or HYLOOP_ENDPOINT_PREFIX) and
// --endpoints name=tcp://host:port,... (per channel, multi-host; or HYLOOP_ENDPOINTS) and
// --runs-dir DIR (where run directories are created; or HYLOOP_RUNS_DIR).
// With --security-dir DIR it serves TLS and reaches its services with DIR/ca.crt and
// DIR/tokens/coordinator.
#include <CLI/CLI.hpp>
#include <vector>

#include "coordinator/coordinator_component.hpp"
#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/runtime/service_main.hpp"

int main(int argc, char** argv) {
  if (!hyloop::experiment::take_kind_options_or_report(argc, argv, "hyloop-coordinator")) return 2;
  using namespace hyloop;
  std::string spec;
  std::string endpoint_prefix;
  std::string endpoints;
  std::string runs_dir;
  std::vector<std::string> data_dirs;
  zmq::context_t context;
  std::unique_ptr<services::Coordinator> coordinator;
  return runtime::run_service_main(
      argc, argv, "coordinator",
      [&] {
        // After the configuration is loaded: the handles reach the services with TLS and the
        // coordinator token of its --security-dir (service_handle.hpp). Not before
        // run_service_main: gRPC's threads must inherit its signal mask, or a SIGTERM kills the
        // process instead of shutting it down.
        if (!data_dirs.empty()) {
          experiment::set_server_data_directories({data_dirs.begin(), data_dirs.end()});
        }
        services::CoordinatorOptions options;
        options.endpoint_prefix = endpoint_prefix;
        options.endpoints = services::parse_endpoints(endpoints);
        options.runs_dir = runs_dir;
        coordinator = std::make_unique<services::Coordinator>(services::grpc_service_handles(spec),
                                                              context, options);
        return std::make_unique<services::CoordinatorComponent>(*coordinator);
      },
      [&coordinator](runtime::ServiceHost& host, runtime::Component& /*component*/) {
        host.add_service(services::make_experiment_service(*coordinator));
        host.add_service(services::make_coordinator_identification_service(*coordinator));
      },
      [&](CLI::App& app) {
        app.add_option("--services", spec,
                       "the services' gRPC addresses: rig-emulator=HOST:PORT,actuator=HOST:PORT,"
                       "dynamics=HOST:PORT,sensor=HOST:PORT[,identification=HOST:PORT] "
                       "(required)")
            ->envname("HYLOOP_SERVICES");
        app.add_option("--endpoints", endpoints,
                       "loop channels on tcp, CHANNEL=tcp://HOST:PORT,... (rig_to_sensor, "
                       "sensor_to_dynamics, dynamics_to_actuator, actuator_to_rig, telemetry); "
                       "HOST is the binder's own address; default: ipc:// in --ipc-dir")
            ->envname("HYLOOP_ENDPOINTS");
        app.add_option("--endpoint-prefix", endpoint_prefix,
                       "inproc://NAME for co-located components (one process)")
            ->envname("HYLOOP_ENDPOINT_PREFIX");
        app.add_option("--runs-dir", runs_dir,
                       "where run directories are created (Start.out_dir names one in it; "
                       "default: the working directory)")
            ->envname("HYLOOP_RUNS_DIR");
        app.add_option("--data-dir", data_dirs,
                       "where a scenario's data files are looked up by name (repeatable; "
                       "default: HYLOOP_DATA_DIRS, else the project's data/)");
      });
}
