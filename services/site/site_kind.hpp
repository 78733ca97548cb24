#pragma once
// The opensees_site kind: a site session's run directory read back by the tools that go by a
// run's kind (`hyloop summary --recover`, `hyloop validate`, `hyloop report`). Its scenario is the
// site's configuration as the recorder wrote it (scenario.yaml, site_yaml()); its experiment is
// a SiteRun that takes the journal's rows (recovery) and runs no cycle of its own: a site run is
// made by a peer driving hyloop-site / `hyloop site`, never by `hyloop run` (which records an
// empty run and says so).
//
// Not built into hyloop::experiment's registry (the site is a service, not a loop kind): the
// hyloop tool registers it at start (register_site_kind()).

#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"
#include "site/site_component.hpp"

namespace hyloop::services {

/// The site's options from its scenario text (site_yaml()'s fields; the site's transport and
/// timeouts and max_rows may be absent, as in runs recorded before they existed), with the
/// overrides applied. Unknown fields are refused.
/// @throws experiment::ScenarioError "ORIGIN: field ...: why".
[[nodiscard]] SiteOptions site_options_from_yaml(const std::string& text, const std::string& origin,
                                                 const std::vector<std::string>& overrides = {});

/// The same from the parsed YAML (overrides applied).
[[nodiscard]] SiteOptions site_options_from_node(const YAML::Node& root, const std::string& origin);

class SiteKind final : public experiment::Kind {
 public:
  [[nodiscard]] std::string name() const override { return "opensees_site"; }
  [[nodiscard]] std::unique_ptr<experiment::LoadedScenario> load(
      const YAML::Node& root, const std::string& origin,
      const experiment::DataSource& data) const override;
  [[nodiscard]] experiment::SignalRoles signal_roles() const override;
};

/// Whether `text` is a scenario of the site's kind (false for any other kind, or for a text
/// whose kind cannot be read: the caller's own parsing reports that).
[[nodiscard]] bool is_site_scenario(const std::string& text);

/// Registers SiteKind once per process (later calls do nothing). Not thread-safe with other
/// registrations: call it at start.
void register_site_kind();

}  // namespace hyloop::services
