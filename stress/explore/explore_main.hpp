// stress/explore/explore_main.hpp: `readyport-stress --explore NAME`: every schedule of a pinned
// small world (small_worlds.hpp), or of all of them, up to --preemptions, fewest preemptions
// first (readyport/fake/sim_explorer.hpp). Prints per world the schedules run, the schedules
// pruned (none: no partial-order reduction yet, so every schedule within the bound runs), the
// distinct traces, the most decisions a schedule took, the time, and "complete to bound K" or
// where it stopped. A failure prints the verdict, the failing schedule's preemptions and the
// command that runs it alone (--schedule).
//
// Ownership: none kept. Threading: the calling thread. Errors: the exit status (0 every schedule
// passed, 1 a schedule failed, 2 a --schedule that names no runnable thread at some decision).
#pragma once

#include <ostream>

#include "cli/stress_options.hpp"

namespace readyport {

int stress_explore_main(const StressOptions& options, std::ostream& out);

}  // namespace readyport
