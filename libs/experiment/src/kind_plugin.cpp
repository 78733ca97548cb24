#include "hyloop/experiment/kind_plugin.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "hyloop/core/path_trust.hpp"
#include "hyloop/experiment/yaml_fields.hpp"

namespace hyloop::experiment {
namespace fs = std::filesystem;

namespace {

struct PluginState {
  std::mutex mutex;
  std::set<std::string> loaded;  // canonical paths
  std::vector<std::string> refusals;
  std::vector<std::string> searched;  // the directories load_kind_plugins() looked in
};

PluginState& plugin_state() {
  static PluginState s;
  return s;
}

// Why the file or directory `p` (not following a final symlink) is unsafe, or empty: owned by
// root or this user, writable by nobody else (a sticky directory above the plug-in's own may be).
std::string unsafe_entry(const fs::path& p, bool own_directory) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return p.string() + ": " + std::strerror(errno);
  return core::check_trust(
             p.string(), st,
             {.root_may_own = true, .closed_bits = 022, .sticky_directory_open = !own_directory})
      .why;
}

// Records why `load` is refused (for kind_plugin_refusals()) and returns it.
PluginLoad refused(PluginLoad load, const std::string& why) {
  load.kind.clear();
  load.error = why;
  const std::lock_guard<std::mutex> lock(plugin_state().mutex);
  plugin_state().refusals.push_back(load.path.string() + ": " + why);
  return load;
}

void add_path_list(std::vector<fs::path>& dirs, const char* list) {
  if (list == nullptr) return;
  std::stringstream ss(list);
  for (std::string d; std::getline(ss, d, ':');) {
    if (!d.empty()) dirs.emplace_back(d);
  }
}

}  // namespace

std::string writable_by_others(const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return path.string() + ": " + ec.message();
  if (std::string why = unsafe_entry(real, false); !why.empty()) return why;
  bool own_directory = true;
  for (fs::path dir = real.parent_path();; dir = dir.parent_path()) {
    if (std::string why = unsafe_entry(dir, own_directory); !why.empty()) return why;
    own_directory = false;
    if (dir == dir.root_path() || dir.empty()) break;
  }
  return {};
}

PluginLoad load_kind_plugin(const fs::path& file) {
  PluginLoad load;
  load.path = file;
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec) {
    return refused(load, "cannot resolve: " + ec.message());
  }
  {
    const std::lock_guard<std::mutex> lock(plugin_state().mutex);
    if (plugin_state().loaded.count(real.string()) != 0) return load;  // already in
  }
  if (!fs::is_regular_file(real, ec)) {
    return refused(load, "not a regular file");
  }
  if (std::string why = writable_by_others(real); !why.empty()) {
    return refused(load,
                   "refused: " + why + "; a kind plug-in must be writable only by root or you");
  }
  void* handle = ::dlopen(real.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return refused(load, "cannot load: " + excerpt(why != nullptr ? why : "dlopen failed"));
  }
  using Entry = const KindPluginInfo* (*)();
  void* symbol = ::dlsym(handle, kKindPluginSymbol);
  if (symbol == nullptr) {
    ::dlclose(handle);
    return refused(load, std::string("not a hyloop kind plug-in: no symbol ") + kKindPluginSymbol);
  }
  const KindPluginInfo* info = reinterpret_cast<Entry>(symbol)();
  const std::string host = "hyloop " + std::string(kHyloopVersion) + ", kind ABI " +
                           std::to_string(kKindAbi) + ", " + HYLOOP_KIND_COMPILER_ID;
  if (info == nullptr || info->hyloop_version == nullptr || info->compiler == nullptr ||
      info->create == nullptr) {
    ::dlclose(handle);
    return refused(load, "refused: its plug-in information is incomplete");
  }
  const std::string built = "hyloop " + excerpt(info->hyloop_version) + ", kind ABI " +
                            std::to_string(info->abi) + ", " + excerpt(info->compiler);
  if (info->abi != kKindAbi || std::strcmp(info->hyloop_version, kHyloopVersion) != 0 ||
      std::strcmp(info->compiler, HYLOOP_KIND_COMPILER_ID) != 0) {
    ::dlclose(handle);
    return refused(load,
                   "refused: built for " + built + "; this is " + host +
                       ": rebuild it against this hyloop (find_package(hyloop), hyloop_add_kind)");
  }
  if (info->attach_registry == nullptr) {
    ::dlclose(handle);
    return refused(load, "refused: its plug-in information is incomplete (no attach_registry)");
  }
  // From here the plug-in's code stays mapped for the life of the process (its kind is in the
  // registry; a kind that failed to register may still have run its constructor).
  info->attach_registry(kind_registry_handle());
  std::unique_ptr<Kind> kind;
  try {
    kind.reset(info->create());
    if (kind == nullptr) throw std::runtime_error("its create() returned no kind");
    load.kind = kind->name();
    register_kind(std::move(kind));
  } catch (const std::exception& e) {
    return refused(load, std::string("refused: ") + e.what());
  }
  const std::lock_guard<std::mutex> lock(plugin_state().mutex);
  plugin_state().loaded.insert(real.string());
  return load;
}

std::vector<fs::path> kind_search_path() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "lib" / "hyloop" / "kinds");
  add_path_list(dirs, std::getenv("HYLOOP_KIND_PATH"));
  return dirs;
}

std::vector<PluginLoad> load_kind_plugins(const std::vector<fs::path>& dirs) {
  std::vector<PluginLoad> out;
  {
    const std::lock_guard<std::mutex> lock(plugin_state().mutex);
    std::vector<std::string>& searched = plugin_state().searched;
    for (const fs::path& dir : dirs) {
      if (std::find(searched.begin(), searched.end(), dir.string()) == searched.end()) {
        searched.push_back(dir.string());
      }
    }
  }
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".so") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      PluginLoad load = load_kind_plugin(f);
      if (!load.kind.empty() || !load.error.empty()) out.push_back(std::move(load));
    }
  }
  return out;
}

std::vector<std::string> kind_plugin_dirs_searched() {
  const std::lock_guard<std::mutex> lock(plugin_state().mutex);
  return plugin_state().searched;
}

std::vector<std::string> kind_plugin_refusals() {
  const std::lock_guard<std::mutex> lock(plugin_state().mutex);
  return plugin_state().refusals;
}

std::string take_kind_options(int& argc, char** argv) {
  std::vector<fs::path> extra;
  int out = 1;
  std::string error;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--kinds") {
      if (i + 1 >= argc) {
        error = "--kinds: needs a directory";
        break;
      }
      extra.emplace_back(argv[++i]);
    } else if (arg.rfind("--kinds=", 0) == 0) {
      extra.emplace_back(arg.substr(8));
    } else {
      argv[out++] = argv[i];
    }
  }
  if (!error.empty()) return error;
  argc = out;
  argv[argc] = nullptr;
  std::string exported;
  for (const fs::path& d : extra) {
    std::error_code ec;
    if (!fs::is_directory(d, ec)) return "--kinds " + excerpt(d.string()) + ": not a directory";
    exported += (exported.empty() ? "" : ":") + fs::absolute(d).string();
  }
  if (!exported.empty()) {
    const char* env = std::getenv("HYLOOP_KIND_PATH");
    if (env != nullptr && *env != '\0') exported = std::string(env) + ":" + exported;
    ::setenv("HYLOOP_KIND_PATH", exported.c_str(), 1);
  }
  for (const PluginLoad& load : load_kind_plugins(kind_search_path())) {
    if (!load.error.empty()) {
      std::cerr << "hyloop: kind plug-in " << load.path.string() << ": " << load.error << "\n";
    }
  }
  return {};
}

bool take_kind_options_or_report(int& argc, char** argv, const char* program) {
  const std::string error = take_kind_options(argc, argv);
  if (error.empty()) return true;
  std::cerr << program << ": " << error << "\n";
  return false;
}

}  // namespace hyloop::experiment
