#pragma once
// The one way core's error messages print a number: 9 significant digits.

#include <cstdio>
#include <string>

namespace hyloop::core::detail {

inline std::string str(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

}  // namespace hyloop::core::detail
