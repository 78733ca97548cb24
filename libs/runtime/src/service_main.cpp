#include "hyloop/runtime/service_main.hpp"

#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "hyloop/runtime/logging.hpp"

namespace hyloop::runtime {
namespace {

ServiceConfig& current_config() {
  static ServiceConfig config;
  return config;
}

// SIGINT/SIGTERM are blocked in every thread and taken by sigwait() on one thread, which asks
// the host to shut down: no work at all in a signal handler. From the signal on, the shutdown has
// kShutdownDeadline to finish; a step that hangs (seen once in a container: the process did not
// exit within docker's 10 s) is logged by name and the process exits with kStuckExitCode.
class SignalWatcher {
 public:
  static constexpr std::chrono::seconds kShutdownDeadline{5};
  static constexpr int kStuckExitCode = 3;

  SignalWatcher() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    // Before any other thread exists (gRPC's, the component's): they inherit the mask.
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~SignalWatcher() {
    stop();
    finished();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

  /// Names the shutdown step under way (a string literal), for the deadline's message.
  void phase(const char* name) noexcept { phase_.store(name); }

  /// The shutdown is over: no deadline any more.
  void finished() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    cv_.notify_all();
    if (deadline_.joinable()) deadline_.join();
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  void watch(ServiceHost& host) {
    thread_ = std::thread([this, &host] {
      int sig = 0;
      while (sigwait(&set_, &sig) == 0) {
        if (done_.load()) return;
        logger()->info("signal {}: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
        if (!deadline_.joinable()) deadline_ = std::thread([this] { enforce_deadline(); });
        host.shutdown();
      }
    });
  }

  // Ends the watching thread; before the host it points at goes away.
  void stop() {
    if (!thread_.joinable()) return;
    done_.store(true);
    pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait
    thread_.join();
  }

 private:
  void enforce_deadline() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_for(lock, kShutdownDeadline, [this] { return finished_; })) return;
    logger()->error("shutdown stuck in '{}' for {} s after the signal: exiting with code {}",
                    phase_.load(), kShutdownDeadline.count(), kStuckExitCode);
    spdlog::default_logger()->flush();
    std::_Exit(kStuckExitCode);
  }

  sigset_t set_{};
  sigset_t old_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::atomic<const char*> phase_{"the gRPC server's shutdown"};
  std::thread deadline_;  // started by the first signal
};

// A service started by `hyloop up` (HYLOOP_PARENT_PID=<its pid> in the environment) exits with
// it: SIGTERM when the parent dies, even by SIGKILL (PR_SET_PDEATHSIG). False when the parent
// is already gone (it died before the request took effect).
bool exit_with_parent() {
  const char* parent = std::getenv("HYLOOP_PARENT_PID");
  if (parent == nullptr) return true;
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) return true;
  return std::to_string(getppid()) == parent;
}

}  // namespace

const ServiceConfig& service_config() { return current_config(); }

namespace {

// The command line every service takes; each given option overrides its configuration.
struct ServiceArgs {
  std::string config_path;
  std::string grpc_address;
  std::string log_level;
  std::optional<std::string> metrics_address;
  std::string security_dir;
  bool insecure = false;
  bool reflection = false;
  std::string ipc_dir;
};

void add_service_options(CLI::App& app, ServiceArgs& a) {
  app.add_option("--config", a.config_path, "service configuration (YAML)");
  app.add_option("--ipc-dir", a.ipc_dir,
                 "directory of the ipc:// loop sockets (default $XDG_RUNTIME_DIR/hyloop or "
                 "/tmp/hyloop-<uid>; made 0700); overrides the configuration");
  app.add_option("--security-dir", a.security_dir,
                 "the directory `hyloop certs` wrote: TLS certificate, role tokens, CURVE keys; "
                 "overrides the configuration");
  app.add_flag("--insecure", a.insecure,
               "serve plaintext gRPC without tokens (development only; a service refuses to "
               "start without --security-dir or --insecure)");
  app.add_flag("--reflection", a.reflection, "serve gRPC server reflection (off by default)");
  app.add_option("--grpc-address", a.grpc_address,
                 "gRPC listen address, host:port (0: a free port) or unix:/path; overrides "
                 "the configuration");
  app.add_option("--metrics-address", a.metrics_address,
                 "serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a free one; "
                 "\"\": off, the default); overrides the configuration");
  app.add_option("--log-level", a.log_level,
                 "trace, debug, info, warn, error or off; overrides the configuration");
}

// The configuration file (or the service's defaults) with the command line's overrides.
// @throws std::invalid_argument without exactly one of a security directory and --insecure.
ServiceConfig resolved_config(const ServiceArgs& a, const std::string& service_name) {
  ServiceConfig config = a.config_path.empty() ? default_service_config(service_name)
                                               : load_service_config(a.config_path);
  if (config.name.empty()) config.name = service_name;
  if (!a.grpc_address.empty()) config.grpc_address = a.grpc_address;
  if (!a.log_level.empty()) config.log_level = a.log_level;
  if (a.metrics_address) config.metrics_address = *a.metrics_address;
  if (!a.security_dir.empty()) config.security_dir = a.security_dir;
  if (!a.ipc_dir.empty()) config.ipc_dir = a.ipc_dir;
  config.insecure = config.insecure || a.insecure;
  config.reflection = config.reflection || a.reflection;
  if (config.security_dir.empty() == !config.insecure) {
    throw std::invalid_argument(
        config.insecure
            ? "give either --security-dir (security_dir:) or --insecure (insecure:), not both"
            : "refusing to start without TLS and tokens: give --security-dir DIR (made by "
              "`hyloop certs --out DIR`; or security_dir: in --config), or --insecure for "
              "development only");
  }
  return config;
}

// Serves `component` over gRPC (and its metrics) until a signal, then shuts it down. 0 after a
// clean stop; 1 when the server or the exporter cannot start (logged).
int serve_component(Component& component, const ServiceConfig& config,
                    std::optional<ServerSecurity>& security, SignalWatcher& signals,
                    const std::string& service_name,
                    const std::function<void(ServiceHost&, Component&)>& add_services) {
  ServiceHost host(component);
  if (security) {
    host.set_security(std::move(*security));
  } else {
    host.set_insecure();
  }
  host.set_reflection(config.reflection);
  try {
    if (add_services) add_services(host, component);
    host.start(config.grpc_address);
  } catch (const std::exception& e) {
    logger()->error("{}", e.what());
    return 1;
  }
  if (!config.metrics_address.empty()) {
    try {
      component.metrics().start_exporter(config.metrics_address);
    } catch (const std::exception& e) {
      logger()->error("{}", e.what());
      host.shutdown();
      host.wait();
      return 1;
    }
  }
  signals.watch(host);
  std::cout << "hyloop-" << service_name << " grpc " << host.address() << std::endl;
  if (!config.metrics_address.empty()) {
    std::cout << "hyloop-" << service_name << " metrics " << component.metrics().exporter_address()
              << std::endl;
  }
  host.wait();
  signals.phase("the signal watcher's stop");
  signals.stop();
  signals.phase("the component's shutdown");
  component.shutdown();
  // Before the component goes: the exporter's collectors read it.
  signals.phase("the metrics exporter's stop");
  component.metrics().stop_exporter();
  signals.phase("the service's destruction");
  return 0;
}

}  // namespace

int run_service_main(int argc, char** argv, const std::string& service_name,
                     const std::function<std::unique_ptr<Component>()>& make_component,
                     const std::function<void(ServiceHost&, Component&)>& add_services,
                     const std::function<void(CLI::App&)>& add_options) {
  if (!exit_with_parent()) {
    std::cerr << "hyloop-" << service_name << ": the parent process is gone\n";
    return 1;
  }
  CLI::App app("hyloop " + service_name + " service", "hyloop-" + service_name);
  ServiceArgs args;
  add_service_options(app, args);
  if (add_options) add_options(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  ServiceConfig config;
  std::optional<ServerSecurity> security;
  try {
    config = resolved_config(args, service_name);
    if (!config.security_dir.empty()) {
      check_security_dir(config.security_dir);
      security = load_server_security(config.security_dir, service_name);
    }
    init_logging(config.name, config.log_level);
  } catch (const std::exception& e) {
    std::cerr << "hyloop-" << service_name << ": " << e.what() << '\n';
    return 1;
  }
  current_config() = config;

  SignalWatcher signals;
  std::unique_ptr<Component> component;
  try {
    component = make_component();
  } catch (const std::exception& e) {
    logger()->error("cannot create the {} component: {}", service_name, e.what());
    return 1;
  }
  if (const int rc =
          serve_component(*component, config, security, signals, service_name, add_services);
      rc != 0) {
    return rc;
  }
  component.reset();
  signals.finished();
  logger()->info("{} exited", config.name);
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace hyloop::runtime
