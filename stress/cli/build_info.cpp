#include "cli/build_info.hpp"

#include <algorithm>
#include <string>

#include "readyport/version.hpp"

// stress/CMakeLists.txt defines it on this file only (so that the other files compile alike in
// every build): the canary name, or "".
#ifndef READYPORT_STRESS_CANARY
#error "READYPORT_STRESS_CANARY must be defined (stress/CMakeLists.txt)"
#endif
// The configuration and sanitizer, "RelWithDebInfo" or "Debug address".
#ifndef READYPORT_STRESS_BUILD
#error "READYPORT_STRESS_BUILD must be defined (stress/CMakeLists.txt)"
#endif
// And the list of canaries that can be planted, "a,b,c".
#ifndef READYPORT_STRESS_CANARIES
#error "READYPORT_STRESS_CANARIES must be defined (stress/CMakeLists.txt)"
#endif

namespace readyport {
namespace {

std::string compiler_text() {
#if defined(__clang__)
  return "Clang " + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
         std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  return "GNU " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
  return "MSVC " + std::to_string(_MSC_FULL_VER);
#else
  return "unknown";
#endif
}

}  // namespace

StressBuildInfo stress_build_info() {
  StressBuildInfo info;
  info.version = version_string();
  info.commit = version_commit();
  info.compiler = compiler_text();
  info.canary = READYPORT_STRESS_CANARY;
  info.build = READYPORT_STRESS_BUILD;
  info.tree = stress_tree_state();
  return info;
}

std::string stress_version_line() {
  const StressBuildInfo info = stress_build_info();
  std::string line = "readyport-stress " + info.version + " (commit " + info.commit + ", " +
                     info.compiler + (info.build.empty() ? std::string() : ", " + info.build);
  if (!info.canary.empty()) {
    line += ", canary " + info.canary;
  }
  if (info.tree == "dirty") {
    line += ", uncommitted changes";
  }
  return line + ")";
}

std::string stress_canary_names() { return READYPORT_STRESS_CANARIES; }

bool stress_canary_known(std::string_view name) {
  const std::string_view names = READYPORT_STRESS_CANARIES;
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    if (!name.empty() && names.substr(start, comma - start) == name) {
      return true;
    }
    start = comma + 1;
  }
  return false;
}

}  // namespace readyport
