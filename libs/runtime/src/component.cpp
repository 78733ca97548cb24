#include "hyloop/runtime/component.hpp"

#include <exception>
#include <string>

#include "hyloop/runtime/logging.hpp"

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
  return reply;
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
  reply.set_message(std::string(transition) + ": not allowed in state " +
                    state_name(reply.state()) + " (allowed from " + allowed + ")");
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

LifecycleReply Component::configure(const v1::ConfigureRequest& request) {
  std::lock_guard transition(mutex_);
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
  }
  return reply_locked();
}

LifecycleReply Component::activate() {
  std::lock_guard transition(mutex_);
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
  return reply_locked();
}

LifecycleReply Component::deactivate() {
  std::lock_guard transition(mutex_);
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
  return reply_locked();
}

LifecycleReply Component::cleanup() {
  std::lock_guard transition(mutex_);
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
  return reply_locked();
}

LifecycleReply Component::shutdown() {
  std::lock_guard transition(mutex_);
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

zmq::context_t& Component::context() {
  if (context_ != nullptr) return *context_;
  if (!own_context_) own_context_ = std::make_unique<zmq::context_t>(1);
  return *own_context_;
}

}  // namespace hyloop::runtime
