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
//
// Lease (one coordinator at a time, docs/reliability.md): a Configure by coordinator C makes C
// the owner for kLeaseTtl; every call of C's (GetState included) renews it, C's Deactivate,
// Cleanup or Shutdown releases it. While it is live, another caller's Configure, Activate,
// Deactivate, Cleanup and Shutdown are refused (state unchanged, the message names the owner).
// An owner that dies stops renewing: the lease lapses after kLeaseTtl and anyone may take over.
// EmergencyStop is never refused. `caller` empty (kHost): the process hosting the component
// (in-process hosts, tests), which is never refused.

#include <hyloop/v1/control.pb.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hyloop/runtime/metrics.hpp"
#include "zmq.hpp"

namespace hyloop::runtime {

using LifecycleState = v1::LifecycleState;

class Component {
 public:
  /// How long a lease lives without a call from its owner (docs/reliability.md): 10 of the
  /// coordinator's 200 ms health polls, and twice the 1 s after which a service takes a silent
  /// coordinator for lost (kSupervisionTimeout) and stops the loop itself.
  static constexpr std::chrono::milliseconds kLeaseTtl{2000};
  /// The caller id of the hosting process (never refused by a lease).
  static constexpr std::string_view kHost{};

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

  /// Transitions, serialised. Each returns the state after the call and a message. `caller`:
  /// the coordinator's id (the lease), kHost for the hosting process.
  v1::LifecycleReply configure(const v1::ConfigureRequest& request,
                               std::string_view caller = kHost);
  v1::LifecycleReply activate(std::string_view caller = kHost);
  v1::LifecycleReply deactivate(std::string_view caller = kHost);
  v1::LifecycleReply shutdown(std::string_view caller = kHost);
  v1::LifecycleReply cleanup(std::string_view caller = kHost);
  v1::LifecycleReply emergency_stop(std::string_view reason);
  [[nodiscard]] v1::LifecycleReply state_reply() const;
  /// GetState from `caller`: renews the lease when `caller` holds it.
  void renew_lease(std::string_view caller);
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
  using LeaseClock = std::chrono::steady_clock;
  /// Holding message_mutex_: "" when `caller` may make a transition now, else the refusal.
  [[nodiscard]] std::string lease_refusal_locked(std::string_view caller,
                                                 const char* transition) const;
  /// Holding message_mutex_: `caller` (not kHost) takes or renews the lease, or releases it.
  void hold_lease_locked(std::string_view caller, bool hold);
  /// Takes message_mutex_: the refused reply of `transition` when the lease forbids `caller`.
  [[nodiscard]] std::optional<v1::LifecycleReply> leased_elsewhere(std::string_view caller,
                                                                   const char* transition);

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
  // The lease (under message_mutex_): its owner ("" none) and until when it lives.
  std::string lease_owner_;
  LeaseClock::time_point lease_until_{};
  zmq::context_t* context_ = nullptr;
  std::unique_ptr<zmq::context_t> own_context_;
  std::shared_ptr<MetricsRegistry> metrics_;
};

}  // namespace hyloop::runtime
