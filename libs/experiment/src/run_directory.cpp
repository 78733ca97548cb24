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

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

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

nlohmann::json make_summary(const SitsRunner& runner) {
  const SitsScenario& s = runner.scenario();
  const core::CycleMetrics& m = runner.metrics();
  const core::WindowMetrics w = m.window();
  const double energy_ratio = m.energy_ratio();
  const bool diverged = runner.stopped() || (std::isfinite(energy_ratio) &&
                                             energy_ratio > s.metrics.diverged_energy_ratio);
  const auto cycles = m.cycles();
  nlohmann::json j;
  j["scenario"] = s.name;
  j["kind"] = "sits";
  j["compensator"] = std::string(core::to_string(s.compensator.kind));
  j["steps"] = runner.cycle();
  j["planned_steps"] = runner.total_steps();
  j["step_s"] = s.timing.step;
  j["duration_s"] = static_cast<double>(runner.cycle()) * s.timing.step;
  j["wall_time_s"] = runner.wall_time_s();
  j["steps_per_second"] =
      runner.wall_time_s() > 0.0 ? static_cast<double>(runner.cycle()) / runner.wall_time_s() : 0.0;
  j["diverged"] = diverged;
  j["stop_reason"] = runner.stopped() ? nlohmann::json(std::string(to_string(runner.stop_reason())))
                                      : nlohmann::json(nullptr);
  j["energy_ratio"] = number_or_null(energy_ratio);
  j["amplitude_growth_rate_per_s"] = number_or_null(m.amplitude_growth_rate());
  j["cycles"] = cycles.size();
  j["dropped_cycles"] = m.dropped_cycles();
  j["metrics"] = {
      {"window_s", s.metrics.window}, {"cycles_in_window", w.cycles},
      {"e_F_peak_N", w.e_f_peak},     {"e_V_peak_mps", w.e_v_peak},
      {"e_R", number_or_null(w.e_r)}, {"amplitude_ratio", number_or_null(w.amplitude_ratio)}};
  j["k_h"] = {{"min", number_or_null(runner.k_h_min())},
              {"max", number_or_null(runner.k_h_max())},
              {"final", runner.last_row()[static_cast<std::size_t>(SitsColumn::kKh)]}};
  j["delays"] = {{"force_measurement_steps", s.sensor_delay_steps()},
                 {"control_cycle_steps", s.hold_steps()},
                 {"robot_response", s.delays.robot_response}};
  j["rejected_commands"] = runner.rejected_commands();
  j["seed"] = s.rig.seed;
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

void write_run_directory(const SitsRunner& runner, const fs::path& out, bool overwrite) {
  check_output_directory(out, overwrite);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  fs::create_directories(parent);
  const fs::path tmp = parent / (out.filename().string() + ".partial-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  try {
    {
      std::ofstream f(tmp / "samples.csv");
      std::string line;
      for (std::size_t i = 0; i < kSitsColumns; ++i) {
        line += (i ? "," : "");
        line += kSitsColumnHeaders[i];
      }
      f << line << '\n';
      for (const SampleRow& row : runner.samples()) {
        line.clear();
        for (std::size_t i = 0; i < kSitsColumns; ++i) {
          if (i) line += ',';
          append_number(line, row[i]);
        }
        line += '\n';
        f << line;
      }
      if (!f) throw std::runtime_error("writing samples.csv failed");
    }
    {
      std::ofstream f(tmp / "cycles.csv");
      f << "cycle[-],t_start[s],t_end[s],e_R[-],amplitude_ratio[-],v_peak[m/s],v_ideal_peak[m/s],"
           "energy_max[J],energy_ideal_max[J],e_F_peak[N],e_V_peak[m/s]\n";
      for (const core::CycleRecord& c : runner.metrics().cycles()) {
        std::string line = std::to_string(c.index);
        for (double v : {c.t_start, c.t_end, c.e_r, c.amplitude_ratio, c.v_peak, c.v_ideal_peak,
                         c.energy_max, c.energy_ideal_max, c.e_f_peak, c.e_v_peak}) {
          line += ',';
          append_number(line, v);
        }
        f << line << '\n';
      }
      if (!f) throw std::runtime_error("writing cycles.csv failed");
    }
    {
      std::ofstream f(tmp / "scenario.yaml");
      f << to_yaml(runner.scenario());
    }
    {
      std::ofstream f(tmp / "summary.json");
      f << make_summary(runner).dump(2) << '\n';
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
