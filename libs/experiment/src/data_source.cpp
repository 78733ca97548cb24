#include "hyloop/experiment/data_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>

#include "hyloop/experiment/scenario_error.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void refuse(const std::string& field, const std::string& reference,
                         const std::string& what) {
  throw ScenarioError(field + " = \"" + excerpt(reference) + "\": " + what);
}

// fstat, then read at most kMaxDataFileBytes (+1 to detect a file that grew).
std::string read_regular(int fd, const std::string& field, const std::string& reference) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    refuse(field, reference, std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) refuse(field, reference, "is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxDataFileBytes) {
    refuse(field, reference,
           std::to_string(st.st_size) + " bytes, larger than the limit of " +
               std::to_string(kMaxDataFileBytes) + " bytes");
  }
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(field, reference, std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    if (got > kMaxDataFileBytes) {
      refuse(field, reference,
             "larger than the limit of " + std::to_string(kMaxDataFileBytes) + " bytes");
    }
    if (got == text.size()) text.resize(std::min(text.size() * 2, kMaxDataFileBytes + 1));
  }
  text.resize(got);
  return text;
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// The components of a data name, or an error message.
std::vector<std::string> name_components(const std::string& reference, std::string& error) {
  std::vector<std::string> parts;
  if (reference.empty()) {
    error = "empty (name a file in the server's data directories)";
    return {};
  }
  if (reference.size() > kMaxDataNameChars) {
    error = "longer than " + std::to_string(kMaxDataNameChars) + " characters";
    return {};
  }
  std::string name = reference;
  if (name.rfind("data/", 0) == 0) name = name.substr(5);  // the project-relative spelling
  std::stringstream ss(name);
  for (std::string part; std::getline(ss, part, '/');) parts.push_back(part);
  if (!name.empty() && name.back() == '/') parts.emplace_back();
  const std::string rule =
      "a data file is named by components of letters, digits, '_', '.', '-' separated by '/', "
      "none empty or starting with '.' (no absolute path, no \"..\")";
  if (parts.empty() || static_cast<int>(parts.size()) > kMaxDataNameComponents) {
    error = "not a data file name: " + rule;
    return {};
  }
  for (const std::string& p : parts) {
    bool ok = !p.empty() && p.front() != '.';
    for (char c : p) ok = ok && name_char(c);
    if (!ok) {
      error = "not a data file name: " + rule;
      return {};
    }
  }
  return parts;
}

// Opens the name below `dir` component by component with O_NOFOLLOW. Empty when a component
// does not exist; throws for anything else (a symbolic link, a permission error).
std::optional<std::string> read_below(const fs::path& dir, const std::vector<std::string>& parts,
                                      const std::string& field, const std::string& reference) {
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) return std::nullopt;
  std::optional<Fd> current;
  int at = root.get();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int flags = last ? (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
                           : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int fd = ::openat(at, parts[i].c_str(), flags);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      if (errno == ELOOP || (errno == ENOTDIR && !last)) {
        refuse(field, reference,
               "\"" + parts[i] +
                   "\" is a symbolic link or not a directory: "
                   "data files are read only from inside the data directories");
      }
      refuse(field, reference, std::string("cannot be opened: ") + std::strerror(errno));
    }
    current.emplace(fd);
    at = fd;
    if (last) return read_regular(fd, field, reference);
  }
  return std::nullopt;
}

DataFile read_by_name(const std::string& reference, const std::string& field) {
  std::string error;
  const std::vector<std::string> parts = name_components(reference, error);
  if (parts.empty()) refuse(field, reference, error);
  const auto dirs = server_data_directories();
  for (const fs::path& dir : dirs) {
    if (auto text = read_below(dir, parts, field, reference)) {
      std::string name;
      for (const std::string& p : parts) name += (name.empty() ? "" : "/") + p;
      return {std::move(*text), "data:" + name};
    }
  }
  refuse(field, reference,
         "no such file in the server's data directories (" + std::to_string(dirs.size()) +
             " searched; a scenario sent to a service names data files, never paths)");
}

DataFile read_path(const fs::path& path, const std::string& field, const std::string& reference) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    refuse(field, reference,
           "\"" + excerpt(path.string()) + "\" cannot be opened: " + std::strerror(errno));
  }
  return {read_regular(fd.get(), field, reference), path.string()};
}

std::mutex& dirs_mutex() {
  static std::mutex m;
  return m;
}

std::optional<std::vector<fs::path>>& configured_dirs() {
  static std::optional<std::vector<fs::path>> dirs;
  return dirs;
}

}  // namespace

fs::path project_root() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path share = exe.parent_path().parent_path() / "share" / "hyloop";
    if (fs::is_directory(share / "data", ec)) return share;
  }
  return fs::path(HYLOOP_SOURCE_DIR);
}

DataSource DataSource::local_file(const std::string& scenario_path) {
  DataSource s;
  s.policy = Policy::kLocal;
  s.scenario_dir = fs::path(scenario_path).parent_path();
  return s;
}

std::vector<fs::path> server_data_directories() {
  {
    const std::lock_guard<std::mutex> lock(dirs_mutex());
    if (configured_dirs()) return *configured_dirs();
  }
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("HYLOOP_DATA_DIRS"); env != nullptr && *env != '\0') {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty()) dirs.emplace_back(d);
    }
    return dirs;
  }
  const fs::path project = project_root() / "data";
  std::error_code ec;
  if (fs::is_directory(project, ec)) dirs.push_back(project);
  return dirs;
}

void set_server_data_directories(const std::vector<fs::path>& dirs) {
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) {
      throw ScenarioError("--data-dir " + excerpt(d.string()) + ": not a directory");
    }
    if (fs::absolute(d).string().find(':') != std::string::npos) {
      throw ScenarioError("--data-dir " + excerpt(d.string()) +
                          ": contains ':', which separates the directories of HYLOOP_DATA_DIRS");
    }
  }
  const std::lock_guard<std::mutex> lock(dirs_mutex());
  configured_dirs() = dirs;
  // The kind plug-ins' own copies of this code read the same list from the environment.
  std::string list;
  for (const fs::path& d : dirs) list += (list.empty() ? "" : ":") + fs::absolute(d).string();
  if (!list.empty()) ::setenv("HYLOOP_DATA_DIRS", list.c_str(), 1);
}

std::string take_data_dir_options(int& argc, char** argv) {
  std::vector<fs::path> dirs;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--data-dir") {
      if (i + 1 >= argc) return "--data-dir: needs a directory";
      dirs.emplace_back(argv[++i]);
    } else if (arg.rfind("--data-dir=", 0) == 0) {
      dirs.emplace_back(arg.substr(11));
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (dirs.empty()) return {};
  try {
    set_server_data_directories(dirs);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return {};
}

DataFile read_data_file(const std::string& reference, const DataSource& source,
                        const std::string& field) {
  if (source.policy == DataSource::Policy::kServer) return read_by_name(reference, field);
  const fs::path p(reference);
  if (reference.empty()) refuse(field, reference, "empty (a file name)");
  if (p.is_absolute()) return read_path(p, field, reference);
  std::error_code ec;
  const fs::path project = project_root() / p;
  if (fs::exists(project, ec)) return read_path(project, field, reference);
  const fs::path beside = source.scenario_dir / p;
  if (fs::exists(beside, ec)) return read_path(beside, field, reference);
  std::string error;
  if (!name_components(reference, error).empty()) {
    for (const fs::path& dir : server_data_directories()) {
      if (fs::exists(dir / p, ec)) return read_by_name(reference, field);
    }
  }
  return read_path(beside, field, reference);
}

core::GroundMotion read_ground_motion_record(const std::string& file, const std::string& format,
                                             const std::string& unit, const DataSource& source,
                                             const std::string& origin) {
  DataFile data;
  try {
    data = read_data_file(file, source, "ground_motion.file");
  } catch (const ScenarioError& e) {
    throw ScenarioError(origin + ": " + e.what());
  }
  try {
    return core::parse_ground_motion(data.text, core::parse_ground_motion_format(format),
                                     core::parse_acceleration_unit(unit), data.found_at);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(origin + ": ground_motion: " + e.what());
  }
}

}  // namespace hyloop::experiment
