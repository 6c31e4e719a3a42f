// stress/jobs/abort_report.hpp: the last words of a run that aborts.
//
// A broken engine invariant asserts and aborts the process (assertions are never turned into
// errors). So that such a run still names its seed, the driver arms this before each seed: a
// SIGABRT handler then writes the seed, its parameters and replay command to stderr, what the
// oracle had found (stress_abort_violation), and, when a bundle path is armed, the seed's failure
// bundle with status "aborted" (bundle.hpp; no trace hash: the run never finished).
//
//   stress_abort_install();                            // once
//   stress_abort_arm(options, seed, &context, task);   // before each seed (context may be null)
//   SeedReport report = stress_run_seed(options, seed);
//
// Ownership: the armed options and context are copied. Threading: arm from the thread that runs
// the seed, before it (each runner of --jobs arms its own: stress_runner_current() in
// stress_run.hpp); the handler runs on whichever thread aborted and reports the seed of that
// thread's runner (stress_runner_of_thread: a logical thread of a running seed's world, or the
// runner itself). Errors: none reported. The handler is not async-signal-safe beyond its first
// write(2) (it builds strings and writes a file), which is acceptable only because the process is
// dying of an assertion, not of a signal from outside; with --jobs the other runners keep going
// meanwhile, and may touch nothing the handler reads but their own runner's entry. Several
// threads may abort at once, each for its own seed: each handler names its seed on the sweep's
// channel before it writes any file, and one that is done waits (up to 2 s) for the others
// before it returns and so ends the process, so that every seed that aborted is named.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cli/stress_options.hpp"
#include "files/bundle.hpp"

namespace readyport {

// No task of a sweep (a run that is not the main job's).
inline constexpr std::size_t kStressTaskNone = ~std::size_t{0};

void stress_abort_install();
// `context` null or with an empty path: no bundle is written on abort (its argv[0], when given,
// still names the binary in the replay command). `task`: the seed's index in the main job's sweep.
void stress_abort_arm(const StressOptions& options, std::uint64_t seed,
                      const StressBundleContext* context, std::size_t task = kStressTaskNone);
// In a child of the sweep supervisor (sweep_supervisor.hpp): the handler also writes
// {"type":"aborted","task":T,"bundle":...,"signature":...,"violation":...} to `fd`, naming the
// task that aborted and the bundle it is about to write (the parent writes one itself when that
// one is missing or cut short). -1: none (the default).
void stress_abort_channel(int fd);

}  // namespace readyport
