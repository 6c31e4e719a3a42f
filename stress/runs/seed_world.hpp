// stress/runs/seed_world.hpp: the main job's part of a seed's World (readyport/fake/world.hpp), the
// same for every backend (simulated, real threads, a real Os): running the chaos workload in it,
// the verdict, and the report's figures.
//
// Ownership and lifetime: borrows the world, which outlives each call. Threading:
// stress_run_workload on the world's first thread (in World::run); the others after the run,
// from the thread that made the world. Errors: in the returned Status and the report.
#pragma once

#include "cli/stress_options.hpp"
#include "readyport/fake/world.hpp"
#include "runs/stress_run.hpp"
#include "workload/chaos_workload.hpp"

namespace readyport {

// Runs both phases of the workload on the world's engine, its lines in the world's trace.
ChaosResult stress_run_workload(World& world, const ChaosWorkload& workload);

// The verdict (World::verdict): the oracle, the run itself (`run_status`: a step limit or a hang),
// the workload's own checks, the engine's counts against the backend's, nothing left open.
Status stress_verdict(const Status& run_status, World& world, const ChaosResult& result);

// Everything the report carries after the verdict (report.status set): counts, coverage rows,
// fired hits, the trace's hash, its tail for a failure, and its text for a failure whose trace
// was kept whole (real threads, a real Os) or when --trace / --trace-out asks.
void stress_fill_report(const StressOptions& options, World& world, const ChaosResult& result,
                        SeedReport& report);

}  // namespace readyport
