#include "identification/request_limits.hpp"

#include <chrono>
#include <cmath>
#include <string>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::services {
namespace {

namespace ex = hyloop::experiment;

grpc::Status invalid(const std::string& message) {
  return {grpc::StatusCode::INVALID_ARGUMENT, message};
}

grpc::Status too_many(const std::string& field, std::size_t count, std::size_t limit,
                      const std::string& what) {
  return invalid(field + ": " + std::to_string(count) + " " + what + ", at most " +
                 std::to_string(limit) + " allowed");
}

template <typename Repeated>
grpc::Status finite_values(const Repeated& values, const std::string& field) {
  for (int i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values.Get(i))) {
      return invalid(field + "[" + std::to_string(i) + "] = " + ex::format_number(values.Get(i)) +
                     ": not finite");
    }
  }
  return grpc::Status::OK;
}

grpc::Status finite_value(double v, const std::string& field) {
  if (!std::isfinite(v)) return invalid(field + " = " + ex::format_number(v) + ": not finite");
  return grpc::Status::OK;
}

#define HYLOOP_RETURN_IF_ERROR(expr)   \
  do {                                 \
    const grpc::Status status_ = expr; \
    if (!status_.ok()) return status_; \
  } while (false)

}  // namespace

grpc::Status check_polynomial_request(const v1::PolynomialMessage& request) {
  const auto n = static_cast<std::size_t>(request.ascending_size());
  if (n > kMaxPolynomialDegree + 1) {
    return invalid("ascending: " + std::to_string(n) + " coefficients (degree " +
                   std::to_string(n - 1) + "), the degree must be at most " +
                   std::to_string(kMaxPolynomialDegree));
  }
  return finite_values(request.ascending(), "ascending");
}

grpc::Status check_loop_parameters(const v1::LoopParameters& r) {
  const std::pair<int, const char*> roots[] = {{r.robot_poles_re_size(), "robot_poles_re"},
                                               {r.robot_poles_im_size(), "robot_poles_im"},
                                               {r.robot_zeros_re_size(), "robot_zeros_re"},
                                               {r.robot_zeros_im_size(), "robot_zeros_im"}};
  for (const auto& [count, field] : roots) {
    if (static_cast<std::size_t>(count) > kMaxRobotRoots) {
      return too_many(field, static_cast<std::size_t>(count), kMaxRobotRoots, "values");
    }
  }
  HYLOOP_RETURN_IF_ERROR(finite_values(r.robot_poles_re(), "robot_poles_re"));
  HYLOOP_RETURN_IF_ERROR(finite_values(r.robot_poles_im(), "robot_poles_im"));
  HYLOOP_RETURN_IF_ERROR(finite_values(r.robot_zeros_re(), "robot_zeros_re"));
  HYLOOP_RETURN_IF_ERROR(finite_values(r.robot_zeros_im(), "robot_zeros_im"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.m_e(), "m_e"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.k_tc(), "k_tc"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.b_tc(), "b_tc"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.tau_s(), "tau_s"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.t_c(), "t_c"));
  HYLOOP_RETURN_IF_ERROR(finite_value(r.robot_gain(), "robot_gain"));
  return finite_value(r.k_h(), "k_h");
}

grpc::Status check_fit_arx_request(const v1::FitArxRequest& r) {
  const auto samples = static_cast<std::size_t>(r.input_size());
  if (samples > kMaxArxSamples) return too_many("input", samples, kMaxArxSamples, "samples");
  if (r.output_size() != r.input_size()) {
    return invalid("output: " + std::to_string(r.output_size()) + " samples, input has " +
                   std::to_string(r.input_size()) + " (they must have the same length)");
  }
  if (r.na() < 1 || r.na() > kMaxArxOrder) {
    return invalid("na = " + std::to_string(r.na()) + ": must be in [1, " +
                   std::to_string(kMaxArxOrder) + "]");
  }
  if (r.nb() < 1 || r.nb() > kMaxArxOrder) {
    return invalid("nb = " + std::to_string(r.nb()) + ": must be in [1, " +
                   std::to_string(kMaxArxOrder) + "]");
  }
  if (r.nk() > kMaxArxOrder) {
    return invalid("nk = " + std::to_string(r.nk()) + ": must be in [0, " +
                   std::to_string(kMaxArxOrder) + "]");
  }
  if (r.na() + r.nb() + r.nk() > kMaxArxOrderSum) {
    return invalid("na + nb + nk = " + std::to_string(r.na() + r.nb() + r.nk()) +
                   ": must be at most " + std::to_string(kMaxArxOrderSum));
  }
  if (!std::isfinite(r.sample_time_s()) || r.sample_time_s() <= 0.0) {
    return invalid("sample_time_s = " + ex::format_number(r.sample_time_s()) +
                   ": must be finite and > 0");
  }
  const double p = static_cast<double>(r.na() + r.nb());
  if (static_cast<double>(samples) * p * p > kMaxArxCost) {
    return invalid(
        "input: " + std::to_string(samples) +
        " samples at na + nb = " + std::to_string(r.na() + r.nb()) + ": samples·(na+nb)² = " +
        ex::format_number(static_cast<double>(samples) * p * p) + " exceeds the cost limit " +
        ex::format_number(kMaxArxCost) + " (fewer samples or a lower order)");
  }
  const std::uint32_t k0 = std::max(r.na(), r.nk() + r.nb() - 1);
  const std::uint32_t needed = k0 + r.na() + r.nb() + 1;
  if (static_cast<std::uint32_t>(r.input_size()) < needed) {
    return invalid("input: " + std::to_string(r.input_size()) +
                   " samples; ARX(na=" + std::to_string(r.na()) + ", nb=" + std::to_string(r.nb()) +
                   ", nk=" + std::to_string(r.nk()) + ") needs at least " + std::to_string(needed) +
                   " (max(na, nk + nb - 1) + na + nb + 1)");
  }
  HYLOOP_RETURN_IF_ERROR(finite_values(r.input(), "input"));
  return finite_values(r.output(), "output");
}

grpc::Status check_arx_model(const v1::ArxModelMessage& r) {
  if (static_cast<std::size_t>(r.a_size()) > kMaxModelCoefficients) {
    return too_many("a", static_cast<std::size_t>(r.a_size()), kMaxModelCoefficients,
                    "coefficients");
  }
  if (static_cast<std::size_t>(r.b_size()) > kMaxModelCoefficients) {
    return too_many("b", static_cast<std::size_t>(r.b_size()), kMaxModelCoefficients,
                    "coefficients");
  }
  if (r.delay_steps() > kMaxArxOrder) {
    return invalid("delay_steps = " + std::to_string(r.delay_steps()) + ": must be in [0, " +
                   std::to_string(kMaxArxOrder) + "]");
  }
  HYLOOP_RETURN_IF_ERROR(finite_values(r.a(), "a"));
  HYLOOP_RETURN_IF_ERROR(finite_values(r.b(), "b"));
  return finite_value(r.fit_percent(), "fit_percent");
}

grpc::Status check_online_rls_request(const v1::OnlineRlsRequest& r) {
  if (r.parameters() != 3 && r.parameters() != 4 && r.parameters() != 7) {
    return invalid("parameters = " + std::to_string(r.parameters()) +
                   ": must be 3, 4 or 7 (the RHT loading-model orders)");
  }
  const double f = r.forgetting_factor();
  if (f != 0.0 && !(std::isnormal(f) && f > 0.0 && f <= 1.0)) {
    return invalid("forgetting_factor = " + ex::format_number(f) +
                   ": must be in (0, 1] (0: the default)");
  }
  return grpc::Status::OK;
}

grpc::Status check_deadline(const grpc::ServerContext* context) {
  if (context == nullptr) return grpc::Status::OK;
  if (context->IsCancelled()) return {grpc::StatusCode::CANCELLED, "the call was cancelled"};
  if (context->deadline() <= std::chrono::system_clock::now()) {
    return {grpc::StatusCode::DEADLINE_EXCEEDED, "the call's deadline has passed"};
  }
  return grpc::Status::OK;
}

#undef HYLOOP_RETURN_IF_ERROR

}  // namespace hyloop::services
