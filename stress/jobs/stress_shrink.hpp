// stress/jobs/stress_shrink.hpp: shrinks a failing stress seed to a smaller case that fails the
// same way (readyport-stress --seed S --shrink).
//
// A failing seed is a whole world: a workload, a fault plan, a schedule. The shrinker keeps the
// seed and reduces what it drew (readyport/fake/case_shrinker.hpp, the kit's shrinker, which the
// harness shares: whole fault sites, then the faults that fired one by one, then the schedule's
// depth), with the workload's director actions, clients and raw peers as its caps, each step kept
// only while the run still fails with the same signature (the oracle's rule, e.g. "O2", or the
// first words of another failure), until a pass changes nothing: then the case is 1-minimal over
// single faults, sites, the depth and each workload cap (ShrinkResult::one_minimal), unless the
// run budget ran out.
// The result is a replay command with `--faults PLAN --strategy S --depth D --actions-max N ...`,
// and before and after figures (faults fired, scheduler switches, trace lines).
// Ownership: plain values. Threading: as stress_run_seed (one thread that no runtime started).
// Errors: `status` is kFailedPrecondition when the seed does not fail to begin with. A run that
// aborts the process (a broken engine assertion) cannot be shrunk here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli/stress_options.hpp"
#include "readyport/status.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// Runs one seed under the given options (stress_run_seed, or a stand-in in tests).
using SeedRunner = std::function<SeedReport(const StressOptions&, std::uint64_t)>;

struct ShrinkResult {
  Status status;             // ok, or why nothing was shrunk
  StressOptions options;     // the minimal case's options (plan, depth, caps)
  SeedReport original;       // the first run
  SeedReport minimal;        // the smallest run that still fails the same way
  std::string signature;     // what "the same way" means
  std::uint32_t runs = 0;    // seeds run while shrinking
  std::uint32_t passes = 0;  // passes over the steps
  bool one_minimal = false;  // the last pass changed nothing (within the run budget)
};

// The failure's signature: the kit's failure_signature (case_shrinker.hpp): the oracle's rule
// ("O7"), or the status code and the first words of the message, numbers written as N.
std::string stress_failure_signature(const Status& status);

// Total faults fired in a report (its fault.* coverage rows).
std::uint64_t stress_faults_fired(const SeedReport& report);

// Shrinks `seed` as described above; `options` as the failing run was made (its --faults,
// --strategy, --depth).
ShrinkResult stress_shrink(const StressOptions& options, std::uint64_t seed, const SeedRunner& run);

}  // namespace readyport
