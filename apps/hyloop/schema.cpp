#include "schema.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "hyloop/experiment/scenario_fields.hpp"

namespace hyloop::app {

CLI::App* add_schema_subcommand(CLI::App& app, SchemaOptions& options) {
  auto* cmd = app.add_subcommand(
      "schema", "print the JSON Schema of a kind's scenario file (editors complete and check it)");
  cmd->add_option("kind", options.kind, "experiment kind (--list names them)");
  cmd->add_flag("--markdown", options.markdown,
                "print the field reference of docs/scenarios.md instead");
  cmd->add_flag("--list", options.list, "print the known kinds, one a line");
  return cmd;
}

int run_schema(const SchemaOptions& options) {
  const std::vector<std::string> kinds = experiment::scenario_field_kinds();
  if (options.list) {
    for (const std::string& k : kinds) std::cout << k << "\n";
    return 0;
  }
  const experiment::FieldTable* table = experiment::scenario_fields(options.kind);
  if (table == nullptr) {
    std::string known;
    for (const std::string& k : kinds) known += (known.empty() ? "" : ", ") + k;
    std::cerr << "hyloop schema: "
              << (options.kind.empty()
                      ? std::string("KIND is required")
                      : "unknown kind \"" + experiment::excerpt(options.kind) + "\"")
              << ": one of " << known << "\n";
    return 2;
  }
  if (options.markdown) {
    std::cout << experiment::markdown_reference(*table);
  } else {
    std::cout << experiment::json_schema(*table).dump(2) << "\n";
  }
  return 0;
}

}  // namespace hyloop::app
