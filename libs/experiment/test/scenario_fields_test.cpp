#include "hyloop/experiment/scenario_fields.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "hyloop/experiment/data_source.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/kinds/fcu/fcu_experiment.hpp"
#include "hyloop/kinds/rht/rht_experiment.hpp"
#include "hyloop/kinds/sits/sits_scenario.hpp"
#include "hyloop/kinds/sits6/sits6_scenario.hpp"
#include "hyloop/kinds/vrths/vrths_experiment.hpp"

namespace hyloop::experiment {
namespace {

namespace fs = std::filesystem;

const fs::path kScenarios = fs::path(HYLOOP_SOURCE_DIR) / "scenarios";

std::string kind_of(const std::string& text) {
  const YAML::Node root = YAML::Load(text);
  return root.IsMap() && root["kind"] ? root["kind"].Scalar() : "sits";
}

// Parses (and validates) with the kind's parser and emits the resolved scenario.
std::string resolve(const std::string& text, const std::string& path,
                    const std::vector<std::string>& overrides = {}) {
  const std::string kind = kind_of(text);
  if (kind == "rht") {
    return to_yaml(parse_rht_scenario(text, path, overrides, DataSource::local_file(path)));
  }
  if (kind == "fcu") return to_yaml(parse_fcu_scenario(text, path, overrides));
  if (kind == "vrths") {
    return to_yaml(parse_vrths_scenario(text, path, overrides, DataSource::local_file(path)));
  }
  if (kind == "sits6") return to_yaml(parse_sits6_scenario(text, path, overrides));
  return to_yaml(parse_scenario(text, path, overrides));
}

std::string error_of(const std::string& text, const std::string& path,
                     const std::vector<std::string>& overrides) {
  try {
    resolve(text, path, overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

std::vector<fs::path> shipped() {
  std::vector<fs::path> files;
  for (const auto& dir : fs::directory_iterator(kScenarios)) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() == ".yaml") files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Values just outside a field's range (none for an unbounded side).
std::vector<std::string> outside(const FieldSpec& f) {
  std::vector<std::string> out;
  const bool integer = f.type == FieldType::kInteger;
  const auto step = [&](double v) { return integer ? 1.0 : std::max(1e-3, std::abs(v) * 1e-3); };
  if (f.range.min) {
    out.push_back(number_text(
        f.range.min_exclusive && !integer ? *f.range.min : *f.range.min - step(*f.range.min)));
  }
  if (f.range.max) {
    out.push_back(number_text(
        f.range.max_exclusive && !integer ? *f.range.max : *f.range.max + step(*f.range.max)));
  }
  if (f.type == FieldType::kEnum && f.name != "kind" && !f.values.empty()) {
    out.emplace_back("not_one_of_them");  // every enum is checked by the table too
  }
  return out;
}

TEST(ScenarioFields, EveryShippedScenarioRoundTripsToAFixedPoint) {
  const std::vector<fs::path> files = shipped();
  ASSERT_GE(files.size(), 30u);
  for (const fs::path& file : files) {
    const std::string path = file.string();
    const std::string first = resolve(read_scenario_text(path), path);
    const std::string second = resolve(first, path);
    EXPECT_EQ(first, second) << path;
  }
}

TEST(ScenarioFields, EachKindHasATableAndAnUnknownKindNone) {
  for (const std::string& kind : scenario_field_kinds()) {
    const FieldTable* table = scenario_fields(kind);
    ASSERT_NE(table, nullptr) << kind;
    EXPECT_EQ(table->kind, kind);
    EXPECT_GE(table->fields.size(), 30u) << kind;
    const FieldSpec* k = table->find("kind");
    ASSERT_NE(k, nullptr) << kind;
    EXPECT_EQ(k->values, std::vector<std::string>{kind});
  }
  EXPECT_EQ(scenario_fields("nope"), nullptr);
  EXPECT_EQ(scenario_fields(""), nullptr);
}

// The table's ranges and enums (what the schema and the doc promise) are what the parsers enforce:
// a value just outside each bound, or not among an enum's values, is refused with a message naming
// the field.
TEST(ScenarioFields, EveryRangeInTheTableIsEnforcedNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> bases = {
      {"sits", "sits/ideal.yaml"},       {"rht", "rht/p4.yaml"},
      {"rht", "rht/ats.yaml"},           {"rht", "rht/amb.yaml"},
      {"fcu", "fcu/inverse.yaml"},       {"vrths", "vrths/case1_ats.yaml"},
      {"vrths", "vrths/case1_amb.yaml"}, {"sits6", "sits6/off_centre.yaml"}};
  int checked = 0;
  for (const auto& [kind, base] : bases) {
    const std::string path = (kScenarios / base).string();
    const std::string text = read_scenario_text(path);
    ASSERT_EQ(error_of(text, path, {}), "") << path;
    for (const FieldSpec& f : scenario_fields(kind)->fields) {
      for (const std::string& v : outside(f)) {
        const std::string set = f.type == FieldType::kNumberList ? "[" + v + "]" : v;
        const std::string e = error_of(text, path, {f.name + "=" + set});
        EXPECT_NE(e.find(f.name), std::string::npos)
            << kind << " " << f.name << " = " << set << ": " << (e.empty() ? "accepted" : e);
        ++checked;
      }
      for (const FieldSpec& item : f.items) {
        for (const std::string& v : outside(item)) {
          const std::string e =
              error_of(text, path, {f.name + "=[{" + item.name + ": " + v + "}]"});
          const std::string named = f.name + "[0]." + item.name;
          EXPECT_NE(e.find(named), std::string::npos)
              << kind << " " << named << " = " << v << ": " << (e.empty() ? "accepted" : e);
          ++checked;
        }
      }
    }
  }
  EXPECT_GE(checked, 80);
}

// The table checks only what a file gives, so each default must itself lie in its field's range
// and enum (a field left out is then always valid, without validate() checking it again).
TEST(ScenarioFields, EveryDefaultLiesInItsRange) {
  int checked = 0;
  for (const std::string& kind : scenario_field_kinds()) {
    for (const FieldSpec& f : scenario_fields(kind)->fields) {
      const nlohmann::json& d = f.default_value;
      if (d.is_number() && !f.range.empty()) {
        EXPECT_TRUE(in_range(f.range, d.get<double>()))
            << kind << " " << f.name << " = " << d.dump() << ": " << f.range.text();
        ++checked;
      }
      if (d.is_string() && f.type == FieldType::kEnum) {
        EXPECT_NE(std::find(f.values.begin(), f.values.end(), d.get<std::string>()), f.values.end())
            << kind << " " << f.name << " = " << d.dump();
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 150);
}

// The schema holds every field of the table at its dotted path; fields a kind must name are
// required (rht and fcu: kind, since a file without it is read as sits).
TEST(ScenarioFields, SchemaHoldsEveryFieldAtItsPath) {
  for (const std::string& kind : scenario_field_kinds()) {
    const FieldTable& table = *scenario_fields(kind);
    const nlohmann::ordered_json schema = json_schema(table);
    EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    for (const FieldSpec& f : table.fields) {
      const nlohmann::ordered_json* at = &schema;
      std::stringstream ss(f.name);
      for (std::string part; std::getline(ss, part, '.');) {
        ASSERT_TRUE((*at)["properties"].contains(part)) << kind << " " << f.name;
        at = &(*at)["properties"][part];
      }
      EXPECT_TRUE(at->contains("description")) << f.name;
      if (f.type == FieldType::kEnum) {
        EXPECT_EQ((*at)["enum"].size(), f.values.size()) << f.name;
      }
    }
    EXPECT_TRUE(schema.contains("required")) << kind;  // every scenario names its kind
  }
}

TEST(ScenarioFields, MarkdownReferenceNamesEveryField) {
  for (const std::string& kind : scenario_field_kinds()) {
    const FieldTable& table = *scenario_fields(kind);
    const std::string md = markdown_reference(table);
    for (const FieldSpec& f : table.fields) {
      if (f.items.empty()) {  // a list of mappings has a row per key of an item instead
        EXPECT_NE(md.find("| `" + f.name + "` |"), std::string::npos) << kind << " " << f.name;
      }
      for (const FieldSpec& i : f.items) {
        EXPECT_NE(md.find("| `" + f.name + "[]." + i.name + "` |"), std::string::npos);
      }
    }
  }
}

// Issue 27 finding 7: text that is not UTF-8 is found at its first bad byte.
TEST(ScenarioFields, InvalidUtf8IsFoundAtItsFirstBadByte) {
  const std::string npos_text =
      "name \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 U+10FFFF \xF4\x8F\xBF\xBF";
  EXPECT_EQ(invalid_utf8_at(npos_text), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("ab\xFF"
                            "c"),
            2U);
  EXPECT_EQ(invalid_utf8_at("ab\xC0\xAF"), 2U);         // overlong '/'
  EXPECT_EQ(invalid_utf8_at("a\xE0\x80\xAF"), 1U);      // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8_at("a\xED\xA0\x80"), 1U);      // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8_at("a\xF4\x90\x80\x80"), 1U);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at("abc\xE2\x82"), 3U);        // cut short
  EXPECT_EQ(invalid_utf8_at("\x80"), 0U);               // a continuation byte first
}

// Every key and value of a scenario, and an override, is checked where the text is loaded.
TEST(ScenarioFields, NonUtf8TextIsRefusedNamingTheFieldAndTheByte) {
  const auto error = [](const std::string& text, const std::vector<std::string>& overrides) {
    try {
      (void)load_yaml(text, "s.yaml", overrides);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("name: ab\xFF"
                  "c\n",
                  {}),
            "s.yaml: name: not valid UTF-8 (byte 2 of the value is 0xFF); text in a scenario "
            "must be UTF-8");
  EXPECT_NE(error("outputs:\n  format: h\xC0\n", {})
                .find("s.yaml: outputs.format: not valid "
                      "UTF-8 (byte 1 of the value"),
            std::string::npos);
  EXPECT_NE(error("na\xFEme: x\n", {})
                .find("s.yaml: na\\xFEme: not valid UTF-8 (byte 2 of the "
                      "key is 0xFE)"),
            std::string::npos)
      << error("na\xFEme: x\n", {});
  EXPECT_NE(error("name: x # caf\xE9\n", {}).find("s.yaml: line 1: not valid UTF-8 (byte 13"),
            std::string::npos)
      << error("name: x # caf\xE9\n", {});
  EXPECT_NE(error("name: x\n", {"name=ab\xFF"})
                .find("s.yaml: --set name: not valid UTF-8 (byte 7 "
                      "of the override is 0xFF)"),
            std::string::npos)
      << error("name: x\n", {"name=ab\xFF"});
  EXPECT_EQ(error("name: caf\xC3\xA9\n", {}), "");
}

}  // namespace
}  // namespace hyloop::experiment
