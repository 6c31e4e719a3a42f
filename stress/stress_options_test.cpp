#include "stress_options.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "stress_run.hpp"

namespace readyport {
namespace {

Result<StressOptions> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "readyport-stress");
  return stress_options_parse(static_cast<int>(args.size()), args.data());
}

TEST(StressOptionsTest, DefaultsRunManySeeds) {
  Result<StressOptions> options = parse({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options.value().first_seed, 1u);
  EXPECT_GT(options.value().seeds, 1u);
  EXPECT_EQ(options.value().shard_count, 1u);
  EXPECT_EQ(options.value().strategy, StressStrategy::kMixed);
}

TEST(StressOptionsTest, SeedRunsExactlyOne) {
  Result<StressOptions> options = parse({"--seed", "18446744073709551615", "--strategy", "pct"});
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  EXPECT_EQ(options.value().first_seed, 18446744073709551615ULL);
  EXPECT_EQ(options.value().seeds, 1u);
  EXPECT_EQ(options.value().strategy, StressStrategy::kPct);
}

TEST(StressOptionsTest, ShardIsOneBased) {
  Result<StressOptions> options = parse({"--shard", "3/4", "--seeds", "100"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options.value().shard_index, 2u);
  EXPECT_EQ(options.value().shard_count, 4u);
}

TEST(StressOptionsTest, BadInputIsAClearError) {
  for (std::vector<const char*> args :
       {std::vector<const char*>{"--seeds", "0"}, {"--seeds", "ten"}, {"--shard", "5/4"},
        {"--shard", "0/4"}, {"--shard", "2"}, {"--strategy", "fastest"}, {"--depth", "0"},
        {"--runtime", "kernel"}, {"--bogus"}, {"--seeds"}, {"--seed", "1", "--seeds", "5"},
        {"--first-seed", "18446744073709551615", "--seeds", "2"}}) {
    Result<StressOptions> options = parse(args);
    ASSERT_FALSE(options.ok()) << args[0];
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(options.status().message().find("argument"), std::string::npos);
  }
}

TEST(StressParametersTest, PureFunctionOfTheSeed) {
  StressOptions options;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(stress_parameters_line(stress_parameters(options, seed)),
              stress_parameters_line(stress_parameters(options, seed)));
  }
  EXPECT_NE(stress_parameters_line(stress_parameters(options, 1)),
            stress_parameters_line(stress_parameters(options, 2)));
}

TEST(StressParametersTest, StrategyDoesNotReshuffleTheWorkload) {
  StressOptions random_options;
  random_options.strategy = StressStrategy::kRandom;
  StressOptions pct_options;
  pct_options.strategy = StressStrategy::kPct;
  const SeedParameters a = stress_parameters(random_options, 77);
  const SeedParameters b = stress_parameters(pct_options, 77);
  EXPECT_NE(a.strategy, b.strategy);
  EXPECT_EQ(a.workload.clients, b.workload.clients);
  EXPECT_EQ(a.workload.bytes_per_client, b.workload.bytes_per_client);
  EXPECT_EQ(a.workload.seed, b.workload.seed);
  EXPECT_EQ(a.receive_buffer_bytes, b.receive_buffer_bytes);
}

}  // namespace
}  // namespace readyport
