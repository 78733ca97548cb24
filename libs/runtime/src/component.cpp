#include "hyloop/runtime/component.hpp"

#include <pthread.h>
#include <sched.h>

#include <exception>
#include <string>
#include <thread>

#include "hyloop/runtime/logging.hpp"
#include "hyloop/runtime/service_main.hpp"

namespace hyloop::runtime {
namespace {

using v1::LifecycleReply;

std::string state_name(LifecycleState s) {
  switch (s) {
    case v1::LIFECYCLE_STATE_UNCONFIGURED:
      return "UNCONFIGURED";
    case v1::LIFECYCLE_STATE_INACTIVE:
      return "INACTIVE";
    case v1::LIFECYCLE_STATE_ACTIVE:
      return "ACTIVE";
    case v1::LIFECYCLE_STATE_FINALIZED:
      return "FINALIZED";
    case v1::LIFECYCLE_STATE_ERROR:
      return "ERROR";
    default:
      return "UNSPECIFIED";
  }
}

std::string current_exception_message() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

LifecycleReply Component::reply_locked() const {
  LifecycleReply reply;
  reply.set_service(name_);
  reply.set_state(state_.load());
  reply.set_message(message_);
  if (estop_latched_) reply.set_emergency_stop(estop_reason_);
  reply.set_emergency_stop_count(estop_count_);
  if (LeaseClock::now() < lease_until_) reply.set_lease_owner(lease_owner_);
  return reply;
}

std::string Component::lease_refusal_locked(std::string_view caller, const char* transition) const {
  const auto now = LeaseClock::now();
  if (caller == kHost || lease_owner_.empty() || lease_owner_ == caller || now >= lease_until_) {
    return {};
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(lease_until_ - now);
  return std::string(transition) + ": refused: " + name_ + " is leased to coordinator " +
         lease_owner_ + " (the lease lapses in " + std::to_string(left.count()) + " ms, " +
         std::to_string(kLeaseTtl.count()) +
         " ms after that coordinator's last call; it renews it while it drives a run), not to " +
         std::string(caller);
}

void Component::hold_lease_locked(std::string_view caller, bool hold) {
  if (caller == kHost) return;
  if (hold) {
    lease_owner_ = std::string(caller);
    lease_until_ = LeaseClock::now() + kLeaseTtl;
  } else if (lease_owner_ == caller) {
    lease_owner_.clear();
    lease_until_ = {};
  }
}

std::optional<LifecycleReply> Component::leased_elsewhere(std::string_view caller,
                                                          const char* transition) {
  std::lock_guard lock(message_mutex_);
  std::string why = lease_refusal_locked(caller, transition);
  if (why.empty()) return std::nullopt;
  logger()->warn("{}: {}", name_, why);
  LifecycleReply reply = reply_locked();
  reply.set_message(std::move(why));
  return reply;
}

void Component::renew_lease(std::string_view caller) {
  std::lock_guard lock(message_mutex_);
  if (caller != kHost && caller == lease_owner_ && LeaseClock::now() < lease_until_) {
    hold_lease_locked(caller, true);
  }
}

std::string Component::latched_emergency_stop() const {
  std::lock_guard lock(message_mutex_);
  return estop_latched_ ? estop_reason_ : std::string();
}

LifecycleReply Component::state_reply() const {
  std::lock_guard lock(message_mutex_);
  return reply_locked();
}

void Component::set_message(std::string message) {
  std::lock_guard lock(message_mutex_);
  message_ = std::move(message);
}

void Component::fail(std::string message) {
  logger()->error("{}: {}", name_, message);
  std::lock_guard lock(message_mutex_);
  LifecycleState s = state_.load();
  // FINALIZED is final: a loop thread failing while it is being torn down changes nothing.
  while (s != v1::LIFECYCLE_STATE_FINALIZED &&
         !state_.compare_exchange_weak(s, v1::LIFECYCLE_STATE_ERROR)) {
  }
  if (s != v1::LIFECYCLE_STATE_FINALIZED) message_ = std::move(message);
}

namespace {

// The reply of a refused transition: current state, stored message untouched.
LifecycleReply refused(LifecycleReply reply, const char* transition, const char* allowed) {
  const bool error = reply.state() == v1::LIFECYCLE_STATE_ERROR;
  reply.set_message(std::string(transition) + ": not allowed in state " +
                    state_name(reply.state()) + " (allowed from " + allowed + ")" +
                    (error ? ": " + reply.message() : std::string()));
  return reply;
}

// The reply of a transition refused because an emergency stop is latched.
LifecycleReply refused_latched(LifecycleReply reply, const char* transition) {
  reply.set_message(std::string(transition) + ": refused: emergency stop latched (" +
                    reply.emergency_stop() +
                    "); an operator must reset it at the coordinator (Experiment.Reset, "
                    "`hyloop ctl ADDRESS reset`)");
  return reply;
}

}  // namespace

LifecycleReply Component::configure(const v1::ConfigureRequest& request, std::string_view caller) {
  std::lock_guard transition(mutex_);
  if (auto leased = leased_elsewhere(caller, "configure")) return *leased;
  const LifecycleState from = state_.load();
  if (from != v1::LIFECYCLE_STATE_UNCONFIGURED && from != v1::LIFECYCLE_STATE_INACTIVE &&
      from != v1::LIFECYCLE_STATE_ERROR) {
    return refused(state_reply(), "configure", "UNCONFIGURED, INACTIVE or ERROR");
  }
  {
    std::lock_guard lock(message_mutex_);
    if (estop_latched_) {
      if (request.reset_emergency_stop_count() != estop_count_) {
        return refused_latched(reply_locked(), "configure");
      }
      logger()->warn("{}: emergency stop ({}) reset by the coordinator", name_, estop_reason_);
      estop_latched_ = false;
      estop_reason_.clear();
    }
  }
  try {
    on_configure(request);
  } catch (...) {
    fail(current_exception_message());
    return state_reply();
  }
  std::lock_guard lock(message_mutex_);
  LifecycleState expected = from;
  if (state_.compare_exchange_strong(expected, v1::LIFECYCLE_STATE_INACTIVE)) {
    message_ = "configured for run " + request.run_id();
    hold_lease_locked(caller, true);
  }
  return reply_locked();
}

LifecycleReply Component::activate(std::string_view caller) {
  std::lock_guard transition(mutex_);
  if (auto leased = leased_elsewhere(caller, "activate")) return *leased;
  if (state_.load() != v1::LIFECYCLE_STATE_INACTIVE) {
    return refused(state_reply(), "activate", "INACTIVE");
  }
  if (LifecycleReply r = state_reply(); !r.emergency_stop().empty()) {
    return refused_latched(std::move(r), "activate");
  }
  try {
    on_activate();
  } catch (...) {
    fail(current_exception_message());
    return state_reply();
  }
  std::lock_guard lock(message_mutex_);
  // A loop that failed at once has already moved to ERROR: keep it.
  LifecycleState expected = v1::LIFECYCLE_STATE_INACTIVE;
  if (state_.compare_exchange_strong(expected, v1::LIFECYCLE_STATE_ACTIVE)) message_ = "active";
  hold_lease_locked(caller, true);
  return reply_locked();
}

LifecycleReply Component::deactivate(std::string_view caller) {
  std::lock_guard transition(mutex_);
  if (auto leased = leased_elsewhere(caller, "deactivate")) return *leased;
  if (state_.load() != v1::LIFECYCLE_STATE_ACTIVE) {
    return refused(state_reply(), "deactivate", "ACTIVE");
  }
  try {
    on_deactivate();
  } catch (...) {
    fail(current_exception_message());
    return state_reply();
  }
  std::lock_guard lock(message_mutex_);
  // A loop that failed while being stopped leaves the component in ERROR.
  LifecycleState expected = v1::LIFECYCLE_STATE_ACTIVE;
  if (state_.compare_exchange_strong(expected, v1::LIFECYCLE_STATE_INACTIVE)) {
    message_ = "inactive";
  }
  hold_lease_locked(caller, false);  // the run is over: the owner lets go
  return reply_locked();
}

LifecycleReply Component::cleanup(std::string_view caller) {
  std::lock_guard transition(mutex_);
  if (auto leased = leased_elsewhere(caller, "cleanup")) return *leased;
  const LifecycleState from = state_.load();
  if (from != v1::LIFECYCLE_STATE_UNCONFIGURED && from != v1::LIFECYCLE_STATE_INACTIVE &&
      from != v1::LIFECYCLE_STATE_ERROR) {
    return refused(state_reply(), "cleanup", "UNCONFIGURED, INACTIVE or ERROR");
  }
  if (from == v1::LIFECYCLE_STATE_UNCONFIGURED) return state_reply();
  on_cleanup();
  std::lock_guard lock(message_mutex_);
  LifecycleState expected = from;
  if (state_.compare_exchange_strong(expected, v1::LIFECYCLE_STATE_UNCONFIGURED)) {
    message_ = "unconfigured (released" + (message_.empty() ? "" : " after: " + message_) + ")";
  }
  hold_lease_locked(caller, false);
  return reply_locked();
}

LifecycleReply Component::shutdown(std::string_view caller) {
  std::lock_guard transition(mutex_);
  if (auto leased = leased_elsewhere(caller, "shutdown")) return *leased;
  const LifecycleState from = state_.load();
  if (from == v1::LIFECYCLE_STATE_FINALIZED) return state_reply();
  // Shutdown always ends in FINALIZED (the process exits); a failure is kept in the message.
  std::string error;
  if (from == v1::LIFECYCLE_STATE_ACTIVE) {
    try {
      on_deactivate();
    } catch (...) {
      error = "deactivate: " + current_exception_message();
    }
  }
  try {
    on_shutdown();
  } catch (...) {
    error += (error.empty() ? "" : "; ") + std::string("shutdown: ") + current_exception_message();
  }
  if (!error.empty()) logger()->error("{}: {}", name_, error);
  std::lock_guard lock(message_mutex_);
  state_.store(v1::LIFECYCLE_STATE_FINALIZED);
  message_ = error.empty() ? "finalized" : "finalized after an error: " + error;
  hold_lease_locked(caller, false);
  return reply_locked();
}

LifecycleReply Component::emergency_stop(std::string_view reason) {
  // No transition lock: an emergency stop must get through while a transition is running.
  {
    std::lock_guard lock(message_mutex_);
    // Every request counts (a reset snapshot of the count never clears a newer stop); the
    // first reason stays.
    ++estop_count_;
    if (!estop_latched_) {
      estop_latched_ = true;
      estop_reason_ = reason.empty() ? std::string("emergency stop") : std::string(reason);
    }
  }
  on_emergency_stop(reason);
  std::lock_guard lock(message_mutex_);
  // GetState shows the stop too, unless it would hide the reason of an ERROR.
  if (state_.load() != v1::LIFECYCLE_STATE_ERROR) {
    message_ = "emergency stop latched: " + std::string(reason);
  }
  LifecycleReply reply = reply_locked();
  reply.set_message("emergency stop latched: " + std::string(reason));
  return reply;
}

namespace {

// Whether this process may run a thread at SCHED_FIFO `priority` (CAP_SYS_NICE, RLIMIT_RTPRIO):
// libzmq aborts when it cannot give its own threads the policy it was asked for.
bool fifo_permitted(int priority) {
  bool ok = false;
  std::thread([&] {
    sched_param p{};
    p.sched_priority = priority;
    ok = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &p) == 0;
  }).join();
  return ok;
}

}  // namespace

zmq::context_t& Component::context() {
  if (context_ != nullptr) return *context_;
  if (!own_context_) {
    own_context_ = std::make_unique<zmq::context_t>(1);
    // A loop thread at SCHED_FIFO (--config rt) would keep ZeroMQ's I/O thread, which carries
    // its frames between processes, off the CPU: that thread gets the same policy and priority.
    if (const RtOptions& rt = service_config().rt; rt.enabled) {
      if (fifo_permitted(rt.priority) &&
          ::zmq_ctx_set(own_context_->handle(), ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO) == 0 &&
          ::zmq_ctx_set(own_context_->handle(), ZMQ_THREAD_PRIORITY, rt.priority) == 0) {
        logger()->info("{}: ZeroMQ's I/O thread at SCHED_FIFO {}", name(), rt.priority);
      } else {
        logger()->warn("{}: ZeroMQ's I/O thread stays SCHED_OTHER (SCHED_FIFO {} not permitted)",
                       name(), rt.priority);
      }
    }
  }
  return *own_context_;
}

}  // namespace hyloop::runtime
