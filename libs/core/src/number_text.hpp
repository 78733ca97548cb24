#pragma once
// The one way core's error messages print a number: 9 significant digits.

#include <cstdio>
#include <stdexcept>
#include <string>

namespace hyloop::core::detail {

inline std::string str(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

// Throws std::invalid_argument("FIELD = VALUE: ALLOWED") unless ok.
inline void require(bool ok, const char* field, double value, const char* allowed) {
  if (!ok) throw std::invalid_argument(std::string(field) + " = " + str(value) + ": " + allowed);
}

}  // namespace hyloop::core::detail
