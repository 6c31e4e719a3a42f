// stress/explore/small_worlds.hpp: the pinned small worlds that `readyport-stress --explore NAME`
// runs under every schedule up to a preemption bound (readyport/fake/sim_explorer.hpp). Each is a
// short fixed workload on the real engine over the fake, in a World (readyport/fake/world.hpp),
// judged after every schedule as a seed is: the oracle, the engine's counts against the fake's,
// and the fake holding nothing.
//
// Ownership: the list is static; a run owns its World (kept alive, unreachable, when the schedule
// did not complete). Threading: call from a thread that no runtime started. Errors: the verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "readyport/fake/sim_explorer.hpp"
#include "readyport/fake/world.hpp"

namespace readyport {

struct SmallWorld {
  const char* name;               // the --explore NAME
  const char* race;               // what it races, one line
  const char* fault_sites;        // a FaultPlan: the sites whose hits are choices (--faults F)
  std::uint32_t connections_max;  // the engine's table
  // The workload, the world's first logical thread: ok, or what broke a promise of the engine's
  // contract that the oracle does not see (a refused stop(), a missing on_closed).
  Status (*body)(World& world);
};

// Every pinned small world, in a fixed order.
const std::vector<SmallWorld>& small_worlds();
// The world named `name`, or null.
const SmallWorld* small_world_find(const std::string& name);

// One schedule of `world` following `choices`: its verdict and schedule hash, and its trace hash.
struct SmallWorldRun {
  SimExplorer::Run run;
  std::uint64_t trace_hash = 0;
  std::uint64_t projection_hash = 0;  // Trace::projection_hash: each thread's own lines
  std::uint64_t trace_lines = 0;
  std::vector<std::string> trace_tail;  // the last lines, with `keep_tail`
};
// With `explore_faults`, every hit of the world's fault sites is a choice (SimScheduler::choose).
SmallWorldRun small_world_run(const SmallWorld& world, SimChoices& choices, bool explore_faults,
                              bool keep_tail = false);

}  // namespace readyport
