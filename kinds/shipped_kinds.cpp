// The shipped kinds register themselves when a program starts: this file is linked whole into
// every program that links hyloop::kinds (kinds/CMakeLists.txt), so the framework never names a
// kind. The order here is the order `hyloop schema` and the docs list them in.
#include "hyloop/experiment/kind.hpp"

namespace hyloop::experiment {

const Kind& sits_kind();
const Kind& rht_kind();
const Kind& fcu_kind();
const Kind& vrths_kind();
const Kind& sits6_kind();

namespace {

[[maybe_unused]] const bool kShippedKindsRegistered = [] {
  register_kind(sits_kind());
  register_kind(rht_kind());
  register_kind(fcu_kind());
  register_kind(vrths_kind());
  register_kind(sits6_kind());
  return true;
}();

}  // namespace

}  // namespace hyloop::experiment
