#include "dynamics/dynamics_component.hpp"

#include <algorithm>

#include "hyloop/experiment/experiment.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;

namespace {
bool is_rig_column(std::size_t c) {
  return std::any_of(ex::kSitsRigColumns.begin(), ex::kSitsRigColumns.end(),
                     [c](ex::SitsColumn r) { return ex::col(r) == c; });
}
}  // namespace

void DynamicsComponent::configure_loop(const v1::ConfigureRequest& request) {
  const std::string kind = ex::scenario_kind_of_text(request.scenario_yaml(), "scenario");
  if (kind != "sits") {
    throw std::invalid_argument("scenario kind \"" + kind +
                                "\": the distributed stack runs kind sits");
  }
  scenario_ = ex::parse_scenario(request.scenario_yaml(), "scenario", {});
  dynamics_.emplace(*scenario_);
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
  std::vector<std::string> names;
  for (std::size_t c = 0; c < ex::kSitsColumns; ++c) {
    if (!is_rig_column(c)) {
      names.emplace_back(ex::kSitsColumnHeaders[c]);
    }
  }
  set_telemetry_names(std::move(names));
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
  const auto total = static_cast<std::uint64_t>(scenario_->steps());
  const double step = scenario_->timing.step;
  ex::SampleRow row{};
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
    const ex::StopReason verdict =
        dynamics_->step(static_cast<std::int64_t>(k),
                        {s->position_m(), s->velocity_mps(), s->force_n()}, row, next);
    std::size_t n = 0;
    for (std::size_t c = 0; c < ex::kSitsColumns; ++c) {
      if (!is_rig_column(c)) {
        values_[n++] = row[c];
      }
    }
    const double t = static_cast<double>(k) * step;
    if (verdict != ex::StopReason::kNone) {
      send_telemetry(
          k, t, std::span<const double>(values_.data(), n),
          verdict == ex::StopReason::kNotFinite ? "stop:not_finite" : "stop:displacement_limit");
      set_message(std::string("dynamics: stopped: ") + std::string(ex::to_string(verdict)));
      return;  // no further commands: the actuator's watchdog ramps the rig to rest
    }
    send_telemetry(k, t, std::span<const double>(values_.data(), n));
    if (estop_.load(std::memory_order_relaxed)) {
      continue;  // e-stop latched: the model keeps recording, commands stop
    }
    command_.set_position_m(next.position);
    command_.set_velocity_mps(next.velocity);
    command_.mutable_header()->set_origin_time_ns(s->header().origin_time_ns());
    (void)commands_->send(command_, k + 1, static_cast<double>(k + 1) * step, lockstep(),
                          runtime::kLockstepPoll * 20);
  }
  set_message("dynamics: finished");
}

}  // namespace hyloop::services
