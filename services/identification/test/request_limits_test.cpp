// Issue 10, finding 11: every Identification and Analysis request has a bounded cost. The
// limits are checked by the pure functions of request_limits.hpp (also fuzzed) and by the
// services before any work, over a real gRPC channel.
#include "identification/request_limits.hpp"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <string>

#include "identification/identification_component.hpp"

namespace hyloop::services {
namespace {

class RequestLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    identification_service_ = make_identification_service(component_);
    analysis_service_ = make_analysis_service();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(identification_service_.get());
    builder.RegisterService(analysis_service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    analysis_ = v1::Analysis::NewStub(channel_);
    identification_ = v1::Identification::NewStub(channel_);
  }
  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  }

  static void expect_invalid(const grpc::Status& st, const std::string& text) {
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
    EXPECT_NE(st.error_message().find(text), std::string::npos) << st.error_message();
  }

  IdentificationComponent component_;
  std::unique_ptr<grpc::Service> identification_service_;
  std::unique_ptr<grpc::Service> analysis_service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Analysis::Stub> analysis_;
  std::unique_ptr<v1::Identification::Stub> identification_;
};

TEST_F(RequestLimits, RootsOfDegree2000IsRefusedAtOnceNamingTheFieldAndLimit) {
  v1::PolynomialMessage p;
  for (int i = 0; i <= 2000; ++i) p.add_ascending(1.0 + 0.001 * i);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::RootsReply roots;
  const auto start = std::chrono::steady_clock::now();
  expect_invalid(analysis_->Roots(&ctx, p, &roots),
                 "ascending: 2001 coefficients (degree 2000), the degree must be at most 64");
  // a generous safety bound, not a timing claim: the refusal does no work
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(RequestLimits, RootsWithinTheLimitStillWork) {
  v1::PolynomialMessage p;  // degree 64: the largest accepted
  for (int i = 0; i <= 64; ++i) p.add_ascending(i == 0 || i == 64 ? 1.0 : 0.5);
  grpc::ClientContext ctx;
  v1::RootsReply roots;
  ASSERT_TRUE(analysis_->Roots(&ctx, p, &roots).ok());
  EXPECT_EQ(roots.re_size(), 64);
}

TEST_F(RequestLimits, LoopParametersWithTooManyRobotPolesAreRefused) {
  v1::LoopParameters lp;
  lp.set_m_e(500);
  lp.set_k_tc(20000);
  lp.set_robot(true);
  lp.set_robot_gain(1.0);
  for (int i = 0; i < 17; ++i) lp.add_robot_poles_re(-1.0 - i);
  grpc::ClientContext ctx;
  v1::GainIntervalsReply out;
  expect_invalid(analysis_->StableGainIntervals(&ctx, lp, &out),
                 "robot_poles_re: 17 values, at most 16 allowed");
  lp.clear_robot_poles_re();
  lp.add_robot_poles_re(-10.0);
  lp.set_k_h(std::numeric_limits<double>::quiet_NaN());
  grpc::ClientContext ctx2;
  v1::RouthReply routh;
  expect_invalid(analysis_->Routh(&ctx2, lp, &routh), "k_h");
}

TEST_F(RequestLimits, FitArxAndSetModelSizesAreBounded) {
  v1::FitArxRequest fit;
  fit.set_na(2);
  fit.set_nb(2);
  fit.set_sample_time_s(0.002);
  for (std::size_t i = 0; i <= kMaxArxSamples; ++i) {
    fit.add_input(0.0);
    fit.add_output(0.0);
  }
  EXPECT_EQ(check_fit_arx_request(fit).error_message(),
            "input: 200001 samples, at most 200000 allowed");
  fit.clear_input();
  fit.clear_output();
  for (int i = 0; i < 100; ++i) {
    fit.add_input(i % 3);
    fit.add_output(i % 5);
  }
  fit.set_na(40);
  fit.set_nb(30);
  EXPECT_EQ(check_fit_arx_request(fit).error_message(), "na + nb + nk = 70: must be at most 64");
  // within every per-field limit, but the least squares would take seconds: refused
  fit.clear_input();
  fit.clear_output();
  for (int i = 0; i < 100000; ++i) {
    fit.add_input(i % 3);
    fit.add_output(i % 5);
  }
  fit.set_na(32);
  fit.set_nb(32);
  EXPECT_EQ(check_fit_arx_request(fit).error_message(),
            "input: 100000 samples at na + nb = 64: samples·(na+nb)² = 409600000 exceeds the "
            "cost limit 50000000 (fewer samples or a lower order)");
  fit.set_na(2);
  fit.set_nb(2);
  EXPECT_TRUE(check_fit_arx_request(fit).ok());
  v1::ArxModelMessage model;
  model.set_sample_time_s(0.002);
  for (int i = 0; i < 65; ++i) model.add_a(0.1);
  model.add_b(1.0);
  grpc::ClientContext ctx;
  v1::ArxModelMessage reply;
  expect_invalid(identification_->SetModel(&ctx, model, &reply),
                 "a: 65 coefficients, at most 64 allowed");
  v1::OnlineRlsRequest rls;
  rls.set_parameters(4);
  rls.set_forgetting_factor(4.9e-324);
  expect_invalid(check_online_rls_request(rls), "forgetting_factor");
}

}  // namespace
}  // namespace hyloop::services
