#include "sensor/sensor_component.hpp"

#include <stdexcept>

#include "hyloop/experiment/loop_parts.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;

void SensorComponent::configure_loop(const v1::ConfigureRequest& request) {
  const experiment::LoopPlan plan = experiment::loop_plan(request.scenario_yaml());
  tp::require_layout(request.layouts(), "measurement", plan.measurement);
  conditioner_.emplace(plan.tare, plan.filter_time_constant, plan.step);
  // The sensor conditions the measurement's force (tare, filter); the other signals pass.
  const auto force = plan.measurement.find_quantity("force");
  if (!force && (plan.tare || plan.filter_time_constant > 0.0)) {
    throw std::invalid_argument("acquisition: tare and filter need a force signal; the " +
                                plan.kind + " measurement has none");
  }
  conditioned_ = force ? static_cast<int>(*force) : -1;
  tp::size_frame(sample_, plan.measurement);
  total_ = static_cast<std::uint64_t>(plan.total_steps);
  peer_lost_ = false;
  raw_ = std::make_unique<tp::LoopInput<v2::Frame>>(
      context(),
      channel(endpoints_.rig_to_sensor(), "rig_to_sensor", tp::Pattern::kPull, tp::Role::kConnect),
      validator_config(plan.measurement.size()));
  watch_input(input_, raw_->counters());
  out_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.sensor_to_dynamics(), "sensor_to_dynamics", tp::Pattern::kPush,
              tp::Role::kBind),
      encoder_config());
}

void SensorComponent::release_loop() noexcept {
  raw_.reset();
  out_.reset();
}

void SensorComponent::forward(const v2::Frame& raw) noexcept {
  for (int i = 0; i < raw.values_size(); ++i) {
    sample_.set_values(i, i == conditioned_ ? conditioner_->update(raw.values(i)) : raw.values(i));
  }
  // Latency is measured from the rig's sample time: carry it along.
  sample_.mutable_header()->set_origin_time_ns(raw.header().origin_time_ns());
  const std::uint64_t k = raw.header().cycle();
  // Lossless in lockstep until the dynamics is lost; then samples are dropped (counted by the
  // channel) so the rig keeps stepping through the actuator's stopping ramp.
  if (!out_->send(sample_, k, raw.header().virtual_time_s(), lockstep() && !peer_lost_,
                  runtime::kLosslessSendTimeout)) {
    peer_lost_ = lockstep();
  }
}

void SensorComponent::run_loop() noexcept {
  std::uint64_t last = 0;
  bool any = false;
  while (!stop_requested() && !(any && last + 1 >= total_)) {
    const v2::Frame* raw = receive_input(*raw_, input_, runtime::kLockstepPoll);
    if (raw == nullptr) {
      continue;
    }
    forward(*raw);
    count_cycle();
    last = raw->header().cycle();
    any = true;
  }
  set_message("sensor: finished");
}

}  // namespace hyloop::services
