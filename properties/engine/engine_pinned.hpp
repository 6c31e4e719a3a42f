// properties/engine/engine_pinned.hpp: the minimal counterexamples the engine property found for
// each canary (cmake/canary.cmake), pinned as RapidCheck's own tests pin theirs: a change that
// makes shrinking worse, or the engine wrong on one of them, is seen (engine_property_test.cpp).
//
//   for (const auto& p : readyport::properties::pinned_cases())
//   run_engine_case_isolated(p.engine_case);
//
// Ownership: static storage. Threading: read-only, any thread. Errors: none.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine_case.hpp"

namespace readyport::properties {

// The longest shrunk counterexample a canary may have.
inline constexpr std::size_t kPinnedShrunkMax = 10;

struct PinnedCase {
  std::string canary;  // cmake/canary.cmake's name
  std::string rule;    // EngineRunResult::rule it breaks with the canary compiled in
  EngineCase engine_case;
};

const std::vector<PinnedCase>& pinned_cases();
// The pinned case of `canary`, or null.
const PinnedCase* pinned_case(const std::string& canary);

}  // namespace readyport::properties
