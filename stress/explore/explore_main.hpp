// stress/explore/explore_main.hpp: `readyport-stress --explore NAME`: every schedule of a pinned
// small world (small_worlds.hpp), or of all of them, up to --preemptions, fewest preemptions
// first (readyport/fake/sim_explorer.hpp). Prints per world the schedules run, the branches
// pruned by sleep sets, the classes under the dependence relation, the observably distinct runs
// and the distinct traces, the most decisions a schedule took, the time, and "complete to bound
// K" or where it stopped. A failure prints the verdict and the failing schedule's preemptions,
// writes a bundle (files/bundle.hpp: explore-<world>.json in --bundle-dir) and prints the
// commands that replay it (--replay BUNDLE) and run it alone (--schedule).
//
// Ownership: none kept. Threading: the calling thread. Errors: the exit status (0 every schedule
// passed, 1 a schedule failed, 2 a --schedule that names no runnable thread at some decision or
// a bundle that could not be written).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/stress_options.hpp"
#include "readyport/status.hpp"

namespace readyport {

int stress_explore_main(const StressOptions& options, const std::vector<std::string>& command_line,
                        std::ostream& out);

// One schedule of a small world: what --schedule and the replay of an explore bundle run.
struct StressScheduleRun {
  Status verdict;
  std::string trace_hash;  // 16 hex digits
  std::uint32_t preemptions = 0;
  std::uint32_t faults = 0;
  std::uint64_t decisions = 0;
};
// Runs `schedule` ("2,1,1,...") of world `world` with `faults` allowed (0: no fault site is a
// choice). Fails with kInvalidArgument on an unknown world, a malformed schedule, or one that
// names at some decision a thread that cannot run there.
Result<StressScheduleRun> stress_explore_run_schedule(const std::string& world,
                                                      const std::string& schedule,
                                                      std::uint32_t faults);

}  // namespace readyport
