#pragma once
// How the coordinator reaches a service's lifecycle: over gRPC (separate processes, other
// hosts) or directly (components co-located in one process). The coordinator's logic is the
// same either way.

#include <hyloop/v1/control.grpc.pb.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "hyloop/runtime/component.hpp"
#include "hyloop/runtime/security.hpp"

namespace hyloop::services {

class ServiceHandle {
 public:
  virtual ~ServiceHandle() = default;
  [[nodiscard]] virtual const std::string& name() const = 0;
  [[nodiscard]] virtual std::string address() const = 0;
  /// Each returns the service's reply; a transport failure gives state ERROR with the reason.
  virtual v1::LifecycleReply configure(const v1::ConfigureRequest& request) = 0;
  virtual v1::LifecycleReply activate() = 0;
  virtual v1::LifecycleReply deactivate() = 0;
  virtual v1::LifecycleReply shutdown() = 0;
  /// INACTIVE or ERROR → UNCONFIGURED: releases the loop ports of a configuration that will not
  /// run.
  virtual v1::LifecycleReply cleanup() = 0;
  virtual v1::LifecycleReply emergency_stop(const std::string& reason) = 0;
  /// std::nullopt when the service does not answer (dead or unreachable). Renews the lease
  /// when this handle's caller holds it.
  virtual std::optional<v1::LifecycleReply> state() = 0;
  /// The coordinator id sent with every call (the service's lease: docs/reliability.md).
  void set_caller(std::string id) { caller_ = std::move(id); }
  [[nodiscard]] const std::string& caller() const noexcept { return caller_; }

 protected:
  std::string caller_;
};

/// A service in another process: the Lifecycle gRPC API at `address` (host:port or unix:path),
/// over TLS trusting security.ca_pem with the coordinator's token (plaintext when
/// security.insecure()).
std::unique_ptr<ServiceHandle> make_grpc_service_handle(std::string name, std::string address,
                                                        const runtime::ClientSecurity& security);
/// The same with coordinator_client_security().
std::unique_ptr<ServiceHandle> make_grpc_service_handle(std::string name, std::string address);
/// What the coordinator process presents to its services: ca.crt and tokens/coordinator of the
/// security directory it was started with (runtime::service_config().security_dir); plaintext
/// when it has none (started with --insecure). Throws std::invalid_argument if unreadable.
[[nodiscard]] runtime::ClientSecurity coordinator_client_security();
/// A component in this process.
std::unique_ptr<ServiceHandle> make_local_service_handle(runtime::Component& component);
/// Components co-located in this process (`hyloop up --inproc`, the service tests): each on
/// `context` (their loop plane is inproc://), one local handle each, in the order given.
std::vector<std::unique_ptr<ServiceHandle>> make_local_service_handles(
    std::initializer_list<runtime::Component*> components, zmq::context_t& context);

}  // namespace hyloop::services
