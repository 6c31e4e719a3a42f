// The pinned small worlds under the explorer: each world's exploration is deterministic (the same
// schedules and the same traces twice), and each world's fault sites are reached (one fault
// allowed adds schedules). ctest stress.explore runs them all to a bound and judges every schedule.
#include "explore/small_worlds.hpp"

#include <gtest/gtest.h>

#include <set>

namespace readyport {
namespace {

struct Explored {
  ExploreResult result;
  std::set<std::uint64_t> traces;
};

Explored explore(const SmallWorld& world, std::uint32_t preemptions, std::uint32_t faults) {
  Explored explored;
  const ExploreOptions options{
      .preemptions_max = preemptions, .faults_max = faults, .schedules_max = 200'000};
  explored.result = SimExplorer(options).explore([&](SimChoices& choices) {
    const SmallWorldRun run = small_world_run(world, choices, faults > 0);
    explored.traces.insert(run.trace_hash);
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
    EXPECT_EQ(first.traces.size(), first.result.schedules) << world.name;
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

}  // namespace
}  // namespace readyport
