// stress/jobs/summary_json.hpp: the main job's summary as JSON (`readyport-stress --json FILE`),
// for CI and scripts. One object (docs/replay.md shows one):
//   format ("readyport-stress-summary"), format_version 1, readyport {version, commit, compiler,
//   build, canary}, options (the run options) and invocation (the rest of the command line), shard,
//   first_seed, seeds_planned, seeds_run, passed, failed (the range's seeds), corpus {dir, note,
//   entries, passed, failed}, failures [{seed, source ("seeds"|"corpus"), entry, status,
//   signature, message, bundle}] (every one, the corpus's included), failures_total,
//   stopped_early, totals {...}, oracle_judgement {rules {"O1": {judged, violated, ambiguous,
//   unjudged}, ...}, bounds_hit {closed_unremoved, ended_keys, orphans, tombstones: times each
//   made it forget}}, coverage
//   {row: count} (the oracle's rows), coverage_zero_rows [...], faults_fired {site: count}, os
//   ("fake"|"windows"), figures {notifications, port_calls,
//   port_calls_per_notification, remove_ored_with_in, remove_separate, stale_packets}
//   (run_figures.hpp), seed_hashes [{seed, trace_hash}] (the range's seeds in order, at most
//   kStressSeedHashesMax) and seed_hashes_left_off, seconds (wall), jobs, steps_all (scheduler
//   steps of every seed, corpus included), seeds_per_second and scheduled_calls_per_second (per
//   wall second), exit_status.
//
//   Json summary = stress_summary_json(options, run_summary, figures);
//
// Ownership: values. Threading: reentrant. Errors: none.
#pragma once

#include "cli/stress_options.hpp"
#include "files/json_fields.hpp"
#include "jobs/run_figures.hpp"
#include "jobs/run_summary.hpp"

namespace readyport {

inline constexpr const char* kStressSummaryFormat = "readyport-stress-summary";

Json stress_summary_json(const StressOptions& options, const StressRunSummary& summary,
                         const StressFigures& figures);
// The `oracle_judgement` object alone (also in bundles).
Json stress_judgement_json(const OracleJudgement& judgement);
// The `figures` object alone.
Json stress_figures_json(const StressFigures& figures);

}  // namespace readyport
