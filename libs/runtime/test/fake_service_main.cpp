// A service binary around FakeComponent, for the run_service_main tests (signals, stdout line).
#include "fake_component.hpp"
#include "hyloop/runtime/service_main.hpp"

int main(int argc, char** argv) {
  return hyloop::runtime::run_service_main(argc, argv, "fake", [] {
    return std::make_unique<hyloop::runtime::testing::FakeComponent>();
  });
}
