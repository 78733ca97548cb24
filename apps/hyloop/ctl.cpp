#include "ctl.hpp"

#include <grpcpp/grpcpp.h>
#include <hyloop/v1/control.grpc.pb.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hyloop/runtime/security.hpp"

namespace hyloop::app {
namespace {

namespace v1 = hyloop::v1;

const std::vector<std::string> kCommands{"start", "stop", "estop",   "reset", "status",
                                         "watch", "load", "summary", "runs"};

// What `watch` prints of a frame: a column, or the difference actual − ideal of two (the error
// against the ideal twin, e_V = v − v_i of DESIGN §7).
struct Shown {
  std::string label;
  std::size_t column = 0;
  std::size_t ideal = 0;
  bool difference = false;
};
struct Preferred {
  std::string label;
  std::string column;
  std::string ideal;  // "": the column itself
};
// Shown when the telemetry has them, in this order (SITS, RHT, FCU); otherwise the first four.
const std::vector<Preferred> kPreferred{{"x[m]", "x[m]", ""},
                                        {"v[m/s]", "v[m/s]", ""},
                                        {"e_V[m/s]", "v[m/s]", "v_ideal[m/s]"},
                                        {"k_h[N*s/m]", "k_h[N*s/m]", ""},
                                        {"f_meas[N]", "f_meas[N]", ""},
                                        {"d_desired[m]", "d_desired[m]", ""},
                                        {"d_measured[m]", "d_measured[m]", ""},
                                        {"error[m]", "error[m]", ""},
                                        {"n[%]", "n[%]", ""},
                                        {"e_n[%]", "e_n[%]", ""},
                                        {"x_c[kg/s]", "x_c[kg/s]", ""},
                                        {"e_flow[kg/s]", "e_flow[kg/s]", ""}};
constexpr std::size_t kFallbackValues = 4;

constexpr std::string_view kDeprecatedRealTime = "realtime";  // --mode before real_time

std::string strip_prefix(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

std::string run_state_name(v1::RunState s) {
  return strip_prefix(v1::RunState_Name(s), "RUN_STATE_");
}

std::string lifecycle_state_name(v1::LifecycleState s) {
  return strip_prefix(v1::LifecycleState_Name(s), "LIFECYCLE_STATE_");
}

// What the client presents: --security-dir DIR (DIR/ca.crt, DIR/tokens/<role>), or --ca and
// --token-file, or --insecure (plaintext: a stack started with --insecure).
runtime::ClientSecurity security(const CtlOptions& o) {
  const bool pair = !o.ca_file.empty() || !o.token_file.empty();
  const int given = (o.security_dir.empty() ? 0 : 1) + (pair ? 1 : 0) + (o.insecure ? 1 : 0);
  if (given != 1) {
    throw std::invalid_argument(
        "give one of --security-dir DIR, --ca FILE --token-file FILE, or --insecure "
        "(a development stack without TLS)");
  }
  if (!o.security_dir.empty()) {
    runtime::check_security_dir(o.security_dir);
    return runtime::load_client_security(o.security_dir, runtime::parse_role(o.role));
  }
  if (pair) {
    if (o.ca_file.empty() || o.token_file.empty()) {
      throw std::invalid_argument("--ca and --token-file go together");
    }
    return runtime::load_client_security(o.ca_file, o.token_file);
  }
  return {};
}

// A failed call: `unreachable` when the channel never got to the coordinator.
struct CallError : std::runtime_error {
  CallError(const std::string& what, bool unreachable_)
      : std::runtime_error(what), unreachable(unreachable_) {}
  bool unreachable;
};

class Ctl {
 public:
  explicit Ctl(const CtlOptions& o)
      : o_(o),
        channel_(grpc::CreateChannel(o.address, runtime::channel_credentials(security(o)))),
        stub_(v1::Experiment::NewStub(channel_)) {}

  int run() {
    const std::string& c = o_.command;
    if (c == "load") return load();
    if (c == "start") return start();
    if (c == "stop") return stop();
    if (c == "estop") return estop();
    if (c == "reset") return reset();
    if (c == "status") return status();
    if (c == "watch") return watch();
    if (c == "summary") return summary();
    if (c == "runs") return runs();
    std::cerr << "hyloop ctl: unknown command '" << c << "'\n";
    return 1;
  }

 private:
  // A fresh id per request (LoadScenarioRequest/StartRequest.request_id): "ctl-PID-RANDOM-N".
  std::string request_id() {
    static const std::string base = [] {
      std::random_device random;
      std::ostringstream b;
      b << "ctl-" << getpid() << "-" << std::hex << random() << random();
      return b.str();
    }();
    return base + "-" + std::to_string(++requests_);
  }

  void set_unary_deadline(grpc::ClientContext& ctx) const {
    const double seconds = o_.timeout_s > 0 ? o_.timeout_s : 10.0;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(
                         std::chrono::duration<double>(seconds)));
  }

  // Throws CallError unless `status` is OK. A coordinator that answered with an error leaves the
  // channel READY; one that was never reached leaves it connecting or failed.
  void check(const grpc::Status& status, const std::string& what) const {
    if (status.ok()) return;
    const grpc::StatusCode code = status.error_code();
    const bool transport =
        code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (transport && channel_->GetState(false) != GRPC_CHANNEL_READY) {
      throw CallError(
          "cannot reach the coordinator at " + o_.address + ": " + status.error_message(), true);
    }
    throw CallError(what + ": " + status.error_message(), false);
  }

  v1::LoadScenarioReply load_scenario() {
    std::ifstream in(o_.scenario, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read scenario file " + o_.scenario);
    std::ostringstream text;
    text << in.rdbuf();
    v1::LoadScenarioRequest request;
    request.set_scenario_yaml(text.str());
    for (const std::string& s : o_.overrides) request.add_overrides(s);
    request.set_source_name(o_.scenario);
    request.set_request_id(request_id());
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::LoadScenarioReply reply;
    check(stub_->LoadScenario(&ctx, request, &reply), "load");
    std::cout << "loaded " << reply.name() << " (" << reply.kind() << "): " << reply.total_cycles()
              << " cycles of " << reply.step_s() << " s\n";
    return reply;
  }

  int load() {
    if (o_.scenario.empty()) {
      std::cerr << "hyloop ctl: load needs --scenario FILE\n";
      return 1;
    }
    load_scenario();
    return 0;
  }

  int start() {
    if (o_.out.empty()) {
      std::cerr << "hyloop ctl: start needs --out DIR\n";
      return 1;
    }
    if (!o_.scenario.empty()) load_scenario();
    v1::StartRequest request;
    // A name in the coordinator's --runs-dir (it refuses paths: shared_contracts, Run directories).
    request.set_out_dir(o_.out);
    request.set_mode(o_.mode == kModeRealTime ? v1::CLOCK_MODE_REAL_TIME : v1::CLOCK_MODE_LOCKSTEP);
    request.set_request_id(request_id());
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunStatus reply;
    const grpc::Status status = stub_->Start(&ctx, request, &reply);
    if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
        status.error_message().rfind("no scenario loaded", 0) == 0) {
      throw CallError(
          "start: no scenario loaded: give start --scenario FILE, or load one first "
          "with `hyloop ctl " +
              o_.address + " load --scenario FILE`",
          false);
    }
    check(status, "start");
    print_status(reply);
    return 0;
  }

  int stop() {
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunStatus reply;
    check(stub_->Stop(&ctx, v1::StopRequest{}, &reply), "stop");
    print_status(reply);
    return 0;
  }

  int estop() {
    v1::EmergencyStopRequest request;
    request.set_reason(o_.reason.empty() ? "hyloop ctl estop" : o_.reason);
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunStatus reply;
    check(stub_->EmergencyStop(&ctx, request, &reply), "estop");
    print_status(reply);
    return 0;
  }

  // Clears a latched emergency stop (operator): Start is refused until then.
  int reset() {
    v1::ResetRequest request;
    request.set_reason(o_.reason.empty() ? "hyloop ctl reset" : o_.reason);
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunStatus reply;
    check(stub_->Reset(&ctx, request, &reply), "reset");
    print_status(reply);
    return 0;
  }

  int status() {
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunStatus reply;
    check(stub_->GetStatus(&ctx, v1::StatusRequest{}, &reply), "status");
    print_status(reply);
    return 0;
  }

  int watch() {
    v1::TelemetryRequest request;
    request.set_decimation(o_.decimation);
    grpc::ClientContext ctx;
    if (o_.timeout_s > 0) set_unary_deadline(ctx);
    std::unique_ptr<grpc::ClientReader<v1::TelemetryFrame>> reader =
        stub_->StreamTelemetry(&ctx, request);
    v1::TelemetryFrame frame;
    std::vector<std::string> names;
    std::vector<Shown> shown;
    v1::RunState last_state = v1::RUN_STATE_UNSPECIFIED;
    std::uint64_t frames = 0;
    while (reader->Read(&frame)) {
      if (frame.names_size() > 0) {
        names.assign(frame.names().begin(), frame.names().end());
        shown = choose_values(names);
      }
      print_frame(frame, shown);
      last_state = frame.state();
      ++frames;
    }
    const grpc::Status status = reader->Finish();
    if (o_.timeout_s > 0 && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
        channel_->GetState(false) == GRPC_CHANNEL_READY) {
      std::cout << "watch: stopped after " << o_.timeout_s << " s (" << frames << " frames)\n";
      return 0;
    }
    check(status, "watch");
    std::cout << "watch: stream ended after " << frames << " frames";
    // The run's state now (best effort): the last frame may predate the end of the run.
    grpc::ClientContext status_ctx;
    set_unary_deadline(status_ctx);
    v1::RunStatus now;
    if (stub_->GetStatus(&status_ctx, v1::StatusRequest{}, &now).ok()) {
      std::cout << " (run " << now.run_id() << ": " << run_state_name(now.state()) << ")";
    } else if (last_state != v1::RUN_STATE_UNSPECIFIED) {
      std::cout << " (last frame: " << run_state_name(last_state) << ")";
    }
    std::cout << "\n";
    return 0;
  }

  int summary() {
    v1::RunSummaryRequest request;
    request.set_run_id(o_.run_id);
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::RunSummaryReply reply;
    check(stub_->GetRunSummary(&ctx, request, &reply), "summary");
    std::cout << reply.summary_json();
    if (reply.summary_json().empty() || reply.summary_json().back() != '\n') std::cout << "\n";
    return 0;
  }

  int runs() {
    grpc::ClientContext ctx;
    set_unary_deadline(ctx);
    v1::ListRunsReply reply;
    check(stub_->ListRuns(&ctx, v1::ListRunsRequest{}, &reply), "runs");
    if (reply.runs_size() == 0) {
      std::cout << "no runs\n";
      return 0;
    }
    std::printf("%-40s %-10s %-20s %s\n", "RUN ID", "STATE", "SCENARIO", "OUT DIR");
    for (const v1::RunInfo& r : reply.runs()) {
      std::printf("%-40s %-10s %-20s %s\n", r.run_id().c_str(), run_state_name(r.state()).c_str(),
                  r.scenario().c_str(), r.out_dir().c_str());
    }
    std::fflush(stdout);
    return 0;
  }

  static std::vector<Shown> choose_values(const std::vector<std::string>& names) {
    const auto index = [&](const std::string& name) {
      return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    };
    std::vector<Shown> shown;
    for (const Preferred& p : kPreferred) {
      const std::size_t column = index(p.column);
      if (column == names.size()) continue;
      if (p.ideal.empty()) {
        shown.push_back({p.label, column, 0, false});
      } else if (const std::size_t ideal = index(p.ideal); ideal != names.size()) {
        shown.push_back({p.label, column, ideal, true});
      }
    }
    if (shown.empty()) {
      for (std::size_t i = 0; i < std::min(kFallbackValues, names.size()); ++i) {
        shown.push_back({names[i], i, 0, false});
      }
    }
    return shown;
  }

  static void print_frame(const v1::TelemetryFrame& frame, const std::vector<Shown>& shown) {
    std::printf("cycle %8llu  t %9.4f s", static_cast<unsigned long long>(frame.cycle()),
                frame.virtual_time_s());
    const auto values = static_cast<std::size_t>(frame.values_size());
    for (const Shown& s : shown) {
      if (s.column >= values || (s.difference && s.ideal >= values)) continue;
      double v = frame.values(static_cast<int>(s.column));
      if (s.difference) v -= frame.values(static_cast<int>(s.ideal));
      std::printf("  %s=%.6g", s.label.c_str(), v);
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  static void print_status(const v1::RunStatus& s) {
    std::printf("state:             %s\n", run_state_name(s.state()).c_str());
    std::printf("run id:            %s\n", s.run_id().c_str());
    std::printf("scenario:          %s\n", s.scenario().c_str());
    std::printf("cycle:             %llu / %llu\n", static_cast<unsigned long long>(s.cycle()),
                static_cast<unsigned long long>(s.total_cycles()));
    std::printf("virtual time:      %.4f s\n", s.virtual_time_s());
    if (!s.out_dir().empty()) std::printf("out dir:           %s\n", s.out_dir().c_str());
    if (!s.message().empty()) std::printf("message:           %s\n", s.message().c_str());
    if (!s.emergency_stop().empty()) {
      std::printf("EMERGENCY STOP:    latched (%s): `hyloop ctl ADDRESS reset` clears it\n",
                  s.emergency_stop().c_str());
    }
    std::printf("deadline misses:   %llu\n", static_cast<unsigned long long>(s.deadline_misses()));
    std::printf("rejected messages: %llu\n",
                static_cast<unsigned long long>(s.rejected_messages()));
    if (s.services_size() > 0) {
      std::printf("services:\n");
      for (const v1::ServiceStatus& svc : s.services()) {
        const char* health = svc.healthy() ? "healthy" : "UNHEALTHY";
        std::printf("  %-16s %-22s %-13s ", svc.name().c_str(), svc.address().c_str(),
                    lifecycle_state_name(svc.state()).c_str());
        if (svc.message().empty()) {
          std::printf("%s\n", health);
        } else {
          std::printf("%-9s %s\n", health, svc.message().c_str());
        }
      }
    }
    std::fflush(stdout);
  }

  const CtlOptions& o_;
  unsigned requests_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Experiment::Stub> stub_;
};

}  // namespace

CLI::Option* add_mode_option(CLI::App& sub, std::string& mode) {
  return sub.add_option("--mode", mode, "clock mode")
      ->transform(
          [](const std::string& value) -> std::string {
            if (std::string_view(value) != kDeprecatedRealTime) return value;
            std::cerr << "hyloop: --mode realtime is deprecated: use --mode real_time (as "
                         "summary.json spells it)\n";
            return kModeRealTime;
          },
          "", "deprecated spelling")
      ->check(CLI::IsMember({kModeLockstep, kModeRealTime}))
      ->capture_default_str();
}

CLI::App* add_ctl_subcommand(CLI::App& app, CtlOptions& options) {
  CLI::App* ctl = app.add_subcommand("ctl", "drive a running coordinator over gRPC");
  ctl->add_option("address", options.address, "coordinator address host:port")->required();
  ctl->add_option("command", options.command,
                  "start|stop|estop|reset|status|watch|load|summary|runs")
      ->required()
      ->check(CLI::IsMember(kCommands));
  ctl->add_option("--scenario", options.scenario,
                  "scenario YAML file (load; start loads it first when given)");
  ctl->add_option("--set", options.overrides, "override a field: dotted.path=value (repeatable)")
      ->allow_extra_args(false);
  ctl->add_option("--out", options.out,
                  "run directory to write (start): a name in the coordinator's --runs-dir");
  add_mode_option(*ctl, options.mode)->description("clock mode (start)");
  ctl->add_option("--reason", options.reason,
                  "reason of the emergency stop (estop) or of its reset (reset)");
  ctl->add_option("--run-id", options.run_id, "run of `summary` (default: the latest)");
  ctl->add_option("--decimation", options.decimation, "watch every n-th cycle")
      ->capture_default_str();
  ctl->add_option("--security-dir", options.security_dir,
                  "the lab's security directory (hyloop certs; hyloop up --serve prints its "
                  "own): DIR/ca.crt and DIR/tokens/<--role>");
  ctl->add_option("--role", options.role, "token of --security-dir to use")
      ->check(CLI::IsMember({"observer", "operator", "coordinator"}))
      ->capture_default_str();
  ctl->add_option("--ca", options.ca_file, "CA certificate to trust (PEM)");
  ctl->add_option("--token-file", options.token_file, "file holding the token (64 hex digits)");
  ctl->add_flag("--insecure", options.insecure,
                "plaintext without a token (a stack started with --insecure)");
  ctl->add_option("--timeout", options.timeout_s,
                  "seconds: deadline of a request (default 10); watch: stop after this");
  return ctl;
}

int run_ctl(const CtlOptions& o) {
  try {
    return Ctl(o).run();
  } catch (const CallError& e) {
    std::cerr << "hyloop ctl: " << e.what() << "\n";
    return e.unreachable ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "hyloop ctl: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace hyloop::app
