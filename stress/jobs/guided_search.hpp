// stress/jobs/guided_search.hpp: the guided search (`readyport-stress --guided N`): a corpus of
// inputs kept when they reach coverage no input reached before, mutated and run again, each run
// judged as every seed is (docs/coverage.md).
//
// An input is a seed's world with its own schedule and faults: the seed (its workload, the
// workload's draws, the fake's options), the scheduler's seed (StressOptions::schedule_seed), the
// strategy and depth, and the fault plan (drawn from the seed, or pinned hits `site#n`). Its
// coverage is the set of (slot state, event, engine context) tuples (slot_tuples.hpp) and of
// coverage rows (stress_coverage_rows, the fault sites' rows included) it reached. The search:
//   1. runs the entries of --guided-from DIR first when given (a corpus; canary entries left
//      out), then seeds S, S+1, ... (--first-seed; kGuidedStartSeeds of them) as they are;
//   2. then, again and again, picks a kept input (the rarer the coverage it reached, the more
//      often: where coverage is thin; a tuple one part away from a tuple still to find weighs
//      more, the more such tuples there are) and mutates one of its parts: another schedule (a new
//      scheduler seed), its faults (the pinned hits that fired, with one removed, added or
//      moved), another world under the same schedule and faults (a new seed), or another strategy
//      or depth;
//   3. keeps the mutant when it reached a tuple or a row no input had reached.
// Every run is judged in full (the oracles, the workload's checks); a failure is printed with its
// replay command and written as a bundle, `<bundle dir>/guided-<run>-seed-<S>.json`, which
// `--replay` runs as any other (its options carry the schedule seed and the pinned plan).
// With --unguided the same loop runs seeds S, S+1, ... with no mutation: the baseline the search
// is compared with (ci/compare_search.sh), measured the same way.
//
// The search is deterministic for a budget in runs (--guided N, from --first-seed); a budget in
// CPU time (--guided-seconds) ends wherever the clock says (for comparisons and the nightly).
//
// Ownership: values. Threading: the calling thread runs every input (one at a time; the abort
// handler names the input that aborted). Errors: a failing input is the run's failure (exit 1);
// bad options were refused by the parser.
#pragma once

#include <string>
#include <vector>

#include "cli/stress_options.hpp"

namespace readyport {

// Seeds run as they are before the first mutation.
inline constexpr std::uint64_t kGuidedStartSeeds = 16;
// Inputs kept at most (the corpus's bound; past it a new input replaces nothing and is dropped).
inline constexpr std::size_t kGuidedCorpusMax = 4096;

// Runs the search with `options` (guided_runs or guided_seconds set); prints its progress and its
// summary; returns the exit status (0: every input passed; 1: a failure, or with
// --require-coverage a tuple problem).
int stress_guided_main(const StressOptions& options, const std::vector<std::string>& command_line);

}  // namespace readyport
