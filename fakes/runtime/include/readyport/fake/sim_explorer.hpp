// readyport/fake/sim_explorer.hpp: SimExplorer, systematic exploration of one scenario's schedules
// up to a preemption bound (CHESS's iterative context bounding): every schedule with at most
// `preemptions_max` preemptions is run once, fewest preemptions first.
//
//   SimExplorer explorer(ExploreOptions{2});
//   ExploreResult result = explorer.explore([&](SimChoices& choices) {
//     SimOptions options;  options.strategy = SimStrategy::kExplore;  options.choices = &choices;
//     ... run the scenario on a SimScheduler(options), judge it, return the verdict ...
//   });
//
// A schedule is the list of threads picked at the run's decisions (steps at which more than one
// thread could run) and of the answers to its choices (SimScheduler::choose: a fault fires or
// not, at most `faults_max` yes). A preemption is a decision that runs another thread while the
// one that took the step could go on; a switch at a thread's blocking call or end is free. From
// each schedule run, every alternative at each decision past its prefix becomes a new prefix,
// unless it would pass a bound. The scenario must be deterministic given its choices (the same
// prefix reaches the same decisions), as every SimScheduler scenario is.
//
// Sleep sets (Godefroid) prune schedules that only reorder commuting steps (SimSegment
// footprints, the dependence relation of runtime.hpp's SimObject): at a decision where the thread
// that took the step could go on, its next step is put to sleep in the branches that run another
// thread first, and stays asleep there until a step dependent on it runs; a sleeping step is not
// run as an alternative, and a run that reaches one goes on without branching (an equivalent
// schedule runs in the branch that ran it first). Only the thread that could go on is put to
// sleep: moving its step to the front never adds a preemption, so the equivalent schedule is
// within the same bound (sibling threads are not: the equivalent may need one more preemption).
//
// Ownership and lifetime: returns values; `run` is borrowed for the call. Threading: explore()
// calls `run` on the calling thread, one schedule at a time. Errors: the first failing schedule
// (the one with the fewest preemptions) is kept in the result and exploration stops there; a
// schedule that did not follow its prefix (a scenario that is not deterministic) is such a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/status.hpp"

namespace readyport {

struct ExploreOptions {
  // Each bound below 256.
  std::uint32_t preemptions_max = 2;
  // Choices answered "yes" (SimScheduler::choose: faults that fire) a schedule may have.
  std::uint32_t faults_max = 0;
  // Schedules run at most; past it the exploration ends incomplete.
  std::uint64_t schedules_max = 1'000'000;
  // Prune by sleep sets (above); false runs every schedule within the bounds.
  bool sleep_sets = true;
};

struct ExploreResult {
  std::uint64_t schedules = 0;           // schedules run
  std::uint64_t decisions_max = 0;       // the most decisions one schedule took
  std::uint64_t distinct_schedules = 0;  // distinct SimStats::schedule_hash values (check)
  std::uint64_t distinct_classes = 0;    // distinct sim_class_hash values of the runs
  std::uint64_t pruned = 0;       // alternatives not run: their step was asleep (an equivalent ran)
  std::uint64_t runs_joined = 0;  // runs that reached a sleeping step and stopped branching
  bool complete = false;          // every schedule within the bound was run (none failed)
  Status failure;                 // the first failing schedule's verdict, or ok
  std::vector<std::uint32_t> failing_prefix;  // its choices (SimChoices::prefix to replay it)
  std::uint32_t failing_preemptions = 0;
  std::uint32_t failing_faults = 0;  // its choices answered "yes"
};

// A run's class under the dependence relation (its Mazurkiewicz trace): for every footprint bit,
// the order of the steps that touch it, each step named by its thread and its number among that
// thread's steps. Runs that differ only in the order of commuting steps have the same class; the
// number of classes is what an exploration that ran one schedule per class would run.
std::uint64_t sim_class_hash(const std::vector<SimSegment>& segments);

// Sorts `values` and drops repeats; returns how many distinct values remain.
std::uint64_t sim_distinct_count(std::vector<std::uint64_t>& values);

// The preemptions in the first `count` decisions of `decisions`, and the choices answered "yes".
std::uint32_t sim_preemptions(const std::vector<SimDecision>& decisions, std::size_t count);
std::uint32_t sim_choices_yes(const std::vector<SimDecision>& decisions, std::size_t count);

class SimExplorer {
 public:
  explicit SimExplorer(ExploreOptions options) : options_(options) {}

  // Runs the scenario once per schedule: `run` is given the choices to follow (prefix set,
  // decisions empty) and returns the schedule's verdict and its SimStats::schedule_hash.
  struct Run {
    Status verdict;
    std::uint64_t schedule_hash = 0;
  };
  ExploreResult explore(const std::function<Run(SimChoices&)>& run);

 private:
  const ExploreOptions options_;
};

}  // namespace readyport
