// The shrinker against a stand-in runner whose failure has a known cause, so the minimal case is
// known: it fails with rule O7 when psn.remove_fails is active and at least 10 director actions
// ran, whatever else was drawn.
#include "stress_shrink.hpp"

#include <gtest/gtest.h>

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
}

}  // namespace
}  // namespace readyport
