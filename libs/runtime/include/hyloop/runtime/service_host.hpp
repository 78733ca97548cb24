#pragma once
// Hosts one Component behind a gRPC server: the hyloop.v1.Lifecycle service (delegating to the
// component), the standard health service (SERVING unless the component is in ERROR or
// FINALIZED; checked for "" and "hyloop.v1.Lifecycle") and, only when enabled, server
// reflection. Further services (the coordinator's Experiment, ...) are added before start().
// gRPC only ever drives the lifecycle: it is never on a loop path.
//
// Security (docs/security.md): one listener, TLS with the service's certificate and every call
// checked against the role table (auth.hpp) before its handler runs; or, explicitly,
// set_insecure() (plaintext, no check: development only). start() refuses to run without
// one of the two.
//
//   ServiceHost host(component);
//   host.set_security(load_server_security(dir, "sensor"));   // or host.set_insecure()
//   host.add_service(&experiment);   // optional, before start
//   host.start("127.0.0.1:0");       // port 0: a free port, see port()/address()
//   host.wait();                     // until shutdown() or the Lifecycle.Shutdown RPC

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/security.hpp"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace hyloop::runtime {

/// The largest gRPC request a service accepts (set explicitly on every server; issue 10: every
/// RPC has a bounded cost, docs/scenarios.md "Request limits").
inline constexpr int kMaxReceiveMessageBytes = 4 * 1024 * 1024;

class ServiceHost {
 public:
  /// `component` must outlive the host.
  explicit ServiceHost(Component& component);
  /// Stops the server (shutdown() + the work of wait()) if it is running.
  ~ServiceHost();
  ServiceHost(const ServiceHost&) = delete;
  ServiceHost& operator=(const ServiceHost&) = delete;

  /// Registers another service; before start(). The caller keeps it alive beyond the host.
  void add_service(grpc::Service* service);
  /// The same, the host owning the service.
  void add_service(std::unique_ptr<grpc::Service> service);

  /// TLS with this certificate, tokens checked on every call; before start().
  void set_security(ServerSecurity security);
  /// Plaintext without token checks (development only; logged as a warning); before start().
  void set_insecure();
  /// Serve grpc.reflection (off by default); before start().
  void set_reflection(bool enabled) noexcept { reflection_ = enabled; }
  [[nodiscard]] bool secure() const noexcept { return security_.has_value(); }

  /// Binds `address` ("host:port", port 0 for a free one, or "unix:/path") and starts serving.
  /// Throws std::runtime_error if it cannot bind; std::logic_error if called twice or before
  /// set_security()/set_insecure().
  void start(const std::string& address);
  /// The bound TCP port (0 before start and for unix: addresses).
  [[nodiscard]] int port() const noexcept { return port_; }
  /// The address clients connect to: the one given, with the real port in place of 0.
  [[nodiscard]] std::string address() const { return address_; }

  /// Blocks until shutdown is requested, then stops the server and returns. Returns at once if
  /// the host was never started. In-flight calls get the grace period to finish; note that
  /// gRPC 1.51 also waits out the grace while any client that has made a call keeps its
  /// channel open, so the grace bounds how long a stop takes.
  void wait();
  /// Grace period of wait()'s stop (default 500 ms); before start().
  void set_shutdown_grace(std::chrono::milliseconds grace) noexcept { grace_ = grace; }
  /// Requests shutdown and returns at once; safe from any thread, also a gRPC handler (the
  /// Lifecycle.Shutdown RPC calls it after shutting the component down).
  void shutdown();
  [[nodiscard]] bool shutdown_requested() const;

  /// Whether the health service reports SERVING (the state the monitor last applied).
  [[nodiscard]] bool health_serving() const noexcept { return serving_.load(); }
  /// Re-reads the component's state into the health service now (the monitor does it every
  /// 100 ms and after each lifecycle RPC).
  void update_health();

  [[nodiscard]] Component& component() noexcept { return component_; }

 private:
  class LifecycleService;

  void stop_server();
  void monitor();

  Component& component_;
  std::unique_ptr<LifecycleService> lifecycle_;
  std::vector<grpc::Service*> services_;
  std::vector<std::unique_ptr<grpc::Service>> owned_services_;
  std::unique_ptr<grpc::Server> server_;
  std::optional<ServerSecurity> security_;
  bool insecure_ = false;
  bool reflection_ = false;
  int port_ = 0;
  std::string address_;
  std::atomic<bool> serving_{false};
  std::chrono::milliseconds grace_{500};

  mutable std::mutex mutex_;  // guards the flags below
  std::condition_variable cv_;
  bool shutdown_requested_ = false;
  bool stopped_ = false;
  std::mutex stop_mutex_;    // one stop_server() at a time
  std::mutex health_mutex_;  // one health update at a time
  std::thread monitor_;
};

}  // namespace hyloop::runtime
