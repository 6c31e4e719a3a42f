// stress/cli/stress_options.hpp: the command line of readyport-stress (parsed with CLI11).
//
//   readyport-stress [--seeds N] [--first-seed S] [--shard I/N]   the main job: the regression
//                    [--strategy random|pct|mixed] [--depth D]    corpus first, then the seeds
//                    [--runtime sim|free] [--mechanism threads|fibers] [--steps-max N]
//                    [--faults drawn|off|PLAN]
//                    [--require-coverage] [--stop-on-failure] [--trace] [--verbose]
//                    [--corpus DIR|none] [--bundle-dir DIR] [--json FILE] [--markdown FILE]
//                    [--in-process | --hang-seconds S --memory-mb-max M] [--trace-mb-max T]
//   readyport-stress --os windows [--seeds N] [--seconds-max S] [--connections-max N] ...
//                    the echo workload over WindowsOs: real loopback sockets and threads (Windows
//                    builds only; exit 77 with `skipped: ...` where ProcessSocketNotifications
//                    is missing)
//                    [--jobs N]                                   N seeds at once (default: the
//                                                                 online CPUs, at most 64)
//   readyport-stress --scale [--connections N] [--workers W] [--seeds N] [--first-seed S]
//                    [--runtime sim|free]   the engine at scale (scale_run.hpp): 10,000
//                    connections and 8 workers by default, one seed, its figures
//   readyport-stress --seed S [run options]                       one seed (no corpus)
//   readyport-stress --guided N | --guided-seconds S [--first-seed S] [run options]
//                    the guided search (guided_search.hpp): seeds S.. as its start, then
//                    mutations of the inputs that reached new coverage
//   [--schedule-seed N]   the scheduler's seed for every seed (default: the seed's own)
//   [--stalls S:N,...]    threads kept off the CPU at those steps (simulation only)
//   readyport-stress --seed S --trace-out FILE [--trace-format text|chrome]
//   readyport-stress --seed S [...] --shrink [--corpus-entry FILE] [--actions-max N] ...
//   readyport-stress --replay BUNDLE [--trace] [--verbose] [--trace-out FILE [--trace-format F]]
//   readyport-stress --check-trace FILE [--runtime free]
//   readyport-stress --engine-case 'LINE'
//   readyport-stress --version | --help
//
// Both `--opt value` and `--opt=value`. Numbers are whole decimals in a stated range
// (cli/cli_number.hpp; `--seed -5` is refused). An option given twice, and options that cannot
// go together, are refused, never silently overridden: --seed with --seeds/--first-seed/--shard;
// --replay, --check-trace and --engine-case with any option that chooses or shapes a run.
//
// Ownership: plain values. Threading: none. Errors: parse returns a kInvalidArgument Status naming
// the bad argument; nothing is run then (the driver exits 2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/status.hpp"

namespace readyport {

// How a seed's schedule is chosen.
enum class StressStrategy : std::uint8_t {
  kRandom,        // SimStrategy::kRandom for every seed
  kPct,           // SimStrategy::kPct for every seed
  kMixed,         // even seeds random, odd seeds PCT (the default before the portfolio)
  kDelayBounded,  // SimStrategy::kDelayBounded (depth - 1 delays) for every seed
  kFair,          // SimStrategy::kFair for every seed
  kPortfolio,     // by seed % 4: random, PCT, delay-bounded, fair (the default)
};

// Where the engine's threads run.
enum class StressRuntime : std::uint8_t {
  kSim,   // SimScheduler: one thread at a time, replays from the seed (the default)
  kFree,  // FreeRuntime: real threads (for ThreadSanitizer); not replayable
};

// Which Os the engine runs on.
enum class StressOs : std::uint8_t {
  kFake,     // FakeOs under --runtime (the default): replayable, ground truth checked
  kWindows,  // WindowsOs: real loopback sockets, real threads (implies the free runtime)
};

// The format of --trace-out's file.
enum class StressTraceFormat : std::uint8_t {
  kText,    // the trace as recorded (trace.hpp's lines; what --check-trace reads)
  kChrome,  // Chrome trace-event JSON (stress/chrome_trace/), for Perfetto
};

// --jobs at most (seeds run at once in one process).
inline constexpr std::uint32_t kStressJobsMax = 64;
// --hang-seconds at most (a day).
inline constexpr std::uint32_t kStressHangSecondsMax = 86'400;
// --memory-mb-max and --trace-mb-max at most (1 TiB).
inline constexpr std::uint32_t kStressMemoryMbMax = 1'048'576;
// --scale's bounds: connections (client and server ends together) and workers.
inline constexpr std::uint32_t kStressScaleConnectionsMin = 8;
inline constexpr std::uint32_t kStressScaleConnectionsMax = 20'000;
inline constexpr std::uint32_t kStressScaleWorkersMax = 64;

// --explore's largest --preemptions and --faults.
inline constexpr std::uint32_t kStressExploreBoundMax = 8;

struct StressOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 300;      // seeds run (before sharding)
  std::uint32_t shard_index = 0;  // 0-based; seeds whose offset % shard_count == shard_index
  std::uint32_t shard_count = 1;
  bool seed_given = false;  // --seed: one seed, not the main job (no corpus by default)
  StressStrategy strategy = StressStrategy::kPortfolio;
  std::uint32_t pct_depth = 3;
  StressRuntime runtime = StressRuntime::kSim;  // kFree with kWindows
  // --mechanism: how SimScheduler runs the logical threads (same traces either way).
  SimMechanism mechanism = sim_mechanism_default();
  StressOs os = StressOs::kFake;
  // --os windows only: the wall-clock budget of the whole run (no seed starts after it; a run
  // that overruns it by a grace period is ended), and the connections (clients and raw peers)
  // all seeds together may open.
  std::uint32_t seconds_max = 60;
  std::uint32_t connections_max = 300;
  // A seed's work at most: scheduler steps (simulated), seam calls (real threads, --runtime
  // free); past it the seed fails (a step limit; on real threads a livelock report). Above the
  // heaviest seed the draws allow: 12 clients and 4 peers echoing 9,000 bytes in 1-byte chunks
  // while spurious WSAEWOULDBLOCK outages refuse 16 of every 19 tries, about 30 M (the heaviest
  // measured: about 5 M; the median seed: 7,500).
  std::uint64_t steps_max = 50'000'000;
  // The fault plan: drawn from each seed (swarm, the default), none, or exactly `fault_plan`.
  enum class Faults : std::uint8_t { kDrawn, kOff, kPlan } faults = Faults::kDrawn;
  std::string fault_plan;         // with kPlan: FaultPlan::to_string() syntax, checked by parse
  bool require_coverage = false;  // exit 1 when a coverage row is zero at the end
  bool stop_on_failure = false;   // stop at the first failing seed (canary runs)
  bool trace = false;             // print each seed's full trace (use with --seed)
  bool verbose = false;           // print each seed's parameters and result
  bool help = false;
  bool version = false;  // print the version and the git commit
  // Judge this recorded trace file with the LifetimeOracle instead of running seeds: every rule,
  // whatever recorded it; its header line (trace_header.hpp) is printed, and a --runtime that
  // contradicts it is refused.
  std::string check_trace;
  bool runtime_given = false;  // --runtime was on the command line
  // Write the full trace of the (one) seed run to this file (needs one seed, or --replay).
  std::string trace_out;
  StressTraceFormat trace_format = StressTraceFormat::kText;
  // Shrink the failing seed (needs one seed): fewer fault sites, a lower PCT depth, a smaller
  // workload, while it still fails with the same rule; prints the minimal replay command.
  bool shrink = false;
  // With --shrink: also write the minimal case as a regression corpus entry (stress/corpus/),
  // marked with this build's canary when one is planted.
  std::string corpus_entry_out;
  // Caps on the drawn workload (kNoCap: none): director actions, clients, raw peers. Set by
  // --shrink and printed in its replay command.
  static constexpr std::uint32_t kNoCap = ~std::uint32_t{0};
  std::uint32_t actions_max = kNoCap;
  std::uint32_t clients_max = kNoCap;
  std::uint32_t peers_max = kNoCap;
  // --schedule-seed: the scheduler's seed for every seed run (0: each seed's own). A seed's
  // workload, its draws and its fault plan come from the seed; its interleaving from this. The
  // guided search (guided_search.hpp) moves it to try another schedule of the same world.
  std::uint64_t schedule_seed = 0;
  // --stalls step:steps,...: threads kept off the CPU in every seed's schedule (sim_stall.hpp;
  // the simulation only). A corpus entry made from a trace pins one with them; the guided search
  // adds and moves them (a preemption where a strategy would not make one).
  std::vector<SimStall> stalls;
  // --guided N: the guided search (guided_search.hpp) runs N inputs, or for --guided-seconds S
  // of this process's CPU time (not deterministic: for the comparison and the nightly).
  std::uint64_t guided_runs = 0;
  std::uint32_t guided_seconds = 0;
  bool unguided = false;
  // --guided-corpus-out DIR: the fewest kept inputs that reach the tuples seeds 1..300 do not,
  // written there as corpus entries.
  std::string guided_corpus_out;
  // --guided-from DIR: the corpus entries of DIR (canary entries left out) are the search's first
  // inputs, before its fresh seeds (AFL's input directory): a search goes on from what earlier
  // searches kept.
  std::string guided_from;
  // --replay FILE: run a failure bundle's (or corpus entry's) seed with its options exactly.
  std::string replay;
  // --engine-case LINE: replay one case of the engine property
  // (properties/engine/engine_replay.hpp).
  bool engine_case_given = false;
  std::string engine_case;
  // --explore NAME: every schedule of a pinned small world (or "all") up to `preemptions`, at
  // most `schedules_max` schedules a world; --schedule LIST runs the one schedule LIST names
  // (explore/explore_main.hpp).
  std::string explore;
  std::uint32_t preemptions = 2;     // at most kStressExploreBoundMax, as explore_faults
  std::uint32_t explore_faults = 0;  // --faults F with --explore: faults a schedule may fire
  std::uint64_t schedules_max = 1'000'000;
  std::string explore_schedule;
  // Where every failing seed writes its bundle, seed-<S>.json (relative to the working directory).
  std::string bundle_dir = "stress-failures";
  // The main job's seeds (and corpus entries) run on this many threads at once, each seed in its
  // own world, taken back in seed order (seed_pool.hpp): the same output as 1 but the wall time.
  // The command line's default is the online CPUs (at most kStressJobsMax); --os windows, --seed,
  // --shrink and --replay run one seed at a time.
  std::uint32_t jobs = 1;
  // The main job's sweep runs in child processes (sweep_supervisor.hpp) unless in_process: a seed
  // that aborts, crashes or finishes nothing for hang_seconds (wall clock) is that seed's failure.
  bool in_process = false;
  std::uint32_t hang_seconds = 300;
  // A child process of the sweep holds at most this much memory, in MiB (its resident memory,
  // watched by the parent; and its data segment, where no sanitizer runs): past it the child is
  // killed and its seed fails (sweep_supervisor.hpp). 0: no limit.
  std::uint32_t memory_mb_max = 4096;
  // Real threads (--runtime free): a seed keeps at most this much of its recorded trace, in MiB
  // (the trace is kept for a failure's trace file); past it only the prefix is kept, and the run
  // goes on judged whole. The seed's memory stays bounded whatever it does.
  std::uint32_t trace_mb_max = 64;
  // --scale: the engine with scale_connections connections (client and server ends, even) and
  // scale_workers workers, instead of the main job (scale_run.hpp).
  bool scale = false;
  std::uint32_t scale_connections = 10'000;
  std::uint32_t scale_workers = 8;
  std::string json_out;      // --json FILE: the run's summary as JSON (written, not appended)
  std::string markdown_out;  // --markdown FILE: a Markdown table appended ($GITHUB_STEP_SUMMARY)
  // The regression corpus replayed before the seed range: the source tree's stress/corpus
  // (kDefault; skipped with a note when that directory is missing, and with --seed), none, or
  // `corpus_dir` (an error when missing).
  enum class Corpus : std::uint8_t { kDefault, kNone, kDir } corpus = Corpus::kDefault;
  std::string corpus_dir;
};

// The default of --jobs: the online CPUs, at least 1, at most kStressJobsMax.
std::uint32_t stress_jobs_default();
// Parses argv[1..argc). Errors: kInvalidArgument naming the argument, ending with a pointer to
// --help.
Result<StressOptions> stress_options_parse(int argc, const char* const* argv);
// The --help text: every option with its range, then examples.
std::string stress_usage();
const char* stress_strategy_name(StressStrategy strategy);
const char* stress_runtime_name(StressRuntime runtime);
const char* stress_trace_format_name(StressTraceFormat format);
const char* stress_os_name(StressOs os);

// Whether this build can run --os windows (a Windows build: WindowsOs exists).
bool stress_windows_build();
// The inverses (false for any other text).
bool stress_strategy_parse(std::string_view text, StressStrategy* strategy_out);
bool stress_runtime_parse(std::string_view text, StressRuntime* runtime_out);
// "drawn", "off" or the plan; the value --faults takes back.
std::string stress_faults_text(const StressOptions& options);
// Sets options->faults/fault_plan from --faults's value (drawn, off, none, or a FaultPlan).
// Errors: the plan's parse error.
Status stress_faults_set(std::string_view text, StressOptions* options);

}  // namespace readyport
