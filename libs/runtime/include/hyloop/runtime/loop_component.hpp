#pragma once
// The common part of every loop-plane component (rig emulator, sensor, dynamics, actuator):
// the run's identity and clock mode from Configure, one loop thread started by Activate and
// joined by Deactivate, the telemetry stream to the coordinator, and the stop flag. A subclass
// opens its channels in configure_loop() and runs its cycles in run_loop(), which returns when
// the run is over or stop_requested() turns true.

#include <hyloop/v1/loop.pb.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "hyloop/runtime/component.hpp"
#include "hyloop/transport/channel.hpp"
#include "hyloop/transport/codec.hpp"
#include "hyloop/transport/endpoint.hpp"

namespace hyloop::runtime {

/// How long a lockstep receive waits before looking at the stop flag again.
inline constexpr std::chrono::milliseconds kLockstepPoll{100};

class LoopComponent : public Component {
 public:
  using Component::Component;
  ~LoopComponent() override;

  void on_configure(const v1::ConfigureRequest& request) final;
  void on_activate() final;
  void on_deactivate() final;
  void on_shutdown() final;

  [[nodiscard]] bool lockstep() const noexcept { return mode_ == v1::CLOCK_MODE_LOCKSTEP; }
  [[nodiscard]] const std::string& run_id() const noexcept { return run_id_; }
  /// Loop messages this component rejected so far (all kinds).
  [[nodiscard]] std::uint64_t rejected_messages() const noexcept { return rejected_.load(); }
  /// True once the loop thread has returned.
  [[nodiscard]] bool loop_done() const noexcept { return done_.load(); }

 protected:
  /// Parses the scenario and opens the channels; throws std::exception naming the bad field.
  virtual void configure_loop(const v1::ConfigureRequest& request) = 0;
  /// Runs the cycles until the run is over or stop_requested(). Must not throw.
  virtual void run_loop() noexcept = 0;
  /// Closes the channels (called on shutdown and before a reconfiguration).
  virtual void release_loop() noexcept = 0;

  [[nodiscard]] bool stop_requested() const noexcept {
    return stop_.load(std::memory_order_relaxed);
  }

  transport::ValidatorConfig validator_config() const;
  transport::EncoderConfig encoder_config() const;
  /// A channel config for `endpoint` (an empty endpoint is a configuration error naming `field`).
  static transport::ChannelConfig channel(const std::string& endpoint, const char* field,
                                          transport::Pattern pattern, transport::Role role,
                                          int hwm = 1000);

  /// Sends one telemetry message to the coordinator (names only on the first one). Lossless in
  /// lockstep, drop-if-full in real time (the loop never waits for the recorder).
  void send_telemetry(std::uint64_t cycle, double virtual_time_s, std::span<const double> values,
                      std::string_view event = {}) noexcept;
  /// The names sent with the first telemetry message.
  void set_telemetry_names(std::vector<std::string> names) { telemetry_names_ = std::move(names); }
  /// Counters reported in every telemetry message.
  std::atomic<std::uint64_t> deadline_misses_{0};
  std::atomic<std::int64_t> lateness_ns_{0};
  std::atomic<std::uint64_t> rejected_{0};

  std::string run_id_;
  v1::ClockMode mode_ = v1::CLOCK_MODE_LOCKSTEP;
  std::uint32_t sender_id_ = 0;
  v1::LoopEndpoints endpoints_;
  std::string scenario_yaml_;

 private:
  std::unique_ptr<transport::LoopOutput> telemetry_;
  v1::Telemetry telemetry_msg_;
  std::vector<std::string> telemetry_names_;
  bool names_sent_ = false;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
};

}  // namespace hyloop::runtime
