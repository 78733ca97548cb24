#include "hyloop/runtime/loop_component.hpp"

#include <stdexcept>

namespace hyloop::runtime {

LoopComponent::~LoopComponent() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
}

transport::ChannelConfig LoopComponent::channel(const std::string& endpoint, const char* field,
                                                transport::Pattern pattern, transport::Role role,
                                                int hwm) {
  if (endpoint.empty()) {
    throw std::invalid_argument(std::string("endpoints.") + field +
                                ": missing (a ZeroMQ address such as ipc:///tmp/x or "
                                "tcp://127.0.0.1:5601)");
  }
  transport::ChannelConfig c;
  c.endpoint = role == transport::Role::kBind ? transport::bind_address(endpoint) : endpoint;
  c.pattern = pattern;
  c.role = role;
  c.send_hwm = hwm;
  c.recv_hwm = hwm;
  return c;
}

transport::ValidatorConfig LoopComponent::validator_config() const {
  transport::ValidatorConfig v;
  v.run_id = run_id_;
  v.mode = lockstep() ? transport::Mode::kLockstep : transport::Mode::kRealTime;
  return v;
}

transport::EncoderConfig LoopComponent::encoder_config() const {
  transport::EncoderConfig e;
  e.run_id = run_id_;
  e.sender = sender_id_;
  return e;
}

void LoopComponent::on_configure(const v1::ConfigureRequest& request) {
  if (thread_.joinable()) {
    throw std::logic_error("configure: the loop thread is still running");
  }
  if (request.run_id().empty()) {
    throw std::invalid_argument("run_id: missing (every loop message is stamped with it)");
  }
  if (request.mode() != v1::CLOCK_MODE_LOCKSTEP && request.mode() != v1::CLOCK_MODE_REAL_TIME) {
    throw std::invalid_argument("mode: " + std::to_string(request.mode()) +
                                ": must be CLOCK_MODE_LOCKSTEP or CLOCK_MODE_REAL_TIME");
  }
  release_loop();
  telemetry_.reset();
  run_id_ = request.run_id();
  mode_ = request.mode();
  sender_id_ = request.sender_id();
  endpoints_ = request.endpoints();
  scenario_yaml_ = request.scenario_yaml();
  names_sent_ = false;
  deadline_misses_ = 0;
  rejected_ = 0;
  telemetry_ = std::make_unique<transport::LoopOutput>(
      context(),
      channel(endpoints_.telemetry(), "telemetry", transport::Pattern::kPush,
              transport::Role::kConnect, 100000),
      encoder_config());
  configure_loop(request);
}

void LoopComponent::on_activate() {
  stop_.store(false);
  done_.store(false);
  thread_ = std::thread([this] {
    run_loop();
    done_.store(true);
  });
}

void LoopComponent::on_deactivate() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_.join();
  }
}

void LoopComponent::on_shutdown() {
  on_deactivate();
  release_loop();
  telemetry_.reset();
}

void LoopComponent::send_telemetry(std::uint64_t cycle, double virtual_time_s,
                                   std::span<const double> values,
                                   std::string_view event) noexcept {
  if (!telemetry_) {
    return;
  }
  try {
    v1::Telemetry& m = telemetry_msg_;
    m.clear_names();
    if (!names_sent_) {
      for (const std::string& n : telemetry_names_) {
        m.add_names(n);
      }
      names_sent_ = true;
    }
    m.clear_values();
    for (double v : values) {
      m.add_values(v);
    }
    m.set_deadline_misses(deadline_misses_.load(std::memory_order_relaxed));
    m.set_lateness_ns(lateness_ns_.load(std::memory_order_relaxed));
    m.set_rejected(rejected_.load(std::memory_order_relaxed));
    if (m.event() != event) {
      m.set_event(std::string(event));
    }
    telemetry_->send(m, cycle, virtual_time_s, lockstep(), std::chrono::milliseconds(2000));
  } catch (...) {
    // Telemetry is never allowed to break the loop.
  }
}

}  // namespace hyloop::runtime
