// stress/stress_run.hpp: one seed of readyport-stress.
//
// A seed names one whole world (DESIGN.md "One simulator, one oracle"):
//   Engine(FaultyOs(RecordingOs(FakeOs))) under SimScheduler,
// with everything drawn from the seed: the chaos workload's mix (stress/chaos_workload.hpp,
// SeedStream::kWorkload), the fake's open-question switches (swarm over spec "Fake defaults",
// SeedStream::kSwarm), the fault plan (which sites are active and how often each fires,
// SeedStream::kFaults) and the schedule (random or PCT, SeedStream::kSchedule). The run has two
// phases, chaos (faults on) and liveness (faults off; everything must converge within a bounded
// virtual time). The verdict comes from the OS-side LifetimeOracle, which reads the run's trace
// line by line (seam calls and results, packets dequeued, the workload's own handler lines, and
// the engine's observer events as a cross-check only), from the workload's checks, and from the
// fake's ground truth at the end (nothing left open, registered, queued or waiting).
//
//   readyport::SeedReport report = readyport::stress_run_seed(options, 42);
//   if (!report.status.ok()) puts(report.status.to_string().c_str());
//
// Ownership: the report owns its strings. A run that ends in a deadlock or at the step limit
// abandons its logical threads (sim_scheduler.hpp); their world is then kept alive, unreachable
// from the report, until the process exits.
// Threading: call from one thread that no runtime started. Errors: in the report's status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chaos_workload.hpp"
#include "readyport/fake/fake_options.hpp"
#include "readyport/fake/fault_plan.hpp"
#include "readyport/fake/lifetime_oracle.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/status.hpp"
#include "stress_options.hpp"

namespace readyport {

// What a seed draws, besides its schedule.
struct SeedParameters {
  std::uint64_t seed = 0;
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

// A named count: coverage rows and faults fired, in a fixed order.
using NamedCounts = std::vector<std::pair<std::string, std::uint64_t>>;

struct SeedReport {
  SeedParameters parameters;
  Status status;             // ok, or the first thing that went wrong
  ChaosCounts counts;        // the workload's counters
  EngineStats engine;        // after stop()
  OracleCounts oracle;
  NamedCounts coverage;      // the oracle's coverage rows, then one row per fault site fired
  SimStats sim;              // zero in the free runtime
  std::string trace_hash;    // 16 hex digits
  std::uint64_t trace_lines = 0;
  std::vector<std::string> trace_tail;  // the last lines, kept for failure reports
  std::string trace_text;    // the full trace, only with StressOptions::trace
  // The faults that fired by the plan, as a plan of pinned hits (`site#n,...`, or `none`): with
  // the same options otherwise, `--faults <fired_hits>` replays this run exactly. Empty when more
  // fired than a plan holds (FaultyOs::fired_hits_complete() false).
  std::string fired_hits;
};

// Runs one seed as described above.
SeedReport stress_run_seed(const StressOptions& options, std::uint64_t seed);

// The names of every coverage row the default run must reach (coverage obligations), in order.
std::vector<std::string> stress_coverage_rows();

// The oracle's first violation in the seed being run, if any (never blocks; "" otherwise). For the
// driver's last words when a broken engine assertion aborts the process in the middle of a seed.
std::string stress_abort_violation();

// The one command that replays `report`'s seed with the built binary `program` (no install, no
// rebuild), printed with each failure.
std::string stress_replay_command(const StressOptions& options, const SeedReport& report,
                                  std::string_view program = "build/default/stress/readyport-stress");

}  // namespace readyport
