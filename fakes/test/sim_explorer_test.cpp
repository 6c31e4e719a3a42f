// SimExplorer over SimScheduler's kExplore strategy: every schedule within the preemption bound
// runs exactly once, fewest preemptions first; a race that needs one preemption is found at bound
// 1 and not at bound 0, and its schedule replays.
#include "readyport/fake/sim_explorer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "readyport/fake/sim_scheduler.hpp"

namespace readyport {
namespace {

// Two threads add 1 to a shared counter in two steps each (read, then write after a scheduling
// point): the lost update needs a switch between one thread's read and its write, a preemption.
SimExplorer::Run lost_update(SimChoices& choices) {
  SimOptions options;
  options.strategy = SimStrategy::kExplore;
  options.choices = &choices;
  SimScheduler sim(options);
  std::uint32_t counter = 0;
  const Status status = sim.run([&] {
    auto add_one = [&] {
      const std::uint32_t seen = counter;
      sim.point("read");
      counter = seen + 1;
      sim.point("write");
    };
    Result<std::unique_ptr<Thread>> a = sim.thread_start("a", add_one);
    Result<std::unique_ptr<Thread>> b = sim.thread_start("b", add_one);
    ASSERT_TRUE(a.ok() && b.ok());
    a.value()->join();
    b.value()->join();
  });
  SimExplorer::Run run;
  run.schedule_hash = sim.stats().schedule_hash;
  run.verdict = !status.ok()   ? status
                : counter == 2 ? Status()
                               : Status(StatusCode::kInternal,
                                        "lost update: counter " + std::to_string(counter));
  return run;
}

TEST(SimExplorer, NoPreemptionCannotLoseTheUpdateAndEveryScheduleIsDistinct) {
  const ExploreResult result =
      SimExplorer(ExploreOptions{.preemptions_max = 0, .schedules_max = 1000}).explore(lost_update);
  EXPECT_TRUE(result.failure.ok()) << result.failure.to_string();
  EXPECT_TRUE(result.complete);
  EXPECT_GE(result.schedules, 2u);  // at least: a first, or b first
  EXPECT_EQ(result.distinct_schedules, result.schedules);
}

TEST(SimExplorer, OnePreemptionFindsTheLostUpdateAndItsScheduleReplays) {
  const ExploreResult result =
      SimExplorer(ExploreOptions{.preemptions_max = 1, .schedules_max = 1000}).explore(lost_update);
  ASSERT_FALSE(result.failure.ok());
  EXPECT_FALSE(result.complete);
  EXPECT_EQ(result.failing_preemptions, 1u);
  EXPECT_NE(result.failure.message().find("lost update"), std::string::npos);
  SimChoices again;
  again.prefix = result.failing_prefix;
  EXPECT_EQ(lost_update(again).verdict.message(), result.failure.message());
}

TEST(SimExplorer, HigherBoundsRunMoreDistinctSchedulesAndStopAtTheBudget) {
  // A scenario without a bug: the counter is read and written in one step.
  auto safe = [](SimChoices& choices) {
    SimOptions options;
    options.strategy = SimStrategy::kExplore;
    options.choices = &choices;
    SimScheduler sim(options);
    const Status status = sim.run([&] {
      auto work = [&] {
        for (int i = 0; i < 3; ++i) {
          sim.point("work");
        }
      };
      Result<std::unique_ptr<Thread>> a = sim.thread_start("a", work);
      Result<std::unique_ptr<Thread>> b = sim.thread_start("b", work);
      ASSERT_TRUE(a.ok() && b.ok());
      a.value()->join();
      b.value()->join();
    });
    return SimExplorer::Run{status, sim.stats().schedule_hash};
  };
  std::uint64_t previous = 0;
  for (std::uint32_t bound = 0; bound <= 3; ++bound) {
    const ExploreResult result =
        SimExplorer(ExploreOptions{.preemptions_max = bound, .schedules_max = 100000})
            .explore(safe);
    EXPECT_TRUE(result.complete) << "bound " << bound;
    EXPECT_EQ(result.distinct_schedules, result.schedules) << "bound " << bound;
    EXPECT_GT(result.schedules, previous) << "bound " << bound;
    previous = result.schedules;
  }
  const ExploreResult cut =
      SimExplorer(ExploreOptions{.preemptions_max = 3, .schedules_max = 5}).explore(safe);
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.schedules, 5u);
}

}  // namespace
}  // namespace readyport
