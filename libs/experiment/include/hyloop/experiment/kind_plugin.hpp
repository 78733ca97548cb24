#pragma once
// Kinds as plug-ins: a shared library built with hyloop_add_kind() (cmake/HyloopKind.cmake)
// exports one C symbol, hyloop_kind_plugin(), written by HYLOOP_KIND_PLUGIN(KindClass). The
// tool and every service load the plug-ins found on the kind search path at start-up:
//
//   1. <prefix>/lib/hyloop/kinds (beside the binary: build/lib/hyloop/kinds in a build tree)
//   2. HYLOOP_KIND_PATH, directories separated by ':'
//   3. --kinds DIR (repeatable; take_kind_options removes it from argv)
//
// A plug-in is refused, by path and reason, when
//   - it was built for another hyloop version, kind ABI or C++ compiler/ABI (kKindAbi below,
//     kHyloopVersion, the compiler's __VERSION__ and _GLIBCXX_USE_CXX11_ABI must all match:
//     a plug-in carries its own copy of the framework's code, compiled from the headers of the
//     version it was built against);
//   - it, or a directory above it, could be written by someone other than root or the user
//     running hyloop: owned by another user, or group/world-writable (a world-writable
//     directory with the sticky bit, /tmp, is accepted above the plug-in's own directory: others
//     cannot replace what they do not own there);
//   - it fails to load, lacks the symbol, or names a kind already registered.
// A refused plug-in is never registered; an unknown kind's message then names the refusals.

#include <filesystem>
#include <string>
#include <vector>

#include "hyloop/experiment/kind.hpp"
#include "hyloop/version.hpp"

namespace hyloop::experiment {

/// Bumped whenever Kind, Experiment, the loop parts or anything a plug-in's objects exchange
/// with the host changes layout or meaning.
// 5: KindPluginInfo::attach_registry (one kind registry); 6: the registry carries the host's
// yaml_parses() counter; 7: several commanded axes (LoopPlan::extra_axes, the parts' step_axes).
inline constexpr int kKindAbi = 7;

/// What hyloop_kind_plugin() returns (a plain struct: read before anything C++ is trusted).
struct KindPluginInfo {
  int abi;
  const char* hyloop_version;
  const char* compiler;  ///< __VERSION__ plus the libstdc++ string ABI
  Kind* (*create)();     ///< a new kind; the host owns it
  /// Called before create() with the host's kind_registry_handle(): the plug-in's copy of the
  /// framework then uses the host's registry and counts its YAML parses in the host's
  /// yaml_parses() (attach_kind_registry).
  void (*attach_registry)(void* host_registry);
};

/// The compiler identity a plug-in must share with the host.
#define HYLOOP_KIND_COMPILER_ID                    \
  (__VERSION__ " cxx11abi=" HYLOOP_KIND_STRINGIFY( \
      _GLIBCXX_USE_CXX11_ABI) " std=" HYLOOP_KIND_STRINGIFY(__cplusplus))
#define HYLOOP_KIND_STRINGIFY2(x) #x
#define HYLOOP_KIND_STRINGIFY(x) HYLOOP_KIND_STRINGIFY2(x)

/// In exactly one source file of a plug-in: HYLOOP_KIND_PLUGIN(MyKind) (MyKind default
/// constructible, derived from hyloop::experiment::Kind), or HYLOOP_KIND_PLUGIN_FACTORY(expr)
/// with an expression giving a new Kind* the host will own.
#define HYLOOP_KIND_PLUGIN(KindClass) HYLOOP_KIND_PLUGIN_FACTORY(new KindClass())
#define HYLOOP_KIND_PLUGIN_FACTORY(new_kind)                                                    \
  extern "C" __attribute__((visibility("default"))) const ::hyloop::experiment::KindPluginInfo* \
  hyloop_kind_plugin() {                                                                        \
    static const ::hyloop::experiment::KindPluginInfo info{                                     \
        ::hyloop::experiment::kKindAbi, ::hyloop::kHyloopVersion, HYLOOP_KIND_COMPILER_ID,      \
        []() -> ::hyloop::experiment::Kind* { return new_kind; },                               \
        &::hyloop::experiment::attach_kind_registry};                                           \
    return &info;                                                                               \
  }

/// The symbol a plug-in exports.
inline constexpr const char* kKindPluginSymbol = "hyloop_kind_plugin";

struct PluginLoad {
  std::filesystem::path path;
  std::string kind;   ///< the kind it registered (empty when refused)
  std::string error;  ///< why it was refused (empty when loaded)
};

/// The directories searched, in order: the installed kinds directory beside the binary, then
/// HYLOOP_KIND_PATH (take_kind_options appends --kinds to it).
std::vector<std::filesystem::path> kind_search_path();

/// Loads every `*.so` in `dirs` (a missing directory is skipped; files in name order) and
/// registers its kind; a plug-in path already loaded is not loaded twice. Never throws for a
/// bad plug-in: each outcome is returned (and kept for kind_plugin_refusals()).
std::vector<PluginLoad> load_kind_plugins(const std::vector<std::filesystem::path>& dirs);

/// Loads one plug-in file (the same checks). Never throws.
PluginLoad load_kind_plugin(const std::filesystem::path& file);

/// Why `path` could be written by someone other than root or this process's user (empty: it
/// could not). Checks the file and every directory above it.
std::string writable_by_others(const std::filesystem::path& path);

/// Every plug-in refused so far in this process ("path: reason").
std::vector<std::string> kind_plugin_refusals();
/// The directories load_kind_plugins() looked in, in order, each once (none in a program that
/// only links its kinds).
std::vector<std::string> kind_plugin_dirs_searched();

/// For main(): removes `--kinds DIR` / `--kinds=DIR` from argv, exports the effective
/// HYLOOP_KIND_PATH (so the services `hyloop up` starts see the same kinds), loads the plug-ins
/// of kind_search_path() and prints each refusal to stderr. Returns an error message for a
/// malformed option (empty: fine).
std::string take_kind_options(int& argc, char** argv);
/// take_kind_options for a main(): false (after printing the error to stderr) on a malformed
/// option, which should end the program with status 2.
bool take_kind_options_or_report(int& argc, char** argv, const char* program);

}  // namespace hyloop::experiment
