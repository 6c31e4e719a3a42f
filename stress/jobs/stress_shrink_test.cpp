// The shrinker against a stand-in runner whose failure has a known cause, so the minimal case is
// known: it fails with rule O7 when psn.remove_fails is active and at least 10 director actions
// ran, whatever else was drawn.
#include "jobs/stress_shrink.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace readyport {
namespace {

SeedReport planted_runner(const StressOptions& options, std::uint64_t seed) {
  SeedReport report;
  report.parameters = stress_parameters(options, seed);
  const bool remove_fails = report.parameters.plan.active(FaultSite::kPsnRemoveFails);
  if (remove_fails && report.parameters.workload.actions >= 10) {
    report.status = Status(StatusCode::kInternal, "O7 second REMOVE (planted)");
  }
  return report;
}

TEST(StressShrinkTest, ShrinksToTheCauseAndNothingElse) {
  StressOptions options;
  options.faults = StressOptions::Faults::kPlan;
  options.fault_plan = "psn.call_fails@10,psn.remove_fails@25,post.fails@2,recv.connreset@10";
  options.strategy = StressStrategy::kPct;
  options.pct_depth = 3;
  const ShrinkResult result = stress_shrink(options, 7, planted_runner);
  ASSERT_TRUE(result.status.ok()) << result.status.to_string();
  EXPECT_EQ(result.signature, "O7");
  EXPECT_EQ(result.minimal.parameters.plan.to_string(), "psn.remove_fails@25");
  EXPECT_EQ(result.options.pct_depth, 1u);
  EXPECT_GE(result.minimal.parameters.workload.actions, 10u);
  EXPECT_LT(result.minimal.parameters.workload.actions, 20u);
  EXPECT_EQ(result.minimal.parameters.workload.peers, 0u);
  EXPECT_FALSE(result.minimal.status.ok());
  // The replay command carries the minimal case.
  const std::string replay = stress_replay_command(result.options, result.minimal);
  EXPECT_NE(replay.find("--faults psn.remove_fails@25"), std::string::npos) << replay;
  EXPECT_NE(replay.find("--depth 1"), std::string::npos) << replay;
  EXPECT_NE(replay.find("--actions-max"), std::string::npos) << replay;
}

// A stand-in world whose faults are hits: a rated site fires at its hits 1..5 (every hit of a
// short run), a pinned site at its listed hits; the run fails (O2) exactly when
// psn.call_fails#2 and psn.remove_fails#4 both fired, whatever else did.
SeedReport hits_runner(const StressOptions& options, std::uint64_t seed) {
  SeedReport report;
  report.parameters = stress_parameters(options, seed);
  const FaultPlan& plan = report.parameters.plan;
  std::vector<FaultHit> fired;
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(FaultSite::kCount); ++i) {
    const auto site = static_cast<FaultSite>(i);
    for (std::uint64_t hit = 1; hit <= 5; ++hit) {
      const bool fires = plan.pinned(site) ? plan.fires_at(site, hit) : plan.active(site);
      if (fires) {
        fired.push_back(FaultHit{site, hit});
      }
    }
  }
  report.fired_hits = FaultPlan::of_hits(fired).to_string();
  const FaultPlan fired_plan = FaultPlan::of_hits(fired);
  if (fired_plan.fires_at(FaultSite::kPsnCallFails, 2) &&
      fired_plan.fires_at(FaultSite::kPsnRemoveFails, 4)) {
    report.status = Status(StatusCode::kInternal, "O2 handler called after close (planted)");
  }
  return report;
}

TEST(StressShrinkTest, ShrinksFiredFaultsOneByOneToTheTwoThatMatter) {
  StressOptions options;
  options.faults = StressOptions::Faults::kPlan;
  options.fault_plan = "psn.call_fails@10,psn.remove_fails@25,post.fails@2,recv.connreset@10";
  options.strategy = StressStrategy::kRandom;
  const ShrinkResult result = stress_shrink(options, 11, hits_runner);
  ASSERT_TRUE(result.status.ok()) << result.status.to_string();
  EXPECT_EQ(result.signature, "O2");
  // 20 faults fired at first (4 sites x 5 hits); 2 are left, and no single one can go.
  EXPECT_EQ(stress_faults_fired(result.original), 0u);  // the stand-in has no coverage rows
  EXPECT_EQ(result.minimal.fired_hits, "psn.call_fails#2,psn.remove_fails#4");
  EXPECT_EQ(result.options.fault_plan, "psn.call_fails#2,psn.remove_fails#4");
  EXPECT_TRUE(result.one_minimal);
  // The stand-in ignores the schedule: a random one is replaced by PCT of depth 1.
  EXPECT_EQ(result.options.strategy, StressStrategy::kPct);
  EXPECT_EQ(result.options.pct_depth, 1u);
  const std::string replay = stress_replay_command(result.options, result.minimal);
  EXPECT_NE(replay.find("--faults psn.call_fails#2,psn.remove_fails#4"), std::string::npos)
      << replay;
}

// On the real world: the plan of the faults that fired replays the seed exactly (the same trace
// hash), so the shrinker's per-fault step starts from the same run.
TEST(StressShrinkTest, TheFiredHitsOfARealSeedReplayItExactly) {
  std::uint32_t seeds_with_faults = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const StressOptions options;  // drawn faults, the default schedule
    const SeedReport drawn = stress_run_seed(options, seed);
    ASSERT_TRUE(drawn.status.ok()) << seed << ": " << drawn.status.to_string();
    ASSERT_FALSE(drawn.fired_hits.empty()) << seed;
    if (drawn.fired_hits != "none") {
      ++seeds_with_faults;
    }
    StressOptions pinned = options;
    pinned.faults = StressOptions::Faults::kPlan;
    pinned.fault_plan = drawn.fired_hits;
    if (drawn.fired_hits == "none") {
      pinned.faults = StressOptions::Faults::kOff;
    }
    pinned.strategy = stress_strategy_of(drawn.parameters.strategy);
    const SeedReport replayed = stress_run_seed(pinned, seed);
    EXPECT_EQ(replayed.trace_hash, drawn.trace_hash) << "seed " << seed;
    EXPECT_EQ(replayed.fired_hits, drawn.fired_hits) << "seed " << seed;
    EXPECT_EQ(stress_faults_fired(replayed), stress_faults_fired(drawn)) << "seed " << seed;
  }
  EXPECT_GE(seeds_with_faults, 3u);
}

TEST(StressShrinkTest, APassingSeedIsNotShrunk) {
  StressOptions options;
  options.faults = StressOptions::Faults::kOff;
  const ShrinkResult result = stress_shrink(options, 7, planted_runner);
  EXPECT_EQ(result.status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.runs, 1u);
}

TEST(StressShrinkTest, SignatureIsTheRuleOrTheFirstWords) {
  EXPECT_EQ(stress_failure_signature(Status(StatusCode::kInternal, "O12 engine misreports at")),
            "O12");
  EXPECT_EQ(stress_failure_signature(
                Status(StatusCode::kInternal, "chaos workload: liveness client 3 ended")),
            "internal: chaos workload");
  EXPECT_EQ(stress_failure_signature(Status(StatusCode::kResourceExhausted,
                                            "step limit 2000000 reached at t=8000000 ns: T1")),
            "resource_exhausted: step limit N reached at t=N ns");
}

}  // namespace
}  // namespace readyport
