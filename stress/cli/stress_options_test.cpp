#include "cli/stress_options.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "cli/cli_number.hpp"
#include "runs/stress_run.hpp"

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
  EXPECT_EQ(options.value().strategy, StressStrategy::kPortfolio);
}

// Every strategy name parses back to itself, and each portfolio seed names one of four.
TEST(StressOptionsTest, StrategiesParseByName) {
  for (const char* name : {"random", "pct", "delay_bounded", "fair", "mixed", "portfolio"}) {
    Result<StressOptions> options = parse({"--strategy", name});
    ASSERT_TRUE(options.ok()) << name << ": " << options.status().to_string();
    EXPECT_STREQ(stress_strategy_name(options.value().strategy), name);
  }
  EXPECT_FALSE(parse({"--strategy", "round_robin"}).ok());
}

TEST(StressOptionsTest, ThePortfolioDrawsFourStrategiesBySeed) {
  const StressOptions options;  // the default: the portfolio
  const SimStrategy expected[] = {SimStrategy::kRandom, SimStrategy::kPct,
                                  SimStrategy::kDelayBounded, SimStrategy::kFair};
  for (std::uint64_t seed = 100; seed < 108; ++seed) {
    const SimStrategy drawn = stress_parameters(options, seed).strategy;
    EXPECT_EQ(drawn, expected[seed % 4]) << "seed " << seed;
    EXPECT_EQ(stress_strategy_of(drawn), stress_strategy_of(expected[seed % 4]));
  }
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
  for (std::vector<const char*> args : {std::vector<const char*>{"--seeds", "0"},
                                        {"--seeds", "ten"},
                                        {"--shard", "5/4"},
                                        {"--shard", "0/4"},
                                        {"--shard", "2"},
                                        {"--strategy", "fastest"},
                                        {"--depth", "0"},
                                        {"--runtime", "kernel"},
                                        {"--bogus"},
                                        {"--seeds"},
                                        {"--seed", "1", "--seeds", "5"},
                                        {"--first-seed", "18446744073709551615", "--seeds", "2"}}) {
    Result<StressOptions> options = parse(args);
    ASSERT_FALSE(options.ok()) << args[0];
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(options.status().message().find("argument"), std::string::npos);
  }
}

TEST(StressOptionsTest, ExploreTakesItsBoundsAndRefusesTheRest) {
  Result<StressOptions> explore =
      parse({"--explore", "all", "--preemptions", "3", "--faults", "1", "--stop-on-failure"});
  ASSERT_TRUE(explore.ok()) << explore.status().to_string();
  EXPECT_EQ(explore.value().explore, "all");
  EXPECT_EQ(explore.value().preemptions, 3u);
  EXPECT_EQ(explore.value().explore_faults, 1u);
  EXPECT_TRUE(explore.value().stop_on_failure);
  for (std::vector<const char*> args :
       {std::vector<const char*>{"--explore", "nowhere"},
        {"--faults", "1"},                                     // a number bounds --explore only
        {"--explore", "all", "--faults", "9"},                 // at most 8
        {"--explore", "all", "--faults", "psn.call_fails@5"},  // a plan is a run's
        {"--schedule", "1,2"},                                 // needs --explore
        {"--preemptions", "1"},                                // needs --explore
        {"--explore", "all", "--seeds", "5"},                  // a run's option
        {"--explore", "all", "--replay", "x.json"}}) {
    Result<StressOptions> options = parse(args);
    EXPECT_FALSE(options.ok()) << args[0] << " " << (args.size() > 1 ? args[1] : "");
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
  EXPECT_EQ(a.fake.receive_buffer_bytes, b.fake.receive_buffer_bytes);
  EXPECT_EQ(a.plan.to_string(), b.plan.to_string());
}

TEST(StressOptionsTest, FaultsDrawnOffOrAPlan) {
  EXPECT_EQ(parse({}).value().faults, StressOptions::Faults::kDrawn);
  EXPECT_EQ(parse({"--faults", "off"}).value().faults, StressOptions::Faults::kOff);
  Result<StressOptions> plan = parse({"--faults", "psn.remove_fails@25,post.fails@2"});
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan.value().faults, StressOptions::Faults::kPlan);
  const SeedParameters parameters = stress_parameters(plan.value(), 5);
  EXPECT_EQ(parameters.plan.to_string(), plan.value().fault_plan);
  EXPECT_EQ(stress_parameters(parse({"--faults", "off"}).value(), 5).plan.active_count(), 0u);
  for (const char* bad : {"psn.nothing", "psn.call_fails@0", "psn.call_fails@101", ""}) {
    Result<StressOptions> options = parse({"--faults", bad});
    EXPECT_FALSE(options.ok()) << bad;
  }
}

TEST(StressParametersTest, TheSwarmDrawsBothReadingsOfEveryOpenQuestion) {
  StressOptions options;
  std::uint32_t separate = 0;
  std::uint32_t queue_disarm = 0;
  std::uint32_t no_reuse = 0;
  std::uint32_t drop_on_disable = 0;
  std::uint32_t faulted = 0;
  std::uint32_t behind_dropping = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const SeedParameters p = stress_parameters(options, seed);
    separate += p.fake.remove_separate_packet ? 1 : 0;
    queue_disarm += p.fake.oneshot_disarm == OneshotDisarm::kAtQueue ? 1 : 0;
    no_reuse += p.fake.socket_reuse ? 0 : 1;
    drop_on_disable += p.fake.queued_dropped_on_disable ? 1 : 0;
    faulted += p.plan.active_count() > 0 ? 1 : 0;
    // Behind-the-back closes wherever no socket value is reused (chaos_workload.hpp), also where
    // the close drops an applied REMOVE (the engine finds it lost).
    EXPECT_EQ(p.workload.weight_behind, p.fake.socket_reuse ? 0u : 5u) << seed;
    behind_dropping += !p.fake.socket_reuse && p.fake.remove_dropped_on_close ? 1 : 0;
  }
  EXPECT_GT(behind_dropping, 10u);
  for (std::uint32_t count : {separate, queue_disarm, no_reuse, drop_on_disable}) {
    EXPECT_GT(count, 20u);
    EXPECT_LT(count, 180u);
  }
  EXPECT_GT(faulted, 190u);
}

TEST(StressRunTest, ASeedReplaysToTheSameTraceAndPlan) {
  StressOptions options;
  for (std::uint64_t seed : {3u, 4u}) {
    const SeedReport first = stress_run_seed(options, seed);
    const SeedReport again = stress_run_seed(options, seed);
    ASSERT_TRUE(first.status.ok()) << first.status.to_string();
    EXPECT_EQ(first.trace_hash, again.trace_hash);
    EXPECT_EQ(first.trace_lines, again.trace_lines);
    EXPECT_EQ(first.parameters.plan.to_string(), again.parameters.plan.to_string());
    EXPECT_EQ(first.coverage, again.coverage);
  }
}

}  // namespace
}  // namespace readyport

// ---- The CLI11 command line ----
namespace readyport {
namespace {

// A refusal: kInvalidArgument, a message naming `what`, and no options.
void expect_refused(std::vector<const char*> args, const std::string& what) {
  Result<StressOptions> options = parse(args);
  std::string joined;
  for (const char* arg : args) {
    joined += std::string(arg) + " ";
  }
  ASSERT_FALSE(options.ok()) << joined;
  EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument) << joined;
  EXPECT_NE(options.status().message().find(what), std::string::npos)
      << joined << "-> " << options.status().message();
}

TEST(StressCommandLineTest, BothValueFormsAreAccepted) {
  Result<StressOptions> a = parse({"--seeds=5", "--first-seed=9", "--depth=4", "--faults=off"});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  Result<StressOptions> b =
      parse({"--seeds", "5", "--first-seed", "9", "--depth", "4", "--faults", "off"});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  for (const StressOptions& o : {a.value(), b.value()}) {
    EXPECT_EQ(o.seeds, 5u);
    EXPECT_EQ(o.first_seed, 9u);
    EXPECT_EQ(o.pct_depth, 4u);
    EXPECT_EQ(o.faults, StressOptions::Faults::kOff);
  }
}

TEST(StressCommandLineTest, NumbersAreWholeDecimalsInRange) {
  for (const char* bad :
       {"-5", "+5", " 5", "5 ", "0x10", "1e3", "5.0", "", "18446744073709551616"}) {
    expect_refused({"--seed", bad}, "--seed");
  }
  expect_refused({"--seeds", "0"}, "'0' is out of range: it must be in 1..100000000");
  expect_refused({"--seeds", "x1"}, "'x1' is not a decimal number in 1..100000000");
  expect_refused({"--seeds", "100000001"}, "--seeds");
  expect_refused({"--depth", "65"}, "1..64");
  expect_refused({"--steps-max", "999"}, "1000..1000000000");
  expect_refused({"--actions-max", "1000001"}, "--actions-max");
  Result<StressOptions> top = parse({"--seed", "18446744073709551615"});
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top.value().first_seed, 18446744073709551615ULL);
  Result<StressOptions> zero = parse({"--first-seed", "0", "--seeds", "1", "--actions-max", "0"});
  ASSERT_TRUE(zero.ok()) << zero.status().to_string();
  EXPECT_EQ(zero.value().first_seed, 0u);
  EXPECT_EQ(zero.value().actions_max, 0u);
}

TEST(StressCommandLineTest, AnOptionGivenTwiceIsRefusedNotOverridden) {
  expect_refused({"--depth", "3", "--depth", "4"}, "--depth");
  expect_refused({"--seed", "5", "--seed", "6"}, "--seed");
  expect_refused({"--faults", "off", "--faults", "drawn"}, "--faults");
  expect_refused({"--bundle-dir", "a", "--bundle-dir=b"}, "--bundle-dir");
}

TEST(StressCommandLineTest, SeedRefusesTheRangeOptions) {
  expect_refused({"--seed", "5", "--first-seed", "9"}, "--seed");
  expect_refused({"--seed", "5", "--seeds", "1"}, "--seed");
  expect_refused({"--seed", "5", "--shard", "1/2"}, "--seed");
  Result<StressOptions> one = parse({"--seed", "5"});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one.value().seed_given);
  EXPECT_EQ(one.value().seeds, 1u);
  EXPECT_EQ(one.value().first_seed, 5u);
  EXPECT_FALSE(parse({"--seeds", "3"}).value().seed_given);
}

TEST(StressCommandLineTest, ReplayRefusesEveryOptionThatShapesARun) {
  for (std::vector<const char*> run : {std::vector<const char*>{"--seed", "3"},
                                       {"--seeds", "3"},
                                       {"--first-seed", "3"},
                                       {"--shard", "1/2"},
                                       {"--strategy", "pct"},
                                       {"--depth", "2"},
                                       {"--runtime", "free"},
                                       {"--steps-max", "5000"},
                                       {"--faults", "off"},
                                       {"--actions-max", "3"},
                                       {"--clients-max", "3"},
                                       {"--peers-max", "3"},
                                       {"--stalls", "9:4"},
                                       {"--require-coverage"},
                                       {"--stop-on-failure"},
                                       {"--corpus", "none"},
                                       {"--bundle-dir", "d"},
                                       {"--json", "s.json"},
                                       {"--markdown", "s.md"},
                                       {"--shrink"},
                                       {"--check-trace", "t"},
                                       {"--engine-case", "x"}}) {
    std::vector<const char*> args = {"--replay", "b.json"};
    args.insert(args.end(), run.begin(), run.end());
    expect_refused(args, "--replay");
  }
  Result<StressOptions> outputs = parse({"--replay", "b.json", "--trace", "--verbose",
                                         "--trace-out", "t.json", "--trace-format", "chrome"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().to_string();
  EXPECT_EQ(outputs.value().replay, "b.json");
  EXPECT_EQ(outputs.value().trace_format, StressTraceFormat::kChrome);
}

TEST(StressCommandLineTest, CheckTraceRefusesRunOptionsButTakesTheRuntime) {
  for (std::vector<const char*> run : {std::vector<const char*>{"--seed", "3"},
                                       {"--seeds", "3"},
                                       {"--depth", "2"},
                                       {"--faults", "off"},
                                       {"--trace"},
                                       {"--trace-out", "t"},
                                       {"--shrink"},
                                       {"--json", "s"}}) {
    std::vector<const char*> args = {"--check-trace", "t.trace"};
    args.insert(args.end(), run.begin(), run.end());
    expect_refused(args, "--check-trace");
  }
  Result<StressOptions> free = parse({"--check-trace", "t.trace", "--runtime", "free"});
  ASSERT_TRUE(free.ok()) << free.status().to_string();
  EXPECT_EQ(free.value().runtime, StressRuntime::kFree);
}

TEST(StressCommandLineTest, EngineCaseStandsAlone) {
  Result<StressOptions> line =
      parse({"--engine-case", "seed=3 workers=2 batch=4 ; add(c0 oneshot_level IN)"});
  ASSERT_TRUE(line.ok()) << line.status().to_string();
  EXPECT_TRUE(line.value().engine_case_given);
  EXPECT_EQ(line.value().engine_case, "seed=3 workers=2 batch=4 ; add(c0 oneshot_level IN)");
  expect_refused({"--engine-case", "x", "--seed", "3"}, "--engine-case");
  expect_refused({"--engine-case", "x", "--runtime", "sim"}, "--engine-case");
  expect_refused({"--engine-case"}, "--engine-case");
}

TEST(StressCommandLineTest, OneSeedOptionsNeedOneSeed) {
  expect_refused({"--shrink"}, "--shrink");
  expect_refused({"--seeds", "2", "--trace-out", "t"}, "--trace-out");
  expect_refused({"--trace-format", "chrome"}, "--trace-out");
  expect_refused({"--trace-format", "svg", "--seed", "1", "--trace-out", "t"}, "--trace-format");
  expect_refused({"--corpus-entry", "e.json", "--seed", "3"}, "--shrink");
  expect_refused({"--seed", "3", "--shrink", "--json", "s.json"}, "--shrink");
  Result<StressOptions> shrink = parse({"--seed", "3", "--shrink", "--corpus-entry", "e.json"});
  ASSERT_TRUE(shrink.ok()) << shrink.status().to_string();
  EXPECT_EQ(shrink.value().corpus_entry_out, "e.json");
  // The older spelling of one seed still works for --shrink and --trace-out.
  EXPECT_TRUE(parse({"--first-seed", "3", "--seeds", "1", "--shrink"}).ok());
  EXPECT_TRUE(parse({"--seed", "3", "--trace-out", "t"}).ok());
}

TEST(StressCommandLineTest, OutputsAndCorpus) {
  Result<StressOptions> defaults = parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults.value().bundle_dir, "stress-failures");
  EXPECT_EQ(defaults.value().corpus, StressOptions::Corpus::kDefault);
  EXPECT_EQ(defaults.value().trace_format, StressTraceFormat::kText);
  Result<StressOptions> set = parse(
      {"--bundle-dir", "b", "--json", "s.json", "--markdown", "s.md", "--corpus", "some/dir"});
  ASSERT_TRUE(set.ok()) << set.status().to_string();
  EXPECT_EQ(set.value().bundle_dir, "b");
  EXPECT_EQ(set.value().json_out, "s.json");
  EXPECT_EQ(set.value().markdown_out, "s.md");
  EXPECT_EQ(set.value().corpus, StressOptions::Corpus::kDir);
  EXPECT_EQ(set.value().corpus_dir, "some/dir");
  EXPECT_EQ(parse({"--corpus", "none"}).value().corpus, StressOptions::Corpus::kNone);
  expect_refused({"--bundle-dir", ""}, "--bundle-dir");
  expect_refused({"--json", ""}, "--json");
  EXPECT_TRUE(parse({"--version"}).value().version);
  EXPECT_TRUE(parse({"--help"}).value().help);
  EXPECT_TRUE(parse({"-h"}).value().help);
  expect_refused({"stray"}, "stray");
}

// The guided search's outputs and its first inputs go with --guided or --guided-seconds only.
TEST(StressCommandLineTest, GuidedOptionsGoWithTheGuidedSearch) {
  Result<StressOptions> from =
      parse({"--guided", "50", "--guided-from", "stress/corpus", "--guided-corpus-out", "out"});
  ASSERT_TRUE(from.ok()) << from.status().to_string();
  EXPECT_EQ(from.value().guided_runs, 50u);
  EXPECT_EQ(from.value().guided_from, "stress/corpus");
  EXPECT_EQ(from.value().guided_corpus_out, "out");
  expect_refused({"--guided-from", "stress/corpus"}, "--guided-from");
  expect_refused({"--seeds", "5", "--guided-from", "d"}, "--guided-from");
  expect_refused({"--guided", "5", "--guided-from", ""}, "--guided-from");
  expect_refused({"--guided", "5", "--unguided", "--guided-from", "d"}, "--guided-from");
  expect_refused({"--guided-corpus-out", "out"}, "--guided-corpus-out");
  expect_refused({"--unguided"}, "--unguided");
}

// --stalls: parsed and sorted by step; bad tokens, real threads and other modes refused.
TEST(StressCommandLineTest, StallsGoWithSimulatedRunsOnly) {
  Result<StressOptions> stalls = parse({"--seed", "29", "--stalls", "6761:2000,6752:300"});
  ASSERT_TRUE(stalls.ok()) << stalls.status().to_string();
  EXPECT_EQ(stalls.value().stalls, (std::vector<SimStall>{{6752, 300}, {6761, 2000}}));
  EXPECT_TRUE(parse({}).value().stalls.empty());
  expect_refused({"--stalls", "9"}, "--stalls: stalls: bad token '9': not step:steps");
  expect_refused({"--stalls", "9:0"}, "--stalls: stalls: bad token '9:0'");
  expect_refused({"--stalls", "9:4", "--runtime", "free"},
                 "--stalls: the simulation's schedule only");
  expect_refused({"--stalls", "9:4", "--guided", "5"}, "--stalls");
  expect_refused({"--stalls", "9:4", "--explore", "all"}, "--stalls");
}

TEST(StressCommandLineTest, FaultPlansPassThroughAsGiven) {
  Result<StressOptions> plan = parse({"--faults", "post.fails@2,psn.remove_fails@25"});
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(plan.value().fault_plan, "post.fails@2,psn.remove_fails@25");
  EXPECT_EQ(stress_faults_text(plan.value()), "post.fails@2,psn.remove_fails@25");
  EXPECT_EQ(stress_faults_text(parse({"--faults", "none"}).value()), "off");
  EXPECT_EQ(stress_faults_text(parse({}).value()), "drawn");
}

TEST(StressCommandLineTest, HelpListsEveryOptionAndExamples) {
  const std::string usage = stress_usage();
  for (const char* option : {"--seeds",
                             "--first-seed",
                             "--seed",
                             "--shard",
                             "--strategy",
                             "--depth",
                             "--runtime",
                             "--steps-max",
                             "--faults",
                             "--actions-max",
                             "--clients-max",
                             "--peers-max",
                             "--require-coverage",
                             "--stop-on-failure",
                             "--corpus",
                             "--bundle-dir",
                             "--json",
                             "--markdown",
                             "--shrink",
                             "--corpus-entry",
                             "--trace",
                             "--verbose",
                             "--trace-out",
                             "--trace-format",
                             "--replay",
                             "--check-trace",
                             "--engine-case",
                             "--help",
                             "--version",
                             "--os",
                             "--seconds-max",
                             "--connections-max",
                             "--jobs",
                             "--scale",
                             "--connections",
                             "--workers",
                             "--guided",
                             "--guided-seconds",
                             "--unguided",
                             "--guided-from",
                             "--guided-corpus-out",
                             "--schedule-seed",
                             "--stalls",
                             "Examples:",
                             "Exit status"}) {
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  }
}

// --os windows: real sockets and threads, Windows builds only; its bounds go with it.
TEST(StressCommandLineTest, OsWindowsNeedsAWindowsBuildAndTakesItsBounds) {
  Result<StressOptions> fake = parse({"--os", "fake"});
  ASSERT_TRUE(fake.ok()) << fake.status().to_string();
  EXPECT_EQ(fake.value().os, StressOs::kFake);
  EXPECT_EQ(parse({}).value().os, StressOs::kFake);
  expect_refused({"--os", "linux"}, "--os");
  expect_refused({"--seconds-max", "5"}, "--os windows only");
  expect_refused({"--os", "fake", "--connections-max", "5"}, "--os windows only");
  expect_refused({"--replay", "b.json", "--os", "fake"}, "--replay");
  expect_refused({"--check-trace", "t", "--os", "fake"}, "--check-trace");
  if (!stress_windows_build()) {
    // The driver exits 2 on this (stress.os_windows_refused runs the binary).
    expect_refused({"--os", "windows", "--seeds", "2"}, "needs a Windows build");
    return;
  }
  Result<StressOptions> windows =
      parse({"--os", "windows", "--seeds", "2", "--seconds-max", "30", "--connections-max", "40"});
  ASSERT_TRUE(windows.ok()) << windows.status().to_string();
  EXPECT_EQ(windows.value().os, StressOs::kWindows);
  EXPECT_EQ(windows.value().runtime, StressRuntime::kFree);
  EXPECT_EQ(windows.value().seconds_max, 30u);
  EXPECT_EQ(windows.value().connections_max, 40u);
  expect_refused({"--os", "windows", "--runtime", "sim"}, "--runtime sim");
  expect_refused({"--os", "windows", "--seed", "3", "--shrink"}, "--shrink");
  expect_refused({"--os", "windows", "--seconds-max", "0"}, "--seconds-max");
}

// --jobs: bounded, the online CPUs by default, refused where one seed at a time
// is the only meaning.
TEST(StressCommandLineTest, JobsAreBoundedAndDefaultToTheOnlineCpus) {
  const std::uint32_t online = stress_jobs_default();
  EXPECT_GE(online, 1u);
  EXPECT_LE(online, kStressJobsMax);
  EXPECT_LE(kStressJobsMax, kStressRunnersMax);
  EXPECT_EQ(parse({}).value().jobs, online);
  EXPECT_EQ(parse({"--jobs", "1"}).value().jobs, 1u);
  EXPECT_EQ(parse({"--jobs=64", "--seeds", "10"}).value().jobs, 64u);
  expect_refused({"--jobs", "0"}, "--jobs");
  expect_refused({"--jobs", "65"}, "--jobs");
  expect_refused({"--jobs", "two"}, "--jobs");
  expect_refused({"--seed", "3", "--shrink", "--jobs", "2"}, "--jobs");
  expect_refused({"--replay", "b.json", "--jobs", "2"}, "--jobs");
  expect_refused({"--check-trace", "t", "--jobs", "2"}, "--jobs");
  // A struct built in code (tests, the corpus, bundles) runs serially.
  EXPECT_EQ(StressOptions().jobs, 1u);
}

// --scale: its own size, bounded, with clear errors past the bounds.
TEST(StressCommandLineTest, ScaleTakesBoundedConnectionsAndWorkers) {
  Result<StressOptions> scale = parse({"--scale"});
  ASSERT_TRUE(scale.ok()) << scale.status().to_string();
  EXPECT_TRUE(scale.value().scale);
  EXPECT_EQ(scale.value().scale_connections, 10'000u);
  EXPECT_EQ(scale.value().scale_workers, 8u);
  EXPECT_EQ(scale.value().seeds, 1u);
  Result<StressOptions> small =
      parse({"--scale", "--connections", "1000", "--workers", "4", "--runtime", "free"});
  ASSERT_TRUE(small.ok()) << small.status().to_string();
  EXPECT_EQ(small.value().scale_connections, 1000u);
  EXPECT_EQ(small.value().scale_workers, 4u);
  EXPECT_EQ(small.value().runtime, StressRuntime::kFree);
  EXPECT_EQ(parse({"--scale", "--seeds", "3"}).value().seeds, 3u);
  expect_refused({"--connections", "1000"}, "--scale");
  expect_refused({"--workers", "4"}, "--scale");
  expect_refused({"--scale", "--connections", "20002"}, "--connections");
  expect_refused({"--scale", "--connections", "6"}, "--connections");
  expect_refused({"--scale", "--connections", "1001"}, "odd");
  expect_refused({"--scale", "--workers", "0"}, "--workers");
  expect_refused({"--scale", "--workers", "65"}, "--workers");
  expect_refused({"--scale", "--seed", "3"}, "--seed");
  expect_refused({"--scale", "--faults", "off"}, "--faults");
  expect_refused({"--scale", "--jobs", "2"}, "--jobs");
}

TEST(CliNumberTest, TheSharedParserOfBothTools) {
  std::uint64_t value = 7;
  EXPECT_TRUE(cli_number_parse("0", 0, 10, &value));
  EXPECT_EQ(value, 0u);
  EXPECT_TRUE(cli_number_parse("18446744073709551615", 0, kCliNumberMax, &value));
  EXPECT_EQ(value, kCliNumberMax);
  value = 7;
  for (const char* bad : {"", "-1", "+1", "0x1", "1e1", " 1", "1 ", "11", "18446744073709551616"}) {
    EXPECT_FALSE(cli_number_parse(bad, 0, 10, &value)) << bad;
    EXPECT_EQ(value, 7u) << bad;
  }
  EXPECT_FALSE(cli_number_parse("0", 1, 10, &value));
}

}  // namespace
}  // namespace readyport
