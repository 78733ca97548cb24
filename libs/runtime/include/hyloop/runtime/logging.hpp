#pragma once
// Logging of a service process: spdlog's default logger, to stderr (stdout carries the one
// "hyloop-<service> grpc <address>" line a parent process reads), tagged with the service name.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace hyloop::runtime {

/// Parses "trace|debug|info|warn|error|off"; throws std::invalid_argument naming the allowed
/// values otherwise.
[[nodiscard]] spdlog::level::level_enum parse_log_level(const std::string& level);

/// Makes a stderr logger named after the service the default one, at `level` (see
/// parse_log_level; throws before changing anything if it is not one of those).
void init_logging(const std::string& service_name, const std::string& level);

/// The default logger (spdlog's own until init_logging is called).
[[nodiscard]] std::shared_ptr<spdlog::logger> logger();

}  // namespace hyloop::runtime
