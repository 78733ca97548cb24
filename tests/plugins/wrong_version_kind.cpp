// A kind plug-in that says it was built for another hyloop (kind_plugin_test: refused by name).
#include "hyloop/experiment/kind_plugin.hpp"

extern "C" __attribute__((visibility("default"))) const hyloop::experiment::KindPluginInfo*
hyloop_kind_plugin() {
  static const hyloop::experiment::KindPluginInfo info{
      hyloop::experiment::kKindAbi, "0.0.0-test", HYLOOP_KIND_COMPILER_ID,
      []() -> hyloop::experiment::Kind* { return nullptr; }, nullptr};
  return &info;
}
