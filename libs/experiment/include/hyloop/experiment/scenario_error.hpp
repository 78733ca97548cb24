#pragma once
// What every kind's scenario shares: the error a scenario that cannot be loaded throws, the
// schema version, and the size limit of a scenario's text.

#include <cstddef>
#include <stdexcept>

namespace hyloop::experiment {

inline constexpr int kSchemaVersion = 1;
/// The largest scenario text any kind reads (a file, or a gRPC request's scenario_yaml).
inline constexpr std::size_t kMaxScenarioBytes = 1024u * 1024u;

/// A scenario that cannot be loaded: what() is one line naming the field, the value and what
/// is allowed.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hyloop::experiment
