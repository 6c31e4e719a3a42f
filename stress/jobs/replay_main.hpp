// stress/jobs/replay_main.hpp: `readyport-stress --replay FILE`: runs a failure bundle's seed (or a
// corpus entry's) with its options exactly, prints the verdict and compares it with the record:
//
//   replay: seed 28 from stress-failures/seed-28.json (seed range, commit 85d8eff992c9)
//   verdict: internal: O2 handler after the end at line 2988: ...
//   recorded: internal: O2 ... (signature O2: the same)
//   trace hash: 49aa333ffc13507a (recorded 49aa333ffc13507a: matches)
//   replay: reproduced exactly (verdict and trace hash)
//
// A bundle written by another commit (or compiler) may not replay the same run: a warning says
// so, the replay goes on. The replay is only as exact as the runtime: a bundle of --runtime free
// (real threads) replays its workload, not its interleaving.
//
//   int exit_status = stress_replay_main(options, command_line);
//
// Ownership: none kept. Threading: the process's main thread. Errors: the exit status. A bundle:
// 0 when the verdict (the failure's signature) and the trace hash both match the record,
// kStressReplaySameVerdictOtherTrace (3) when only the verdict does, kStressReplayNotReproduced
// (4) when the verdict differs (it passes now, or fails another way). A corpus entry (no record):
// 0 when it passes, 1 when it fails. 2 when the file cannot be read or is not a bundle or corpus
// entry (the message names the field), or --trace-out cannot be written. A seed that aborts the
// process aborts the replay too (after its note on stderr).
#pragma once

#include <string>
#include <vector>

#include "cli/stress_options.hpp"

namespace readyport {

inline constexpr int kStressReplaySameVerdictOtherTrace = 3;
inline constexpr int kStressReplayNotReproduced = 4;

int stress_replay_main(const StressOptions& options, const std::vector<std::string>& command_line);

}  // namespace readyport
