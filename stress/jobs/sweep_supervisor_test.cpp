// The sweep supervisor (sweep_supervisor.hpp) with real child processes, and its records
// (sweep_record.hpp): a task that aborts, crashes, exits, hangs or passes the memory limit in the
// child is that task's failure and the rest still run; a task named by the abort handler is the
// one blamed; children killed at every point of the protocol lose no task; a record survives its
// JSON line unchanged. The policy alone, event by event, is sweep_policy_test.cpp's. No verdict
// here depends on timing: a hang is a task that never ends, and nothing else meets a bound.
#include <gtest/gtest.h>

#ifndef _WIN32
#include <signal.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jobs/run_summary.hpp"
#include "jobs/sweep_record.hpp"
#include "jobs/sweep_supervisor.hpp"

namespace readyport {
namespace {

#ifndef _WIN32

// A sanitizer catches SIGSEGV itself, reports, and exits (TSan: status 66) or aborts (ASan with
// abort_on_error, as the asan preset's tests run): the supervisor sees that, not the SIGSEGV.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// What a task does in the child.
// kSlowBesideOthers: with several jobs, still running when the next task aborts (no record).
// kAllocate: allocates and touches memory until the memory limit ends the process.
enum class Fate {
  kPass,
  kAbort,
  kAbortNamed,
  kCrash,
  kExit,
  kHang,
  kAssertLine,
  kSlowBesideOthers,
  kAllocate
};

struct Seen {
  std::vector<std::size_t> finished;  // task records, in order
  std::vector<std::uint32_t> jobs;    // the child's jobs, per task record
  std::vector<SweepDeath> deaths;
  std::vector<SweepDeath> unblamed;
};

// No verdict here depends on how fast anything runs: a hang is only ever a task that never ends,
// and everything else has a day to finish.
constexpr std::uint32_t kNoHangSeconds = 86'400;

// Allocates 1 MiB blocks and touches them until `bytes` more than at the start; then waits to be
// killed (the parent's watch of resident memory), where no data limit ended it first.
[[noreturn]] void allocate_past(std::uint64_t bytes) {
  std::vector<char*> blocks;
  for (std::uint64_t total = 0; total < bytes; total += 1 << 20) {
    char* block = new char[1 << 20];
    std::memset(block, 1, 1 << 20);
    blocks.push_back(block);
  }
  for (;;) {
    ::pause();
  }
}

void run_fate(Fate fate, std::size_t task, std::uint32_t child_jobs, int fd, bool* skip) {
  switch (fate) {
    case Fate::kPass:
      return;
    case Fate::kSlowBesideOthers:
      *skip = child_jobs > 1;
      return;
    case Fate::kAbortNamed:
      stress_sweep_write(fd, Json::object({{"type", "aborted"}, {"task", task}}));
      std::abort();
    case Fate::kAssertLine:
      std::fprintf(stderr, "readyport: assertion failed: planted (here.cpp:1)\n");
      std::fflush(stderr);
      std::abort();
    case Fate::kAbort:
      std::abort();
    case Fate::kCrash:
      ::raise(SIGSEGV);
      return;
    case Fate::kExit:
      ::_exit(66);
    case Fate::kHang:
      for (;;) {
        ::pause();
      }
    case Fate::kAllocate:
      allocate_past(std::uint64_t{1} << 32);
  }
}

SweepCallbacks callbacks_for(const std::map<std::size_t, Fate>& fates, Seen& seen,
                             bool stop_at_death) {
  SweepCallbacks callbacks;
  callbacks.run = [&fates](const std::vector<std::size_t>& tasks, std::uint32_t child_jobs,
                           int fd) {
    for (const std::size_t task : tasks) {
      const auto fate = fates.find(task);
      bool skip = false;
      run_fate(fate == fates.end() ? Fate::kPass : fate->second, task, child_jobs, fd, &skip);
      if (!skip) {
        stress_sweep_write(fd,
                           Json::object({{"type", "task"}, {"task", task}, {"jobs", child_jobs}}));
      }
    }
    stress_sweep_write(fd, Json::object({{"type", "end"}, {"exit", 0}}));
    return 0;
  };
  callbacks.on_record = [&seen](const Json& record) {
    seen.finished.push_back(record["task"].get<std::size_t>());
    seen.jobs.push_back(record["jobs"].get<std::uint32_t>());
    return Status();
  };
  callbacks.on_death = [&seen, stop_at_death](const SweepDeath& death) {
    seen.deaths.push_back(death);
    return !stop_at_death;
  };
  callbacks.on_unblamed = [&seen](const SweepDeath& death) { seen.unblamed.push_back(death); };
  return callbacks;
}

Result<SweepOutcome> sweep(const std::map<std::size_t, Fate>& fates, std::size_t tasks_count,
                           std::uint32_t jobs, Seen& seen, bool stop_at_death = false,
                           SweepLimits limits = SweepLimits{kNoHangSeconds, 0, 9}) {
  std::vector<std::size_t> tasks;
  for (std::size_t task = 0; task < tasks_count; ++task) {
    tasks.push_back(task);
  }
  return stress_sweep_supervise(tasks, jobs, limits, callbacks_for(fates, seen, stop_at_death));
}

TEST(SweepSupervisor, EveryWayATaskDiesIsItsFailureAndTheRestRun) {
  Seen seen;
  const std::map<std::size_t, Fate> fates = {
      {1, Fate::kAbort}, {3, Fate::kCrash}, {4, Fate::kExit}};
  Result<SweepOutcome> outcome = sweep(fates, 7, 1, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 2, 5, 6}));
  ASSERT_EQ(seen.deaths.size(), 3u);
  EXPECT_EQ(seen.deaths[0].task, 1u);
  EXPECT_EQ(seen.deaths[0].status, "aborted");
  EXPECT_EQ(seen.deaths[1].task, 3u);
  if (kSanitized) {
    EXPECT_TRUE(seen.deaths[1].status == "exited" || seen.deaths[1].status == "aborted")
        << seen.deaths[1].status << ": " << seen.deaths[1].how;
  } else {
    EXPECT_EQ(seen.deaths[1].status, "crashed");
    EXPECT_NE(seen.deaths[1].how.find("signal 11"), std::string::npos) << seen.deaths[1].how;
  }
  EXPECT_EQ(seen.deaths[2].task, 4u);
  EXPECT_EQ(seen.deaths[2].status, "exited");
  EXPECT_NE(seen.deaths[2].how.find("status 66"), std::string::npos) << seen.deaths[2].how;
  EXPECT_EQ(outcome.value().deaths, 3u);
  EXPECT_EQ(outcome.value().children, 4u);
  EXPECT_FALSE(outcome.value().stopped);
  EXPECT_EQ(outcome.value().account.finished, 4u);
  EXPECT_EQ(outcome.value().account.died, 3u);
}

TEST(SweepSupervisor, ATaskThatNeverEndsIsKilledAsHung) {
  // The only task: nothing else could be taken for hung however slowly the machine runs.
  Seen seen;
  Result<SweepOutcome> outcome = sweep({{0, Fate::kHang}}, 1, 1, seen, false, SweepLimits{1, 0, 1});
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].task, 0u);
  EXPECT_EQ(seen.deaths[0].status, "hung");
  EXPECT_NE(seen.deaths[0].how.find("no task finished in 1 s"), std::string::npos);
}

// This process's resident memory in bytes (a child starts with as much: its pages are shared).
std::uint64_t resident_now() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  unsigned long long size_pages = 0;
  unsigned long long resident_pages = 0;
  if (file != nullptr) {
    if (std::fscanf(file, "%llu %llu", &size_pages, &resident_pages) != 2) {
      resident_pages = 0;
    }
    std::fclose(file);
  }
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST(SweepSupervisor, ATaskPastTheMemoryLimitIsItsFailureAndTheRestRun) {
  Seen seen;
  // 256 MiB more than this process holds now (a sanitizer's shadow memory counts too).
  const std::uint64_t limit = (resident_now() >> 20 << 20) + (std::uint64_t{256} << 20);
  SweepLimits limits{kNoHangSeconds, limit, 9};
  Result<SweepOutcome> outcome = sweep({{1, Fate::kAllocate}}, 3, 1, seen, false, limits);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 2}));
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].task, 1u);
  EXPECT_EQ(seen.deaths[0].status, "memory") << seen.deaths[0].how;
  EXPECT_NE(seen.deaths[0].how.find(std::to_string(limit >> 20) + " MiB"), std::string::npos)
      << seen.deaths[0].how;
}

TEST(SweepSupervisor, TheAssertionLineOfTheChildsStderrIsKept) {
  Seen seen;
  Result<SweepOutcome> outcome = sweep({{2, Fate::kAssertLine}}, 4, 1, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].assertion, "readyport: assertion failed: planted (here.cpp:1)");
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 1, 3}));
}

TEST(SweepSupervisor, TheTaskTheHandlerNamesIsBlamedEvenWithSeveralJobs) {
  Seen seen;
  // Task 2 names itself; with 2 jobs it is blamed at once, no rerun with one job.
  Result<SweepOutcome> outcome = sweep({{2, Fate::kAbortNamed}}, 5, 2, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].task, 2u);
  EXPECT_TRUE(seen.deaths[0].named.is_object());
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 1, 3, 4}));
  EXPECT_EQ(seen.jobs, (std::vector<std::uint32_t>{2, 2, 2, 2}));
}

TEST(SweepSupervisor, TasksBeforeANamedOneThatWereStillRunningGoFirstWithOneJob) {
  Seen seen;
  // Task 1 is still running on the other job when task 2 aborts: 1 runs again first, alone, then
  // 2 is blamed, and the rest runs on two jobs again. Deaths and records stay in task order.
  Result<SweepOutcome> outcome =
      sweep({{1, Fate::kSlowBesideOthers}, {2, Fate::kAbortNamed}}, 5, 2, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].task, 2u);
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 1, 3, 4}));
  EXPECT_EQ(seen.jobs, (std::vector<std::uint32_t>{2, 1, 2, 2}));
}

TEST(SweepSupervisor, AnUnnamedCrashWithSeveralJobsRunsTheRestWithOneJobFirst) {
  Seen seen;
  Result<SweepOutcome> outcome = sweep({{2, Fate::kCrash}}, 5, 2, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  ASSERT_EQ(seen.deaths.size(), 1u);
  EXPECT_EQ(seen.deaths[0].task, 2u);
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 1, 3, 4}));
  // Tasks 0 and 1 on two jobs, then the tasks that may have been running on one.
  EXPECT_EQ(seen.jobs, (std::vector<std::uint32_t>{2, 2, 1, 1}));
  EXPECT_EQ(outcome.value().children, 3u);
}

TEST(SweepSupervisor, OnDeathCanEndTheSweep) {
  Seen seen;
  Result<SweepOutcome> outcome = sweep({{1, Fate::kAbort}}, 4, 1, seen, /*stop_at_death=*/true);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_TRUE(outcome.value().stopped);
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0}));
  EXPECT_EQ(outcome.value().account.not_run, 2u);
}

TEST(SweepSupervisor, ALineThatIsNoRecordIsAnError) {
  SweepCallbacks callbacks;
  callbacks.run = [](const std::vector<std::size_t>&, std::uint32_t, int fd) {
    const char line[] = "not json\n";
    (void)!::write(fd, line, sizeof(line) - 1);
    return 0;
  };
  callbacks.on_record = [](const Json&) { return Status(); };
  callbacks.on_death = [](const SweepDeath&) { return true; };
  Result<SweepOutcome> outcome =
      stress_sweep_supervise({0, 1}, 1, SweepLimits{kNoHangSeconds, 0, 1}, callbacks);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("not a record"), std::string::npos);
}

// ---- Real children killed at every point of the protocol ---------------------------------------

// How the child ends after writing the records of the tasks before `at`.
enum class Death {
  kKilled,        // SIGKILL, nothing more written
  kAbortUnnamed,  // abort() with no name
  kTwoNamed,      // two threads' handlers name task `at` and the next at once, then abort
  kCutRecord,     // half of task `at`'s record written, then SIGKILL
  kNoEndLine,     // every record written, then SIGKILL before the end line
};

// The child for the protocol test: the first one (every task, on the sweep's jobs) writes the
// records of its tasks before `at` (in one burst, so that they are still in the pipe when it
// dies), then dies as `death` says; a later child (the tasks run again, or after) finishes every
// task it is given.
SweepCallbacks protocol_child(std::size_t at, Death death, std::size_t tasks_count,
                              std::uint32_t jobs, Seen& seen) {
  SweepCallbacks callbacks = callbacks_for({}, seen, false);
  callbacks.run = [at, death, tasks_count, jobs](const std::vector<std::size_t>& tasks,
                                                 std::uint32_t child_jobs, int fd) {
    const bool dies = tasks.size() == tasks_count && child_jobs == jobs;
    std::string burst;
    for (const std::size_t task : tasks) {
      if (dies && task >= at && death != Death::kNoEndLine) {
        break;
      }
      burst += Json::object({{"type", "task"}, {"task", task}, {"jobs", child_jobs}}).dump() + "\n";
    }
    if (!dies) {
      burst += Json::object({{"type", "end"}, {"exit", 0}}).dump() + "\n";
    } else if (death == Death::kTwoNamed) {
      burst += Json::object({{"type", "aborted"}, {"task", at + 1}}).dump() + "\n";
      burst += Json::object({{"type", "aborted"}, {"task", at}}).dump() + "\n";
    } else if (death == Death::kCutRecord) {
      const std::string record =
          Json::object({{"type", "task"}, {"task", at}, {"jobs", child_jobs}}).dump();
      burst += record.substr(0, record.size() / 2);
    }
    (void)!::write(fd, burst.data(), burst.size());
    if (!dies) {
      return 0;
    }
    if (death == Death::kAbortUnnamed || death == Death::kTwoNamed) {
      std::abort();
    }
    ::raise(SIGKILL);
    return 1;
  };
  return callbacks;
}

TEST(SweepSupervisor, ChildrenKilledAtEveryPointOfTheProtocolLoseNoTask) {
  constexpr std::size_t kTasks = 5;
  for (const Death death : {Death::kKilled, Death::kAbortUnnamed, Death::kTwoNamed,
                            Death::kCutRecord, Death::kNoEndLine}) {
    for (std::size_t at = 0; at + 1 < kTasks; ++at) {
      for (const std::uint32_t jobs : {1u, 2u}) {
        SCOPED_TRACE("death " + std::to_string(static_cast<int>(death)) + " at task " +
                     std::to_string(at) + ", jobs " + std::to_string(jobs));
        Seen seen;
        const std::vector<std::size_t> tasks = {0, 1, 2, 3, 4};
        Result<SweepOutcome> outcome =
            stress_sweep_supervise(tasks, jobs, SweepLimits{kNoHangSeconds, 0, 9},
                                   protocol_child(at, death, kTasks, jobs, seen));
        ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
        // Each task once, records and deaths together, in task order.
        std::vector<std::size_t> ended = seen.finished;
        for (const SweepDeath& d : seen.deaths) {
          ended.push_back(d.task);
        }
        std::sort(ended.begin(), ended.end());
        EXPECT_EQ(ended, tasks);
        const SweepAccount& a = outcome.value().account;
        EXPECT_EQ(a.finished, seen.finished.size());
        EXPECT_EQ(a.died, seen.deaths.size());
        EXPECT_EQ(a.finished + a.died + a.not_run, kTasks);
        // Only the named tasks, or with one job the task the child died in, are blamed; a death
        // after the last record (or, with two jobs, one that did not come back) is unblamed.
        if (death == Death::kTwoNamed) {
          ASSERT_EQ(seen.deaths.size(), 2u);
          EXPECT_EQ(seen.deaths[0].task, at);
          EXPECT_EQ(seen.deaths[1].task, at + 1);
        } else if (death == Death::kNoEndLine || jobs > 1) {
          EXPECT_TRUE(seen.deaths.empty());
          EXPECT_EQ(seen.unblamed.size(), 1u);
        } else {
          ASSERT_EQ(seen.deaths.size(), 1u);
          EXPECT_EQ(seen.deaths[0].task, at);
        }
      }
    }
  }
}

#endif  // _WIN32

TEST(SweepRecord, ARecordSurvivesItsJsonLine) {
  StressTaskRecord record;
  record.task = 7;
  record.entry = false;
  record.passed = false;
  record.steps = 1234;
  record.printed = true;
  StressSeedShare share;
  share.seed = 42;
  share.trace_hash = "0123456789abcdef";
  share.totals.seeds = 1;
  share.totals.failures = 1;
  share.totals.notifications = 99;
  share.totals.seeds_cut = 0;
  share.totals.coverage = {{"stale_packet_dequeued", 3}, {"fault.psn.call_fails", 2}};
  share.totals.judgement.judged[2] = 5;
  share.totals.judgement.violated[2] = 1;
  share.totals.judgement.bounds_hit[0] = 4;
  record.share = share;
  record.figures.port_calls = 17;
  StressFailure failure;
  failure.seed = 42;
  failure.status = "internal";
  failure.message = "O2 handler after the end";
  failure.signature = "O2";
  failure.bundle = "stress-failures/seed-42.json";
  record.failure = failure;

  StressRecordNames sent;
  StressRecordNames seen;
  const Json line = Json::parse(stress_task_record_json(record, &sent).dump());
  Result<StressTaskRecord> back = stress_task_record_from_json(line, &seen);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  StressRecordNames fresh_a;
  StressRecordNames fresh_b;
  EXPECT_EQ(stress_task_record_json(back.value(), &fresh_a),
            stress_task_record_json(record, &fresh_b));

  // Applied, it counts as the summary's own seed would.
  StressRunSummary summary = stress_summary_begin(1);
  StressFigures figures;
  stress_task_record_apply(back.value(), summary, figures);
  EXPECT_EQ(summary.totals.seeds, 1u);
  EXPECT_EQ(summary.totals.notifications, 99u);
  EXPECT_EQ(summary.totals.judgement.violated[2], 1u);
  EXPECT_EQ(summary.steps_all, 1234u);
  EXPECT_EQ(figures.port_calls, 17u);
  ASSERT_EQ(summary.failures.size(), 1u);
  EXPECT_EQ(summary.failures[0].signature, "O2");
  ASSERT_EQ(summary.seed_hashes.size(), 1u);
  EXPECT_EQ(summary.seed_hashes[0].trace_hash, "0123456789abcdef");
}

TEST(SweepRecord, AMalformedRecordIsRefusedWithTheField) {
  StressRecordNames sent;
  StressRecordNames seen;
  Json record = stress_task_record_json(StressTaskRecord{}, &sent);
  record["figures"] = Json::array({1, 2});
  Result<StressTaskRecord> back = stress_task_record_from_json(record, &seen);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("figures"), std::string::npos) << back.status().message();
}

// A record of seed `seed` whose coverage rows are `rows`.
StressTaskRecord record_with_coverage(std::uint64_t seed,
                                      std::vector<std::pair<std::string, std::uint64_t>> rows) {
  StressTaskRecord record;
  StressSeedShare share;
  share.seed = seed;
  share.trace_hash = "0123456789abcdef";
  share.totals.seeds = 1;
  share.totals.coverage = std::move(rows);
  record.share = share;
  return record;
}

TEST(SweepRecord, CoverageRowsAreNamedOnceAChannelAndAgainWhenTheyChange) {
  StressRecordNames sent;
  StressRecordNames seen;
  const Json first = stress_task_record_json(record_with_coverage(1, {{"a", 1}, {"b", 2}}), &sent);
  const Json second = stress_task_record_json(record_with_coverage(2, {{"a", 3}, {"b", 4}}), &sent);
  const Json third = stress_task_record_json(record_with_coverage(3, {{"a", 5}, {"c", 6}}), &sent);
  EXPECT_TRUE(first["share"].contains("coverage_names"));
  EXPECT_FALSE(second["share"].contains("coverage_names"));
  EXPECT_TRUE(third["share"].contains("coverage_names"));
  const std::vector<std::pair<std::string, std::uint64_t>> expected[] = {
      {{"a", 1}, {"b", 2}}, {{"a", 3}, {"b", 4}}, {{"a", 5}, {"c", 6}}};
  const Json* lines[] = {&first, &second, &third};
  for (std::size_t i = 0; i < 3; ++i) {
    Result<StressTaskRecord> back =
        stress_task_record_from_json(Json::parse(lines[i]->dump()), &seen);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    ASSERT_TRUE(back.value().share.has_value());
    EXPECT_EQ(back.value().share->totals.coverage, expected[i]) << "record " << i;
  }
}

TEST(SweepRecord, CountsWithoutTheirNamesAreRefused) {
  StressRecordNames sent;
  (void)stress_task_record_json(record_with_coverage(1, {{"a", 1}, {"b", 2}}), &sent);
  const Json unnamed =
      stress_task_record_json(record_with_coverage(2, {{"a", 3}, {"b", 4}}), &sent);
  StressRecordNames fresh;  // a reader that never saw the channel's first record
  Result<StressTaskRecord> back = stress_task_record_from_json(unnamed, &fresh);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("coverage"), std::string::npos) << back.status().message();
}

}  // namespace
}  // namespace readyport
