#include "hyloop/runtime/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <stdexcept>

namespace hyloop::runtime {

spdlog::level::level_enum parse_log_level(const std::string& level) {
  if (level == "trace") return spdlog::level::trace;
  if (level == "debug") return spdlog::level::debug;
  if (level == "info") return spdlog::level::info;
  if (level == "warn") return spdlog::level::warn;
  if (level == "error") return spdlog::level::err;
  if (level == "off") return spdlog::level::off;
  throw std::invalid_argument("log level '" + level +
                              "' is not one of trace, debug, info, warn, error, off");
}

void init_logging(const std::string& service_name, const std::string& level) {
  const auto lvl = parse_log_level(level);
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto log = std::make_shared<spdlog::logger>(service_name, std::move(sink));
  log->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n %^%l%$ %v");
  log->set_level(lvl);
  log->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(log));
}

std::shared_ptr<spdlog::logger> logger() { return spdlog::default_logger(); }

}  // namespace hyloop::runtime
