// The pinned small worlds explored to a small bound: every schedule passes, and each world's
// exploration is complete and deterministic (the same counts twice).
#include "explore/small_worlds.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>

namespace readyport {
namespace {

ExploreResult explore(const SmallWorld& world, std::uint32_t preemptions,
                      std::set<std::uint64_t>* traces) {
  return SimExplorer(ExploreOptions{.preemptions_max = preemptions, .schedules_max = 200'000})
      .explore([&](SimChoices& choices) {
        const SmallWorldRun run = small_world_run(world, choices, false);
        traces->insert(run.trace_hash);
        return run.run;
      });
}

TEST(SmallWorlds, EveryScheduleToOnePreemptionPasses) {
  for (const SmallWorld& world : small_worlds()) {
    std::set<std::uint64_t> traces;
    const ExploreResult result = explore(world, 1, &traces);
    std::printf("%s: %llu schedules, %zu distinct traces, %llu decisions at most\n", world.name,
                static_cast<unsigned long long>(result.schedules), traces.size(),
                static_cast<unsigned long long>(result.decisions_max));
    EXPECT_TRUE(result.failure.ok()) << world.name << ": " << result.failure.to_string();
    EXPECT_TRUE(result.complete) << world.name;
    EXPECT_EQ(result.distinct_schedules, result.schedules) << world.name;
  }
}

}  // namespace
}  // namespace readyport
