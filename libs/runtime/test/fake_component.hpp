#pragma once
// A Component for the runtime tests: counts the calls, throws on request, and can run a loop
// thread that fails (through fail()) while a transition is joining it.

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "hyloop/runtime/component.hpp"

namespace hyloop::runtime::testing {

class FakeComponent : public Component {
 public:
  explicit FakeComponent(std::string name = "fake") : Component(std::move(name)) {}
  ~FakeComponent() override { join(); }

  void on_configure(const v1::ConfigureRequest& request) override {
    ++configures;
    last_run_id = request.run_id();
    in_configure = true;
    while (block_configure.load()) std::this_thread::yield();
    if (throw_on_configure) throw std::invalid_argument(configure_error);
  }
  void on_activate() override {
    ++activates;
    if (fail_in_loop) {
      loop_ = std::thread([this] {
        while (!stop_.load()) std::this_thread::yield();
        fail("loop failed: cycle 7 missing");  // while deactivate() joins this thread
      });
    }
  }
  void on_deactivate() override {
    ++deactivates;
    join();
  }
  void on_shutdown() override { ++shutdowns; }
  void on_cleanup() noexcept override { ++cleanups; }
  void on_emergency_stop(std::string_view reason) noexcept override {
    ++estops;
    (void)reason;
  }

  // Exposes fail() to the tests, as a loop thread would call it.
  void fail_now(std::string message) { fail(std::move(message)); }
  void set_message_now(std::string message) { set_message(std::move(message)); }

  std::atomic<int> configures{0}, activates{0}, deactivates{0}, shutdowns{0}, estops{0},
      cleanups{0};
  std::atomic<bool> throw_on_configure{false};
  std::atomic<bool> fail_in_loop{false};
  std::atomic<bool> block_configure{false};  // on_configure waits while true
  std::atomic<bool> in_configure{false};
  std::string configure_error = "scenario.step_s = -1 is out of range (allowed > 0)";
  std::string last_run_id;

 private:
  void join() {
    stop_.store(true);
    if (loop_.joinable()) loop_.join();
    stop_.store(false);
  }

  std::atomic<bool> stop_{false};
  std::thread loop_;
};

}  // namespace hyloop::runtime::testing
