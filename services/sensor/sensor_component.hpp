#pragma once
// The sensor acquisition service: reads the force sensor's DAQ (the rig emulator's, or a real
// one behind the same wire), tares it before arming, optionally low-pass filters it
// (anti-aliasing; the filter's delay is added to the reported measurement delay) and forwards
// the measurement frame of cycle k (its force conditioned, the other signals as they are) to the
// dynamics. Lockstep: lossless, in cycle order. Real time:
// each sample is forwarded as soon as it arrives; stale and out-of-order ones are dropped and
// counted.
//
// The conditioning is core::ForceConditioner, the block the in-process runner uses too.

#include <memory>
#include <optional>

#include "hyloop/core/force_conditioner.hpp"
#include "hyloop/runtime/loop_component.hpp"

namespace hyloop::services {

class SensorComponent final : public runtime::LoopComponent {
 public:
  SensorComponent()
      : LoopComponent("sensor"), input_(declare_input("rig_to_sensor", "rig_to_sensor")) {}
  /// The tare offset in use (N).
  [[nodiscard]] double tare_offset() const noexcept {
    return conditioner_ ? conditioner_->offset() : 0.0;
  }

 protected:
  void configure_loop(const v1::ConfigureRequest& request) override;
  void run_loop() noexcept override;
  void release_loop() noexcept override;
  void on_emergency_stop(std::string_view /*reason*/) noexcept override {}

 private:
  void forward(const v2::Frame& raw) noexcept;

  std::size_t input_;  // metrics of rig_to_sensor
  std::optional<core::ForceConditioner> conditioner_;
  std::uint64_t total_ = 0;
  bool peer_lost_ = false;
  std::unique_ptr<transport::LoopInput<v2::Frame>> raw_;
  std::unique_ptr<transport::LoopOutput> out_;
  v2::Frame sample_;
  int conditioned_ = -1;  ///< the measurement's force, which the sensor conditions (-1: none)
};

}  // namespace hyloop::services
