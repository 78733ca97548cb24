#include "hyloop/experiment/experiment.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <charconv>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {

std::string format_number(double v) {
  std::array<char, 32> buf{};
  const auto result =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, 17);
  return {buf.data(), result.ptr};
}

ColumnHeader parse_column_header(std::string_view header) {
  const std::size_t open = header.find('[');
  if (open == std::string_view::npos || header.empty() || header.back() != ']') {
    return {std::string(header), ""};
  }
  return {std::string(header.substr(0, open)),
          std::string(header.substr(open + 1, header.size() - open - 2))};
}

SampleTable::SampleTable(std::vector<std::string> headers, std::size_t max_rows)
    : headers_(std::move(headers)), capacity_(max_rows) {
  data_.resize(capacity_ * headers_.size());
}

bool SampleTable::append(std::span<const double> row) noexcept {
  if (rows_ >= capacity_ || row.size() != columns()) {
    ++dropped_;
    return false;
  }
  std::copy(row.begin(), row.end(), data_.begin() + static_cast<std::ptrdiff_t>(rows_ * columns()));
  ++rows_;
  return true;
}

void SampleTable::write_csv(const std::filesystem::path& path) const {
  std::ofstream f(path);
  std::string line;
  for (std::size_t i = 0; i < headers_.size(); ++i) {
    line += (i ? "," : "");
    line += headers_[i];
  }
  f << line << '\n';
  for (std::size_t r = 0; r < rows_; ++r) {
    line.clear();
    const auto values = row(r);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) line += ',';
      line += format_number(values[i]);
    }
    line += '\n';
    f << line;
  }
  f.close();
  if (!f) throw std::runtime_error("writing " + path.string() + " failed");
}

void Experiment::run(const std::function<void(double, double)>& progress) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_report = start + std::chrono::seconds(1);
  constexpr std::int64_t kCheckEvery = 4096;
  const double duration = static_cast<double>(total_steps()) * step_size();
  while (step()) {
    if (progress && cycle() % kCheckEvery == 0 && Clock::now() >= next_report) {
      progress(static_cast<double>(cycle()) * step_size(), duration);
      next_report += std::chrono::seconds(1);
    }
  }
  wall_time_s_ = std::chrono::duration<double>(Clock::now() - start).count();
}

nlohmann::ordered_json signal_roles_json(const SignalRoles& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const std::pair<const char*, const std::string*> roles[] = {
      {"target", &r.target},
      {"measured", &r.measured},
      {"ideal", &r.ideal},
      {"command", &r.command},
      {"force", &r.force},
      {"velocity", &r.velocity},
      {"velocity_ideal", &r.velocity_ideal},
      {"force_input", &r.force_input},
      {"force_ideal", &r.force_ideal},
      {"power", &r.power},
      {"power_ideal", &r.power_ideal},
      {"energy", &r.energy},
      {"energy_ideal", &r.energy_ideal},
      {"gain", &r.gain},
      {"observed_energy", &r.observed_energy}};
  for (const auto& [role, column] : roles) {
    if (!column->empty()) j[role] = *column;
  }
  return j;
}

namespace {

/// The `kind` of a parsed scenario. @throws ScenarioError when it has none or it is not a string.
std::string kind_of(const YAML::Node& root, const std::string& origin) {
  if (!root.IsMap()) {
    throw ScenarioError(origin + ": not a scenario (a mapping of fields, starting with `kind`)");
  }
  if (!root["kind"]) {
    throw ScenarioError(origin + ": kind: missing: a scenario names its kind, one of " +
                        known_kinds());
  }
  if (!root["kind"].IsScalar()) throw ScenarioError(origin + ": kind: must be a string");
  return root["kind"].Scalar();
}

}  // namespace

std::string scenario_kind_of_text(const std::string& text, const std::string& origin) {
  return kind_of(load_yaml(text, origin, {}), origin);
}

std::string scenario_kind(const std::string& path) {
  return scenario_kind_of_text(read_scenario_text(path), path);
}

std::unique_ptr<LoadedScenario> load_scenario_text(const std::string& text,
                                                   const std::string& origin_in,
                                                   const std::vector<std::string>& overrides,
                                                   const DataSource& data) {
  const std::string origin = excerpt(origin_in);
  const YAML::Node root = load_yaml(text, origin, overrides);
  const std::string kind = kind_of(root, origin);
  const Kind* found = nullptr;
  try {
    found = &find_kind(kind);
  } catch (const std::invalid_argument&) {
    throw ScenarioError(origin + ": kind = \"" + excerpt(kind) + "\": must be one of " +
                        known_kinds());
  }
  return found->load(root, origin, data);
}

std::unique_ptr<Experiment> make_experiment(const std::string& path,
                                            const std::vector<std::string>& overrides) {
  return make_experiment_from_text(read_scenario_text(path), path, overrides,
                                   DataSource::local_file(path));
}

std::unique_ptr<Experiment> make_experiment_from_text(const std::string& text,
                                                      const std::string& origin,
                                                      const std::vector<std::string>& overrides,
                                                      const DataSource& data) {
  return load_scenario_text(text, origin, overrides, data)->experiment();
}

std::vector<std::string> scenario_notices(const std::string& path,
                                          const std::vector<std::string>& overrides) {
  return load_scenario_text(read_scenario_text(path), path, overrides, DataSource::local_file(path))
      ->notices();
}

}  // namespace hyloop::experiment
