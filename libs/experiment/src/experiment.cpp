#include "hyloop/experiment/experiment.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
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

CsvStream::~CsvStream() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvStream::open(const std::filesystem::path& path, const std::string& header_line) {
  if (fd_ >= 0) throw std::logic_error(path.string() + ": a CSV stream opened twice");
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("creating " + path.string() + ": " + std::strerror(errno));
  }
  path_ = path;
  error_ = 0;
  buffer_.resize(kBufferBytes);
  used_ = 0;
  put(header_line.data(), header_line.size());
  put("\n", 1);
}

void CsvStream::put(const char* text, std::size_t n) noexcept {
  while (n > 0) {
    if (used_ == buffer_.size()) flush();
    const std::size_t k = std::min(n, buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, text, k);
    used_ += k;
    text += k;
    n -= k;
  }
}

void CsvStream::flush() noexcept {
  std::size_t done = 0;
  while (done < used_ && error_ == 0) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, used_ - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  used_ = 0;  // after an error the rest is dropped: finish() reports it
}

void CsvStream::write_row(std::span<const double> values) noexcept {
  if (fd_ < 0) return;
  std::array<char, 32> number{};
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) put(",", 1);
    const auto r = std::to_chars(number.data(), number.data() + number.size(), values[i],
                                 std::chars_format::general, 17);
    put(number.data(), static_cast<std::size_t>(r.ptr - number.data()));
  }
  put("\n", 1);
}

void CsvStream::write_row(std::int64_t index, std::span<const double> values) noexcept {
  if (fd_ < 0) return;
  std::array<char, 24> number{};
  const auto r = std::to_chars(number.data(), number.data() + number.size(), index);
  put(number.data(), static_cast<std::size_t>(r.ptr - number.data()));
  if (!values.empty()) put(",", 1);
  write_row(values);
}

void CsvStream::finish() {
  if (fd_ < 0) throw std::logic_error("a CSV stream finished that was never opened");
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && error_ == 0) error_ = errno;
  if (error_ != 0) {
    throw std::runtime_error("writing " + path_.string() + ": " + std::strerror(error_));
  }
}

std::string csv_header_line(const std::vector<std::string>& headers) {
  std::string line;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    line += (i ? "," : "");
    line += headers[i];
  }
  return line;
}

SampleTable make_sample_table(std::vector<std::string> headers, std::size_t max_rows,
                              bool streamed) {
  if (streamed) return {std::move(headers), max_rows, SampleTable::Streamed{}};
  return {std::move(headers), max_rows};
}

SampleTable::SampleTable(std::vector<std::string> headers, std::size_t max_rows)
    : headers_(std::move(headers)), capacity_(max_rows) {
  data_.resize(capacity_ * headers_.size());
}

SampleTable::SampleTable(std::vector<std::string> headers, std::size_t max_rows, Streamed)
    : headers_(std::move(headers)), capacity_(max_rows), streamed_(true) {}

void SampleTable::stream_to(const std::filesystem::path& path) {
  if (!streamed_) throw std::logic_error("stream_to: a sample table that keeps its rows");
  auto stream = std::make_unique<CsvStream>();
  stream->open(path, csv_header_line(headers_));
  stream_ = std::move(stream);
}

bool SampleTable::append(std::span<const double> row) noexcept {
  if (rows_ >= capacity_ || row.size() != columns()) {
    ++dropped_;
    return false;
  }
  if (streamed_) {
    if (stream_) stream_->write_row(row);
  } else {
    std::copy(row.begin(), row.end(),
              data_.begin() + static_cast<std::ptrdiff_t>(rows_ * columns()));
  }
  ++rows_;
  return true;
}

void SampleTable::write_csv(const std::filesystem::path& path) const {
  if (streamed_) {
    if (!stream_ || stream_->path() != path) {
      throw std::logic_error("write_csv " + path.string() +
                             ": a streamed table writes only the file it streamed to");
    }
    stream_->finish();
    return;
  }
  std::ofstream f(path);
  std::string line = csv_header_line(headers_);
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
