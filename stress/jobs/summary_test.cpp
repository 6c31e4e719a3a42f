// The main job's JSON and Markdown summaries (summary_json.hpp, summary_markdown.hpp): every
// failure with its bundle, the shard's row, the limits.
#include <gtest/gtest.h>

#include <string>

#include "cli/build_info.hpp"
#include "jobs/run_summary.hpp"
#include "jobs/summary_json.hpp"
#include "jobs/summary_markdown.hpp"

namespace readyport {
namespace {

StressFailure failure(std::uint64_t seed, const std::string& entry) {
  StressFailure f;
  f.from_corpus = !entry.empty();
  f.entry = entry;
  f.seed = seed;
  f.status = "internal";
  f.message = "O2 handler after the end";
  f.signature = "O2";
  f.bundle = "stress-failures/seed-" + std::to_string(seed) + ".json";
  return f;
}

StressRunSummary summary_with(std::size_t failures) {
  StressRunSummary summary = stress_summary_begin(2000);
  summary.totals.seeds = 2000;
  summary.totals.failures = failures;
  summary.corpus.dir = "stress/corpus";
  summary.corpus.entries = 8;
  summary.corpus.passed = 8;
  for (std::size_t i = 0; i < failures; ++i) {
    stress_summary_add_failure(summary, failure(1000 + i, ""));
  }
  summary.seconds = 12.5;
  summary.exit_status = failures == 0 ? 0 : 1;
  return summary;
}

StressOptions shard_options() {
  StressOptions options;
  options.first_seed = 1;
  options.seeds = 8000;
  options.shard_index = 1;
  options.shard_count = 4;
  return options;
}

TEST(SummaryJsonTest, ListsEveryFailureWithItsBundle) {
  StressRunSummary summary = summary_with(3);
  stress_summary_add_failure(summary, failure(251, "seed-251.json"));
  const Json json = stress_summary_json(shard_options(), summary, StressFigures{});
  EXPECT_EQ(json["format"], kStressSummaryFormat);
  EXPECT_EQ(json["readyport"]["commit"], stress_build_info().commit);
  EXPECT_EQ(json["shard"], "2/4");
  EXPECT_EQ(json["seeds_run"], 2000);
  EXPECT_EQ(json["failed"], 3);
  EXPECT_EQ(json["passed"], 1997);
  EXPECT_EQ(json["failures_total"], 4);
  ASSERT_EQ(json["failures"].size(), 4u);
  EXPECT_EQ(json["failures"][0]["seed"], 1000);
  EXPECT_EQ(json["failures"][0]["signature"], "O2");
  EXPECT_EQ(json["failures"][0]["bundle"], "stress-failures/seed-1000.json");
  EXPECT_EQ(json["failures"][3]["source"], "corpus");
  EXPECT_EQ(json["failures"][3]["entry"], "seed-251.json");
  EXPECT_EQ(json["corpus"]["failed"], 1);
  EXPECT_EQ(json["options"]["strategy"], "portfolio");
  // The coverage rows and the faults fired, split; every zero row named.
  EXPECT_TRUE(json["coverage"].contains("handler_entered"));
  EXPECT_TRUE(json["faults_fired"].contains("psn.call_fails"));
  EXPECT_FALSE(json["coverage"].contains("fault.psn.call_fails"));
  EXPECT_EQ(json["coverage_zero_rows"].size(), stress_coverage_rows().size());
  EXPECT_EQ(json["seconds"], 12.5);
  EXPECT_EQ(json["os"], "fake");
}

// The speed of a run (seeds and scheduled calls per wall second, the job count)
// and every seed's trace hash in seed order, so that runs on different job counts compare.
TEST(SummaryJsonTest, RatesJobsAndPerSeedHashes) {
  StressRunSummary summary = stress_summary_begin(3);
  for (std::uint64_t seed = 5; seed < 8; ++seed) {
    SeedReport report;
    report.parameters.seed = seed;
    report.trace_hash = "000000000000000" + std::to_string(seed);
    report.sim.steps = 100;
    stress_summary_add_seed(summary, report);
  }
  summary.corpus.entries = 1;
  summary.steps_all = 400;  // the three seeds and the corpus entry
  summary.seconds = 2.0;
  summary.jobs = 3;
  EXPECT_DOUBLE_EQ(stress_summary_seeds_per_second(summary), 2.0);
  EXPECT_DOUBLE_EQ(stress_summary_steps_per_second(summary), 200.0);
  const Json json = stress_summary_json(shard_options(), summary, StressFigures{});
  EXPECT_EQ(json["jobs"], 3);
  EXPECT_EQ(json["steps_all"], 400);
  EXPECT_EQ(json["seeds_per_second"], 2.0);
  EXPECT_EQ(json["scheduled_calls_per_second"], 200.0);
  EXPECT_EQ(json["totals"]["scheduler_steps"], 300);
  ASSERT_EQ(json["seed_hashes"].size(), 3u);
  EXPECT_EQ(json["seed_hashes"][0]["seed"], 5);
  EXPECT_EQ(json["seed_hashes"][2]["seed"], 7);
  EXPECT_EQ(json["seed_hashes"][2]["trace_hash"], "0000000000000007");
  EXPECT_EQ(json["seed_hashes_left_off"], 0);
  const std::string markdown = stress_summary_markdown(shard_options(), summary);
  EXPECT_NE(markdown.find("2.0 s on 3 job(s), 2.0 seeds/s, 200 scheduled calls/s"),
            std::string::npos)
      << markdown;
  // No time measured: no rate, never a division by zero.
  summary.seconds = 0;
  EXPECT_EQ(stress_summary_seeds_per_second(summary), 0.0);
  EXPECT_EQ(stress_summary_steps_per_second(summary), 0.0);
}

// The run's figures, from the seeds' reports: the engine's counts and the oracle's
// REMOVE and stale-packet rows; the same object for either os.
TEST(SummaryJsonTest, FiguresAddUpTheSeedsAndNameTheOs) {
  SeedReport report;
  report.engine.notifications = 40;
  report.engine.port_calls = 50;
  report.oracle.removes_seen = 7;
  report.coverage = {
      {"remove_ored_with_in", 3}, {"stale_packet_dequeued", 2}, {"fault.post.fails", 9}};
  StressFigures figures;
  stress_figures_add(figures, report);
  stress_figures_add(figures, report);
  EXPECT_EQ(figures.notifications, 80u);
  EXPECT_EQ(figures.port_calls, 100u);
  EXPECT_EQ(figures.remove_ored_with_in, 6u);
  EXPECT_EQ(figures.remove_separate, 8u);
  EXPECT_EQ(figures.stale_packets, 4u);
  EXPECT_DOUBLE_EQ(stress_figures_per_notification(figures), 1.25);
  EXPECT_EQ(stress_figures_per_notification(StressFigures{}), 0.0);

  StressOptions options = shard_options();
  options.os = StressOs::kWindows;
  const Json json = stress_summary_json(options, summary_with(0), figures);
  EXPECT_EQ(json["os"], "windows");
  EXPECT_EQ(json["figures"]["notifications"], 80);
  EXPECT_EQ(json["figures"]["port_calls"], 100);
  EXPECT_EQ(json["figures"]["port_calls_per_notification"], 1.25);
  EXPECT_EQ(json["figures"]["remove_ored_with_in"], 6);
  EXPECT_EQ(json["figures"]["remove_separate"], 8);
  EXPECT_EQ(json["figures"]["stale_packets"], 4);
}

// Every rule's judged, violated, ambiguous and unjudged counts, summed over seeds, and each bound.
TEST(SummaryJsonTest, ShowsEachRulesJudgementSummedOverSeeds) {
  SeedReport report;
  report.oracle.judgement.judged[1] = 7;
  report.oracle.judgement.ambiguous[3] = 1;
  report.oracle.judgement.unjudged[5] = 1;
  report.oracle.judgement.violated[9] = 2;
  report.oracle.judgement.bounds_hit[static_cast<std::size_t>(OracleBound::kEndedKeys)] = 3;
  StressRunSummary summary = summary_with(0);
  stress_summary_add_seed(summary, report);
  stress_summary_add_seed(summary, report);
  const Json json = stress_summary_json(shard_options(), summary, StressFigures{});
  const Json& rules = json["oracle_judgement"]["rules"];
  EXPECT_EQ(rules.size(), kOracleRules);
  EXPECT_EQ(rules["O1"]["judged"], 14);
  EXPECT_EQ(rules["O3"]["ambiguous"], 2);
  EXPECT_EQ(rules["O5"]["unjudged"], 2);
  EXPECT_EQ(rules["O9"]["violated"], 4);
  EXPECT_EQ(rules["O6"]["judged"], 0);
  EXPECT_EQ(json["oracle_judgement"]["bounds_hit"]["ended_keys"], 6);
  EXPECT_EQ(json["oracle_judgement"]["bounds_hit"]["tombstones"], 0);
}

// Seeds run = passed + failed + cut (their process died in them), in the text, the JSON and the
// Markdown, with the seeds never run and the limits the seeds ran under.
TEST(SummaryAccountTest, EverySeedIsPassedFailedOrCutInEveryOutput) {
  StressRunSummary summary = stress_summary_begin(12);
  summary.totals.seeds = 10;
  summary.totals.failures = 3;
  summary.totals.seeds_cut = 1;
  summary.limits.steps_max = 2000000;
  summary.limits.trace_mb_max = 64;
  summary.limits.memory_mb_max = 4096;
  summary.limits.memory_data_limit = true;
  summary.limits.hang_seconds = 300;
  const StressSeedAccount account = stress_seed_account(summary);
  EXPECT_EQ(account.passed, 7u);
  EXPECT_EQ(account.failed, 2u);
  EXPECT_EQ(account.cut, 1u);
  EXPECT_EQ(account.not_run, 2u);
  const Json json = stress_summary_json(shard_options(), summary, StressFigures{});
  EXPECT_EQ(json["seeds_run"], 10);
  EXPECT_EQ(json["passed"], 7);
  EXPECT_EQ(json["failed"], 2);
  EXPECT_EQ(json["cut"], 1);
  EXPECT_EQ(json["not_run"], 2);
  EXPECT_EQ(json["limits"]["memory_mb_max"], 4096);
  EXPECT_EQ(json["limits"]["trace_mb_max"], 64);
  const std::string markdown = stress_summary_markdown(shard_options(), summary);
  EXPECT_NE(markdown.find("10 of 12 (7 passed, 2 failed, 1 cut short)"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("Limits: a seed: 2000000 steps (seam calls), its trace kept to 64 MiB; "
                          "a child process: 4096 MiB (resident, and its data segment), 300 s"),
            std::string::npos)
      << markdown;
  ::testing::internal::CaptureStdout();
  (void)stress_summary_print(shard_options(), summary);
  const std::string text = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("seeds run              10 of 12: 7 passed, 2 failed, 1 cut short"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("; 2 not run"), std::string::npos) << text;
  EXPECT_NE(text.find("limits                 a seed: 2000000 steps"), std::string::npos) << text;
}

TEST(SummaryAccountTest, AProcessDeathNoSeedIsBlamedForIsInEveryOutput) {
  StressRunSummary summary = summary_with(0);
  summary.unblamed_deaths.push_back("crashed: the process was killed by signal 11");
  EXPECT_EQ(stress_summary_json(shard_options(), summary, StressFigures{})["unblamed_deaths"][0],
            "crashed: the process was killed by signal 11");
  EXPECT_NE(stress_summary_markdown(shard_options(), summary)
                .find("A process died with no seed to blame: crashed"),
            std::string::npos);
  ::testing::internal::CaptureStdout();
  (void)stress_summary_print(shard_options(), summary);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("process death          no seed blamed"),
            std::string::npos);
}

TEST(SummaryMarkdownTest, OneRowPerShardWithEveryFailingSeedAndBundle) {
  const std::string text = stress_summary_markdown(shard_options(), summary_with(2));
  EXPECT_NE(text.find("### readyport-stress shard 2/4: 2 failures"), std::string::npos) << text;
  EXPECT_NE(text.find("| shard | first seed | seeds run | failures | failing seeds (bundle) |"),
            std::string::npos);
  EXPECT_NE(text.find("| 2/4 | 1 | 2000 of 2000 (1998 passed, 2 failed, 0 cut short) | 2 | 1000 "
                      "O2 (`seed-1000.json`), 1001 O2 (`seed-1001.json`) |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Commit `" + stress_build_info().commit + "`"), std::string::npos);
  const std::string passed = stress_summary_markdown(shard_options(), summary_with(0));
  EXPECT_NE(passed.find("shard 2/4: passed"), std::string::npos);
  EXPECT_NE(passed.find("| 0 | none |"), std::string::npos) << passed;
}

TEST(SummaryMarkdownTest, ManyFailuresAreCappedAndCellsEscaped) {
  StressRunSummary summary = summary_with(kStressMarkdownFailuresMax + 5);
  StressFailure odd = failure(7, "");
  odd.signature = "a|b";
  stress_summary_add_failure(summary, odd);
  const std::string text = stress_summary_markdown(shard_options(), summary);
  EXPECT_NE(text.find("and 6 more: see the JSON summary"), std::string::npos);
  EXPECT_EQ(text.find("seed-1100.json"), std::string::npos);  // the 101st is not listed
  StressRunSummary one = summary_with(0);
  stress_summary_add_failure(one, odd);
  EXPECT_NE(stress_summary_markdown(shard_options(), one).find("7 a\\|b"), std::string::npos);
}

}  // namespace
}  // namespace readyport
