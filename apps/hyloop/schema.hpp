// `hyloop schema KIND [--markdown]`: the JSON Schema (draft 2020-12) of a kind's scenario file,
// generated from its field table (experiment/scenario_fields.hpp), or its markdown field reference
// (the generated part of docs/scenarios.md). `hyloop schema --list` names the kinds.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace hyloop::app {

struct SchemaOptions {
  std::string kind;
  bool markdown = false;
  bool list = false;
};

// Declares the "schema" subcommand of `app`, writing into `options`.
CLI::App* add_schema_subcommand(CLI::App& app, SchemaOptions& options);

// Prints the schema on stdout. 0 done; 2 for an unknown or missing KIND (the known kinds named on
// stderr).
int run_schema(const SchemaOptions& options);

}  // namespace hyloop::app
