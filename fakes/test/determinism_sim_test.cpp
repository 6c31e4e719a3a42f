// One seed, one interleaving: the standard multi-threaded scenario (three dequeuers, a producer,
// FakeOs under SimScheduler, every call recorded) replays to the same trace for every seed, and
// different seeds give different interleavings. Label determinism.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "seed_env.hpp"
#include "sim_scenario.hpp"

namespace readyport {
namespace {

constexpr std::uint64_t kSeeds = 1000;

ScenarioRunOptions hash_only(std::uint64_t seed, SimStrategy strategy) {
  ScenarioRunOptions options;
  options.seed = seed;
  options.strategy = strategy;
  options.trace.keep_full = false;  // only the hash and a short tail: 2,000 runs stay light
  options.trace.tail_lines_max = 8;
  return options;
}

void expect_replays(SimStrategy strategy) {
  const test::SeedLoop seeds = test::seed_loop(0, kSeeds);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  const std::uint64_t seed_count = seeds.seeds().size();
  std::set<std::uint64_t> hashes;
  std::set<std::uint64_t> schedules;  // interleavings alone
  std::uint64_t steps_total = 0;
  std::uint64_t switches_total = 0;
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    const ScenarioRunResult first = run_standard_scenario(hash_only(seed, strategy));
    ASSERT_TRUE(first.status.ok()) << "seed " << seed << ": " << first.status.to_string();
    const ScenarioRunResult second = run_standard_scenario(hash_only(seed, strategy));
    ASSERT_TRUE(second.status.ok()) << "seed " << seed << ": " << second.status.to_string();
    ASSERT_EQ(first.hash, second.hash) << "seed " << seed << " (" << first.parameters << ")";
    ASSERT_EQ(first.lines, second.lines) << "seed " << seed;
    ASSERT_EQ(first.tail, second.tail) << "seed " << seed;
    ASSERT_EQ(first.stats.steps, second.stats.steps) << "seed " << seed;
    ASSERT_EQ(first.stats.schedule_hash, second.stats.schedule_hash) << "seed " << seed;
    hashes.insert(first.hash);
    schedules.insert(first.stats.schedule_hash);
    steps_total += first.stats.steps;
    switches_total += first.stats.switches;
  }
  std::printf(
      "%s: %llu seeds, %zu distinct traces, %zu distinct interleavings, %.1f steps and %.1f "
      "switches per run\n",
      sim_strategy_name(strategy), static_cast<unsigned long long>(seed_count), hashes.size(),
      schedules.size(), static_cast<double>(steps_total) / static_cast<double>(seed_count),
      static_cast<double>(switches_total) / static_cast<double>(seed_count));
  // Each trace names its seed in its first line, so whole traces always differ.
  EXPECT_EQ(hashes.size(), seed_count);
}

TEST(SimDeterminism, RandomSameSeedSameTraceHashForAThousandSeeds) {
  expect_replays(SimStrategy::kRandom);
}

TEST(SimDeterminism, PctSameSeedSameTraceHashForAThousandSeeds) {
  expect_replays(SimStrategy::kPct);
}

// Different seeds over one fixed workload: the interleavings themselves differ.
void expect_distinct_interleavings(SimStrategy strategy, std::uint64_t seeds,
                                   std::uint64_t distinct_min) {
  const test::SeedLoop loop = test::seed_loop(0, seeds);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(loop.ok()) << loop.error();
  std::set<std::uint64_t> schedules;
  for (const std::uint64_t seed : loop.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    ScenarioRunOptions options = hash_only(seed, strategy);
    options.workload_seed = 12345;
    const ScenarioRunResult result = run_standard_scenario(options);
    ASSERT_TRUE(result.status.ok()) << "seed " << seed << ": " << result.status.to_string();
    schedules.insert(result.stats.schedule_hash);
  }
  std::printf("%s: %llu seeds over one workload, %zu distinct interleavings\n",
              sim_strategy_name(strategy), static_cast<unsigned long long>(loop.seeds().size()),
              schedules.size());
  ::testing::Test::RecordProperty("distinct_interleavings", static_cast<int>(schedules.size()));
  if (!loop.whole_loop()) {
    loop.note_skipped("at least " + std::to_string(distinct_min) + " distinct interleavings");
    return;
  }
  EXPECT_GE(schedules.size(), distinct_min);
}

TEST(SimDeterminism, RandomSeedsGiveDistinctInterleavings) {
  // Random choices over ~100 steps hardly ever coincide.
  expect_distinct_interleavings(SimStrategy::kRandom, 300, 300 * 95 / 100);
}

TEST(SimDeterminism, PctSeedsGiveDistinctInterleavings) {
  // PCT has fewer shapes: a priority order of 5 threads and two change points per seed.
  expect_distinct_interleavings(SimStrategy::kPct, 300, 300 / 4);
}

TEST(SimDeterminism, FullTextsAreIdenticalAndSeedsDiffer) {
  const test::SeedLoop seeds = test::seed_loop(0, 20);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    ScenarioRunOptions options;
    options.seed = seed;
    const ScenarioRunResult first = run_standard_scenario(options);
    const ScenarioRunResult second = run_standard_scenario(options);
    ASSERT_TRUE(first.status.ok()) << first.status.to_string();
    ASSERT_FALSE(first.text.empty());
    ASSERT_EQ(first.text, second.text) << "seed " << seed;  // compared in full, not by hash
    EXPECT_EQ(first.hash, second.hash);
    options.seed = seed + 1000;
    EXPECT_NE(run_standard_scenario(options).text, first.text) << "seed " << seed;
  }
}

TEST(SimDeterminism, TheWorkloadDoesNotDependOnTheStrategy) {
  // The producer draws from the workload stream only: the same seed posts and sends the same
  // things whatever the schedule.
  const test::SeedLoop seeds = test::seed_loop(0, 50);  // or READYPORT_SEED's (seed_env.hpp)
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  for (const std::uint64_t seed : seeds.seeds()) {
    SCOPED_TRACE(test::seed_replay(seed));
    const ScenarioRunResult random = run_standard_scenario(hash_only(seed, SimStrategy::kRandom));
    const ScenarioRunResult pct = run_standard_scenario(hash_only(seed, SimStrategy::kPct));
    const ScenarioRunResult rr = run_standard_scenario(hash_only(seed, SimStrategy::kRoundRobin));
    ASSERT_TRUE(random.status.ok() && pct.status.ok() && rr.status.ok());
    EXPECT_EQ(random.counts.posted, pct.counts.posted);
    EXPECT_EQ(random.counts.posted, rr.counts.posted);
    EXPECT_EQ(random.counts.datagrams_sent, pct.counts.datagrams_sent);
    EXPECT_EQ(random.counts.datagrams_sent, rr.counts.datagrams_sent);
  }
}

TEST(SimDeterminism, TheTraceNamesItsParametersFirst) {
  ScenarioRunOptions options;
  options.seed = 77;
  options.strategy = SimStrategy::kPct;
  const ScenarioRunResult result = run_standard_scenario(options);
  ASSERT_TRUE(result.status.ok());
  const std::string first_line = result.text.substr(0, result.text.find('\n'));
  EXPECT_EQ(first_line, "0 0 T0 sched.params " + result.parameters);
  EXPECT_NE(result.text.find(" T1 create_port concurrency=0 -> "), std::string::npos);
  EXPECT_NE(result.text.find(" sched.start T5 name=producer"), std::string::npos);
  EXPECT_NE(result.text.find(" sched.finish"), std::string::npos);
}

}  // namespace
}  // namespace readyport
