// SimExplorer over SimScheduler's kExplore strategy: every schedule within the preemption bound
// runs exactly once, fewest preemptions first; a race that needs one preemption is found at bound
// 1 and not at bound 0, and its schedule replays.
#include "readyport/fake/sim_explorer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// Two threads, three steps each; each step declares the object it touches (Runtime::touch):
// thread a's own and thread b's own (`shared` false), or one object for both.
SimExplorer::Run two_threads_declared(SimChoices& choices, bool shared,
                                      std::vector<std::uint64_t>* classes_out) {
  SimOptions options;
  options.strategy = SimStrategy::kExplore;
  options.choices = &choices;
  SimScheduler sim(options);
  const Status status = sim.run([&] {
    auto work = [&](std::uint64_t object) {
      for (int i = 0; i < 3; ++i) {
        sim.point("work");
        sim.touch(SimObject::kMutex, shared ? 1 : object);
      }
    };
    Result<std::unique_ptr<Thread>> a = sim.thread_start("a", [&] { work(1); });
    Result<std::unique_ptr<Thread>> b = sim.thread_start("b", [&] { work(2); });
    ASSERT_TRUE(a.ok() && b.ok());
    a.value()->join();
    b.value()->join();
  });
  classes_out->push_back(sim_class_hash(choices.segments));
  return SimExplorer::Run{status, sim.stats().schedule_hash};
}

TEST(SimExplorer, SleepSetsPruneCommutingStepsAndKeepEveryClass) {
  for (const bool shared : {false, true}) {
    std::vector<std::uint64_t> full_classes;
    std::vector<std::uint64_t> pruned_classes;
    const ExploreResult full =
        SimExplorer(ExploreOptions{.preemptions_max = 2, .sleep_sets = false})
            .explore([&](SimChoices& c) { return two_threads_declared(c, shared, &full_classes); });
    const ExploreResult pruned =
        SimExplorer(ExploreOptions{.preemptions_max = 2}).explore([&](SimChoices& c) {
          return two_threads_declared(c, shared, &pruned_classes);
        });
    ASSERT_TRUE(full.complete && pruned.complete) << "shared " << shared;
    EXPECT_EQ(full.pruned, 0u);
    sim_distinct_count(full_classes);
    sim_distinct_count(pruned_classes);
    EXPECT_EQ(pruned_classes, full_classes) << "shared " << shared;
    EXPECT_LE(pruned.schedules, full.schedules);
    if (shared) {
      // The order of the six steps on the one object is a class each (those within the bound).
      EXPECT_GT(full.distinct_classes, 1u);
    } else {
      // Every work step commutes with the other thread's: one class, far fewer schedules.
      EXPECT_EQ(full.distinct_classes, 1u);
      EXPECT_GT(pruned.pruned, 0u);
      EXPECT_LT(pruned.schedules, full.schedules);
    }
  }
}

}  // namespace
}  // namespace readyport
