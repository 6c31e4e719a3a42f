// stress/runs/stress_run.hpp: one seed of readyport-stress.
//
// A seed names one whole world (one simulator, one oracle), a World
// (readyport/fake/world.hpp): Engine(FaultyOs(RecordingOs(FakeOs))) under SimScheduler,
// with everything drawn from the seed: the chaos workload's mix
// (stress/workload/chaos_workload.hpp, SeedStream::kWorkload), the fake's open-question switches
// (swarm over spec "Fake defaults", SeedStream::kSwarm), the fault plan (which sites are active and
// how often each fires, SeedStream::kFaults) and the schedule (random or PCT,
// SeedStream::kSchedule). The run has two phases, chaos (faults on) and liveness (faults off;
// everything must converge within a bounded virtual time). The verdict comes from the OS-side
// LifetimeOracle, which reads the run's trace line by line (seam calls and results, packets
// dequeued, the workload's own handler lines, and the engine's observer events as a cross-check
// only), from the workload's checks, and from the fake's ground truth at the end (nothing left
// open, registered, queued or waiting).
//
//   readyport::SeedReport report = readyport::stress_run_seed(options, 42);
//   if (!report.status.ok()) puts(report.status.to_string().c_str());
//
// Ownership: the report owns its strings. A run that ends in a deadlock or at the step limit
// abandons its logical threads (sim_scheduler.hpp); their world is then kept alive, unreachable
// from the report, until the process exits.
// Threading: call from a thread that no runtime started; several threads may each run a seed at
// once (--jobs), each naming itself a runner first (stress_runner_set), and the seeds share no
// state but the list of abandoned worlds (locked). Errors: in the report's status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/stress_options.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/slot_tuples.hpp"
#include "readyport/status.hpp"
#include "workload/chaos_workload.hpp"

namespace readyport {

// What a seed draws, besides its schedule.
struct SeedParameters {
  std::uint64_t seed = 0;
  std::uint64_t schedule_seed = 0;  // the scheduler's (StressOptions::schedule_seed, or seed)
  SimStrategy strategy = SimStrategy::kRandom;
  ChaosWorkload workload;
  std::uint32_t batch_count = 64;  // EngineOptions::batch_count
  FakeOptions fake;                // the swarm's reading of each open question
  FaultPlan plan;                  // after --faults
};

// Draws a seed's parameters; a pure function of (options, seed).
SeedParameters stress_parameters(const StressOptions& options, std::uint64_t seed);
// One line, "seed=.. strategy=.. clients=.. ... fake=[..] faults=..", printed with every failure.
std::string stress_parameters_line(const SeedParameters& parameters);
// The fake's drawn options, "key_strict=1<sep>drop_on_disable=0<sep>..." (in that line's fake=[]
// with spaces, in a trace header with commas).
std::string stress_fake_options_text(const FakeOptions& fake, char separator);

// The StressStrategy that runs every seed with `strategy` (a seed's drawn strategy, pinned).
// kRoundRobin has none: it asserts.
StressStrategy stress_strategy_of(SimStrategy strategy);

// A named count: coverage rows and faults fired, in a fixed order.
using NamedCounts = std::vector<std::pair<std::string, std::uint64_t>>;

struct SeedReport {
  SeedParameters parameters;
  Status status;       // ok, or the first thing that went wrong
  ChaosCounts counts;  // the workload's counters
  EngineStats engine;  // after stop()
  OracleCounts oracle;
  NamedCounts coverage;    // the oracle's coverage rows, then one row per fault site fired
  SlotTuples tuples;       // (slot state, event, engine context) tuples the engine reported
  SimStats sim;            // zero in the free runtime
  std::string trace_hash;  // 16 hex digits
  std::uint64_t trace_lines = 0;
  std::vector<std::string> trace_tail;  // the last lines of a failure (stress_tail_fill)
  std::string trace_text;               // the full trace, only with StressOptions::trace
  // Real threads: trace_text stopped at --trace-mb-max (a prefix; the run was judged whole).
  bool trace_cut = false;
  // The faults that fired by the plan, as a plan of pinned hits (`site#n,...`, or `none`): with
  // the same options otherwise, `--faults <fired_hits>` replays this run exactly. Empty when more
  // fired than a plan holds (FaultyOs::fired_hits_complete() false).
  std::string fired_hits;
};

// Runs one seed as described above.
SeedReport stress_run_seed(const StressOptions& options, std::uint64_t seed);
// Runs `parameters` (drawn, or made by a mode of its own such as --scale) as a seed's world:
// stress_run_seed is stress_run_parameters(options, stress_parameters(options, seed)).
SeedReport stress_run_parameters(const StressOptions& options, const SeedParameters& parameters);
// A failing simulated seed's trace tail (SeedReport::trace_tail), for its report and bundle. A
// simulated run keeps none: a copy of every event, for the few seeds that fail, costs more than
// running a failure again. So this runs `report`'s parameters again with the tail kept, on the
// calling thread (which must be free to run a seed: stress_runner_set); the simulation being
// deterministic, it is the same run, and a re-run with another trace hash or line count adds
// "not deterministic" to the status. Nothing to do for a passing report, one with its tail, or
// the free runtime (which keeps the tail: its runs do not replay).
void stress_tail_fill(const StressOptions& options, SeedReport& report);

// The names of every coverage row the default run must reach (coverage obligations), in order.
std::vector<std::string> stress_coverage_rows();

// Seeds run at once in one process (--jobs) at most: runners 0 .. kStressRunnersMax - 1.
inline constexpr std::uint32_t kStressRunnersMax = 64;
// No runner: the calling thread runs no seed and belongs to no running seed's world.
inline constexpr std::uint32_t kStressRunnerNone = ~std::uint32_t{0};

// Names the calling thread runner `runner` (< kStressRunnersMax) for the seeds it runs from now
// on. A thread never named is runner 0 (the serial driver's thread). Two threads running seeds
// at the same time must be different runners (asserted when a seed starts).
void stress_runner_set(std::uint32_t runner);
// The calling thread's runner (0 unless set).
std::uint32_t stress_runner_current();
// The runner whose seed the calling thread is working for: a logical thread of a running seed's
// runtime, else the calling thread's own runner. For the abort handler, which may run on any of
// a world's threads. Never blocks.
std::uint32_t stress_runner_of_thread();

// The oracle's first violation in the seed runner `runner` is running, if any (never blocks; ""
// otherwise). For the driver's last words when a broken engine assertion aborts the process in
// the middle of a seed. Reads that runner's world without a lock: call it only from a process that
// is dying (another runner's world may be going away meanwhile).
std::string stress_abort_violation(std::uint32_t runner);
// The whole trace so far of that runner's seed, when the run keeps it (real threads) and no line
// is being recorded (never blocks; false otherwise). The same caveats.
bool stress_abort_trace(std::uint32_t runner, std::string* text_out);

// The one command that replays `report`'s seed with the built binary `program` (no install, no
// rebuild), printed with each failure.
std::string stress_replay_command(
    const StressOptions& options, const SeedReport& report,
    std::string_view program = "build/default/stress/readyport-stress");

}  // namespace readyport
