// Fuzz target: control-plane requests as the gRPC servers receive them. The bytes after the first
// are parsed as the request message the first byte selects (mod 8) and handed to the service's
// own handler or validation:
//   0 Analysis.CharacteristicPolynomial  1 Analysis.Routh  2 Analysis.Roots
//   3 Analysis.StableGainIntervals       (LoopParameters / PolynomialMessage)
//   4 Identification.FitArx  5 Identification.SetModel  6 Identification.StartOnlineRls
//     (the handlers of services/identification, each first calling request_limits.hpp)
//   7 Experiment.LoadScenario (LoadScenarioRequest: the coordinator's steps, scenario text,
//     overrides and source name through make_experiment_from_text and loop_plan)
// tests/fuzz/make_corpus.py writes valid and invalid requests of every kind as seeds.
//
// Invariants: a handler answers OK or INVALID_ARGUMENT/FAILED_PRECONDITION, never INTERNAL (an
// exception its validation did not foresee); an error message is at most kMaxMessageChars
// (values are quoted at most 200 characters); a Routh verdict is one of the three names.

#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>
#include <hyloop/v1/control.grpc.pb.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "identification/identification_component.hpp"

namespace hyloop::services {
std::unique_ptr<grpc::Service> make_identification_service(IdentificationComponent& component);
std::unique_ptr<grpc::Service> make_analysis_service();
}  // namespace hyloop::services

namespace {

namespace v1 = hyloop::v1;
namespace ex = hyloop::experiment;

constexpr std::size_t kMaxMessageChars = 1024;

struct Services {
  hyloop::services::IdentificationComponent component;
  std::unique_ptr<grpc::Service> identification_holder =
      hyloop::services::make_identification_service(component);
  std::unique_ptr<grpc::Service> analysis_holder = hyloop::services::make_analysis_service();
  v1::Identification::Service& identification =
      dynamic_cast<v1::Identification::Service&>(*identification_holder);
  v1::Analysis::Service& analysis = dynamic_cast<v1::Analysis::Service&>(*analysis_holder);
};

Services& services() {
  static auto* s = new Services;  // never destroyed: the component outlives every input
  return *s;
}

void check_status(const grpc::Status& status) {
  const auto code = status.error_code();
  FUZZ_CHECK(code == grpc::StatusCode::OK || code == grpc::StatusCode::INVALID_ARGUMENT ||
                 code == grpc::StatusCode::FAILED_PRECONDITION,
             status.error_message().substr(0, 400).c_str());
  FUZZ_CHECK(status.error_message().size() <= kMaxMessageChars,
             status.error_message().substr(0, 400).c_str());
}

template <class Request>
bool parse(Request& request, const std::uint8_t* data, std::size_t size) {
  return request.ParseFromArray(data, static_cast<int>(size));
}

// The coordinator's LoadScenario (services/coordinator/coordinator_component.cpp), minus the
// state it keeps: a ScenarioError is INVALID_ARGUMENT, loop_plan's refusal FAILED_PRECONDITION.
grpc::Status load_scenario(const v1::LoadScenarioRequest& request) {
  const std::string origin = request.source_name().empty() ? "scenario" : request.source_name();
  std::unique_ptr<ex::Experiment> e;
  try {
    const std::vector<std::string> overrides(request.overrides().begin(),
                                             request.overrides().end());
    e = ex::make_experiment_from_text(request.scenario_yaml(), origin, overrides);
  } catch (const ex::ScenarioError& err) {
    return {grpc::StatusCode::INVALID_ARGUMENT, err.what()};
  } catch (const std::exception& err) {
    return {grpc::StatusCode::INTERNAL, err.what()};
  }
  try {
    (void)ex::loop_plan(e->resolved_yaml());
  } catch (const std::invalid_argument& err) {
    return {grpc::StatusCode::FAILED_PRECONDITION, err.what()};
  } catch (const std::exception& err) {
    return {grpc::StatusCode::INTERNAL, err.what()};
  }
  return grpc::Status::OK;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // protobuf logs every invalid UTF-8 string it refuses: silence it, it is most inputs.
  static const bool quiet = (google::protobuf::SetLogHandler(nullptr), true);
  (void)quiet;
  if (size < 1) return 0;
  const int which = data[0] % 8;
  ++data;
  --size;
  Services& s = services();
  grpc::Status status;
  switch (which) {
    case 0:
    case 1:
    case 3: {
      v1::LoopParameters request;
      if (!parse(request, data, size)) return 0;
      if (which == 0) {
        v1::PolynomialMessage reply;
        status = s.analysis.CharacteristicPolynomial(nullptr, &request, &reply);
      } else if (which == 1) {
        v1::RouthReply reply;
        status = s.analysis.Routh(nullptr, &request, &reply);
        if (status.ok()) {
          const std::string& v = reply.verdict();
          FUZZ_CHECK(v == "stable" || v == "marginal" || v == "unstable", v.c_str());
        }
      } else {
        v1::GainIntervalsReply reply;
        status = s.analysis.StableGainIntervals(nullptr, &request, &reply);
      }
      break;
    }
    case 2: {
      v1::PolynomialMessage request;
      if (!parse(request, data, size)) return 0;
      v1::RootsReply reply;
      status = s.analysis.Roots(nullptr, &request, &reply);
      FUZZ_CHECK(reply.re_size() == reply.im_size(), "roots: re and im differ in length");
      break;
    }
    case 4: {
      v1::FitArxRequest request;
      if (!parse(request, data, size)) return 0;
      v1::ArxModelMessage reply;
      status = s.identification.FitArx(nullptr, &request, &reply);
      break;
    }
    case 5: {
      v1::ArxModelMessage request;
      if (!parse(request, data, size)) return 0;
      v1::ArxModelMessage reply;
      status = s.identification.SetModel(nullptr, &request, &reply);
      break;
    }
    case 6: {
      v1::OnlineRlsRequest request;
      if (!parse(request, data, size)) return 0;
      v1::OnlineRlsReply reply;
      status = s.identification.StartOnlineRls(nullptr, &request, &reply);
      v1::OnlineRlsReply stopped;
      check_status(s.identification.StopOnlineRls(nullptr, &request, &stopped));
      break;
    }
    default: {
      v1::LoadScenarioRequest request;
      if (!parse(request, data, size)) return 0;
      status = load_scenario(request);
      break;
    }
  }
  check_status(status);
  return 0;
}
