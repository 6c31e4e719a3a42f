// stress/jobs/run_summary.hpp: what one run of the main job adds up to (the corpus, the seed range,
// every failure with its bundle), and its printed summary. summary_json.hpp and
// summary_markdown.hpp write the same content for machines and for a CI job's summary page.
//
//   StressRunSummary summary = stress_summary_begin(options);
//   stress_summary_add_seed(summary, report);             // every seed of the range
//   stress_summary_add_failure(summary, failure);          // every failure, corpus or range
//   stress_summary_print(options, summary);                // the text summary on stdout
//
// Ownership: values. Threading: one thread. Errors: none (printing ignores stdout's errors).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/stress_options.hpp"
#include "runs/stress_run.hpp"

namespace readyport {

// One failing seed, of the corpus or of the range.
struct StressFailure {
  bool from_corpus = false;
  std::string entry;  // the corpus entry's file name ("" for a seed of the range)
  std::uint64_t seed = 0;
  std::string status;  // status_code_name (or "aborted")
  std::string message;
  std::string signature;  // stress_failure_signature
  std::string bundle;     // the bundle written; "" when it could not be
};

struct StressCorpusSummary {
  std::string dir;   // "" when no corpus ran
  std::string note;  // why none ran, when none did
  std::uint64_t entries = 0;
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
};

// Sums over the seeds of the range (the corpus is not in them: the figures stay comparable).
struct StressTotals {
  std::uint64_t seeds = 0;
  std::uint64_t failures = 0;
  std::uint64_t connections = 0;  // client and server connections added
  std::uint64_t notifications = 0;
  std::uint64_t port_calls = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t trace_lines = 0;
  std::uint64_t stale_packets = 0;
  std::uint64_t dropped_packets = 0;
  std::uint64_t quarantined = 0;
  std::uint64_t steps = 0;
  std::uint64_t switches = 0;
  // Seeds whose process died before they ended (sweep_supervisor.hpp): among the failures, and
  // judged only up to the death; none of their counts is in these totals.
  std::uint64_t seeds_cut = 0;
  NamedCounts coverage;       // stress_coverage_rows() order, summed over seeds
  SlotTuples tuples;          // states in context (slot_tuples.hpp), summed over seeds
  OracleJudgement judgement;  // each rule's judged/violated/ambiguous/unjudged and bounds, summed
};

// The "oracle judgement" lines: a headline (every rule judged, or which were not, which were
// ambiguous, which met nothing to judge in this run), the per-rule table, and each bound the
// oracle hit. Returns the number of reasons the run was not judged in full: bounds hit plus
// unjudged events.
std::uint64_t stress_judgement_print(const OracleJudgement& judgement);

// Per-seed trace hashes kept in the summary at most (the JSON summary lists them; past it, the
// rest are counted in seed_hashes_left_off).
inline constexpr std::size_t kStressSeedHashesMax = 100'000;

// One seed of the range and its trace hash.
struct StressSeedHash {
  std::uint64_t seed = 0;
  std::string trace_hash;
};

// The bounds on each seed and on the process that runs it, as the summary prints them.
struct StressLimits {
  std::uint64_t steps_max = 0;      // scheduler steps (simulated) or seam calls (real threads)
  std::uint32_t trace_mb_max = 0;   // real threads: a seed's trace kept (0: not this runtime)
  std::uint32_t memory_mb_max = 0;  // a child process of the sweep (0: none)
  bool memory_data_limit = false;   // its data segment too (RLIMIT_DATA), not only resident
  std::uint32_t hang_seconds = 0;   // a child without a finished seed (0: none, in one process)
};

// "a seed: 2000000 steps, ...; a child process: ...": the limits line's text.
std::string stress_limits_text(const StressLimits& limits);

struct StressRunSummary {
  std::uint64_t seeds_planned = 0;  // this shard's seeds
  StressTotals totals;
  StressLimits limits;
  std::vector<StressSeedHash> seed_hashes;  // the range's seeds in order, kStressSeedHashesMax
  std::uint64_t seed_hashes_left_off = 0;
  StressCorpusSummary corpus;
  std::vector<StressFailure> failures;  // every one, in the order they happened
  bool stopped_early = false;           // --stop-on-failure stopped the run
  // Child processes of the sweep that died with no seed to blame (sweep_policy.hpp), and the
  // supervisor's own failure: each fails the run, and is printed.
  std::vector<std::string> unblamed_deaths;
  std::string sweep_error;
  double seconds = 0;      // wall time (reporting only)
  std::uint32_t jobs = 1;  // seeds run at once (--jobs)
  // Scheduler steps (scheduled calls) of every seed run, the corpus's included: with the seeds
  // run (corpus entries included) over `seconds`, the run's speed.
  std::uint64_t steps_all = 0;
  // The corpus entries' tuples (the range's are in totals): states in context counts both.
  SlotTuples corpus_tuples;
  std::size_t coverage_zero_rows = 0;  // filled by stress_summary_print
  // Allowed tuples neither reached nor listed unreachable, listed ones reached, stale rules
  // (slot_tuple_reasons.hpp): filled by stress_summary_print.
  std::size_t tuple_problems = 0;
  std::uint64_t oracle_not_judged = 0;  // bounds hit + unjudged events (stress_summary_print)
  int exit_status = 0;                  // filled by the driver at the end
};

// A seed of the range: its share of the run's sums (sweep_record.hpp sends it between processes).
struct StressSeedShare {
  std::uint64_t seed = 0;
  std::string trace_hash;  // "" when the seed never finished (its process died)
  StressTotals totals;     // this seed alone: seeds 1, failures 0 or 1
};

// StressTotals's counters (every field but coverage and judgement), in one order: what
// stress_totals_add sums and sweep_record.hpp writes as one array.
const std::vector<std::uint64_t StressTotals::*>& stress_totals_counters();

StressSeedShare stress_seed_share(const SeedReport& report);
// A seed whose process died before its report: one failing seed, nothing else counted.
StressSeedShare stress_seed_share_lost(std::uint64_t seed);
void stress_totals_add(StressTotals& totals, const StressTotals& more);

StressRunSummary stress_summary_begin(std::uint64_t seeds_planned);
void stress_summary_add_share(StressRunSummary& summary, const StressSeedShare& share);
// stress_summary_add_share(summary, stress_seed_share(report)).
void stress_summary_add_seed(StressRunSummary& summary, const SeedReport& report);
void stress_summary_add_failure(StressRunSummary& summary, StressFailure failure);
// Prints the summary block, every failing seed with its bundle, and the coverage table.
// Returns the number of zero coverage rows.
std::size_t stress_summary_print(const StressOptions& options, StressRunSummary& summary);
// The range's seeds by how they ended: passed + failed + cut == totals.seeds (cut: their process
// died in them); not_run: planned but never run (the run stopped early).
struct StressSeedAccount {
  std::uint64_t passed = 0;
  std::uint64_t failed = 0;
  std::uint64_t cut = 0;
  std::uint64_t not_run = 0;
};
StressSeedAccount stress_seed_account(const StressRunSummary& summary);
// Seeds run (corpus entries included) per wall second, and scheduled calls (steps_all) per wall
// second; 0 when no time was measured.
double stress_summary_seeds_per_second(const StressRunSummary& summary);
double stress_summary_steps_per_second(const StressRunSummary& summary);
// "drawn per seed", "off" or the plan.
std::string stress_faults_description(const StressOptions& options);

}  // namespace readyport
