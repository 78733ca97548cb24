#include "dynamics/dynamics_component.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;

void DynamicsComponent::configure_loop(const v1::ConfigureRequest& request) {
  plan_ = ex::loop_plan(request.scenario_yaml());
  dynamics_ = ex::make_dynamics_part(request.scenario_yaml());
  values_.assign(dynamics_->names().size(), 0.0);
  samples_ = std::make_unique<tp::LoopInput<v1::SensorSample>>(
      context(),
      channel(endpoints_.sensor_to_dynamics(), "sensor_to_dynamics", tp::Pattern::kPair,
              tp::Role::kConnect),
      validator_config());
  commands_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.dynamics_to_actuator(), "dynamics_to_actuator", tp::Pattern::kPair,
              tp::Role::kBind),
      encoder_config());
  set_telemetry_names(dynamics_->names());
  estop_ = false;
}

void DynamicsComponent::release_loop() noexcept {
  samples_.reset();
  commands_.reset();
  dynamics_.reset();
}

void DynamicsComponent::on_emergency_stop(std::string_view /*reason*/) noexcept {
  estop_.store(true);
}

void DynamicsComponent::run_loop() noexcept {
  const auto total = static_cast<std::uint64_t>(plan_.total_steps);
  std::uint64_t next_cycle = 0;
  while (!stop_requested() && next_cycle < total) {
    const v1::SensorSample* s = samples_->receive(runtime::kLockstepPoll);
    rejected_ = samples_->counters().rejected();
    if (s == nullptr) {
      continue;
    }
    const std::uint64_t k = s->header().cycle();
    next_cycle = k + 1;
    hal::ActuatorCommand next{};
    const char* stop = dynamics_->step(static_cast<std::int64_t>(k), s->position_m(),
                                       s->velocity_mps(), s->force_n(), values_, next);
    const double t = static_cast<double>(k) * plan_.step;
    if (stop != nullptr) {
      send_telemetry(k, t, values_, std::string("stop:") + stop);
      set_message(std::string("dynamics: stopped: ") + stop);
      return;  // no further commands: the actuator's watchdog ramps the rig to rest
    }
    send_telemetry(k, t, values_);
    if (estop_.load(std::memory_order_relaxed)) {
      continue;  // e-stop latched: the model keeps recording, commands stop
    }
    command_.set_position_m(next.position);
    command_.set_velocity_mps(next.velocity);
    command_.mutable_header()->set_origin_time_ns(s->header().origin_time_ns());
    (void)commands_->send(command_, k + 1, static_cast<double>(k + 1) * plan_.step, lockstep(),
                          runtime::kLockstepPoll * 20);
  }
  set_message("dynamics: finished");
}

}  // namespace hyloop::services
