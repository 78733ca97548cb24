#pragma once
// The one way hal's configuration checks fail: "FIELD = VALUE: must be RANGE".

#include <sstream>
#include <stdexcept>

namespace hyloop::hal::detail {

inline void require(bool ok, const char* field, double value, const char* range) {
  if (!ok) {
    std::ostringstream msg;
    msg << field << " = " << value << ": must be " << range;
    throw std::invalid_argument(msg.str());
  }
}

}  // namespace hyloop::hal::detail
