#include "hyloop/experiment/scenario_fields.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "hyloop/experiment/kind.hpp"

namespace hyloop::experiment {

std::string_view to_string(FieldType type) noexcept {
  switch (type) {
    case FieldType::kNumber:
      return "number";
    case FieldType::kLimit:
      return "number or .inf";
    case FieldType::kInteger:
      return "integer";
    case FieldType::kBool:
      return "bool";
    case FieldType::kString:
      return "string";
    case FieldType::kEnum:
      return "enum";
    case FieldType::kFile:
      return "file name";
    case FieldType::kNumberList:
      return "list of numbers";
    case FieldType::kObjectList:
      return "list of mappings";
  }
  return "?";
}

std::string FieldRange::text() const {
  if (min && max) {
    return std::string(min_exclusive ? "(" : "[") + format_value(*min) + ", " + format_value(*max) +
           (max_exclusive ? ")" : "]");
  }
  if (min) return std::string(min_exclusive ? "> " : ">= ") + format_value(*min);
  if (max) return std::string(max_exclusive ? "< " : "<= ") + format_value(*max);
  return {};
}

FieldRange closed(double a, double b) { return {a, b, false, false}; }
FieldRange above(double a) { return {a, std::nullopt, true, false}; }
FieldRange at_least(double a) { return {a, std::nullopt, false, false}; }
FieldRange left_open(double a, double b) { return {a, b, true, false}; }

std::string range_allows(const FieldRange& range, const std::string& unit) {
  const std::string with_unit = unit.empty() ? "" : " " + unit;
  if (range.min && range.max) return "must be in " + range.text() + with_unit;
  return "must be " + range.text() + with_unit;
}

bool in_range(const FieldRange& range, double value) noexcept {
  if (std::isnan(value)) return false;
  if (range.min && (range.min_exclusive ? value <= *range.min : value < *range.min)) return false;
  if (range.max && (range.max_exclusive ? value >= *range.max : value > *range.max)) return false;
  return true;
}

namespace {

// A number as the file spells it (the reader accepted it already); NaN when it is not one.
double given_number(const YAML::Node& n) {
  if (!n.IsScalar()) return std::numeric_limits<double>::quiet_NaN();
  if (const std::optional<double> inf = infinity_spelled(n.Scalar())) return *inf;
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace

void check_field(const MapReader& r, const std::string& field, const FieldSpec& spec,
                 const YAML::Node& given) {
  if (!given || given.IsNull()) return;
  const auto check = [&](const std::string& name, const YAML::Node& n) {
    const double v = given_number(n);
    if (in_range(spec.range, v)) return;
    throw ScenarioError(r.origin() + ": " + name + " = " + format_value(v) + ": " +
                        range_allows(spec.range, spec.unit));
  };
  if (!spec.range.empty() && given.IsSequence()) {
    for (std::size_t i = 0; i < given.size(); ++i)
      check(field + "[" + std::to_string(i) + "]", given[i]);
  } else if (!spec.range.empty() && given.IsScalar()) {
    check(field, given);
  }
  if (spec.type != FieldType::kEnum || spec.values.empty() || !given.IsScalar()) return;
  const std::string& text = given.Scalar();
  if (std::find(spec.values.begin(), spec.values.end(), text) != spec.values.end()) return;
  throw ScenarioError(r.origin() + ": " + field + " = \"" + excerpt(text) + "\": must be " +
                      listed_with_or(spec.values));
}

std::string FieldSpec::key() const {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

const FieldSpec* FieldTable::find(std::string_view name) const {
  for (const FieldSpec& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const FieldTable* scenario_fields(std::string_view kind) {
  for (const Kind* k : kinds()) {
    if (k->name() == kind) return k->fields();
  }
  return nullptr;
}

std::vector<std::string> scenario_field_kinds() {
  std::vector<std::string> out;
  for (const std::string& name : kind_names()) {
    if (scenario_fields(name) != nullptr) out.push_back(name);
  }
  return out;
}

namespace {

using json = nlohmann::ordered_json;

std::string unit_suffix(const FieldSpec& f) { return f.unit.empty() ? "" : " [" + f.unit + "]"; }

std::string description(const FieldSpec& f) {
  std::string d = f.help + unit_suffix(f);
  if (f.used_when) {
    std::string v;
    for (const std::string& s : f.used_when->values) v += (v.empty() ? "" : ", ") + s;
    d += "; used when " + f.used_when->field + " is " + v;
  }
  if (!f.default_text.empty()) d += "; default " + f.default_text;
  return d;
}

json number_schema(const FieldRange& r, bool integer) {
  json s = {{"type", integer ? "integer" : "number"}};
  if (r.min) s[r.min_exclusive ? "exclusiveMinimum" : "minimum"] = *r.min;
  if (r.max) s[r.max_exclusive ? "exclusiveMaximum" : "maximum"] = *r.max;
  return s;
}

json leaf_schema(const FieldSpec& f) {
  json s;
  switch (f.type) {
    case FieldType::kNumber:
    case FieldType::kLimit:  // YAML's .inf loads as an infinite number: ranges still apply
      s = number_schema(f.range, false);
      break;
    case FieldType::kInteger:
      s = number_schema(f.range, true);
      break;
    case FieldType::kBool:
      s = {{"type", "boolean"}};
      break;
    case FieldType::kString:
    case FieldType::kFile:
      s = {{"type", "string"}, {"maxLength", kMaxStringChars}};
      break;
    case FieldType::kEnum:
      s = {{"type", "string"}, {"enum", f.values}};
      break;
    case FieldType::kNumberList:
      s = {{"type", "array"}, {"maxItems", 1024}, {"items", number_schema(f.range, false)}};
      break;
    case FieldType::kObjectList: {
      json item = {{"type", "object"}, {"additionalProperties", false}};
      item["properties"] = json::object();
      for (const FieldSpec& i : f.items) {
        json p = leaf_schema(i);
        p["description"] = description(i);
        if (!i.default_value.is_null()) p["default"] = json(i.default_value);
        item["properties"][i.key()] = p;
      }
      s = {{"type", "array"}, {"maxItems", 1024}, {"items", item}};
      break;
    }
  }
  if (f.nullable) {
    if (s.contains("enum")) s["enum"].push_back(nullptr);
    s["type"] = json::array({s["type"], "null"});
  }
  return s;
}

json& object_at(json& root, const std::string& dotted_parent) {
  json* at = &root;
  std::stringstream ss(dotted_parent);
  for (std::string part; std::getline(ss, part, '.');) {
    json& props = (*at)["properties"];
    if (!props.contains(part)) {
      props[part] = {
          {"type", "object"}, {"additionalProperties", false}, {"properties", json::object()}};
    }
    at = &props[part];
  }
  return *at;
}

}  // namespace

nlohmann::ordered_json json_schema(const FieldTable& table) {
  json root = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
               {"$id", "https://hyloop.invalid/schema/scenario-" + table.kind + ".json"},
               {"title", "hyloop scenario, kind " + table.kind},
               {"description", table.title},
               {"type", "object"},
               {"additionalProperties", false},
               {"properties", json::object()}};
  for (const FieldSpec& f : table.fields) {
    const auto dot = f.name.rfind('.');
    json& parent = object_at(root, dot == std::string::npos ? "" : f.name.substr(0, dot));
    json s = leaf_schema(f);
    s["description"] = description(f);
    if (!f.default_value.is_null()) s["default"] = json(f.default_value);
    parent["properties"][f.key()] = s;
    if (f.required) parent["required"].push_back(f.key());
    if (f.required_when) {
      const FieldCondition& c = *f.required_when;
      json cond = {
          {"if", {{"properties", {{c.field, {{"enum", c.values}}}}}, {"required", {c.field}}}},
          {"then", {{"required", {f.key()}}}}};
      parent["allOf"].push_back(cond);
    }
  }
  return root;
}

namespace {

std::string md_escape(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '*' || c == '_')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out;
}

std::string default_cell(const FieldSpec& f) {
  if (f.required) return "required";
  if (!f.default_text.empty()) return md_escape(f.default_text);
  if (f.default_value.is_null()) return "";
  if (f.default_value.is_string()) {
    const std::string s = f.default_value.get<std::string>();
    return s.empty() ? "\"\"" : "`" + s + "`";
  }
  if (f.default_value.is_number_float()) return format_value(f.default_value.get<double>());
  if (f.default_value.is_number()) return f.default_value.dump();
  if (f.default_value.is_array() && f.type == FieldType::kNumberList) {
    std::string s;
    for (const auto& v : f.default_value)
      s += (s.empty() ? "" : ", ") + format_value(v.get<double>());
    return "[" + s + "]";
  }
  // Appended, not "`" + ...: GCC 12's -Wrestrict misfires on that form in some unity batches.
  std::string quoted = "`";
  quoted += f.default_value.dump();
  quoted += '`';
  return quoted;
}

std::string type_cell(const FieldSpec& f) {
  if (f.type == FieldType::kEnum) {
    std::string v;
    for (const std::string& s : f.values) v += (v.empty() ? "" : " \\| ") + s;
    return v;
  }
  std::string t(to_string(f.type));
  if (f.nullable) t += " or null";
  return t;
}

void md_row(std::ostringstream& out, const FieldSpec& f, const std::string& name) {
  std::string help = f.help;
  if (f.used_when) {
    std::string v;
    for (const std::string& s : f.used_when->values) v += (v.empty() ? "" : ", ") + s;
    help += " (used when " + f.used_when->field + " is " + v + ")";
  }
  if (f.required_when) {
    std::string v;
    for (const std::string& s : f.required_when->values) v += (v.empty() ? "" : ", ") + s;
    help += " (required when " + f.required_when->field + " is " + v + ")";
  }
  out << "| `" << name << "` | " << type_cell(f) << " | " << md_escape(f.unit) << " | "
      << md_escape(f.range.text()) << " | " << default_cell(f) << " | " << md_escape(help)
      << " |\n";
}

}  // namespace

std::string markdown_reference(const FieldTable& table) {
  std::ostringstream out;
  std::string block = "\x01";
  for (const FieldSpec& f : table.fields) {
    const auto dot = f.name.find('.');
    const std::string top = dot == std::string::npos ? "" : f.name.substr(0, dot);
    if (top != block) {
      if (block != "\x01") out << "\n";
      block = top;
      out << "### " << (top.empty() ? "Top level" : "`" + top + "`") << "\n\n";
      out << "| field | type | unit | range | default | meaning |\n";
      out << "|---|---|---|---|---|---|\n";
    }
    if (f.items.empty()) {
      md_row(out, f, f.name);
      continue;
    }
    // A list of mappings: one row per key of an item, the first saying what the list is.
    for (std::size_t n = 0; n < f.items.size(); ++n) {
      FieldSpec item = f.items[n];
      if (n == 0)
        item.help = f.help + " (a list of at most 1024; default: " + f.default_value.dump() +
                    "): " + item.help;
      md_row(out, item, f.name + "[]." + item.name);
    }
  }
  return out.str();
}

}  // namespace hyloop::experiment
