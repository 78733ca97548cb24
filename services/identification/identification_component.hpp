#pragma once
// The identification service (DESIGN.md §1): batch ARX identification of the transfer system and
// an online RLS estimate, plus the stability analysis API.
//
// Identification run. The coordinator puts this component in the DYNAMICS slot of the loop
// (sensor_to_dynamics in, dynamics_to_actuator out) for the scenario of a kind that offers
// identification (capabilities.hpp), made a sweep run: a new command every step, N cycles (the
// kind's SweepIdentification checks it at Configure). For the measurement frame of cycle
// k = 0 … N−1 it records
//   y[k] = the frame's first value (the set point's measured counterpart),
//   u[k] = SweepIdentification::command(k) (the kind's sweep, the same as in process)
// (u[0] = 0 is the actuator's initial command) and sends the
// command frame of cycle k+1: set point u[k+1] and its derivative (lossless in
// lockstep, origin time copied from the sample), and telemetry "u[m]", "y[m]" of cycle k. Under
// the cycle contract (DESIGN.md §6) the rig applies command k over step k, so y[k] responds to
// u[0 … k] exactly as in run_sweep. After N samples it fits (identification.method: oe, iv or
// arx) with experiment::identify_from_sweep,
// the code path of `hyloop identify`, stores the report and the model, and sends a last telemetry
// message of cycle N−1 with event LOOP_EVENT_IDENTIFIED (LOOP_EVENT_FAULT if the fit fails).
//
// Online RLS. While started, every cycle of a run updates a guarded RLS (core::RecursiveLeast-
// Squares inside core::InverseModelCompensator) on (u[k], y[k]) with the RHT loading-system
// regression of 3, 4 or 7 parameters (inverse_model_compensator.hpp presets p3, p4, p7):
//   u[k] = Σ_{j=1}^{n_c} θ_j·u[k−j] + Σ_{i=1}^{n_m} θ_{n_c+i}·y[k−i+1]
// The estimator is built off the loop and handed over by a flag and a try_lock; θ is published
// the same way, so the cycle never blocks on a control-plane call.
//
// Metrics: the loop metrics of every loop service (input sensor_to_dynamics), and while the
// online RLS runs hyloop_rls_parameter{index} (θ; indices 0 … 6, those beyond the running
// model's size read NaN) and hyloop_rls_covariance_trace (trace P), published with θ.
//
// Thread safety: the public accessors may be called from any thread (gRPC handlers).

#include <hyloop/v1/control.grpc.pb.h>
#include <hyloop/v2/loop.pb.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "hyloop/core/inverse_model_compensator.hpp"
#include "hyloop/core/stability.hpp"
#include "hyloop/experiment/capabilities.hpp"
#include "hyloop/runtime/loop_component.hpp"

namespace hyloop::services {

/// What StartOnlineRls / StopOnlineRls report.
struct OnlineRlsStatus {
  bool running = false;       ///< started and not stopped
  std::uint64_t updates = 0;  ///< accepted updates since the start
  std::vector<double> theta;  ///< the latest published θ (size = parameters)
};

class IdentificationComponent final : public runtime::LoopComponent {
 public:
  static constexpr double kDefaultForgettingFactor = 0.97;  ///< used when 0 (unset) is given

  IdentificationComponent();
  ~IdentificationComponent() override;
  IdentificationComponent(const IdentificationComponent&) = delete;
  IdentificationComponent& operator=(const IdentificationComponent&) = delete;

  /// The model of the last identification run, FitArx or SetModel; nullopt if none yet.
  [[nodiscard]] std::optional<v1::ArxModelMessage> model() const;
  /// Replaces the model. @throws std::invalid_argument naming the field (empty or non-finite a
  /// or b, sample_time_s not finite and > 0).
  void set_model(const v1::ArxModelMessage& model);
  /// The report (`hyloop identify` format) of the last identification run; nullopt if none.
  [[nodiscard]] std::optional<nlohmann::json> report() const;
  /// Identification runs completed (fitted) since construction.
  [[nodiscard]] std::uint64_t identifications() const noexcept { return identifications_.load(); }

  /// Starts (or restarts, from θ = 0) the online RLS. `parameters` 3, 4 or 7; forgetting factor
  /// in (0, 1] (0: kDefaultForgettingFactor). @throws std::invalid_argument naming the field.
  OnlineRlsStatus start_online_rls(std::uint32_t parameters, double forgetting_factor);
  /// Stops the online RLS; θ and the update count stay readable.
  OnlineRlsStatus stop_online_rls();
  [[nodiscard]] OnlineRlsStatus online_rls_status() const;

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view reason) noexcept override;

 private:
  using Estimator = core::InverseModelCompensator;
  struct RlsSnapshot {
    std::array<double, core::kRlsMaxParameters> theta{};
    int size = 0;
    std::uint64_t updates = 0;
  };

  void fit_and_store(std::uint64_t last_cycle) noexcept;
  /// Cycle path: takes a pending estimator if one was handed over (try_lock).
  void adopt_pending_estimator() noexcept;
  /// Copies θ into the snapshot; `wait` false: only if the lock is free (cycle path).
  void publish_rls(bool wait) noexcept;
  OnlineRlsStatus status_locked() const;

  static constexpr int kRlsGauges = 7;  // the largest RHT loading model
  std::size_t input_;
  std::array<runtime::GaugeSlot, kRlsGauges> rls_theta_;
  runtime::GaugeSlot rls_trace_;

  std::unique_ptr<experiment::SweepIdentification> sweep_;  // the kind's (capabilities.hpp)
  std::unique_ptr<transport::LoopInput<v2::Frame>> samples_;
  std::unique_ptr<transport::LoopOutput> commands_;
  v2::Frame command_;
  experiment::SweepData data_;         // sized N at configure
  std::vector<unsigned char> filled_;  // filled_[k]: sample k arrived
  std::array<double, 2> values_{};
  std::atomic<bool> estop_{false};

  mutable std::mutex model_mutex_;  // guards model_, report_; never taken on the cycle path
  std::optional<v1::ArxModelMessage> model_;
  std::optional<nlohmann::json> report_;
  std::atomic<std::uint64_t> identifications_{0};

  // Online RLS hand-over. rls_mutex_ guards rls_pending_ and rls_snapshot_; the cycle thread only
  // try_locks it. rls_active_ belongs to the loop thread while it runs.
  mutable std::mutex rls_mutex_;
  std::unique_ptr<Estimator> rls_pending_;  // control → cycle; after a swap the retired one
  std::unique_ptr<Estimator> rls_active_;
  std::atomic<bool> rls_request_{false};
  bool rls_running_ = false;  // guarded by rls_mutex_
  RlsSnapshot rls_snapshot_;  // guarded by rls_mutex_
};

/// hyloop.v1.Identification over `component` (which must outlive the service). RunIdentification
/// answers UNIMPLEMENTED: the coordinator serves it by driving the loop.
std::unique_ptr<grpc::Service> make_identification_service(IdentificationComponent& component);

/// hyloop.v1.Analysis: core/stability.hpp over gRPC (stateless).
std::unique_ptr<grpc::Service> make_analysis_service();

/// The conversions behind the Analysis service, for the coordinator and the tests.
/// @throws std::invalid_argument naming the field (e.g. robot poles missing while robot = true,
///         re/im lists of different lengths).
core::SitsLoopParameters loop_parameters_of(const v1::LoopParameters& message);
core::ZeroPoleGain robot_model_of(const v1::LoopParameters& message);

}  // namespace hyloop::services
