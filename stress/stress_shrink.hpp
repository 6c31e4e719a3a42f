// stress/stress_shrink.hpp: shrinks a failing stress seed to a smaller case that fails the same
// way (readyport-stress --seed S --shrink).
//
// A failing seed is a whole world: a workload, a fault plan, a schedule. The shrinker keeps the
// seed and reduces what it drew, each step kept only while the run still fails with the same
// signature (the oracle's rule, e.g. "O2", or the first words of another failure):
//   1. the fault plan, one active site at a time (removing a site removes every fault it fired);
//   2. the schedule: a PCT seed's depth (fewer priority change points), smallest first;
//   3. the workload: director actions, clients and raw peers, halved while it fails;
//   4. the fault plan again, until no single site can go (1-minimal over sites).
// The result is a replay command with `--faults PLAN --depth D --actions-max N ...`, and before
// and after figures (faults fired, scheduler switches, trace lines).
//
//   readyport::ShrinkResult result = readyport::stress_shrink(options, 93, readyport::stress_run_seed);
//   puts(readyport::stress_replay_command(result.options, result.minimal).c_str());
//
// Ownership: plain values. Threading: as stress_run_seed (one thread that no runtime started).
// Errors: `status` is kFailedPrecondition when the seed does not fail to begin with. A run that
// aborts the process (a broken engine assertion) cannot be shrunk here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "readyport/status.hpp"
#include "stress_options.hpp"
#include "stress_run.hpp"

namespace readyport {

// Runs one seed under the given options (stress_run_seed, or a stand-in in tests).
using SeedRunner = std::function<SeedReport(const StressOptions&, std::uint64_t)>;

struct ShrinkResult {
  Status status;            // ok, or why nothing was shrunk
  StressOptions options;    // the minimal case's options (plan, depth, caps)
  SeedReport original;      // the first run
  SeedReport minimal;       // the smallest run that still fails the same way
  std::string signature;    // what "the same way" means
  std::uint32_t runs = 0;   // seeds run while shrinking
};

// The failure's signature: the oracle's rule ("O7"), or the message up to its first ':'.
std::string stress_failure_signature(const Status& status);

// Total faults fired in a report (its fault.* coverage rows).
std::uint64_t stress_faults_fired(const SeedReport& report);

// Shrinks `seed` as described above; `options` as the failing run was made (its --faults,
// --strategy, --depth).
ShrinkResult stress_shrink(const StressOptions& options, std::uint64_t seed,
                           const SeedRunner& run);

}  // namespace readyport
