#include "run_output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "hyloop/experiment/experiment.hpp"
#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"
#include "hyloop/recording/run_directory.hpp"

namespace hyloop::app {
namespace {

namespace fs = std::filesystem;

// Every file a run directory holds (run_directory.hpp; log.txt of RHT runs, cycles_axes.csv of
// sits6 runs).
constexpr std::array<std::string_view, 10> kRunFiles{"samples.csv",
                                                     "cycles.csv",
                                                     "cycles_axes.csv",
                                                     "summary.json",
                                                     "scenario.yaml",
                                                     "log.txt",
                                                     recording::kIncompleteMarker,
                                                     recording::kJournalFile,
                                                     "journal.sqlite-wal",
                                                     "journal.sqlite-shm"};
constexpr std::string_view kPlotsDir = "plots";
constexpr std::size_t kListedAtMost = 5;

bool is_run_file(std::string_view name) {
  for (const std::string_view f : kRunFiles) {
    if (name == f) return true;
  }
  return false;
}

bool is_plot_file(const fs::path& p) { return p.extension() == ".png" || p.extension() == ".md"; }

// lstat: a symlink is reported as one, never followed.
bool lstat_of(const fs::path& p, struct stat& st) { return ::lstat(p.c_str(), &st) == 0; }

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < kListedAtMost; ++i) {
    s += (i ? ", " : "") + names[i];
  }
  if (names.size() > kListedAtMost) {
    s += " and " + std::to_string(names.size() - kListedAtMost) + " more";
  }
  return s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string not_a_run_directory(const fs::path& dir) {
  struct stat st {};
  if (!lstat_of(dir, st)) return std::string("cannot be examined: ") + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "a symbolic link, never followed";
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (st.st_uid != ::geteuid()) {
    return "owned by uid " + std::to_string(st.st_uid) + ", not by this user";
  }
  std::vector<std::string> foreign;
  bool marked = false;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    struct stat est {};
    const bool ok = lstat_of(e.path(), est);
    if (ok && S_ISREG(est.st_mode) && is_run_file(name)) {
      marked = marked || name == "summary.json" || name == recording::kIncompleteMarker ||
               name == recording::kJournalFile;
      continue;
    }
    if (ok && S_ISDIR(est.st_mode) && name == kPlotsDir) {
      std::error_code pec;
      for (const fs::directory_entry& p : fs::directory_iterator(e.path(), pec)) {
        struct stat pst {};
        if (!lstat_of(p.path(), pst) || !S_ISREG(pst.st_mode) || !is_plot_file(p.path())) {
          foreign.push_back(name + "/" + p.path().filename().string());
        }
      }
      if (pec) foreign.push_back(name + "/ (" + pec.message() + ")");
      continue;
    }
    foreign.push_back(name);
  }
  if (ec) return "cannot be listed: " + ec.message();
  if (!foreign.empty()) return "holds " + join(foreign) + ", which hyloop does not write";
  if (!marked) return "holds none of summary.json, INCOMPLETE, journal.sqlite";
  return {};
}

void check_out_directory(const fs::path& out, bool force) {
  struct stat st {};
  if (!lstat_of(out, st)) return;  // absent: the run creates it
  std::error_code ec;
  if (S_ISDIR(st.st_mode) && fs::is_empty(out, ec) && !ec) return;
  if (const std::string why = not_a_run_directory(out); !why.empty()) {
    throw std::runtime_error("--out " + out.string() +
                             ": exists and is not a hyloop run directory (" + why +
                             "): give another --out; --force replaces only a run directory");
  }
  // A run directory: the library says how to recover an incomplete one or to use --force.
  recording::check_output_directory(out, force);
}

void replace_out_directory(const fs::path& out) {
  check_out_directory(out, true);
  recording::remove_output_directory(out);
}

void print_notices(const std::vector<std::string>& notices, std::ostream& out) {
  for (const std::string& n : notices) out << "hyloop: warning: " << n << "\n";
}

void print_scenario_notices(const std::string& path, const std::vector<std::string>& overrides,
                            std::ostream& out) {
  try {
    print_notices(experiment::scenario_notices(path, overrides), out);
  } catch (const std::exception&) {
    // The run or the coordinator says what is wrong with the scenario.
  }
}

void report_yaml_parses(std::ostream& out) {
  if (std::getenv("HYLOOP_COUNT_PARSES") != nullptr) {
    out << "hyloop: scenario YAML parses: " << experiment::yaml_parses() << "\n";
  }
}

bool warn_about_outcome(const nlohmann::json& summary, std::ostream& out) {
  if (!summary.is_object()) return false;
  const auto number = [&](const char* key) {
    const auto it = summary.find(key);
    return it != summary.end() && it->is_number() ? it->get<double>() : -1.0;
  };
  bool warned = false;
  const auto stop = summary.find("stop_reason");
  if (stop != summary.end() && stop->is_string()) {
    const double planned = number("planned_steps") * number("step_s");
    out << "hyloop: WARNING: the run stopped early (stop_reason " << stop->get<std::string>()
        << ") at t = " << fixed(number("duration_s"), 3) << " s";
    if (planned > 0.0) out << " of " << fixed(planned, 3) << " s";
    out << ": the run directory holds it up to there\n";
    warned = true;
  }
  // Kinds without an energy ratio call a stopped run diverged: the line above said it.
  const auto diverged = summary.find("diverged");
  const auto ratio = summary.find("energy_ratio");
  const bool has_ratio = ratio != summary.end() && ratio->is_number();
  if (diverged != summary.end() && diverged->is_boolean() && diverged->get<bool>() &&
      (has_ratio || !warned)) {
    out << "hyloop: WARNING: the loop diverged";
    if (has_ratio) {
      out << " (energy_ratio " << ratio->get<double>() << ": the last cycle's energy over the "
          << "first's)";
    }
    out << ": its result is not a valid hybrid simulation\n";
    warned = true;
  }
  return warned;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error(path.string() + ": cannot write");
}

}  // namespace hyloop::app
