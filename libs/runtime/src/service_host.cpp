#include "hyloop/runtime/service_host.hpp"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <hyloop/v1/control.grpc.pb.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "hyloop/runtime/auth.hpp"
#include "hyloop/runtime/logging.hpp"

namespace hyloop::runtime {
namespace {

constexpr auto kHealthPeriod = std::chrono::milliseconds(100);
constexpr const char* kLifecycleServiceName = "hyloop.v1.Lifecycle";

bool serving_state(LifecycleState s) {
  return s != v1::LIFECYCLE_STATE_ERROR && s != v1::LIFECYCLE_STATE_FINALIZED;
}

// Reflection on this server only when asked for: whether or not libgrpc++_reflection has
// registered its plugin globally, this builder gets exactly one, or none.
class ReflectionOption final : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionOption(bool enabled) : enabled_(enabled) {}
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    const std::string name = "proto_server_reflection";
    std::erase_if(*plugins, [&](const auto& p) { return p->name() == name; });
    if (enabled_)
      plugins->push_back(std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>());
  }

 private:
  bool enabled_;
};

}  // namespace

// hyloop.v1.Lifecycle, each call delegated to the component.
class ServiceHost::LifecycleService final : public v1::Lifecycle::Service {
 public:
  explicit LifecycleService(ServiceHost& host) : host_(host) {}

  grpc::Status Configure(grpc::ServerContext*, const v1::ConfigureRequest* request,
                         v1::LifecycleReply* reply) override {
    *reply = host_.component_.configure(*request, caller(request->coordinator_id()));
    return done(*reply, "configure");
  }
  grpc::Status Activate(grpc::ServerContext*, const v1::LifecycleRequest* request,
                        v1::LifecycleReply* reply) override {
    *reply = host_.component_.activate(caller(request->coordinator_id()));
    return done(*reply, "activate");
  }
  grpc::Status Deactivate(grpc::ServerContext*, const v1::LifecycleRequest* request,
                          v1::LifecycleReply* reply) override {
    *reply = host_.component_.deactivate(caller(request->coordinator_id()));
    return done(*reply, "deactivate");
  }
  grpc::Status Cleanup(grpc::ServerContext*, const v1::LifecycleRequest* request,
                       v1::LifecycleReply* reply) override {
    *reply = host_.component_.cleanup(caller(request->coordinator_id()));
    return done(*reply, "cleanup");
  }
  grpc::Status Shutdown(grpc::ServerContext*, const v1::LifecycleRequest* request,
                        v1::LifecycleReply* reply) override {
    *reply = host_.component_.shutdown(caller(request->coordinator_id()));
    // The server stops after this reply has gone out (wait() does the stopping); a shutdown
    // refused by another coordinator's lease stops nothing.
    if (reply->state() == v1::LIFECYCLE_STATE_FINALIZED) host_.shutdown();
    return done(*reply, "shutdown");
  }
  grpc::Status GetState(grpc::ServerContext*, const v1::LifecycleRequest* request,
                        v1::LifecycleReply* reply) override {
    host_.component_.renew_lease(request->coordinator_id());
    *reply = host_.component_.state_reply();
    return grpc::Status::OK;
  }
  grpc::Status EmergencyStop(grpc::ServerContext*, const v1::EmergencyStopRequest* request,
                             v1::LifecycleReply* reply) override {
    *reply = host_.component_.emergency_stop(request->reason());
    logger()->warn("emergency stop: {}", request->reason());
    return grpc::Status::OK;
  }

 private:
  // A refused or failed transition is still an OK RPC: the reply carries state and message.
  grpc::Status done(const v1::LifecycleReply& reply, const char* what) {
    host_.update_health();
    logger()->info("{} -> {} ({})", what, v1::LifecycleState_Name(reply.state()), reply.message());
    return grpc::Status::OK;
  }

  // A remote caller is never the hosting process: one without an id is "an unnamed client".
  static std::string_view caller(const std::string& coordinator_id) {
    return coordinator_id.empty() ? std::string_view("an unnamed client") : coordinator_id;
  }

  ServiceHost& host_;
};

ServiceHost::ServiceHost(Component& component)
    : component_(component), lifecycle_(std::make_unique<LifecycleService>(*this)) {}

ServiceHost::~ServiceHost() {
  shutdown();
  stop_server();
}

void ServiceHost::add_service(grpc::Service* service) {
  if (server_) throw std::logic_error("ServiceHost::add_service after start()");
  services_.push_back(service);
}

void ServiceHost::add_service(std::unique_ptr<grpc::Service> service) {
  add_service(service.get());
  owned_services_.push_back(std::move(service));
}

void ServiceHost::set_security(ServerSecurity security) {
  if (server_) throw std::logic_error("ServiceHost::set_security after start()");
  security_ = std::move(security);
  insecure_ = false;
}

void ServiceHost::set_insecure() {
  if (server_) throw std::logic_error("ServiceHost::set_insecure after start()");
  security_.reset();
  insecure_ = true;
}

void ServiceHost::start(const std::string& address) {
  if (server_) throw std::logic_error("ServiceHost::start called twice");
  if (!security_ && !insecure_) {
    throw std::logic_error("ServiceHost::start: neither set_security() nor set_insecure()");
  }
  grpc::EnableDefaultHealthCheckService(true);

  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (security_) {
    grpc::SslServerCredentialsOptions tls(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    tls.pem_root_certs = security_->ca_pem;
    tls.pem_key_cert_pairs.push_back({security_->key_pem, security_->cert_pem});
    credentials = grpc::SslServerCredentials(tls);
    credentials->SetAuthMetadataProcessor(make_token_auth_processor(security_->tokens));
  } else {
    credentials = grpc::InsecureServerCredentials();
  }

  grpc::ServerBuilder builder;
  builder.SetOption(std::make_unique<ReflectionOption>(reflection_));
  // No SO_REUSEPORT: with it gRPC clones the listener once per poller (with port 0 the clone
  // listens on a second, random port) and another process of the same user could bind the
  // same port and take connections. One listener per service.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  int selected_port = 0;
  builder.AddListeningPort(address, credentials, &selected_port);
  builder.RegisterService(lifecycle_.get());
  for (grpc::Service* s : services_) builder.RegisterService(s);
  server_ = builder.BuildAndStart();
  if (!server_ || selected_port == 0) {
    server_.reset();
    throw std::runtime_error("cannot start the gRPC server on '" + address + "'");
  }
  if (address.rfind("unix:", 0) == 0) {
    address_ = address;
    port_ = 0;
  } else {
    port_ = selected_port;
    address_ = address.substr(0, address.rfind(':')) + ":" + std::to_string(port_);
  }
  update_health();
  monitor_ = std::thread([this] { monitor(); });
  if (security_) {
    logger()->info("gRPC on {} (TLS, tokens checked; lifecycle, health{})", address_,
                   reflection_ ? ", reflection" : "");
  } else {
    logger()->warn(
        "gRPC on {} WITHOUT TLS OR TOKENS (--insecure: development only; "
        "lifecycle, health{})",
        address_, reflection_ ? ", reflection" : "");
  }
}

void ServiceHost::update_health() {
  std::lock_guard lock(health_mutex_);
  if (!server_) return;
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  const bool serving = serving_state(component_.state());
  if (health != nullptr) {
    health->SetServingStatus("", serving);
    health->SetServingStatus(kLifecycleServiceName, serving);
  }
  if (serving_.exchange(serving) != serving) {
    logger()->info("health: {}", serving ? "SERVING" : "NOT_SERVING");
  }
}

void ServiceHost::monitor() {
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    cv_.wait_for(lock, kHealthPeriod);
    if (stopped_) break;
    lock.unlock();
    update_health();
    lock.lock();
  }
}

void ServiceHost::shutdown() {
  {
    std::lock_guard lock(mutex_);
    shutdown_requested_ = true;
  }
  cv_.notify_all();
}

bool ServiceHost::shutdown_requested() const {
  std::lock_guard lock(mutex_);
  return shutdown_requested_;
}

void ServiceHost::wait() {
  {
    std::unique_lock lock(mutex_);
    if (!server_) return;
    cv_.wait(lock, [this] { return shutdown_requested_; });
  }
  stop_server();
}

void ServiceHost::stop_server() {
  std::lock_guard stop(stop_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + grace_);
  server_->Wait();
  serving_.store(false);
  logger()->info("gRPC server on {} stopped", address_);
}

}  // namespace hyloop::runtime
