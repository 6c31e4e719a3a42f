// stress/cli/build_info.hpp: what built this readyport-stress, for failure bundles, the JSON
// summary and --version: the readyport version and git commit (cmake/version.cmake), the compiler,
// and the canary planted in the engine, if any (cmake/canary.cmake).
//
//   std::printf("%s\n", readyport::stress_version_line().c_str());
//   // readyport-stress 0.1.0 (commit 85d8eff992c9, GNU 12.2.0, RelWithDebInfo)
//
// Ownership: values and static strings. Threading: any thread. Errors: none.
#pragma once

#include <string>
#include <string_view>

namespace readyport {

struct StressBuildInfo {
  std::string version;   // "0.1.0": readyport::version_string()
  std::string commit;    // 12 hex digits, or "unknown": readyport::version_commit()
  std::string compiler;  // "GNU 12.2.0", "Clang 19.1.7", "MSVC 1939"
  std::string canary;    // READYPORT_CANARY of this build; "" in a normal build
  std::string build;     // the configuration and the sanitizer: "RelWithDebInfo", "Debug thread"
  // The source tree at build time: "clean" (the commit as it is), "dirty" (uncommitted changes to
  // tracked files: the commit alone does not rebuild this binary), or "unknown" (no git).
  std::string tree;
};

// Generated at build time (cmake/tree_state.cmake): "clean", "dirty" or "unknown".
const char* stress_tree_state();

StressBuildInfo stress_build_info();
// "readyport-stress 0.1.0 (commit 85d8eff992c9, GNU 12.2.0, RelWithDebInfo)", plus ", canary
// <name>" when one is planted and ", uncommitted changes" when the tree was dirty.
std::string stress_version_line();
// The canaries cmake/canary.cmake can plant, comma-separated; whether `name` is one of them.
std::string stress_canary_names();
bool stress_canary_known(std::string_view name);

}  // namespace readyport
