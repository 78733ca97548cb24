#include "co_located.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

namespace hyloop::testing {

CoLocated::CoLocated(const std::string& name, const std::filesystem::path& runs_dir) {
  auto handles =
      services::make_local_service_handles({&rig, &actuator, &dynamics, &sensor}, context);
  services::CoordinatorOptions options;
  options.endpoint_prefix = "inproc://" + name;
  options.runs_dir = runs_dir;
  coordinator = std::make_unique<services::Coordinator>(std::move(handles), context, options);
}

CoLocated::~CoLocated() { coordinator->shutdown_services(); }

grpc::Status CoLocated::load_text(const std::string& text,
                                  const std::vector<std::string>& overrides) {
  v1::LoadScenarioRequest load;
  load.set_scenario_yaml(text);
  for (const std::string& o : overrides) load.add_overrides(o);
  v1::LoadScenarioReply loaded;
  return coordinator->load_scenario(load, &loaded);
}

grpc::Status CoLocated::start(const std::string& run, v1::ClockMode mode) {
  v1::StartRequest start;
  start.set_out_dir(run);
  start.set_mode(mode);
  v1::RunStatus status;
  return coordinator->start(start, &status);
}

v1::RunStatus CoLocated::finish(std::chrono::seconds timeout) {
  EXPECT_TRUE(coordinator->wait(timeout));
  v1::RunStatus status;
  coordinator->status(&status);
  return status;
}

}  // namespace hyloop::testing
