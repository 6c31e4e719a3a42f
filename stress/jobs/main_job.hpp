// stress/jobs/main_job.hpp: readyport-stress's run mode, the main job. First the regression corpus
// (corpus.hpp; each entry's seed with its own options), then this shard's seeds of the range;
// every failure prints its report and writes its bundle (`<bundle dir>/seed-<S>.json`, a corpus
// entry's `seed-<S>-corpus-<entry>.json`); at the end the summary (every failing seed and every
// bundle), the coverage table, and with --json / --markdown the same for machines.
//
//   int exit_status = stress_main_job(options, command_line);
//
// With --os fake the corpus entries and the seeds run on options.jobs runner threads
// (seed_pool.hpp), each seed in its own world, and are taken back in order: every line printed,
// every figure, the failure list and --stop-on-failure's first failure (the lowest failing seed)
// are those of a serial run; only the wall time and the rates differ. --os windows runs one seed at
// a time. With --os fake (and not --in-process, on a platform with fork) the sweep runs in child
// processes (sweep_supervisor.hpp): a seed that aborts, crashes or hangs is that seed's failure,
// the rest run, and the summary is the same as in one process.
//
// Ownership: none kept. Threading: the process's main thread (stress_run_seed's rule). Errors: the
// exit status: 0 every seed and entry passed (and with --require-coverage every coverage row was
// reached), 1 otherwise, 2 when the corpus given cannot be read or an output cannot be written,
// 77 with --os windows where WindowsOs::create() fails with kUnavailable (it prints
// `skipped: <status>`). With --os windows the seeds run on real_os_run.hpp's world within
// --seconds-max and --connections-max (no corpus: its entries are simulated seeds), a failing
// seed also writes its trace (--trace-out, or seed-<S>.trace beside its bundle), and a run still
// going 60 s past --seconds-max is ended (exit 1).
#pragma once

#include <string>
#include <vector>

#include "cli/stress_options.hpp"

namespace readyport {

int stress_main_job(const StressOptions& options, const std::vector<std::string>& command_line);
// Whether the main job runs its sweep in child processes (sweep_supervisor.hpp): --os fake,
// no --in-process, and a platform with fork.
bool stress_main_job_supervised(const StressOptions& options);

}  // namespace readyport
