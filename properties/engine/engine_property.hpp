// properties/engine/engine_property.hpp: the engine as a RapidCheck property:
// a generated EngineCase runs in the stress world (engine_world.hpp) and must pass the oracle,
// the echo model and the end checks; the distribution of what was reached is reported.
//
//   TEST(EngineProperty, LifetimesAndEcho) {
//     readyport::properties::check_engine_property();   // fails the test with the shrunk case
//   }
//
// Cases: kEngineCasesDefault times READYPORT_PROPERTY_SCALE, unless RC_PARAMS sets
// max_success (property_runner.hpp). A failure prints the shrunk case as numbered steps, the
// broken rule, the step after which it broke, and RapidCheck's reproduce line.
// Threading: GoogleTest's thread. Errors: a failing property fails the current test.
#pragma once

#include <cstdint>
#include <string>

#include "engine_commands.hpp"
#include "engine_replay.hpp"
#include "engine_world.hpp"

namespace readyport::properties {

inline constexpr int kEngineCasesDefault = 400;

// What check_engine_property found (for the canary tests).
struct EnginePropertyOutcome {
  bool failed = false;
  EngineCase shrunk;  // the last failing case RapidCheck ran: its final counterexample
  EngineRunResult result;
  double seconds = 0;  // wall time of the whole check (reporting only, never a verdict)
};

// The property on one case: runs it, classifies it, RC_FAILs with the report.
void engine_property(const EngineCase& engine_case);

// Runs the property in the current GoogleTest test. `expect_failure`: a failure is the expected
// outcome (a canary build): it is returned, not reported as a test failure.
EnginePropertyOutcome check_engine_property(bool expect_failure = false);

}  // namespace readyport::properties
