#include "coordinator/service_handle.hpp"

#include <grpcpp/grpcpp.h>

#include "hyloop/runtime/service_main.hpp"

namespace hyloop::services {
namespace {

using Call = grpc::Status (v1::Lifecycle::Stub::*)(grpc::ClientContext*,
                                                   const v1::LifecycleRequest&,
                                                   v1::LifecycleReply*);

class GrpcHandle final : public ServiceHandle {
 public:
  GrpcHandle(std::string name, std::string address, const runtime::ClientSecurity& security)
      : name_(std::move(name)),
        address_(std::move(address)),
        stub_(v1::Lifecycle::NewStub(
            grpc::CreateChannel(address_, runtime::channel_credentials(security)))) {}

  const std::string& name() const override { return name_; }
  std::string address() const override { return address_; }

  v1::LifecycleReply configure(const v1::ConfigureRequest& request) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::LifecycleReply reply;
    return check(stub_->Configure(&ctx, request, &reply), reply);
  }
  v1::LifecycleReply activate() override { return call(&v1::Lifecycle::Stub::Activate); }
  v1::LifecycleReply deactivate() override { return call(&v1::Lifecycle::Stub::Deactivate); }
  v1::LifecycleReply shutdown() override { return call(&v1::Lifecycle::Stub::Shutdown); }
  v1::LifecycleReply cleanup() override { return call(&v1::Lifecycle::Stub::Cleanup); }
  v1::LifecycleReply emergency_stop(const std::string& reason) override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    v1::EmergencyStopRequest request;
    request.set_reason(reason);
    v1::LifecycleReply reply;
    return check(stub_->EmergencyStop(&ctx, request, &reply), reply);
  }
  std::optional<v1::LifecycleReply> state() override {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(1000));
    v1::LifecycleReply reply;
    if (!stub_->GetState(&ctx, request(), &reply).ok()) {
      return std::nullopt;
    }
    return reply;
  }

 private:
  v1::LifecycleReply call(Call method) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::LifecycleReply reply;
    return check(((*stub_).*method)(&ctx, request(), &reply), reply);
  }
  [[nodiscard]] v1::LifecycleRequest request() const {
    v1::LifecycleRequest r;
    r.set_coordinator_id(caller_);
    return r;
  }
  v1::LifecycleReply check(const grpc::Status& status, v1::LifecycleReply& reply) const {
    if (!status.ok()) {
      reply.set_state(v1::LIFECYCLE_STATE_ERROR);
      reply.set_message(name_ + " at " + address_ + " unreachable: " + status.error_message());
    }
    reply.set_service(name_);
    return reply;
  }

  std::string name_;
  std::string address_;
  std::unique_ptr<v1::Lifecycle::Stub> stub_;
};

class LocalHandle final : public ServiceHandle {
 public:
  explicit LocalHandle(runtime::Component& c) : c_(c) {}
  const std::string& name() const override { return c_.name(); }
  std::string address() const override { return "inproc"; }
  v1::LifecycleReply configure(const v1::ConfigureRequest& r) override {
    return c_.configure(r, r.coordinator_id());
  }
  v1::LifecycleReply activate() override { return c_.activate(caller_); }
  v1::LifecycleReply deactivate() override { return c_.deactivate(caller_); }
  v1::LifecycleReply shutdown() override { return c_.shutdown(caller_); }
  v1::LifecycleReply cleanup() override { return c_.cleanup(caller_); }
  v1::LifecycleReply emergency_stop(const std::string& reason) override {
    return c_.emergency_stop(reason);
  }
  std::optional<v1::LifecycleReply> state() override {
    c_.renew_lease(caller_);
    return c_.state_reply();
  }

 private:
  runtime::Component& c_;
};

}  // namespace

std::unique_ptr<ServiceHandle> make_grpc_service_handle(std::string name, std::string address,
                                                        const runtime::ClientSecurity& security) {
  return std::make_unique<GrpcHandle>(std::move(name), std::move(address), security);
}

std::unique_ptr<ServiceHandle> make_grpc_service_handle(std::string name, std::string address) {
  return make_grpc_service_handle(std::move(name), std::move(address),
                                  coordinator_client_security());
}

runtime::ClientSecurity coordinator_client_security() {
  const runtime::ServiceConfig& config = runtime::service_config();
  if (config.security_dir.empty()) return {};
  return runtime::load_client_security(config.security_dir, runtime::Role::kCoordinator);
}

std::unique_ptr<ServiceHandle> make_local_service_handle(runtime::Component& component) {
  return std::make_unique<LocalHandle>(component);
}

std::vector<std::unique_ptr<ServiceHandle>> make_local_service_handles(
    std::initializer_list<runtime::Component*> components, zmq::context_t& context) {
  std::vector<std::unique_ptr<ServiceHandle>> handles;
  for (runtime::Component* c : components) {
    c->set_context(&context);
    handles.push_back(make_local_service_handle(*c));
  }
  return handles;
}

}  // namespace hyloop::services
