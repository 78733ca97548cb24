// A kind plug-in whose load() parses YAML a second time, in its own copy of the framework
// (kind_plugin_test: that parse counts in the program's yaml_parses()).
#include "hyloop/experiment/kind_plugin.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace {

class ReparsingKind final : public hyloop::experiment::Kind {
 public:
  [[nodiscard]] std::string name() const override { return "reparsing"; }
  [[nodiscard]] std::unique_ptr<hyloop::experiment::LoadedScenario> load(
      const YAML::Node& /*root*/, const std::string& origin,
      const hyloop::experiment::DataSource& /*data*/) const override {
    (void)hyloop::experiment::load_yaml("a: 1\n", origin, {});
    throw hyloop::experiment::ScenarioError(origin + ": parsed a second time");
  }
};

}  // namespace

HYLOOP_KIND_PLUGIN(ReparsingKind)
