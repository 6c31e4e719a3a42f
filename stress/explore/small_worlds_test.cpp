// The pinned small worlds under the explorer: each world's exploration is deterministic (the same
// schedules and the same traces twice), and each world's fault sites are reached (one fault
// allowed adds schedules). ctest stress.explore runs them all to a bound and judges every schedule.
#include "explore/small_worlds.hpp"

#include "explore/explore_main.hpp"
#include "readyport/fake/trace.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace readyport {
namespace {

struct Explored {
  ExploreResult result;
  std::set<std::uint64_t> traces;
  std::set<std::uint64_t> classes;      // sim_class_hash: the dependence relation's classes
  std::set<std::uint64_t> projections;  // Trace::projection_hash: each thread's own lines
};

Explored explore(const SmallWorld& world, std::uint32_t preemptions, std::uint32_t faults,
                 bool sleep_sets = true) {
  Explored explored;
  const ExploreOptions options{.preemptions_max = preemptions,
                               .faults_max = faults,
                               .schedules_max = 200'000,
                               .sleep_sets = sleep_sets};
  explored.result = SimExplorer(options).explore([&](SimChoices& choices) {
    const SmallWorldRun run = small_world_run(world, choices, faults > 0);
    explored.traces.insert(run.trace_hash);
    explored.classes.insert(sim_class_hash(choices.segments));
    explored.projections.insert(run.projection_hash);
    return run.run;
  });
  return explored;
}

TEST(SmallWorlds, ExploringTwiceRunsTheSameSchedulesAndTraces) {
  for (const SmallWorld& world : small_worlds()) {
    const Explored first = explore(world, 1, 0);
    const Explored again = explore(world, 1, 0);
    ASSERT_TRUE(first.result.failure.ok())
        << world.name << ": " << first.result.failure.to_string();
    EXPECT_TRUE(first.result.complete) << world.name;
    EXPECT_EQ(first.result.schedules, again.result.schedules) << world.name;
    EXPECT_EQ(first.traces, again.traces) << world.name;
    // No schedule ran twice (the scheduler's own hash of each run's picks).
    EXPECT_EQ(first.result.distinct_schedules, first.result.schedules) << world.name;
  }
}

TEST(SmallWorlds, EachWorldReachesItsFaultSites) {
  for (const SmallWorld& world : small_worlds()) {
    const Explored none = explore(world, 0, 0);
    const Explored one = explore(world, 0, 1);
    ASSERT_TRUE(one.result.failure.ok()) << world.name << ": " << one.result.failure.to_string();
    EXPECT_GT(one.result.schedules, none.result.schedules) << world.name;
  }
}

// Every explored schedule, run alone by its choices (what --schedule and an explore bundle's
// --replay do), gives the same verdict and trace as when it was explored.
TEST(SmallWorlds, AScheduleRunAloneGivesItsExploredTrace) {
  const SmallWorld* world = small_world_find("close_inside_vs_notify");
  ASSERT_NE(world, nullptr);
  std::vector<std::pair<std::string, std::uint64_t>> explored;  // schedule, trace hash
  const ExploreResult result =
      SimExplorer(ExploreOptions{.preemptions_max = 1, .faults_max = 1})
          .explore([&](SimChoices& choices) {
            const SmallWorldRun run = small_world_run(*world, choices, true);
            std::string schedule;
            for (const SimDecision& decision : choices.decisions) {
              schedule += (schedule.empty() ? "" : ",") + std::to_string(decision.chosen);
            }
            explored.emplace_back(schedule, run.trace_hash);
            return run.run;
          });
  ASSERT_TRUE(result.complete && result.failure.ok());
  ASSERT_GT(explored.size(), 100u);
  for (std::size_t i = 0; i < explored.size(); i += explored.size() / 16) {
    const Result<StressScheduleRun> alone =
        stress_explore_run_schedule(world->name, explored[i].first, 1);
    ASSERT_TRUE(alone.ok()) << alone.status().to_string();
    EXPECT_TRUE(alone.value().verdict.ok()) << explored[i].first;
    EXPECT_EQ(alone.value().trace_hash, hash_hex(explored[i].second)) << explored[i].first;
  }
  // A schedule that names a thread that cannot run is refused, not run otherwise.
  const Result<StressScheduleRun> misfit = stress_explore_run_schedule(world->name, "9,9,9", 1);
  ASSERT_FALSE(misfit.ok());
  EXPECT_NE(misfit.status().message().find("does not fit"), std::string::npos);
}

// Sleep sets run fewer schedules and lose no class: with and without them, the same classes under
// the dependence relation and the same per-thread traces (what each thread saw of the world, its
// calls' results included), in worlds where they prune: two threads closing one connection (two
// preemptions), poll() beside stop() (two preemptions), and a REMOVE refused in stop() (two
// preemptions and one fault).
TEST(SmallWorlds, SleepSetPruningLosesNoClassAndNoObservedBehaviour) {
  struct Case {
    const char* world;
    std::uint32_t preemptions;
    std::uint32_t faults;
  };
  for (const Case& c : {Case{"close_twice", 2, 0}, Case{"poll_vs_stop", 2, 0},
                        Case{"remove_refused_in_stop", 2, 1}}) {
    const SmallWorld* world = small_world_find(c.world);
    ASSERT_NE(world, nullptr) << c.world;
    const Explored full = explore(*world, c.preemptions, c.faults, false);
    const Explored pruned = explore(*world, c.preemptions, c.faults, true);
    ASSERT_TRUE(full.result.complete && full.result.failure.ok()) << c.world;
    ASSERT_TRUE(pruned.result.complete && pruned.result.failure.ok()) << c.world;
    EXPECT_EQ(full.result.pruned, 0u) << c.world;
    EXPECT_GT(pruned.result.pruned + pruned.result.runs_joined, 0u) << c.world;
    EXPECT_LT(pruned.result.schedules, full.result.schedules) << c.world;
    EXPECT_EQ(pruned.classes, full.classes) << c.world;
    EXPECT_EQ(pruned.projections, full.projections) << c.world;
  }
}

}  // namespace
}  // namespace readyport
