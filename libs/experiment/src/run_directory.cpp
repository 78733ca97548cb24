#include "hyloop/experiment/run_directory.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

std::string run_command(const std::string& command) {
  std::array<char, 256> buffer{};
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
    out += buffer.data();
  if (pclose(pipe) != 0) return {};
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

void append_number(std::string& line, double v) {
  std::array<char, 32> buf{};
  const auto result =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, 17);
  line.append(buf.data(), result.ptr);
}

}  // namespace

std::string format_number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

std::string git_revision() {
  const std::string dir = HYLOOP_SOURCE_DIR;
  std::string rev = run_command("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (rev.empty()) return "unknown";
  if (!run_command("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null")
           .empty()) {
    rev += "-dirty";
  }
  return rev;
}

nlohmann::json make_summary(const Experiment& experiment) {
  nlohmann::json j;
  j["scenario"] = experiment.name();
  j["kind"] = experiment.kind();
  j["steps"] = experiment.cycle();
  j["planned_steps"] = experiment.total_steps();
  j["step_s"] = experiment.step_size();
  j["duration_s"] = static_cast<double>(experiment.cycle()) * experiment.step_size();
  j["wall_time_s"] = experiment.wall_time_s();
  j["steps_per_second"] = experiment.wall_time_s() > 0.0
                              ? static_cast<double>(experiment.cycle()) / experiment.wall_time_s()
                              : 0.0;
  j["samples_recorded"] = experiment.samples().rows();
  j["samples_dropped"] = experiment.samples().dropped();
  j.update(experiment.summary());
  j["git_revision"] = git_revision();
  return j;
}

void check_output_directory(const fs::path& out, bool overwrite) {
  if (fs::exists(out) && !overwrite) {
    if (!fs::is_directory(out) || !fs::is_empty(out)) {
      throw std::runtime_error(
          "--out " + out.string() +
          ": exists and is not an empty directory (use --force to replace it)");
    }
  }
}

void write_run_directory(const Experiment& experiment, const fs::path& out, bool overwrite,
                         const nlohmann::json& extra_summary) {
  check_output_directory(out, overwrite);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent);
  const fs::path tmp = parent / (out.filename().string() + ".partial-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    experiment.samples().write_csv(tmp / "samples.csv");
    experiment.write_extra_files(tmp);
    {
      std::ofstream f(tmp / "scenario.yaml");
      f << experiment.resolved_yaml();
    }
    {
      std::ofstream f(tmp / "summary.json");
      nlohmann::json summary = make_summary(experiment);
      if (extra_summary.is_object()) summary.update(extra_summary);
      f << summary.dump(2) << '\n';
      if (!f) throw std::runtime_error("writing summary.json failed");
    }
    if (fs::exists(out)) fs::remove_all(out);
    fs::rename(tmp, out);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace hyloop::experiment
