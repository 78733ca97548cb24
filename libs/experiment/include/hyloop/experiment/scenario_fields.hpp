#pragma once
// Scenario fields declared once per kind: dotted name, unit, type, range, default and help.
// A kind's BoundTable ties each FieldSpec to its member of the scenario struct; parse (through
// MapReader, so unknown fields and bad values are refused as before) and emit (the resolved
// scenario.yaml a run writes) walk that one table. From the plain FieldTable come the JSON Schema
// of the kind (`hyloop schema KIND`) and the field reference of docs/scenarios.md.
//
// The table states what a single field may hold (type, range, enum values) and is the one place
// that checks it: parse refuses a value outside its field's range or enum, naming the field, the
// value and what is allowed ("rig.mass_kg = 0: must be in [0.001, 1000] kg"; scenario_fields_test
// checks a value just outside each range of every kind). Relations between fields
// (position_min < position_max, control_period a multiple of step, ...) stay in each kind's
// validate() and are named in the help text.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {

enum class FieldType : std::uint8_t {
  kNumber,      ///< a finite number
  kLimit,       ///< a number or .inf (no limit)
  kInteger,     ///< a whole number
  kBool,        ///< true | false
  kString,      ///< free text
  kEnum,        ///< one of FieldSpec::values
  kFile,        ///< a file name (relative to the scenario file)
  kNumberList,  ///< a list of numbers (each within the range)
  kObjectList,  ///< a list of mappings of FieldSpec::items
};
std::string_view to_string(FieldType type) noexcept;

/// [min, max] with each end optional and inclusive unless marked exclusive.
struct FieldRange {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;
  [[nodiscard]] bool empty() const noexcept { return !min && !max; }
  /// "[1e-3, 1e7]", "> 0", ">= 0", "(0, 1]", "" when unbounded.
  [[nodiscard]] std::string text() const;
};
/// Shorthands: in [a, b]; > a; >= a; in (a, b].
FieldRange closed(double a, double b);
FieldRange above(double a);
FieldRange at_least(double a);
FieldRange left_open(double a, double b);

/// "when SIBLING is one of VALUES" (a sibling field of the same mapping).
struct FieldCondition {
  std::string field;  ///< the sibling's key
  std::vector<std::string> values;
};

struct FieldSpec {
  std::string name;  ///< dotted path, e.g. "rig.robot.omega_n_rad_s"
  std::string unit;  ///< SI unit as written in messages ("kg", "N*s/m"); "" if none
  FieldType type = FieldType::kNumber;
  FieldRange range;
  std::vector<std::string> values;  ///< kEnum: the allowed values
  nlohmann::json default_value;     ///< the default as JSON; null when none or derived
  std::string default_text;         ///< the default as the doc shows it (".inf", "derived: ...")
  bool required = false;
  bool nullable = false;  ///< null (or absent) means "derive it"
  std::optional<FieldCondition> required_when;
  std::optional<FieldCondition> used_when;  ///< only read by the run when ...
  std::vector<FieldSpec> items;             ///< kObjectList: the fields of one item (keys)
  std::string help;
  [[nodiscard]] std::string key() const;  ///< the last component of name
};

struct FieldTable {
  std::string kind;
  std::string title;
  std::vector<FieldSpec> fields;
  [[nodiscard]] const FieldSpec* find(std::string_view name) const;
};

/// The field table of a kind; nullptr for an unknown kind. (The one place kinds map to tables.)
const FieldTable* scenario_fields(std::string_view kind);
/// The kinds scenario_fields() knows, sorted.
std::vector<std::string> scenario_field_kinds();

/// JSON Schema (draft 2020-12) of a kind's scenario file, properties in the table's order.
nlohmann::ordered_json json_schema(const FieldTable& table);
/// The field reference of one kind: a markdown table per top-level block.
std::string markdown_reference(const FieldTable& table);

// ------------------------------------------------------------------------- binding to structs

/// "must be in [a, b] unit", "must be > 0 unit": what a range allows, as messages say it.
std::string range_allows(const FieldRange& range, const std::string& unit);
/// Whether `value` lies in `range` (NaN never does).
bool in_range(const FieldRange& range, double value) noexcept;
/// What the table says a single field may hold, checked on the value the file gives (after the
/// field's reader accepted its form; null, "derive it", is not checked): a number against the
/// range (each item of a list), a string against the enum's values.
/// @throws ScenarioError "ORIGIN: FIELD = VALUE: must be ..." naming what is allowed.
void check_field(const MapReader& r, const std::string& field, const FieldSpec& spec,
                 const YAML::Node& given);

/// One field bound to the scenario struct S: read from a MapReader, write to an emitter, and its
/// value as JSON (for the default).
template <typename S>
struct BoundField {
  FieldSpec spec;
  std::function<void(MapReader&, const std::string& key, S&)> read;
  std::function<void(YAML::Emitter&, const std::string& key, const S&)> write;
  std::function<nlohmann::json(const S&)> value;
  std::function<bool(const S&)> emitted{};  ///< empty: always emitted (see emitted_if)
};

/// Parses and emits S by walking its fields in order: a dotted prefix is a nested mapping, read
/// through MapReader::child and finished (unknown fields refused) after its last field.
template <typename S>
class BoundTable {
 public:
  BoundTable(std::string kind, std::string title, std::vector<BoundField<S>> fields);

  void parse(const YAML::Node& root, const std::string& origin, S& s) const {
    MapReader top(root, "", origin);
    parse_node(root_, top, s);
    top.finish();
  }
  /// The fields as a YAML mapping (precision 17), followed by "\n".
  [[nodiscard]] std::string emit(const S& s) const {
    YAML::Emitter e;
    e.SetDoublePrecision(17);
    e << YAML::BeginMap;
    emit_node(root_, e, s);
    e << YAML::EndMap;
    return std::string(e.c_str()) + "\n";
  }
  [[nodiscard]] const FieldTable& table() const noexcept { return table_; }

 private:
  struct Node {
    std::string key;
    int field = -1;  ///< index into fields_, or -1 for a mapping
    std::vector<Node> children;
  };
  void parse_node(const Node& n, MapReader& r, S& s) const {
    for (const Node& c : n.children) {
      if (c.field >= 0) {
        const BoundField<S>& f = fields_[static_cast<std::size_t>(c.field)];
        f.read(r, c.key, s);
        check_field(r, r.field(c.key), f.spec, r.get(c.key));  // nothing when left out
      } else {
        MapReader child = r.child(c.key);
        parse_node(c, child, s);
        child.finish();
      }
    }
  }
  [[nodiscard]] bool emits(const Node& n, const S& s) const {
    if (n.field >= 0) {
      const auto& emitted = fields_[static_cast<std::size_t>(n.field)].emitted;
      return !emitted || emitted(s);
    }
    return std::any_of(n.children.begin(), n.children.end(),
                       [&](const Node& c) { return emits(c, s); });
  }
  // A mapping none of whose fields is emitted is left out whole.
  void emit_node(const Node& n, YAML::Emitter& e, const S& s) const {
    for (const Node& c : n.children) {
      if (!emits(c, s)) continue;
      if (c.field >= 0) {
        fields_[static_cast<std::size_t>(c.field)].write(e, c.key, s);
      } else {
        e << YAML::Key << c.key << YAML::Value << YAML::BeginMap;
        emit_node(c, e, s);
        e << YAML::EndMap;
      }
    }
  }

  std::vector<BoundField<S>> fields_;
  Node root_;
  FieldTable table_;
};

template <typename S>
BoundTable<S>::BoundTable(std::string kind, std::string title, std::vector<BoundField<S>> fields)
    : fields_(std::move(fields)) {
  table_.kind = std::move(kind);
  table_.title = std::move(title);
  const S defaults{};
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    FieldSpec spec = fields_[i].spec;
    if (spec.default_value.is_null() && !spec.required && fields_[i].value) {
      spec.default_value = fields_[i].value(defaults);
    }
    table_.fields.push_back(spec);
    // Place the field in the tree of mappings (in order of first appearance).
    Node* at = &root_;
    std::string rest = spec.name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      const std::string part = rest.substr(0, dot);
      rest = rest.substr(dot + 1);
      Node* next = nullptr;
      for (Node& c : at->children) {
        if (c.field < 0 && c.key == part) next = &c;
      }
      if (next == nullptr) {
        at->children.push_back(Node{part, -1, {}});
        next = &at->children.back();
      }
      at = next;
    }
    at->children.push_back(Node{rest, static_cast<int>(i), {}});
  }
}

/// Typed builders: `get` is a generic lambda returning a reference to the member, e.g.
/// [](auto& s) -> auto& { return s.model.mass; }, used for both reading and writing.
namespace fields {

inline FieldSpec spec(std::string name, std::string unit, FieldType type, FieldRange range,
                      std::string help) {
  FieldSpec f;
  f.name = std::move(name);
  f.unit = std::move(unit);
  f.type = type;
  f.range = range;
  f.help = std::move(help);
  return f;
}

/// JSON of a double: .inf and NaN have none (null; default_text says what it is).
inline nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

template <typename S, typename Get>
void write_value(YAML::Emitter& e, const std::string& key, const S& s, Get get) {
  e << YAML::Key << key << YAML::Value << get(s);
}

template <typename S, typename Get>
BoundField<S> number(std::string name, std::string unit, FieldRange range, std::string help,
                     Get get) {
  return {spec(std::move(name), std::move(unit), FieldType::kNumber, range, std::move(help)),
          [get](MapReader& r, const std::string& k, S& s) { r.number(k, get(s)); },
          [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
          [get](const S& s) { return json_number(get(s)); }};
}

/// A number or .inf ("no limit"); `lower`: −.inf allowed too.
template <typename S, typename Get>
BoundField<S> limit(std::string name, std::string unit, FieldRange range, std::string help, Get get,
                    bool lower = false) {
  BoundField<S> f{
      spec(std::move(name), std::move(unit), FieldType::kLimit, range, std::move(help)),
      [get, lower](MapReader& r, const std::string& k, S& s) { r.limit(k, get(s), lower); },
      [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
      [get](const S& s) { return json_number(get(s)); }};
  const S d{};
  if (!std::isfinite(get(d))) f.spec.default_text = get(d) > 0 ? ".inf" : "-.inf";
  return f;
}

template <typename S, typename Get>
BoundField<S> integer(std::string name, std::string unit, FieldRange range, std::string help,
                      Get get) {
  return {spec(std::move(name), std::move(unit), FieldType::kInteger, range, std::move(help)),
          [get](MapReader& r, const std::string& k, S& s) { r.integer(k, get(s)); },
          [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
          [get](const S& s) { return nlohmann::json(get(s)); }};
}

/// A seed: an unsigned 64-bit integer.
template <typename S, typename Get>
BoundField<S> seed(std::string name, std::string help, Get get) {
  return {spec(std::move(name), "", FieldType::kInteger, at_least(0), std::move(help)),
          [get](MapReader& r, const std::string& k, S& s) { r.unsigned64(k, get(s)); },
          [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
          [get](const S& s) { return nlohmann::json(get(s)); }};
}

template <typename S, typename Get>
BoundField<S> boolean(std::string name, std::string help, Get get) {
  return {spec(std::move(name), "", FieldType::kBool, {}, std::move(help)),
          [get](MapReader& r, const std::string& k, S& s) { r.boolean(k, get(s)); },
          [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
          [get](const S& s) { return nlohmann::json(get(s)); }};
}

/// Free text, a file name (type kFile) or one of `values` (type kEnum; BoundTable checks it).
template <typename S, typename Get>
BoundField<S> text(std::string name, FieldType type, std::vector<std::string> values,
                   std::string help, Get get) {
  BoundField<S> f{
      spec(std::move(name), "", type, {}, std::move(help)),
      [get](MapReader& r, const std::string& k, S& s) { r.string(k, get(s)); },
      [get](YAML::Emitter& e, const std::string& k, const S& s) { write_value(e, k, s, get); },
      [get](const S& s) { return nlohmann::json(get(s)); }};
  f.spec.values = std::move(values);
  return f;
}

/// A list of numbers, each within `range`, emitted in flow style.
template <typename S, typename Get>
BoundField<S> numbers(std::string name, std::string unit, FieldRange range, std::string help,
                      Get get) {
  return {spec(std::move(name), std::move(unit), FieldType::kNumberList, range, std::move(help)),
          [get](MapReader& r, const std::string& k, S& s) { r.numbers(k, get(s)); },
          [get](YAML::Emitter& e, const std::string& k, const S& s) {
            e << YAML::Key << k << YAML::Value << YAML::Flow << get(s);
          },
          [get](const S& s) { return nlohmann::json(get(s)); }};
}

/// `f` emitted only when `when(s)` holds (a field that means something only for some variants).
template <typename S, typename When>
BoundField<S> emitted_if(BoundField<S> f, When when) {
  f.emitted = std::move(when);
  return f;
}

template <typename S>
BoundField<S> used_when(BoundField<S> f, std::string sibling, std::vector<std::string> values) {
  f.spec.used_when = FieldCondition{std::move(sibling), std::move(values)};
  return f;
}

template <typename S>
BoundField<S> required_when(BoundField<S> f, std::string sibling, std::vector<std::string> values) {
  f.spec.required_when = FieldCondition{std::move(sibling), std::move(values)};
  return f;
}

template <typename S>
BoundField<S> with_default(BoundField<S> f, nlohmann::json value, std::string text) {
  f.spec.default_value = std::move(value);
  f.spec.default_text = std::move(text);
  return f;
}

/// kind: the constant of a kind's table (`required`: a file of this kind must name it).
template <typename S>
BoundField<S> kind(const std::string& name, bool required) {
  BoundField<S> b{spec("kind", "", FieldType::kEnum, {}, "the experiment kind of this file"),
                  [name](MapReader& r, const std::string& k, S&) {
                    std::string value = name;
                    r.string(k, value);
                    if (value != name) {
                      // Appended, not operator+ (GCC 105329's false -Wrestrict).
                      std::string m = "\"";
                      m += excerpt(value);
                      m += "\": must be ";
                      m += name;
                      r.fail("kind", m);
                    }
                  },
                  [name](YAML::Emitter& e, const std::string& k, const S&) {
                    e << YAML::Key << k << YAML::Value << name;
                  },
                  [name](const S&) { return nlohmann::json(name); }};
  b.spec.values = {name};
  b.spec.required = required;
  return b;
}

}  // namespace fields

}  // namespace hyloop::experiment
