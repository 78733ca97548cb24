// The coordinator's gRPC view of a service (services/coordinator/service_handle.hpp): a state
// reply slower than the first deadline, as on a loaded machine, is an answer, not a dead service;
// a service that never answers, or is not there, is silent.
#include "coordinator/service_handle.hpp"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace hyloop;
using Clock = std::chrono::steady_clock;

/// A Lifecycle service whose GetState answers after `delay`.
class SlowLifecycle final : public v1::Lifecycle::Service {
 public:
  explicit SlowLifecycle(std::chrono::milliseconds delay) : delay_(delay) {}
  grpc::Status GetState(grpc::ServerContext* /*ctx*/, const v1::LifecycleRequest* /*request*/,
                        v1::LifecycleReply* reply) override {
    std::this_thread::sleep_for(delay_);
    reply->set_state(v1::LIFECYCLE_STATE_INACTIVE);
    return grpc::Status::OK;
  }

 private:
  std::chrono::milliseconds delay_;
};

struct Server {
  explicit Server(std::chrono::milliseconds delay) : service(delay) {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&service);
    server = b.BuildAndStart();
  }
  ~Server() { server->Shutdown(std::chrono::system_clock::now()); }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  SlowLifecycle service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

TEST(ServiceHandle, AStateReplySlowerThanTheFirstDeadlineIsStillAnAnswer) {
  Server server(services::kStateDeadline + std::chrono::milliseconds(300));
  ASSERT_NE(server.port, 0);
  auto handle = services::make_grpc_service_handle("slow", server.address(), {});
  const auto st = handle->state();
  ASSERT_TRUE(st.has_value()) << "a reply 1.3 s late was taken for a dead service";
  EXPECT_EQ(st->state(), v1::LIFECYCLE_STATE_INACTIVE);
}

TEST(ServiceHandle, AServiceThatNeverAnswersIsSilentAfterBothDeadlines) {
  Server server(services::kStateDeadline + services::kStateRetryDeadline +
                std::chrono::milliseconds(500));
  auto handle = services::make_grpc_service_handle("hung", server.address(), {});
  const auto t0 = Clock::now();
  EXPECT_FALSE(handle->state().has_value());
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(s, 2.9);  // both deadlines waited out
  EXPECT_LT(s, 10.0);
}

TEST(ServiceHandle, AServiceThatIsNotThereIsSilentAtOnce) {
  int port = 0;
  {
    Server gone(std::chrono::milliseconds(0));
    port = gone.port;
  }
  auto handle = services::make_grpc_service_handle("gone", "127.0.0.1:" + std::to_string(port), {});
  const auto t0 = Clock::now();
  EXPECT_FALSE(handle->state().has_value());
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.5);
}

}  // namespace
