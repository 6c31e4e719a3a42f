#include "jobs/stress_shrink.hpp"

#include "readyport/fake/case_shrinker.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace readyport {
namespace {

// The options that run `c`: `base` (the failing run's, with its drawn plan and strategy pinned)
// with the case's plan, schedule and caps. The drawn plan keeps its own text.
StressOptions options_of(const StressOptions& base, const FaultPlan& drawn_plan,
                         const ShrinkCase& c) {
  StressOptions options = base;
  if (!(c.plan == drawn_plan)) {
    const bool empty = c.plan.active_count() == 0;
    options.faults = empty ? StressOptions::Faults::kOff : StressOptions::Faults::kPlan;
    options.fault_plan = empty ? "" : c.plan.to_string();
  }
  options.strategy = stress_strategy_of(c.strategy);
  options.pct_depth = c.depth;
  options.actions_max = c.caps[0];
  options.clients_max = c.caps[1];
  options.peers_max = c.caps[2];
  return options;
}

}  // namespace

std::string stress_failure_signature(const Status& status) { return failure_signature(status); }

std::uint64_t stress_faults_fired(const SeedReport& report) {
  std::uint64_t fired = 0;
  for (const auto& [name, count] : report.coverage) {
    if (name.rfind("fault.", 0) == 0) {
      fired += count;
    }
  }
  return fired;
}

ShrinkResult stress_shrink(const StressOptions& options, std::uint64_t seed,
                           const SeedRunner& run) {
  ShrinkResult result;
  result.original = run(options, seed);
  if (result.original.status.ok()) {
    result.status = Status(StatusCode::kFailedPrecondition,
                           "seed " + std::to_string(seed) + " passes: nothing to shrink");
    result.options = options;
    result.minimal = result.original;
    result.runs = 1;
    return result;
  }
  result.signature = stress_failure_signature(result.original.status);
  // Pin what the seed drew, so each step changes one thing: the exact plan and the strategy; the
  // caps no larger than the seed's draws (a larger cap changes nothing).
  const SeedParameters& drawn = result.original.parameters;
  StressOptions base = options;
  base.faults = StressOptions::Faults::kPlan;
  base.fault_plan = drawn.plan.to_string();
  ShrinkCase failing;
  failing.plan = drawn.plan;
  failing.strategy = drawn.strategy;
  failing.depth = options.pct_depth;
  failing.caps = {std::min(options.actions_max, drawn.workload.actions),
                  std::min(options.clients_max, drawn.workload.clients),
                  std::min(options.peers_max, drawn.workload.peers)};
  result.minimal = result.original;
  const ShrinkRunner runner = [&](const ShrinkCase& c) {
    SeedReport report = run(options_of(base, drawn.plan, c), seed);
    ShrinkRun outcome;
    outcome.same_failure =
        !report.status.ok() && stress_failure_signature(report.status) == result.signature;
    outcome.fired_hits = report.fired_hits;
    if (outcome.same_failure) {
      result.minimal = std::move(report);  // the shrinker keeps exactly these candidates
    }
    return outcome;
  };
  const ShrinkOutcome shrunk = shrink_case(failing, result.original.fired_hits, runner);
  result.options = options_of(base, drawn.plan, shrunk.minimal);
  result.runs = shrunk.runs;
  result.passes = shrunk.passes;
  result.one_minimal = shrunk.one_minimal;
  return result;
}

}  // namespace readyport
