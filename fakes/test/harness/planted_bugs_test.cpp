// Each planted embedder bug (echo_under_test.hpp) is caught within the harness's default seeds, by
// the rule it breaks; each test prints the first failing seed, the seeds it took and the time.
// The first also shrinks its failure and replays the shrunk case.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "planted_scenario.hpp"

namespace readyport::harness_test {
namespace {

// The default seeds, no shrinking (the environment may say otherwise: a printed replay command).
HarnessOptions planted_options(PlantedBug bug) {
  HarnessOptions options;
  options.test_name = std::string("planted.") + planted_bug_name(bug);
  options.bundle_dir = testing::TempDir() + "readyport-harness-bundles";
  options.shrink = false;
  Result<HarnessOptions> from_env = harness_options_from_env(options);
  EXPECT_TRUE(from_env.ok()) << from_env.status().to_string();
  return from_env.ok() ? from_env.value() : options;
}

class PlantedBugTest : public testing::TestWithParam<PlantedBug> {};

TEST_P(PlantedBugTest, IsCaughtWithinTheDefaultSeedsByTheRuleItBreaks) {
  const PlantedBug bug = GetParam();
  const HarnessOptions options = planted_options(bug);
  const HarnessResult result = harness_run(options, planted_scenario(bug));
  ASSERT_FALSE(result.ok()) << "not caught in " << result.seeds_run << " seeds";
  ASSERT_EQ(result.failures.size(), 1u);
  const HarnessSeed& failure = result.failures.front();
  EXPECT_EQ(failure.signature, planted_bug_rule(bug)) << failure.status.to_string();
  EXPECT_FALSE(result.replay.empty());
  EXPECT_FALSE(result.bundle.empty());
  std::printf("planted %-22s caught by %-3s at seed %3llu (%u seeds run), %.2f s\n",
              planted_bug_name(bug), failure.signature.c_str(),
              static_cast<unsigned long long>(failure.run_case.seed), result.seeds_run,
              result.seconds);
}

INSTANTIATE_TEST_SUITE_P(EveryClass, PlantedBugTest,
                         testing::Values(PlantedBug::kCloseInHandler, PlantedBug::kStaleSocket,
                                         PlantedBug::kBlockingRecv, PlantedBug::kOutlivesStop,
                                         PlantedBug::kWouldblockAsSuccess,
                                         PlantedBug::kEdgeNotDrained, PlantedBug::kFailedAddLeak,
                                         PlantedBug::kEofIgnored, PlantedBug::kBusyWait,
                                         PlantedBug::kFreedTooEarly),
                         [](const testing::TestParamInfo<PlantedBug>& param_info) {
                           return std::string(planted_bug_name(param_info.param));
                         });

// The first failure shrunk: a smaller case that fails by the same rule, replayed exactly from its
// case alone.
TEST(PlantedBugShrink, TheShrunkCaseFailsTheSameWayAndReplaysExactly) {
  HarnessOptions options = planted_options(PlantedBug::kCloseInHandler);
  options.shrink = true;
  const HarnessResult result = harness_run(options, planted_scenario(PlantedBug::kCloseInHandler));
  ASSERT_FALSE(result.ok());
  ASSERT_FALSE(result.shrunk_replay.empty()) << result.report;
  EXPECT_NE(result.report.find("faults that matter"), std::string::npos);
  // The failing seed's case, run again alone: the same verdict and the same trace.
  const HarnessSeed& failure = result.failures.front();
  const HarnessSeed again =
      harness_run_case(options, failure.run_case, planted_scenario(PlantedBug::kCloseInHandler));
  EXPECT_EQ(again.trace_hash, failure.trace_hash);
  EXPECT_EQ(again.status.to_string(), failure.status.to_string());
}

}  // namespace
}  // namespace readyport::harness_test
