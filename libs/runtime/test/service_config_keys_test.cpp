// Issue 10, finding 7 for service --config files: a key given twice is an error naming the key
// and both lines (yaml-cpp keeps both pairs and a lookup returns the first, silently).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "hyloop/runtime/service_config.hpp"

namespace hyloop::runtime {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    (void)parse_service_config(yaml, "svc.yaml");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ServiceConfigKeys, ADuplicateKeyIsAnErrorNamingItAndBothLines) {
  EXPECT_EQ(error_of("grpc_address: 127.0.0.1:0\nlog_level: info\ngrpc_address: 0.0.0.0:50051\n"),
            "svc.yaml:3: duplicate key 'grpc_address' (lines 1 and 3)");
  EXPECT_EQ(error_of("rt:\n  enabled: false\n  priority: 10\n  enabled: true\n"),
            "svc.yaml:4: duplicate key 'rt.enabled' (lines 2 and 4)");
  EXPECT_EQ(error_of("rt: {enabled: false}\nrt: {enabled: true}\n"),
            "svc.yaml:2: duplicate key 'rt' (lines 1 and 2)");
}

TEST(ServiceConfigKeys, AnUnknownKeyIsQuotedAtMost200Characters) {
  const std::string e = error_of(std::string(1000, 'k') + ": 1\n");  // < 1024: a YAML simple key
  EXPECT_NE(e.find("unknown key"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 600u);
}

}  // namespace
}  // namespace hyloop::runtime
