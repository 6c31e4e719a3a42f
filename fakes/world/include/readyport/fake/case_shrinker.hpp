// readyport/fake/case_shrinker.hpp: shrinks a failing world's case to a smaller one that fails the
// same way: the main job's `--shrink` (stress/jobs/stress_shrink.hpp) and the harness's shrinking
// of an embedder's failing seed (harness.hpp) are this one shrinker over their own runs.
//
// A case is what a seed drew besides the seed itself: the fault plan, the schedule (a strategy and
// its PCT depth) and the workload's caps (the driver's own units: director actions, clients, peers;
// none for the harness). Each step is kept only while the run still fails the same way (the
// runner says so), in passes:
//   1. the fault plan, one active site at a time (removing a site removes every fault it fired);
//   2. the faults themselves: the ones that fired become a plan of pinned hits (`site#n`, which
//      replays the same run: fault_plan.hpp), then removed in chunks and one at a time (delta
//      debugging) until no single fault can go;
//   3. the schedule: a PCT or delay-bounded case's depth, smallest first; a random or fair one is
//      tried as PCT of depth 1..3 (fewer preemptions);
//   4. each cap: halved while it fails, then lowered by one while it fails;
// and again until a pass changes nothing (1-minimal over single faults, sites, the depth and each
// cap), unless the run budget (kShrinkRunsMax) ran out.
//
//   readyport::ShrinkCase drawn{plan, strategy, depth, {actions, clients, peers}};
//   readyport::ShrinkOutcome result = readyport::shrink_case(drawn, fired_hits, run);
//
// Ownership: values. Threading: the calling thread runs every candidate through `run`. Errors:
// none (a runner that misbehaves only wastes the budget).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/status.hpp"

namespace readyport {

// Bounds: every step is a finite descent, but a runner that misbehaves must not loop.
inline constexpr std::uint32_t kShrinkRunsMax = 600;
inline constexpr std::uint32_t kShrinkPassesMax = 6;
// PCT depths tried in place of a random or fair schedule.
inline constexpr std::uint32_t kShrinkPctDepthTriedMax = 3;

// A failure's signature, what "fails the same way" compares: the oracle's rule ("O7", "U2": a
// violation's message begins with it), or the status code and the message up to its first ':'
// with every run of digits written as N ("resource_exhausted: step limit N reached at t=N ns").
std::string failure_signature(const Status& status);

struct ShrinkCase {
  FaultPlan plan;  // no active site: no faults
  SimStrategy strategy = SimStrategy::kRandom;
  std::uint32_t depth = 3;
  std::vector<std::uint32_t> caps;
};

// What the runner says of one candidate: whether it failed the same way, and the faults that
// fired in it as a plan of pinned hits (`site#n,...`; "" when more fired than a plan holds).
struct ShrinkRun {
  bool same_failure = false;
  std::string fired_hits;
  // The runner's own budget (the harness's scheduler steps) is spent: this run still counts, and
  // the shrinker stops after it (the result is then not claimed 1-minimal).
  bool budget_spent = false;
};
using ShrinkRunner = std::function<ShrinkRun(const ShrinkCase&)>;

struct ShrinkOutcome {
  ShrinkCase minimal;         // the smallest case that still fails the same way
  std::uint32_t runs = 0;     // candidates run
  std::uint32_t passes = 0;   // passes over the steps
  bool one_minimal = false;   // the last pass changed nothing (within the budget)
  bool budget_spent = false;  // a run said the runner's budget was spent
};

// Shrinks `failing`, whose run failed with `fired_hits` firing (as ShrinkRun::fired_hits), and
// whose caps are already no larger than what the seed drew. The runner has run it once already:
// `runs_before` counts those runs against the budget.
ShrinkOutcome shrink_case(const ShrinkCase& failing, const std::string& fired_hits,
                          const ShrinkRunner& run, std::uint32_t runs_before = 1);

}  // namespace readyport
