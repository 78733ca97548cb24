// The hyloop.v1.Experiment gRPC service: a thin adapter over Coordinator.
#include <sstream>

#include "coordinator/coordinator_component.hpp"
#include "hyloop/runtime/guard_rpc.hpp"

namespace hyloop::services {
namespace {

/// The caller of `ctx` gave up: it cancelled, or its deadline (sent with the call) passed.
Coordinator::CallerGone caller_gone(grpc::ServerContext* ctx) {
  return
      [ctx] { return ctx->IsCancelled() || std::chrono::system_clock::now() >= ctx->deadline(); };
}

class ExperimentService final : public v1::Experiment::Service {
 public:
  explicit ExperimentService(Coordinator& c) : c_(c) {}

  grpc::Status LoadScenario(grpc::ServerContext* ctx, const v1::LoadScenarioRequest* request,
                            v1::LoadScenarioReply* reply) override {
    return runtime::guard_rpc("LoadScenario",
                              [&] { return c_.load_scenario(*request, reply, caller_gone(ctx)); });
  }
  grpc::Status Start(grpc::ServerContext* ctx, const v1::StartRequest* request,
                     v1::RunStatus* reply) override {
    return runtime::guard_rpc("Start", [&] { return c_.start(*request, reply, caller_gone(ctx)); });
  }
  grpc::Status Stop(grpc::ServerContext* /*ctx*/, const v1::StopRequest* /*request*/,
                    v1::RunStatus* reply) override {
    return runtime::guard_rpc("Stop", [&] { return c_.stop(reply); });
  }
  grpc::Status EmergencyStop(grpc::ServerContext* /*ctx*/, const v1::EmergencyStopRequest* request,
                             v1::RunStatus* reply) override {
    return runtime::guard_rpc("EmergencyStop",
                              [&] { return c_.emergency_stop(request->reason(), reply); });
  }
  grpc::Status Reset(grpc::ServerContext* /*ctx*/, const v1::ResetRequest* request,
                     v1::RunStatus* reply) override {
    return runtime::guard_rpc("Reset", [&] { return c_.reset(request->reason(), reply); });
  }
  grpc::Status GetStatus(grpc::ServerContext* /*ctx*/, const v1::StatusRequest* /*request*/,
                         v1::RunStatus* reply) override {
    c_.status(reply);
    return grpc::Status::OK;
  }
  grpc::Status StreamTelemetry(grpc::ServerContext* ctx, const v1::TelemetryRequest* request,
                               grpc::ServerWriter<v1::TelemetryFrame>* writer) override {
    std::uint64_t after = std::numeric_limits<std::uint64_t>::max();
    v1::TelemetryFrame frame;
    while (!ctx->IsCancelled()) {
      // Frames on the decimation grid only (next_frame); a wait that times out sends nothing.
      const bool running =
          c_.next_frame(after, request->decimation(), &frame, std::chrono::milliseconds(200));
      if (frame.values_size() > 0) {
        if (!writer->Write(frame)) break;
        after = frame.cycle();
        continue;  // rows already recorded go out before the end of the run is noticed
      }
      if (!running) break;
      frame.Clear();
    }
    return grpc::Status::OK;
  }
  grpc::Status ListRuns(grpc::ServerContext* /*ctx*/, const v1::ListRunsRequest* /*request*/,
                        v1::ListRunsReply* reply) override {
    return runtime::guard_rpc("ListRuns", [&] {
      c_.list_runs(reply);
      return grpc::Status::OK;
    });
  }
  grpc::Status GetRunSummary(grpc::ServerContext* /*ctx*/, const v1::RunSummaryRequest* request,
                             v1::RunSummaryReply* reply) override {
    return runtime::guard_rpc("GetRunSummary",
                              [&] { return c_.run_summary(request->run_id(), reply); });
  }

 private:
  Coordinator& c_;
};

class CoordinatorIdentification final : public v1::Identification::Service {
 public:
  explicit CoordinatorIdentification(Coordinator& c) : c_(c) {}
  grpc::Status RunIdentification(grpc::ServerContext* /*ctx*/,
                                 const v1::RunIdentificationRequest* request,
                                 v1::RunIdentificationReply* reply) override {
    return runtime::guard_rpc("RunIdentification",
                              [&] { return c_.run_identification(*request, reply); });
  }

 private:
  Coordinator& c_;
};

}  // namespace

std::unique_ptr<grpc::Service> make_coordinator_identification_service(Coordinator& coordinator) {
  return std::make_unique<CoordinatorIdentification>(coordinator);
}

std::unique_ptr<grpc::Service> make_experiment_service(Coordinator& coordinator) {
  return std::make_unique<ExperimentService>(coordinator);
}

v1::LoopEndpoints parse_endpoints(const std::string& spec) {
  v1::LoopEndpoints e;
  std::stringstream ss(spec);
  std::string item;
  const auto* descriptor = v1::LoopEndpoints::descriptor();
  const auto* reflection = v1::LoopEndpoints::GetReflection();
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const auto* field = eq == std::string::npos ? nullptr : descriptor->FindFieldByName(name);
    if (field == nullptr) {
      throw std::invalid_argument("--endpoints: \"" + item +
                                  "\": expected channel=address with channel one of "
                                  "rig_to_sensor, sensor_to_dynamics, dynamics_to_actuator, "
                                  "actuator_to_rig, telemetry");
    }
    reflection->SetString(&e, field, item.substr(eq + 1));
  }
  return e;
}

std::vector<std::unique_ptr<ServiceHandle>> grpc_service_handles(const std::string& spec) {
  std::map<std::string, std::string> given;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw std::invalid_argument("--services: \"" + item + "\": expected name=address");
    }
    const std::string name = item.substr(0, eq);
    if (std::find(kLoopServices.begin(), kLoopServices.end(), name) == kLoopServices.end() &&
        name != "identification") {
      throw std::invalid_argument(
          "--services: unknown service \"" + name +
          "\" (known: rig-emulator, actuator, dynamics, sensor, identification)");
    }
    given[name] = item.substr(eq + 1);
  }
  std::vector<std::unique_ptr<ServiceHandle>> handles;
  for (const char* name : kLoopServices) {
    const auto it = given.find(name);
    if (it == given.end()) {
      throw std::invalid_argument(std::string("--services: missing ") + name + "=ADDRESS");
    }
    handles.push_back(make_grpc_service_handle(name, it->second));
  }
  if (const auto it = given.find("identification"); it != given.end()) {
    handles.push_back(make_grpc_service_handle("identification", it->second));
  }
  return handles;
}

}  // namespace hyloop::services
