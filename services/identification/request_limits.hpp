#pragma once
// Bounded cost for every request of hyloop.v1.Identification and hyloop.v1.Analysis (issue 10:
// "every RPC has a bounded cost"). Each check_* function is pure (no I/O, no state), returns
// OK or INVALID_ARGUMENT with one line naming the field, the value (at most 200 characters of
// it) and the limit, and is what the service calls before doing any work; the fuzz targets call
// the same functions. The limits (docs/scenarios.md, "Request limits"):
//
//   request size            kMaxRequestBytes: the gRPC servers' max receive message size
//   Roots                   degree <= kMaxPolynomialDegree (companion-matrix eigenvalues, O(n³))
//   LoopParameters          robot poles, zeros <= kMaxRobotRoots each (the characteristic
//                           polynomial has degree 4 + poles); every number finite
//   FitArx                  na, nb in [1, 64], nk in [0, 64], na + nb + nk <= kMaxArxOrderSum,
//                           input/output <= kMaxArxSamples samples and
//                           N·(na+nb)² <= kMaxArxCost (least squares, O(N·(na+nb)²))
//   SetModel                a, b: 1..kMaxModelCoefficients finite values; delay_steps <= 64
//   StartOnlineRls          parameters 3, 4 or 7; forgetting_factor 0 (default) or in (0, 1]
//   scenario text           (LoadScenario, RunIdentification) bounded by libs/experiment
//                           itself: experiment::kMaxScenarioBytes, kMaxOverrides (yaml_fields.hpp)
//                           (identification.method oe/iv: at most 100 iterations of O(N·p²),
//                           core::IterativeFitOptions; FitArx stays ARX, the cost above)
// A handler also refuses a request whose deadline has already passed (check_deadline).

#include <grpcpp/grpcpp.h>
#include <hyloop/v1/control.grpc.pb.h>

#include <cstddef>
#include <cstdint>

#include "hyloop/runtime/service_host.hpp"

namespace hyloop::services {

inline constexpr int kMaxRequestBytes = runtime::kMaxReceiveMessageBytes;  ///< per request
inline constexpr std::size_t kMaxPolynomialDegree = 64;
inline constexpr std::size_t kMaxRobotRoots = 16;
inline constexpr std::uint32_t kMaxArxOrder = 64;     ///< na, nb, nk each
inline constexpr std::uint32_t kMaxArxOrderSum = 64;  ///< na + nb + nk (core::fit_arx)
inline constexpr std::size_t kMaxArxSamples = 200000;
/// FitArx's least squares costs about N·(na+nb)² multiply-adds: 200 000 samples at na = nb = 32
/// took 3.4 s on the project's 2-vCPU VM, so the product is capped (at most ~0.5 s there).
inline constexpr double kMaxArxCost = 5e7;
inline constexpr std::size_t kMaxModelCoefficients = 64;

grpc::Status check_polynomial_request(const v1::PolynomialMessage& request);
grpc::Status check_loop_parameters(const v1::LoopParameters& request);
grpc::Status check_fit_arx_request(const v1::FitArxRequest& request);
grpc::Status check_arx_model(const v1::ArxModelMessage& request);
grpc::Status check_online_rls_request(const v1::OnlineRlsRequest& request);

/// DEADLINE_EXCEEDED when the call's deadline has passed (or it was cancelled), else OK.
grpc::Status check_deadline(const grpc::ServerContext* context);

}  // namespace hyloop::services
