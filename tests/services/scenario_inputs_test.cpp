// Issue 10, findings 3 and 7 at the coordinator's Experiment.LoadScenario (the method its gRPC
// handler calls): a scenario from a client cannot make the server read a file outside its data
// directories, and nothing of such a file comes back; duplicate keys are refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "coordinator/coordinator_component.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/testing/alloc_guard.hpp"

namespace hyloop {
namespace {

namespace fs = std::filesystem;

grpc::Status load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  zmq::context_t context;
  services::Coordinator coordinator({}, context, {});
  v1::LoadScenarioRequest request;
  request.set_scenario_yaml(yaml);
  for (const std::string& o : overrides) request.add_overrides(o);
  request.set_source_name("client.yaml");
  v1::LoadScenarioReply reply;
  return coordinator.load_scenario(request, &reply);
}

TEST(LoadScenarioInputs, AServerFileIsNeitherOpenedNorEchoed) {
  const fs::path secret = fs::temp_directory_path() / "hyloop_scenario_inputs_secret.txt";
  std::ofstream(secret) << "t a\nroot:x:0:0 SECRET\n";
  for (const std::string& file :
       {secret.string(), std::string("/etc/passwd"), std::string("../../../../etc/passwd"),
        std::string("data/../../../../../etc/passwd"), std::string("/dev/zero")}) {
    const grpc::Status st = load("kind: rht\n", {"ground_motion.file=" + file});
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << file;
    EXPECT_NE(st.error_message().find("ground_motion.file"), std::string::npos)
        << st.error_message();
    EXPECT_EQ(st.error_message().find("root:"), std::string::npos) << st.error_message();
    EXPECT_EQ(st.error_message().find("daemon"), std::string::npos) << st.error_message();
    EXPECT_EQ(st.error_message().find("SECRET"), std::string::npos) << st.error_message();
  }
  fs::remove(secret);
  // the shipped record by its name still loads
  EXPECT_TRUE(load("kind: rht\nground_motion: {file: ground_motion/elcentro_ns_1940.txt}\n").ok());
  EXPECT_TRUE(load(experiment::read_scenario_text(std::string(HYLOOP_SOURCE_DIR) +
                                                  "/scenarios/rht/p4.yaml"))
                  .ok());
}

TEST(LoadScenarioInputs, ADuplicateBlockIsRefusedNamingTheKeyAndLines) {
  const grpc::Status st = load(
      "name: t\nrig: {limits: {position_min_m: -0.5, position_max_m: 0.5}}\n"
      "rig: {limits: {position_min_m: -0.01, position_max_m: 0.01}}\n");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("rig: duplicate key (lines 2 and 3"), std::string::npos)
      << st.error_message();
}

// Issue 27, finding 3: LoadScenario of a 24 h SITS run (43.2 M cycles, within the limit) took
// the coordinator to 7.8 GB. It now describes the scenario without building its recorder: the
// same bytes as a 10 s run, under 8 MB (this thread's allocations: the load runs on it here).
TEST(LoadScenarioInputs, LoadingCostsNothingProportionalToTheRunsLength) {
  const std::string text = experiment::read_scenario_text(std::string(HYLOOP_SOURCE_DIR) +
                                                          "/scenarios/sits/table1_scvg.yaml");
  std::size_t bytes[2] = {0, 0};
  int i = 0;
  for (const char* duration : {"timing.duration_s=10", "timing.duration_s=86400"}) {
    const testing::AllocGuard guard;
    EXPECT_TRUE(load(text, {duration}).ok()) << duration;
    bytes[i++] = guard.bytes();
  }
  EXPECT_LT(bytes[1], std::size_t{8} << 20);
  EXPECT_LT(bytes[1], bytes[0] + (std::size_t{256} << 10)) << bytes[0];
}

}  // namespace
}  // namespace hyloop
