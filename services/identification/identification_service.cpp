// The hyloop.v1.Identification and hyloop.v1.Analysis gRPC services: thin adapters over the
// IdentificationComponent and core (arx.hpp, stability.hpp). Argument errors come back as
// INVALID_ARGUMENT with one line naming the field and the value.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>
#include <vector>

#include "hyloop/core/arx.hpp"
#include "hyloop/core/polynomial.hpp"
#include "hyloop/core/stability.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "identification/identification_component.hpp"
#include "identification/request_limits.hpp"

namespace hyloop::services {
namespace {

namespace ex = hyloop::experiment;

/// Runs `f`, mapping std::invalid_argument to INVALID_ARGUMENT and anything else to INTERNAL.
template <class F>
grpc::Status guarded(F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
}

/// The request's limits (request_limits.hpp), then its deadline: no work starts on a request
/// that is out of bounds or already too late.
grpc::Status admit(const grpc::ServerContext* ctx, const grpc::Status& limits) {
  return limits.ok() ? check_deadline(ctx) : limits;
}

std::vector<std::complex<double>> complex_list(const google::protobuf::RepeatedField<double>& re,
                                               const google::protobuf::RepeatedField<double>& im,
                                               const char* re_field, const char* im_field) {
  if (!im.empty() && im.size() != re.size()) {
    throw std::invalid_argument(std::string(im_field) + ": " + std::to_string(im.size()) +
                                " values, " + re_field + " has " + std::to_string(re.size()) +
                                " (give one imaginary part per real part, or none for real "
                                "roots)");
  }
  std::vector<std::complex<double>> out;
  out.reserve(static_cast<std::size_t>(re.size()));
  for (int i = 0; i < re.size(); ++i) {
    const double r = re.Get(i);
    const double m = im.empty() ? 0.0 : im.Get(i);
    if (!std::isfinite(r) || !std::isfinite(m)) {
      throw std::invalid_argument(std::string(re_field) + "[" + std::to_string(i) + "] = (" +
                                  ex::format_number(r) + ", " + ex::format_number(m) +
                                  "): not finite");
    }
    out.emplace_back(r, m);
  }
  return out;
}

void fill_model(const core::ArxModel& model, double sample_time_s, v1::ArxModelMessage* out) {
  out->Clear();
  for (double a : model.a) out->add_a(a);
  for (double b : model.b) out->add_b(b);
  out->set_delay_steps(static_cast<std::uint32_t>(model.orders.n_k));
  out->set_sample_time_s(sample_time_s);
  out->set_fit_percent(model.fit_prediction_percent);
}

void fill_rls(const OnlineRlsStatus& status, v1::OnlineRlsReply* reply) {
  reply->set_running(status.running);
  reply->set_updates(status.updates);
  reply->clear_theta();
  for (double t : status.theta) reply->add_theta(t);
}

class IdentificationService final : public v1::Identification::Service {
 public:
  explicit IdentificationService(IdentificationComponent& component) : component_(component) {}

  grpc::Status RunIdentification(grpc::ServerContext* /*ctx*/,
                                 const v1::RunIdentificationRequest* /*request*/,
                                 v1::RunIdentificationReply* /*reply*/) override {
    return {grpc::StatusCode::UNIMPLEMENTED,
            "run it through the coordinator (hyloop.v1.Identification on the coordinator's "
            "address)"};
  }

  grpc::Status FitArx(grpc::ServerContext* ctx, const v1::FitArxRequest* request,
                      v1::ArxModelMessage* reply) override {
    const v1::FitArxRequest& r = *request;
    if (grpc::Status st = admit(ctx, check_fit_arx_request(r)); !st.ok()) return st;
    return guarded([&] {
      const core::ArxOrders orders{static_cast<int>(r.na()), static_cast<int>(r.nb()),
                                   static_cast<int>(r.nk())};
      const core::ArxModel model =
          core::fit_arx(std::span<const double>(r.input().data(), r.input().size()),
                        std::span<const double>(r.output().data(), r.output().size()), orders);
      fill_model(model, r.sample_time_s(), reply);
      component_.set_model(*reply);
      return grpc::Status::OK;
    });
  }

  grpc::Status GetModel(grpc::ServerContext* /*ctx*/, const v1::GetModelRequest* /*request*/,
                        v1::ArxModelMessage* reply) override {
    const auto model = component_.model();
    if (!model) {
      return {grpc::StatusCode::NOT_FOUND,
              "no model yet: run an identification, or call FitArx or SetModel"};
    }
    *reply = *model;
    return grpc::Status::OK;
  }

  grpc::Status SetModel(grpc::ServerContext* ctx, const v1::ArxModelMessage* request,
                        v1::ArxModelMessage* reply) override {
    if (grpc::Status st = admit(ctx, check_arx_model(*request)); !st.ok()) return st;
    return guarded([&] {
      component_.set_model(*request);
      *reply = *request;
      return grpc::Status::OK;
    });
  }

  grpc::Status StartOnlineRls(grpc::ServerContext* ctx, const v1::OnlineRlsRequest* request,
                              v1::OnlineRlsReply* reply) override {
    if (grpc::Status st = admit(ctx, check_online_rls_request(*request)); !st.ok()) return st;
    return guarded([&] {
      fill_rls(component_.start_online_rls(request->parameters(), request->forgetting_factor()),
               reply);
      return grpc::Status::OK;
    });
  }

  grpc::Status StopOnlineRls(grpc::ServerContext* /*ctx*/, const v1::OnlineRlsRequest* /*request*/,
                             v1::OnlineRlsReply* reply) override {
    fill_rls(component_.stop_online_rls(), reply);
    return grpc::Status::OK;
  }

 private:
  IdentificationComponent& component_;
};

class AnalysisService final : public v1::Analysis::Service {
 public:
  grpc::Status CharacteristicPolynomial(grpc::ServerContext* ctx, const v1::LoopParameters* request,
                                        v1::PolynomialMessage* reply) override {
    if (grpc::Status st = admit(ctx, check_loop_parameters(*request)); !st.ok()) return st;
    return guarded([&] {
      const core::Polynomial p = polynomial_at_k_h(*request);
      for (double c : p.coeffs()) reply->add_ascending(c);
      return grpc::Status::OK;
    });
  }

  grpc::Status Routh(grpc::ServerContext* ctx, const v1::LoopParameters* request,
                     v1::RouthReply* reply) override {
    if (grpc::Status st = admit(ctx, check_loop_parameters(*request)); !st.ok()) return st;
    return guarded([&] {
      const core::Polynomial p = polynomial_at_k_h(*request);
      const core::RouthResult r = core::routh(p);
      for (double c : p.coeffs()) reply->mutable_polynomial()->add_ascending(c);
      for (double c : r.first_column) reply->add_first_column(c);
      reply->set_sign_changes(r.sign_changes);
      reply->set_imaginary_axis_roots(r.imaginary_axis_roots);
      reply->set_verdict(core::to_string(r.verdict));
      return grpc::Status::OK;
    });
  }

  grpc::Status Roots(grpc::ServerContext* ctx, const v1::PolynomialMessage* request,
                     v1::RootsReply* reply) override {
    if (grpc::Status st = admit(ctx, check_polynomial_request(*request)); !st.ok()) return st;
    return guarded([&] {
      const core::Polynomial p(
          std::vector<double>(request->ascending().begin(), request->ascending().end()));
      if (p.is_zero()) {
        throw std::invalid_argument("ascending: the zero polynomial (every s is a root)");
      }
      for (const auto& root : p.roots()) {
        reply->add_re(root.real());
        reply->add_im(root.imag());
      }
      return grpc::Status::OK;
    });
  }

  grpc::Status StableGainIntervals(grpc::ServerContext* ctx, const v1::LoopParameters* request,
                                   v1::GainIntervalsReply* reply) override {
    if (grpc::Status st = admit(ctx, check_loop_parameters(*request)); !st.ok()) return st;
    return guarded([&] {
      const core::SitsCharacteristic split =
          core::sits_characteristic(loop_parameters_of(*request), robot_model_of(*request));
      for (const core::GainInterval& i : core::stable_gain_intervals(split.p0, split.p1)) {
        v1::GainInterval* out = reply->add_intervals();
        out->set_lower(i.lower);
        out->set_upper(i.upper);
      }
      return grpc::Status::OK;
    });
  }

 private:
  static core::Polynomial polynomial_at_k_h(const v1::LoopParameters& request) {
    if (!std::isfinite(request.k_h())) {
      throw std::invalid_argument("k_h = " + ex::format_number(request.k_h()) + ": not finite");
    }
    return core::sits_characteristic_polynomial(loop_parameters_of(request),
                                                robot_model_of(request), request.k_h());
  }
};

}  // namespace

core::SitsLoopParameters loop_parameters_of(const v1::LoopParameters& m) {
  core::SitsLoopParameters p;
  p.m_e = m.m_e();
  p.k_tc = m.k_tc();
  p.b_tc = m.b_tc();
  p.tau_s = m.tau_s();
  p.t_c = m.t_c();
  p.force_delay = m.force_delay();
  p.control_cycle = m.control_cycle();
  p.robot = m.robot();
  return p;
}

core::ZeroPoleGain robot_model_of(const v1::LoopParameters& m) {
  if (!m.robot()) {
    return core::ZeroPoleGain{{}, {}, 1.0};  // robot bypassed: G_R = 1
  }
  if (m.robot_poles_re().empty()) {
    throw std::invalid_argument(
        "robot_poles_re: empty while robot = true (give the robot's poles, or robot = false to "
        "bypass it)");
  }
  if (!std::isfinite(m.robot_gain()) || m.robot_gain() == 0.0) {
    throw std::invalid_argument("robot_gain = " + ex::format_number(m.robot_gain()) +
                                ": must be finite and non-zero");
  }
  core::ZeroPoleGain zpk;
  zpk.zeros =
      complex_list(m.robot_zeros_re(), m.robot_zeros_im(), "robot_zeros_re", "robot_zeros_im");
  zpk.poles =
      complex_list(m.robot_poles_re(), m.robot_poles_im(), "robot_poles_re", "robot_poles_im");
  zpk.gain = m.robot_gain();
  return zpk;
}

std::unique_ptr<grpc::Service> make_identification_service(IdentificationComponent& component) {
  return std::make_unique<IdentificationService>(component);
}

std::unique_ptr<grpc::Service> make_analysis_service() {
  return std::make_unique<AnalysisService>();
}

}  // namespace hyloop::services
