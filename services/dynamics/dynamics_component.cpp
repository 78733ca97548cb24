#include "dynamics/dynamics_component.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

// ---- delay estimate (exporter thread) -----------------------------------------------------------

void DynamicsComponent::DelayTracker::configure(double step) {
  step_ = step;
  // A 2 s window (64 … 4096 samples), lags up to 0.25 s (at most a quarter of the window).
  window_ = static_cast<std::size_t>(std::clamp(std::lround(2.0 / step), 64L, 4096L));
  max_lag_ =
      static_cast<int>(std::clamp(std::lround(0.25 / step), 2L, static_cast<long>(window_ / 4)));
  command_.assign(window_, 0.0);
  measured_.assign(window_, 0.0);
  ordered_c_.assign(window_, 0.0);
  ordered_m_.assign(window_, 0.0);
  next_ = filled_ = since_ = 0;
  std::pair<double, double> discard;
  while (ring_.pop(discard)) {
  }
}

void DynamicsComponent::DelayTracker::collect(const runtime::GaugeSlot& gauge) {
  if (window_ == 0) return;
  std::pair<double, double> p;
  while (ring_.pop(p)) {
    command_[next_] = p.first;
    measured_[next_] = p.second;
    next_ = (next_ + 1) % window_;
    filled_ = std::min(filled_ + 1, window_);
    ++since_;
  }
  if (filled_ < window_ || since_ < window_ / 4) return;
  since_ = 0;
  for (std::size_t i = 0; i < window_; ++i) {
    ordered_c_[i] = command_[(next_ + i) % window_];
    ordered_m_[i] = measured_[(next_ + i) % window_];
  }
  try {
    const core::DelayEstimate e = core::estimate_delay(ordered_c_, ordered_m_, max_lag_);
    if (!e.at_boundary && e.correlation > 0.5) {
      gauge.set(e.delay(step_));
    }
  } catch (const std::exception&) {
    // A constant or non-finite window (at rest, or diverged): keep the last estimate.
  }
}

// ---- the component ------------------------------------------------------------------------------

DynamicsComponent::DynamicsComponent()
    : LoopComponent("dynamics"), input_(declare_input("sensor_to_dynamics", "sensor_to_dynamics")) {
  declare_gauges();
  delay_collector_ = metrics().add_collector(
      [tracker = delay_, gauge = gauges_.delay] { tracker->collect(gauge); });
}

void DynamicsComponent::declare_gauges() {
  runtime::MetricsRegistry& m = metrics();
  gauges_.x =
      m.gauge("hyloop_target_displacement_meters", "Displacement x of the numerical target.");
  gauges_.v =
      m.gauge("hyloop_target_velocity_meters_per_second", "Velocity of the numerical target.");
  gauges_.x_ideal = m.gauge("hyloop_ideal_displacement_meters",
                            "Displacement x_ideal of the delay-free ideal twin.");
  gauges_.v_ideal =
      m.gauge("hyloop_ideal_velocity_meters_per_second", "Velocity of the ideal twin.");
  gauges_.f_meas = m.gauge("hyloop_measured_force_newtons",
                           "Contact force as the dynamics received it (after the sensor's delay).");
  for (const ex::Kind* kind : ex::kinds()) {
    for (const ex::GaugeSpec& g : kind->dynamics_gauges()) {
      const auto same = [&g](const KindGauge& k) {
        return k.metric == g.metric && k.labels == g.labels;
      };
      if (std::none_of(kind_gauges_.begin(), kind_gauges_.end(), same)) {
        kind_gauges_.push_back({g.metric, g.labels, m.gauge(g.metric, g.help, g.labels)});
      }
    }
  }
  gauges_.error = m.gauge("hyloop_tracking_error_meters", "Tracking error x - x_ideal.");
  gauges_.ratio =
      m.gauge("hyloop_velocity_ratio", "e_R of the last completed vibration cycle (SITS Eq. 44).");
  gauges_.ti = m.gauge("hyloop_tracking_indicator",
                       "Mercan's tracking indicator on (command, measured position).");
  gauges_.delay = m.gauge("hyloop_estimated_delay_seconds",
                          "The transfer system's delay estimated online (cross-correlation of "
                          "command and measured position).");
}

DynamicsComponent::~DynamicsComponent() { metrics().remove_collector(delay_collector_); }

int DynamicsComponent::column(const std::string& name) const noexcept {
  const auto& names = dynamics_->names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

int DynamicsComponent::column_in(const std::string& role, std::string_view unit) const {
  return ex::parse_column_header(role).unit == unit ? column(role) : -1;
}

void DynamicsComponent::resolve_columns(const ex::Kind& kind) {
  const ex::SignalRoles r = kind.signal_roles();
  columns_ = {.x = column_in(r.target, "m"),
              .v = column_in(r.velocity, "m/s"),
              .x_ideal = column_in(r.ideal, "m"),
              .v_ideal = column_in(r.velocity_ideal, "m/s"),
              .f_meas = column_in(r.force, "N"),
              .energy = column_in(r.energy, "J"),
              .energy_ideal = column_in(r.energy_ideal, "J"),
              .f_ideal = column_in(r.force_ideal, "N"),
              .f_input = column_in(r.force_input, "N")};
  const std::vector<ex::GaugeSpec> own = kind.dynamics_gauges();
  for (KindGauge& g : kind_gauges_) {
    g.column = -1;  // a gauge of another kind reads NaN
    g.scale = 1.0;
    for (const ex::GaugeSpec& spec : own) {
      if (spec.metric == g.metric && spec.labels == g.labels) {
        g.column = column(spec.column);
        g.scale = spec.scale;
      }
    }
  }
}

void DynamicsComponent::configure_loop(const v1::ConfigureRequest& request) {
  const auto loaded = ex::load_scenario_text(request.scenario_yaml(), "scenario");  // one parse
  const ex::Kind& kind = loaded->kind();
  plan_ = loaded->loop_plan();
  tp::require_loop_layouts(request.layouts(), plan_.measurement, plan_.command);
  dynamics_ = loaded->make_dynamics_part();
  values_.assign(dynamics_->names().size(), 0.0);
  samples_ = std::make_unique<tp::LoopInput<v2::Frame>>(
      context(),
      channel(endpoints_.sensor_to_dynamics(), "sensor_to_dynamics", tp::Pattern::kPull,
              tp::Role::kConnect),
      validator_config(plan_.measurement.size()));
  tp::size_frame(command_, plan_.command);
  commands_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.dynamics_to_actuator(), "dynamics_to_actuator", tp::Pattern::kPush,
              tp::Role::kBind),
      encoder_config());
  watch_input(input_, samples_->counters());
  set_telemetry_names(dynamics_->names());
  estop_ = false;

  resolve_columns(kind);
  const auto capacity = static_cast<std::size_t>(std::min<std::int64_t>(
      plan_.total_steps / 2 + 2, 1'000'000));  // a vibration cycle lasts at least two steps
  cycles_.emplace(capacity, 0.0);
  cycles_seen_ = 0;
  indicator_.reset();
  metrics().exclusive([this] { delay_->configure(plan_.step); });
  gauges_.ratio.set(kNaN);  // until the first vibration cycle ends
  gauges_.ti.set(0.0);
  gauges_.delay.set(kNaN);  // until the first estimate
}

void DynamicsComponent::publish(std::uint64_t k, double measured_position) noexcept {
  const auto at = [this](int c) { return c >= 0 ? values_[static_cast<std::size_t>(c)] : kNaN; };
  const double step = plan_.step;
  const double x = at(columns_.x);
  const double x_ideal = at(columns_.x_ideal);
  const bool first = !have_previous_;
  const double v = columns_.v >= 0 ? at(columns_.v) : (first ? 0.0 : (x - previous_x_) / step);
  const double v_ideal = columns_.v_ideal >= 0
                             ? at(columns_.v_ideal)
                             : (first ? 0.0 : (x_ideal - previous_x_ideal_) / step);
  have_previous_ = true;
  previous_x_ = x;
  previous_x_ideal_ = x_ideal;
  gauges_.x.set(x);
  gauges_.v.set(v);
  gauges_.x_ideal.set(x_ideal);
  gauges_.v_ideal.set(v_ideal);
  gauges_.f_meas.set(at(columns_.f_meas));
  gauges_.error.set(x - x_ideal);
  for (const KindGauge& g : kind_gauges_) g.slot.set(g.scale * at(g.column));
  const auto or0 = [](double d) { return std::isnan(d) ? 0.0 : d; };
  const double e_f = or0(at(columns_.f_ideal)) - or0(at(columns_.f_input));
  if (columns_.x >= 0) {  // vibration cycles of a mechanical target
    cycles_->add({static_cast<double>(k) * step, v, v_ideal, or0(at(columns_.energy)),
                  or0(at(columns_.energy_ideal)), e_f, v - v_ideal});
  }
  if (cycles_->cycles().size() > cycles_seen_) {
    cycles_seen_ = cycles_->cycles().size();
    gauges_.ratio.set(cycles_->cycles().back().e_r);
  }
  // The command of cycle k as the actuator holds it (it latches every h cycles), before its
  // safety layer, against the position measured in cycle k.
  if (k == 0) {
    applied_ = plan_.initial.position;
  } else if (static_cast<std::int64_t>(k) % plan_.hold_steps == 0) {
    applied_ = next_command_;
  }
  gauges_.ti.set(indicator_.update(applied_, measured_position));
  (void)delay_->push(applied_, measured_position);
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
  have_previous_ = false;
  applied_ = next_command_ = plan_.initial.position;
  std::uint64_t next_cycle = 0;
  while (!stop_requested() && next_cycle < total) {
    const v2::Frame* s = receive_input(*samples_, input_, runtime::kLockstepPoll);
    if (s == nullptr) {
      continue;
    }
    const std::uint64_t k = s->header().cycle();
    next_cycle = k + 1;
    std::array<hal::ActuatorCommand, hal::kMaxAxes> next{};
    const std::span<const double> measurement(s->values().data(),
                                              static_cast<std::size_t>(s->values_size()));
    const std::size_t axes = ex::plan_axes(plan_);
    const ex::StepStatus status = dynamics_->step_axes(static_cast<std::int64_t>(k), measurement,
                                                       values_, std::span(next.data(), axes));
    const double t = static_cast<double>(k) * plan_.step;
    publish(k, measurement[0]);        // the set point's measured counterpart
    next_command_ = next[0].position;  // axis 0's, for the tracking indicator
    count_cycle();
    if (status.stopped()) {
      send_telemetry(k, t, values_, v2::LOOP_EVENT_STOP, status.reason());
      set_message(std::string("dynamics: stopped: ") + status.reason());
      return;  // no further commands: the actuator's watchdog ramps the rig to rest
    }
    send_telemetry(k, t, values_);
    if (estop_.load(std::memory_order_relaxed)) {
      continue;  // e-stop latched: the model keeps recording, commands stop
    }
    for (std::size_t a = 0; a < axes; ++a) {
      command_.set_values(static_cast<int>(hal::command_set_point(a)), next[a].position);
      command_.set_values(static_cast<int>(hal::command_rate(a)), next[a].velocity);
    }
    command_.mutable_header()->set_origin_time_ns(s->header().origin_time_ns());
    (void)commands_->send(command_, k + 1, static_cast<double>(k + 1) * plan_.step, lockstep(),
                          runtime::kLosslessSendTimeout);
  }
  set_message("dynamics: finished");
}

}  // namespace hyloop::services
