#include "hyloop/runtime/service_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hyloop/runtime/logging.hpp"
#include "hyloop/testing/messages.hpp"

namespace hyloop::runtime {
namespace {

using hyloop::testing::invalid_argument_message;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(ServiceConfig, DefaultsAndFullFile) {
  const auto d = default_service_config("sensor");
  EXPECT_EQ(d.name, "sensor");
  EXPECT_EQ(d.grpc_address, "127.0.0.1:0");
  EXPECT_EQ(d.log_level, "info");
  EXPECT_FALSE(d.rt.enabled);

  const auto c = parse_service_config(R"(
name: sensor-2
grpc_address: 0.0.0.0:50051
log_level: debug
rt: {enabled: true, priority: 90, cpu: 1, lock_memory: false, timer_slack_ns: 50}
)",
                                      "sensor.yaml");
  EXPECT_EQ(c.name, "sensor-2");
  EXPECT_EQ(c.grpc_address, "0.0.0.0:50051");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_TRUE(c.rt.enabled);
  EXPECT_EQ(c.rt.priority, 90);
  EXPECT_EQ(c.rt.cpu, 1);
  EXPECT_FALSE(c.rt.lock_memory);
  EXPECT_EQ(c.rt.timer_slack_ns, 50);

  const auto empty = parse_service_config("", "empty.yaml");
  EXPECT_EQ(empty.grpc_address, "127.0.0.1:0");
}

TEST(ServiceConfig, RejectsUnknownKeys) {
  EXPECT_THAT(
      invalid_argument_message([] { (void)parse_service_config("nmae: x\n", "s.yaml"); }),
      AllOf(HasSubstr("s.yaml:1"), HasSubstr("unknown key 'nmae'"), HasSubstr("grpc_address")));
  EXPECT_THAT(
      invalid_argument_message([] { (void)parse_service_config("rt:\n  prio: 3\n", "s.yaml"); }),
      AllOf(HasSubstr("s.yaml:2"), HasSubstr("unknown key 'rt.prio'"), HasSubstr("priority")));
}

TEST(ServiceConfig, RejectsOutOfRangeValuesNamingFieldValueAndRange) {
  EXPECT_THAT(
      invalid_argument_message(
          [] { (void)parse_service_config("rt: {priority: 120}\n", "s.yaml"); }),
      AllOf(HasSubstr("s.yaml"), HasSubstr("rt.priority"), HasSubstr("120"), HasSubstr("1..99")));
  EXPECT_THAT(
      invalid_argument_message([] { (void)parse_service_config("rt: {priority: 0}\n", "s.yaml"); }),
      HasSubstr("rt.priority"));
  EXPECT_THAT(
      invalid_argument_message([] { (void)parse_service_config("rt: {cpu: -2}\n", "s.yaml"); }),
      AllOf(HasSubstr("rt.cpu"), HasSubstr("-2"), HasSubstr("-1")));
  EXPECT_THAT(invalid_argument_message(
                  [] { (void)parse_service_config("rt: {timer_slack_ns: 0}\n", "s.yaml"); }),
              AllOf(HasSubstr("rt.timer_slack_ns"), HasSubstr(">= 1")));
  EXPECT_THAT(invalid_argument_message(
                  [] { (void)parse_service_config("rt: {enabled: maybe}\n", "s.yaml"); }),
              AllOf(HasSubstr("rt.enabled"), HasSubstr("maybe")));
  EXPECT_THAT(
      invalid_argument_message([] { (void)parse_service_config("log_level: loud\n", "s.yaml"); }),
      AllOf(HasSubstr("log_level"), HasSubstr("loud"), HasSubstr("trace, debug")));
  EXPECT_THAT(invalid_argument_message([] { (void)parse_service_config("- 1\n", "s.yaml"); }),
              HasSubstr("mapping"));
  EXPECT_THAT(invalid_argument_message([] { (void)load_service_config("/nonexistent.yaml"); }),
              HasSubstr("/nonexistent.yaml"));
}

TEST(Logging, ParsesLevelsAndRejectsOthers) {
  EXPECT_EQ(parse_log_level("warn"), spdlog::level::warn);
  EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
  EXPECT_THAT(invalid_argument_message([] { init_logging("x", "verbose"); }),
              AllOf(HasSubstr("verbose"), HasSubstr("trace, debug, info, warn, error, off")));
  init_logging("runtime-test", "warn");
  EXPECT_EQ(logger()->name(), "runtime-test");
  EXPECT_EQ(logger()->level(), spdlog::level::warn);
}

}  // namespace
}  // namespace hyloop::runtime
