// The main job's part of a seed's world. See seed_world.hpp.
#include "runs/seed_world.hpp"

#include <string>

namespace readyport {

ChaosResult stress_run_workload(World& world, const ChaosWorkload& workload) {
  ChaosHooks hooks;
  hooks.record = [&world](TraceEvent& event) { world.record(event); };
  hooks.set_faults_enabled = [&world](bool enabled) { world.os().set_enabled(enabled); };
  return run_chaos_workload(world.os(), world.engine(), workload, hooks);
}

Status stress_verdict(const Status& run_status, World& world, const ChaosResult& result) {
  return world.verdict(run_status, result.status, result.engine);
}

void stress_fill_report(const StressOptions& options, World& world, const ChaosResult& result,
                        SeedReport& report) {
  report.counts = result.counts;
  report.engine = result.engine;
  report.oracle = world.oracle().counts();
  report.coverage = world.coverage();
  report.tuples = world.tuples();
  report.coverage.emplace_back("deep.listener_add_retries_exhausted",
                               result.counts.listener_retries_exhausted);
  if (world.os().fired_hits_complete()) {
    report.fired_hits = FaultPlan::of_hits(world.os().fired_hits()).to_string();
  }
  report.trace_hash = world.trace().hash_hex();
  report.trace_lines = world.trace().line_count();
  if (!report.status.ok()) {
    report.trace_tail = world.trace().tail();
  }
  const bool failed_whole = !report.status.ok() && world.trace().keeps_full();
  if (failed_whole || options.trace || !options.trace_out.empty()) {
    report.trace_text = world.trace().text();
    report.trace_cut = world.trace().full_cut();
  }
}

}  // namespace readyport
