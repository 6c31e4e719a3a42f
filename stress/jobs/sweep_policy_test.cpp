// The sweep supervisor's policy (sweep_policy.hpp), fed scripted sequences of events: no process
// runs and no clock is read, so each verdict is the same on any machine under any load. Which
// task a death is blamed on, which tasks run again and on how many jobs, and that every task ends
// in exactly one way, whatever dies when: several deaths in one child, records lost with it.
#include "jobs/sweep_policy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace readyport {
namespace {

std::vector<std::size_t> tasks_to(std::size_t count) {
  std::vector<std::size_t> tasks;
  for (std::size_t task = 0; task < count; ++task) {
    tasks.push_back(task);
  }
  return tasks;
}

Json named(std::size_t task) { return Json::object({{"type", "aborted"}, {"task", task}}); }

SweepChildEnd died(SweepDeathKind kind, std::vector<Json> names = {}) {
  SweepChildEnd end;
  end.kind = kind;
  end.how = sweep_death_kind_name(kind);
  end.named = std::move(names);
  return end;
}

SweepChildEnd ended(int exit_status = 0) {
  SweepChildEnd end;
  end.ended = true;
  end.end_exit = exit_status;
  return end;
}

// The next step must fork a child for `tasks` on `jobs`; its records `finished` arrive.
void expect_child(SweepPolicy& policy, const std::vector<std::size_t>& tasks, std::uint32_t jobs,
                  const std::vector<std::size_t>& finished) {
  const SweepStep step = policy.next();
  ASSERT_EQ(step.kind, SweepStep::Kind::kChild);
  EXPECT_EQ(step.segment.tasks, tasks);
  EXPECT_EQ(step.segment.jobs, jobs);
  for (const std::size_t task : finished) {
    ASSERT_TRUE(policy.on_record(task).ok()) << "task " << task;
  }
}

void expect_death(SweepPolicy& policy, std::size_t task, const std::string& status) {
  const SweepStep step = policy.next();
  ASSERT_EQ(step.kind, SweepStep::Kind::kDeath);
  EXPECT_EQ(step.death.task, task);
  EXPECT_EQ(step.death.status, status);
}

void expect_done(SweepPolicy& policy) {
  EXPECT_EQ(policy.next().kind, SweepStep::Kind::kDone);
  const SweepAccount& a = policy.account();
  EXPECT_EQ(a.finished + a.died + a.not_run, a.tasks);
}

TEST(SweepPolicy, EveryTaskFinishedInOneChildIsTheWholeSweep) {
  SweepPolicy policy(tasks_to(5), 2, 9);
  expect_child(policy, tasks_to(5), 2, tasks_to(5));
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
  EXPECT_EQ(policy.account().finished, 5u);
  EXPECT_EQ(policy.account().children, 1u);
}

TEST(SweepPolicy, ARecordOutOfTaskOrderIsRefused) {
  SweepPolicy policy(tasks_to(3), 1, 1);
  ASSERT_EQ(policy.next().kind, SweepStep::Kind::kChild);
  const Status status = policy.on_record(1);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not of task 0"), std::string::npos) << status.message();
}

TEST(SweepPolicy, AnEndLineBeforeEveryRecordIsRefused) {
  SweepPolicy policy(tasks_to(3), 1, 1);
  expect_child(policy, tasks_to(3), 1, {0});
  EXPECT_FALSE(policy.child_ended(ended()).ok());
}

TEST(SweepPolicy, TheTaskTheHandlerNamesIsBlamedEvenWithSeveralJobs) {
  SweepPolicy policy(tasks_to(5), 2, 9);
  expect_child(policy, tasks_to(5), 2, {0, 1});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kAborted, {named(2)})).ok());
  expect_death(policy, 2, "aborted");
  expect_child(policy, {3, 4}, 2, {3, 4});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
}

TEST(SweepPolicy, TasksBeforeANamedOneThatWereStillRunningGoFirstWithOneJob) {
  SweepPolicy policy(tasks_to(5), 2, 9);
  expect_child(policy, tasks_to(5), 2, {0});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kAborted, {named(2)})).ok());
  expect_child(policy, {1}, 1, {1});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_death(policy, 2, "aborted");
  expect_child(policy, {3, 4}, 2, {3, 4});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
}

TEST(SweepPolicy, SeveralTasksNamedByOneChildAreEachReportedInTaskOrder) {
  SweepPolicy policy(tasks_to(8), 3, 13);
  expect_child(policy, tasks_to(8), 3, {0});
  // Two threads aborted at once, the later task's handler first; task 1, 2 and 4 were running.
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kAborted, {named(5), named(3)})).ok());
  expect_child(policy, {1, 2}, 1, {1, 2});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_death(policy, 3, "aborted");
  expect_child(policy, {4}, 1, {4});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_death(policy, 5, "aborted");
  expect_child(policy, {6, 7}, 3, {6, 7});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
  EXPECT_EQ(policy.account().died, 2u);
  EXPECT_EQ(policy.account().finished, 6u);
}

TEST(SweepPolicy, ANameOutsideTheChildsTasksIsRefused) {
  SweepPolicy policy(tasks_to(4), 2, 9);
  expect_child(policy, tasks_to(4), 2, {0, 1});
  EXPECT_FALSE(policy.child_ended(died(SweepDeathKind::kAborted, {named(1)})).ok());
}

TEST(SweepPolicy, AnUnnamedCrashWithSeveralJobsRunsTheTasksInFlightAgainWithOneJob) {
  SweepPolicy policy(tasks_to(10), 2, 3);
  expect_child(policy, tasks_to(10), 2, {0, 1});
  Result<std::string> note = policy.child_ended(died(SweepDeathKind::kCrashed));
  ASSERT_TRUE(note.ok());
  EXPECT_NE(note.value().find("the 3 tasks that may have been running (2 to 4) run again"),
            std::string::npos)
      << note.value();
  expect_child(policy, {2, 3, 4}, 1, {});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kCrashed)).ok());
  expect_death(policy, 2, "crashed");
  expect_child(policy, {3, 4}, 1, {3, 4});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_child(policy, {5, 6, 7, 8, 9}, 2, {5, 6, 7, 8, 9});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
}

TEST(SweepPolicy, ACrashThatDoesNotComeBackIsReportedUnblamedNeverDropped) {
  SweepPolicy policy(tasks_to(6), 2, 3);
  expect_child(policy, tasks_to(6), 2, {0});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kMemory)).ok());
  expect_child(policy, {1, 2, 3}, 1, {1, 2, 3});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  const SweepStep step = policy.next();
  ASSERT_EQ(step.kind, SweepStep::Kind::kUnblamed);
  EXPECT_EQ(step.death.status, "memory");
  EXPECT_NE(step.death.how.find("passed when run again with one job"), std::string::npos);
  expect_child(policy, {4, 5}, 2, {4, 5});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
  EXPECT_EQ(policy.account().unblamed, 1u);
}

TEST(SweepPolicy, AHangIsBlamedOnTheFirstUnfinishedTaskWithAnyJobs) {
  SweepPolicy policy(tasks_to(5), 2, 9);
  expect_child(policy, tasks_to(5), 2, {0, 1});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kHung)).ok());
  expect_death(policy, 2, "hung");
  expect_child(policy, {3, 4}, 2, {3, 4});
  ASSERT_TRUE(policy.child_ended(ended()).ok());
  expect_done(policy);
}

TEST(SweepPolicy, ADeathAfterEveryRecordIsUnblamed) {
  SweepPolicy policy(tasks_to(3), 1, 1);
  expect_child(policy, tasks_to(3), 1, tasks_to(3));
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kCrashed)).ok());
  EXPECT_EQ(policy.next().kind, SweepStep::Kind::kUnblamed);
  expect_done(policy);
  EXPECT_EQ(policy.account().finished, 3u);
}

TEST(SweepPolicy, StoppingLeavesTheRestNotRunAndCounted) {
  SweepPolicy policy(tasks_to(6), 1, 1);
  expect_child(policy, tasks_to(6), 1, {0});
  ASSERT_TRUE(policy.child_ended(died(SweepDeathKind::kAborted, {named(1)})).ok());
  expect_death(policy, 1, "aborted");
  policy.stop();  // --stop-on-failure
  expect_done(policy);
  EXPECT_EQ(policy.account().not_run, 4u);
}

TEST(SweepPolicy, AFailingEndLineEndsTheSweepWithTheRestNotRun) {
  SweepPolicy policy(tasks_to(4), 1, 1);
  expect_child(policy, tasks_to(4), 1, {0});
  ASSERT_TRUE(policy.child_ended(ended(2)).ok());
  expect_done(policy);
  EXPECT_EQ(policy.account().not_run, 3u);
}

// ---- Every way a child can die, at every point ------------------------------------------------

enum class Fate { kPass, kNamed, kCrash, kHang };

// A child as the pool runs one: the tasks of its segment in order, records in task order. It dies
// at the first task whose fate is not kPass; with several jobs, the `lag` tasks before it had
// finished but their records were still in flight (lost with the process), and the tasks named
// after it within the window aborted at the same moment.
SweepChildEnd run_child(SweepPolicy& policy, const SweepSegment& segment,
                        const std::vector<Fate>& fates, std::size_t lag, std::size_t window,
                        std::vector<std::size_t>& finished_out) {
  const std::vector<std::size_t>& tasks = segment.tasks;
  std::size_t dies = 0;
  while (dies < tasks.size() && fates[tasks[dies]] == Fate::kPass) {
    ++dies;
  }
  if (dies == tasks.size()) {
    for (const std::size_t task : tasks) {
      EXPECT_TRUE(policy.on_record(task).ok());
      finished_out.push_back(task);
    }
    return ended();
  }
  const Fate fate = fates[tasks[dies]];
  // One job sends each record before the next task starts; a hang holds every later record.
  const std::size_t lost = (segment.jobs == 1 || fate == Fate::kHang) ? 0 : std::min(lag, dies);
  for (std::size_t i = 0; i + lost < dies; ++i) {
    EXPECT_TRUE(policy.on_record(tasks[i]).ok());
    finished_out.push_back(tasks[i]);
  }
  if (fate == Fate::kHang) {
    return died(SweepDeathKind::kHung);
  }
  if (fate == Fate::kCrash) {
    return died(SweepDeathKind::kCrashed);
  }
  std::vector<Json> names = {named(tasks[dies])};
  for (std::size_t i = dies + 1; segment.jobs > 1 && i < tasks.size() && i < dies + window; ++i) {
    if (fates[tasks[i]] == Fate::kNamed) {
      names.insert(names.begin(), named(tasks[i]));  // their handlers may write first
    }
  }
  return died(SweepDeathKind::kAborted, std::move(names));
}

// The sweep of `fates` on `jobs`: every task ends in exactly one way, in task order, and the
// deaths are exactly the tasks that die (the fates are the same every time a task runs).
void check_sweep(const std::vector<Fate>& fates, std::uint32_t jobs, std::size_t lag) {
  const std::size_t window = 2 * jobs;
  SweepPolicy policy(tasks_to(fates.size()), jobs, window + 1);
  std::vector<std::size_t> events;  // finished and died, in the order they are reported
  std::set<std::size_t> deaths;
  for (SweepStep step = policy.next(); step.kind != SweepStep::Kind::kDone; step = policy.next()) {
    ASSERT_NE(step.kind, SweepStep::Kind::kUnblamed) << "every death here comes back";
    if (step.kind == SweepStep::Kind::kDeath) {
      events.push_back(step.death.task);
      deaths.insert(step.death.task);
      continue;
    }
    const SweepChildEnd end = run_child(policy, step.segment, fates, lag, window, events);
    ASSERT_TRUE(policy.child_ended(end).ok());
  }
  EXPECT_EQ(events, tasks_to(fates.size()));  // each task once, in task order
  std::set<std::size_t> dying;
  for (std::size_t task = 0; task < fates.size(); ++task) {
    if (fates[task] != Fate::kPass) {
      dying.insert(task);
    }
  }
  EXPECT_EQ(deaths, dying);
  const SweepAccount& a = policy.account();
  EXPECT_EQ(a.finished + a.died, a.tasks);
  EXPECT_EQ(a.not_run, 0u);
}

TEST(SweepPolicy, EveryTaskIsAccountedForWhateverDiesWhere) {
  constexpr std::size_t kTasks = 5;
  std::size_t sweeps = 0;
  for (std::size_t code = 0; code < (std::size_t{1} << (2 * kTasks)); ++code) {
    std::vector<Fate> fates;
    for (std::size_t task = 0; task < kTasks; ++task) {
      fates.push_back(static_cast<Fate>((code >> (2 * task)) & 3));
    }
    for (const std::uint32_t jobs : {1u, 2u, 3u}) {
      for (std::size_t lag = 0; lag <= 2; ++lag) {
        SCOPED_TRACE("fates " + std::to_string(code) + ", jobs " + std::to_string(jobs) + ", lag " +
                     std::to_string(lag));
        check_sweep(fates, jobs, lag);
        ++sweeps;
        if (::testing::Test::HasFailure()) {
          return;
        }
      }
    }
  }
  EXPECT_EQ(sweeps, 1024u * 9u);
}

}  // namespace
}  // namespace readyport
