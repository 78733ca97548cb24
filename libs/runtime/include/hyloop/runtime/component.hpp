#pragma once
// A service's component: the part of a service that does the work, independent of how it is
// hosted. A thin main() hosts one component behind a gRPC server (ServiceHost); `hyloop up
// --inproc` hosts several in one process over ZeroMQ inproc:// endpoints. Same code either way.
//
// Lifecycle (control.proto): UNCONFIGURED --configure--> INACTIVE --activate--> ACTIVE
//   --deactivate--> INACTIVE; any --shutdown--> FINALIZED; a failed transition or loop → ERROR;
//   INACTIVE or ERROR --cleanup--> UNCONFIGURED (releases what configure opened; a no-op when
//   UNCONFIGURED).
// The host serialises the transitions; a component's loop thread reports a failure through
// fail(). emergency_stop() may be called from any thread at any time and must not block.
//
// Emergency stop latch: emergency_stop() latches (in any state, also idle) until a Configure
// carries reset_emergency_stop_count equal to the latch's count (the coordinator sends it after
// an operator's Experiment.Reset). While latched, Configure and Activate are refused (state
// unchanged, the message names the stop) and every reply carries the reason.

#include <hyloop/v1/control.pb.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "hyloop/runtime/metrics.hpp"
#include "zmq.hpp"

namespace hyloop::runtime {

using LifecycleState = v1::LifecycleState;

class Component {
 public:
  /// `metrics`: the registry the component declares its metrics in (shared with whoever else
  /// exports into it, e.g. the coordinator); nullptr: a registry of its own.
  explicit Component(std::string name, std::shared_ptr<MetricsRegistry> metrics = nullptr)
      : name_(std::move(name)),
        metrics_(metrics ? std::move(metrics) : std::make_shared<MetricsRegistry>()) {}
  virtual ~Component() = default;
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// Validates the request (scenario, endpoints) and opens sockets. Throws std::exception with
  /// a message naming the bad field; the host turns it into LIFECYCLE_STATE_ERROR.
  virtual void on_configure(const v1::ConfigureRequest& request) = 0;
  /// Starts the loop thread. Throws on failure.
  virtual void on_activate() = 0;
  /// Stops the loop thread (joins it) and keeps the configuration.
  virtual void on_deactivate() = 0;
  /// Releases everything. Must be safe in any state.
  virtual void on_shutdown() = 0;
  /// Releases what on_configure opened (sockets, bound ports); the component stays usable and
  /// is configured again for the next run. Must not throw. Default: nothing to release.
  virtual void on_cleanup() noexcept {}
  /// Latches the emergency stop. Called from any thread; must not block or throw.
  virtual void on_emergency_stop(std::string_view reason) noexcept = 0;

  /// Transitions, serialised. Each returns the state after the call and a message.
  v1::LifecycleReply configure(const v1::ConfigureRequest& request);
  v1::LifecycleReply activate();
  v1::LifecycleReply deactivate();
  v1::LifecycleReply shutdown();
  v1::LifecycleReply cleanup();
  v1::LifecycleReply emergency_stop(std::string_view reason);
  [[nodiscard]] v1::LifecycleReply state_reply() const;
  [[nodiscard]] LifecycleState state() const noexcept { return state_.load(); }
  /// The latched emergency stop's reason; empty when none is latched.
  [[nodiscard]] std::string latched_emergency_stop() const;

  /// The ZeroMQ context sockets are made from: shared by co-located components (inproc://).
  void set_context(zmq::context_t* context) noexcept { context_ = context; }
  [[nodiscard]] zmq::context_t& context();

  /// The component's metrics (docs/metrics.md). A service binary serves them
  /// (MetricsRegistry::start_exporter, --metrics-address); otherwise they are never exported.
  /// Stop the exporter (or shut the component down) before destroying the component.
  [[nodiscard]] MetricsRegistry& metrics() noexcept { return *metrics_; }

 protected:
  /// Called by the loop thread when it fails: the component moves to ERROR with `message`.
  void fail(std::string message);
  /// Called by the loop thread when the run it was configured for is over (stays ACTIVE until
  /// deactivated; the message says why, e.g. "finished after 30000 cycles").
  void set_message(std::string message);

 private:
  v1::LifecycleReply reply_locked() const;

  std::string name_;
  std::atomic<LifecycleState> state_{v1::LIFECYCLE_STATE_UNCONFIGURED};
  mutable std::mutex mutex_;  // serialises transitions; never taken by a loop cycle
  // Guards message_ only, held for a string copy: fail() from a loop thread that a transition
  // (holding mutex_) is joining must not wait for that transition.
  mutable std::mutex message_mutex_;
  std::string message_;
  // The emergency stop latch (under message_mutex_).
  bool estop_latched_ = false;
  std::string estop_reason_;
  std::uint64_t estop_count_ = 0;
  zmq::context_t* context_ = nullptr;
  std::unique_ptr<zmq::context_t> own_context_;
  std::shared_ptr<MetricsRegistry> metrics_;
};

}  // namespace hyloop::runtime
