#include "identification/identification_component.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/kind.hpp"
#include "hyloop/transport/clock.hpp"
#include "hyloop/transport/layout.hpp"

namespace hyloop::services {

namespace tp = hyloop::transport;
namespace ex = hyloop::experiment;

namespace {

void check_coefficients(const google::protobuf::RepeatedField<double>& values, const char* field) {
  if (values.empty()) {
    throw std::invalid_argument(std::string(field) + ": empty (a model needs at least one)");
  }
  for (int i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values.Get(i))) {
      throw std::invalid_argument(std::string(field) + "[" + std::to_string(i) +
                                  "] = " + ex::format_number(values.Get(i)) + ": not finite");
    }
  }
}

core::LoadingModelPreset rls_preset(std::uint32_t parameters) {
  switch (parameters) {
    case 3:
      return core::LoadingModelPreset::kThreeParameter;
    case 4:
      return core::LoadingModelPreset::kFourParameter;
    case 7:
      return core::LoadingModelPreset::kSevenParameter;
    default:
      throw std::invalid_argument("parameters = " + std::to_string(parameters) +
                                  ": must be 3, 4 or 7 (the RHT loading-model orders)");
  }
}

}  // namespace

IdentificationComponent::IdentificationComponent()
    : LoopComponent("identification"),
      input_(declare_input("sensor_to_dynamics", "sensor_to_dynamics")),
      rls_trace_(metrics().gauge("hyloop_rls_covariance_trace",
                                 "trace(P) of the online RLS covariance matrix.")) {
  for (int i = 0; i < kRlsGauges; ++i) {
    rls_theta_[static_cast<std::size_t>(i)] =
        metrics().gauge("hyloop_rls_parameter", "The online RLS parameter vector theta.",
                        {{"index", std::to_string(i)}});
  }
}

IdentificationComponent::~IdentificationComponent() {
  // Join the loop thread before the members it uses are destroyed.
  on_deactivate();
}

// ---- model store --------------------------------------------------------------------------------

std::optional<v1::ArxModelMessage> IdentificationComponent::model() const {
  std::lock_guard lock(model_mutex_);
  return model_;
}

void IdentificationComponent::set_model(const v1::ArxModelMessage& model) {
  check_coefficients(model.a(), "a");
  check_coefficients(model.b(), "b");
  if (!std::isfinite(model.sample_time_s()) || model.sample_time_s() <= 0.0) {
    throw std::invalid_argument("sample_time_s = " + ex::format_number(model.sample_time_s()) +
                                ": must be finite and > 0");
  }
  std::lock_guard lock(model_mutex_);
  model_ = model;
}

std::optional<nlohmann::json> IdentificationComponent::report() const {
  std::lock_guard lock(model_mutex_);
  return report_;
}

// ---- online RLS ---------------------------------------------------------------------------------

OnlineRlsStatus IdentificationComponent::start_online_rls(std::uint32_t parameters,
                                                          double forgetting_factor) {
  const core::LoadingModelPreset preset = rls_preset(parameters);
  if (forgetting_factor == 0.0) {
    forgetting_factor = kDefaultForgettingFactor;
  }
  if (!std::isfinite(forgetting_factor) || forgetting_factor <= 0.0 || forgetting_factor > 1.0) {
    throw std::invalid_argument("forgetting_factor = " + ex::format_number(forgetting_factor) +
                                ": must be in (0, 1] (0: the default " +
                                ex::format_number(kDefaultForgettingFactor) + ")");
  }
  core::InverseModelCompensatorConfig config = core::InverseModelCompensatorConfig::preset(preset);
  config.forgetting_factor = forgetting_factor;
  config.adapt = true;
  auto estimator = std::make_unique<Estimator>(config);  // allocates here, off the loop
  estimator->reset(0.0);
  std::lock_guard lock(rls_mutex_);
  rls_pending_ = std::move(estimator);  // frees a retired estimator here, off the loop
  rls_request_.store(true, std::memory_order_release);
  rls_running_ = true;
  rls_snapshot_ = RlsSnapshot{};
  rls_snapshot_.size = static_cast<int>(parameters);
  for (int i = 0; i < kRlsGauges; ++i) {
    rls_theta_[static_cast<std::size_t>(i)].set(
        i < static_cast<int>(parameters) ? 0.0 : std::numeric_limits<double>::quiet_NaN());
  }
  rls_trace_.set(config.initial_covariance * static_cast<double>(parameters));
  return status_locked();
}

OnlineRlsStatus IdentificationComponent::stop_online_rls() {
  std::lock_guard lock(rls_mutex_);
  rls_pending_.reset();
  rls_request_.store(true, std::memory_order_release);
  rls_running_ = false;
  return status_locked();
}

OnlineRlsStatus IdentificationComponent::online_rls_status() const {
  std::lock_guard lock(rls_mutex_);
  return status_locked();
}

OnlineRlsStatus IdentificationComponent::status_locked() const {
  OnlineRlsStatus s;
  s.running = rls_running_;
  s.updates = rls_snapshot_.updates;
  s.theta.assign(
      rls_snapshot_.theta.begin(),
      rls_snapshot_.theta.begin() + std::clamp(rls_snapshot_.size, 0, core::kRlsMaxParameters));
  return s;
}

void IdentificationComponent::adopt_pending_estimator() noexcept {
  if (!rls_request_.load(std::memory_order_acquire)) {
    return;
  }
  std::unique_lock lock(rls_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    return;  // the control plane holds it for a moment: take it over next cycle
  }
  // The retired estimator goes to rls_pending_, freed by the control plane (never here).
  std::swap(rls_active_, rls_pending_);
  rls_request_.store(false, std::memory_order_relaxed);
}

void IdentificationComponent::publish_rls(bool wait) noexcept {
  std::unique_lock lock(rls_mutex_, std::defer_lock);
  if (wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;  // published next cycle
  }
  if (!rls_active_ || rls_request_.load(std::memory_order_relaxed)) {
    return;  // nothing running, or a newer estimator is about to replace this one
  }
  const core::RlsVector& theta = rls_active_->parameters();
  const int n = std::min(static_cast<int>(theta.size()), core::kRlsMaxParameters);
  for (int i = 0; i < n; ++i) {
    rls_snapshot_.theta[static_cast<std::size_t>(i)] = theta[i];
    if (i < kRlsGauges) rls_theta_[static_cast<std::size_t>(i)].set(theta[i]);
  }
  rls_trace_.set(rls_active_->estimator().covariance().trace());
  rls_snapshot_.size = n;
  rls_snapshot_.updates = rls_active_->estimator().count(core::RlsStatus::kAccepted);
}

// ---- the loop -----------------------------------------------------------------------------------

void IdentificationComponent::configure_loop(const v1::ConfigureRequest& request) {
  // One parse. Refuses a kind without identification by name, and a scenario that is not a
  // sweep run.
  const auto loaded = ex::load_scenario_text(request.scenario_yaml(), "scenario");
  sweep_ = ex::kind_identification(loaded->kind()).sweep(*loaded);
  const std::size_t n = sweep_->samples();
  data_.command.assign(n, 0.0);
  data_.position.assign(n, 0.0);
  filled_.assign(n, 0);
  const ex::LoopPlan plan = loaded->loop_plan();
  tp::require_loop_layouts(request.layouts(), plan.measurement, plan.command);
  tp::size_frame(command_, plan.command);
  samples_ = std::make_unique<tp::LoopInput<v2::Frame>>(
      context(),
      channel(endpoints_.sensor_to_dynamics(), "sensor_to_dynamics", tp::Pattern::kPull,
              tp::Role::kConnect),
      validator_config(plan.measurement.size()));
  watch_input(input_, samples_->counters());
  commands_ = std::make_unique<tp::LoopOutput>(
      context(),
      channel(endpoints_.dynamics_to_actuator(), "dynamics_to_actuator", tp::Pattern::kPush,
              tp::Role::kBind),
      encoder_config());
  set_telemetry_names({"u[m]", "y[m]"});
  estop_ = false;
}

void IdentificationComponent::release_loop() noexcept {
  samples_.reset();
  commands_.reset();
}

void IdentificationComponent::on_emergency_stop(std::string_view /*reason*/) noexcept {
  estop_.store(true);
}

void IdentificationComponent::run_loop() noexcept {
  const ex::SweepIdentification& sweep = *sweep_;
  const auto total = static_cast<std::uint64_t>(sweep.samples());
  const double step = sweep.step_s();
  std::fill(filled_.begin(), filled_.end(), static_cast<unsigned char>(0));
  if (rls_active_) {
    rls_active_->reset(0.0);  // a new run: fresh histories, θ kept
  }
  std::uint64_t next_cycle = 0;
  std::uint64_t last = 0;
  std::uint64_t received = 0;
  while (!stop_requested() && next_cycle < total) {
    const v2::Frame* s = receive_input(*samples_, input_, runtime::kLockstepPoll);
    if (s == nullptr) {
      continue;
    }
    const std::uint64_t k = s->header().cycle();
    if (k >= total) {
      break;  // real time: the sweep is over
    }
    next_cycle = k + 1;
    last = k;
    ++received;
    count_cycle();
    // The kind's sweep, the same function as in process.
    const double t = static_cast<double>(k) * step;
    const double u = sweep.command(k).position;
    const double y = s->values(0);  // the set point's measured counterpart
    data_.command[k] = u;
    data_.position[k] = y;
    filled_[k] = 1;
    values_ = {u, y};
    send_telemetry(k, t, values_);
    adopt_pending_estimator();
    if (rls_active_) {
      (void)rls_active_->observe(u, y);
      publish_rls(false);
    }
    if (estop_.load(std::memory_order_relaxed)) {
      continue;  // e-stop latched: keep recording, send no command
    }
    const double t_next = static_cast<double>(k + 1) * step;
    const ex::SweepCommand next = sweep.command(k + 1);
    command_.set_values(static_cast<int>(hal::kCommandSetPoint), next.position);
    command_.set_values(static_cast<int>(hal::kCommandRate), next.velocity);
    command_.mutable_header()->set_origin_time_ns(s->header().origin_time_ns());
    (void)commands_->send(command_, k + 1, t_next, lockstep(), runtime::kLosslessSendTimeout);
  }
  publish_rls(true);
  if (received == 0 || next_cycle < total) {
    set_message("identification: stopped after " + std::to_string(received) + " of " +
                std::to_string(total) + " samples; no fit");
    return;
  }
  if (estop_.load()) {
    send_telemetry(last, static_cast<double>(last) * step, values_, v2::LOOP_EVENT_FAULT,
                   "identification: emergency stop during the sweep; no fit");
    set_message("identification: emergency stop during the sweep; no fit");
    return;
  }
  fit_and_store(last);
}

void IdentificationComponent::fit_and_store(std::uint64_t last_cycle) noexcept {
  const double t = static_cast<double>(last_cycle) * sweep_->step_s();
  try {
    const auto missing = static_cast<std::size_t>(std::count(filled_.begin(), filled_.end(), 0));
    if (missing > 0) {
      throw std::runtime_error(std::to_string(missing) + " of " + std::to_string(filled_.size()) +
                               " samples missing (dropped in real time); run the identification "
                               "in lockstep");
    }
    nlohmann::json report = sweep_->identify(data_);
    const ex::SweepFit fit_model = sweep_->fit();
    v1::ArxModelMessage model;
    for (const auto& a : report["a"]) model.add_a(a.get<double>());
    for (const auto& b : report["b"]) model.add_b(b.get<double>());
    model.set_delay_steps(static_cast<std::uint32_t>(fit_model.nk));
    model.set_sample_time_s(sweep_->step_s());
    const double fit = report["nrmse_prediction_percent"].get<double>();
    model.set_fit_percent(fit);
    const std::string note = report["fit_note"].get<std::string>();
    {
      std::lock_guard lock(model_mutex_);
      model_ = std::move(model);
      report_ = std::move(report);
    }
    identifications_.fetch_add(1);
    set_message("identification: fitted " + fit_model.method +
                "(na=" + std::to_string(fit_model.na) + ", nb=" + std::to_string(fit_model.nb) +
                ", nk=" + std::to_string(fit_model.nk) + ") on " +
                std::to_string(data_.command.size()) + " samples: " + note);
    // The state message first: whoever sees "identified" also sees the fit's message.
    send_telemetry(last_cycle, t, values_, v2::LOOP_EVENT_IDENTIFIED);
  } catch (const std::exception& e) {
    const std::string message = std::string("identification: fit failed: ") + e.what();
    send_telemetry(last_cycle, t, values_, v2::LOOP_EVENT_FAULT, message);
    fail(message);
  }
}

}  // namespace hyloop::services
