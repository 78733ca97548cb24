// The service option of the loop plane's ipc directory (`ipc_dir:` in --config; docs/security.md).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hyloop/runtime/service_config.hpp"

namespace hyloop::runtime {
namespace {

TEST(ServiceConfigIpcDir, AnAbsoluteDirectoryIsTakenAndTheDefaultIsEmpty) {
  EXPECT_EQ(parse_service_config("name: sensor\n", "x.yaml").ipc_dir, "");
  EXPECT_EQ(parse_service_config("ipc_dir: /run/hyloop-lab\n", "x.yaml").ipc_dir,
            "/run/hyloop-lab");
}

TEST(ServiceConfigIpcDir, ARelativeOrEmptyDirectoryIsRefusedNamingTheField) {
  for (const char* yaml : {"ipc_dir: run/hyloop\n", "ipc_dir: \"\"\n", "ipc_dir: [a]\n"}) {
    SCOPED_TRACE(yaml);
    try {
      (void)parse_service_config(yaml, "lab.yaml");
      FAIL() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("ipc_dir"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("lab.yaml:1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hyloop::runtime
