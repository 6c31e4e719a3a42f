// The sweep supervisor (sweep_supervisor.hpp) and its records (sweep_record.hpp): a task that
// aborts, crashes, exits or hangs in the child is that task's failure and the rest still run; a
// task named by the abort handler is the one blamed; with several jobs and nobody named, the
// tasks left run again with one job; a record survives its JSON line unchanged.
#include <gtest/gtest.h>

#ifndef _WIN32
#include <signal.h>
#include <unistd.h>
#endif

#include <cstdio>
#include <cstdlib>
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
enum class Fate {
  kPass,
  kAbort,
  kAbortNamed,
  kCrash,
  kExit,
  kHang,
  kAssertLine,
  kSlowBesideOthers
};

struct Seen {
  std::vector<std::size_t> finished;  // task records, in order
  std::vector<std::uint32_t> jobs;    // the child's jobs, per task record
  std::vector<SweepDeath> deaths;
};

Result<SweepOutcome> sweep(const std::map<std::size_t, Fate>& fates, std::size_t tasks_count,
                           std::uint32_t jobs, Seen& seen, bool stop_at_death = false) {
  SweepCallbacks callbacks;
  callbacks.run = [&fates](const std::vector<std::size_t>& tasks, std::uint32_t child_jobs,
                           int fd) {
    for (const std::size_t task : tasks) {
      const auto fate = fates.find(task);
      switch (fate == fates.end() ? Fate::kPass : fate->second) {
        case Fate::kPass:
          break;
        case Fate::kSlowBesideOthers:
          if (child_jobs > 1) {
            continue;
          }
          break;
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
          break;
        case Fate::kExit:
          ::_exit(66);
        case Fate::kHang:
          for (;;) {
            ::pause();
          }
      }
      stress_sweep_write(fd,
                         Json::object({{"type", "task"}, {"task", task}, {"jobs", child_jobs}}));
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
  std::vector<std::size_t> tasks;
  for (std::size_t task = 0; task < tasks_count; ++task) {
    tasks.push_back(task);
  }
  return stress_sweep_supervise(tasks, jobs, /*hang_seconds=*/1, callbacks);
}

TEST(SweepSupervisor, EveryWayATaskDiesIsItsFailureAndTheRestRun) {
  Seen seen;
  const std::map<std::size_t, Fate> fates = {
      {1, Fate::kAbort}, {3, Fate::kCrash}, {4, Fate::kExit}, {6, Fate::kHang}};
  Result<SweepOutcome> outcome = sweep(fates, 8, 1, seen);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0, 2, 5, 7}));
  ASSERT_EQ(seen.deaths.size(), 4u);
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
  EXPECT_EQ(seen.deaths[3].task, 6u);
  EXPECT_EQ(seen.deaths[3].status, "hung");
  EXPECT_EQ(outcome.value().deaths, 4u);
  EXPECT_EQ(outcome.value().children, 5u);
  EXPECT_FALSE(outcome.value().stopped);
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
  // Tasks 0 and 1 on two jobs, then the rest on one.
  EXPECT_EQ(seen.jobs, (std::vector<std::uint32_t>{2, 2, 1, 1}));
  EXPECT_EQ(outcome.value().children, 3u);
}

TEST(SweepSupervisor, OnDeathCanEndTheSweep) {
  Seen seen;
  Result<SweepOutcome> outcome = sweep({{1, Fate::kAbort}}, 4, 1, seen, /*stop_at_death=*/true);
  ASSERT_TRUE(outcome.ok()) << outcome.status().to_string();
  EXPECT_TRUE(outcome.value().stopped);
  EXPECT_EQ(seen.finished, (std::vector<std::size_t>{0}));
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
  Result<SweepOutcome> outcome = stress_sweep_supervise({0, 1}, 1, 5, callbacks);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("not a record"), std::string::npos);
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
