// Failure bundles (bundle.hpp) and the JSON field reader (json_fields.hpp): a real failing seed
// round-trips through its bundle and replays to the same trace hash; every way a hand-edited
// bundle can be wrong is a clear Status.
#include "files/bundle.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/build_info.hpp"
#include "files/options_json.hpp"
#include "jobs/stress_shrink.hpp"

namespace readyport {
namespace {

// A seed that fails quickly and deterministically: too few scheduler steps for its run.
StressOptions failing_options() {
  StressOptions options;
  options.steps_max = 1000;
  return options;
}

// The bundle path a fresh directory gives (stress_bundle_path never names an existing file, so a
// directory the tests share could hold seed-5.json already).
StressBundleContext context_for(std::uint64_t seed) {
  return StressBundleContext{{"build/x/readyport-stress", "--seeds", "3"},
                             stress_bundle_path("bundle-test-never-made", seed, ""),
                             "seed range"};
}

// A bundle document with one field replaced (or removed, with a discarded value).
std::string edited(Json document, const std::vector<std::string>& path, const Json& value) {
  Json* node = &document;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    node = &(*node)[path[i]];
  }
  if (value.is_discarded()) {
    node->erase(path.back());
  } else {
    (*node)[path.back()] = value;
  }
  return document.dump();
}

class BundleTest : public ::testing::Test {
 protected:
  // A failure as the main job reports it: its tail filled by a re-run.
  static void SetUpTestSuite() {
    report_ = new SeedReport(stress_run_seed(failing_options(), 5));
    stress_tail_fill(failing_options(), *report_);
  }
  static void TearDownTestSuite() {
    delete report_;
    report_ = nullptr;
  }
  static SeedReport* report_;
};
SeedReport* BundleTest::report_ = nullptr;

TEST_F(BundleTest, AFailingSeedRoundTripsAndReplaysToTheSameTraceHash) {
  ASSERT_FALSE(report_->status.ok());
  const Json bundle = stress_bundle_json(failing_options(), *report_, context_for(5));
  Result<StressBundle> back = stress_bundle_parse(bundle.dump(2), "seed-5.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back.value().seed, 5u);
  EXPECT_EQ(back.value().trace_hash, report_->trace_hash);
  EXPECT_EQ(back.value().signature, stress_failure_signature(report_->status));
  EXPECT_EQ(back.value().status, "resource_exhausted");
  EXPECT_EQ(back.value().message, report_->status.message());
  EXPECT_EQ(back.value().commit, stress_build_info().commit);
  EXPECT_EQ(back.value().origin, "seed range");
  EXPECT_EQ(back.value().options.steps_max, 1000u);
  // The replay: the options read back, the same seed, the same run.
  const SeedReport again = stress_run_seed(back.value().options, back.value().seed);
  EXPECT_EQ(again.trace_hash, report_->trace_hash);
  EXPECT_EQ(again.trace_lines, report_->trace_lines);
  EXPECT_EQ(again.status.to_string(), report_->status.to_string());
}

TEST_F(BundleTest, HoldsEveryDrawnParameterTheTraceAndTheReplayCommand) {
  const Json bundle = stress_bundle_json(failing_options(), *report_, context_for(5));
  EXPECT_EQ(bundle["format"], kStressBundleFormat);
  EXPECT_EQ(bundle["parameters"]["line"], stress_parameters_line(report_->parameters));
  EXPECT_EQ(bundle["parameters"]["batch"], report_->parameters.batch_count);
  EXPECT_EQ(bundle["parameters"]["workload"]["clients"], report_->parameters.workload.clients);
  EXPECT_EQ(bundle["parameters"]["workload"]["seed"], report_->parameters.workload.seed);
  EXPECT_EQ(bundle["parameters"]["fake"]["socket_reuse"], report_->parameters.fake.socket_reuse);
  EXPECT_EQ(bundle["parameters"]["fault_plan"], report_->parameters.plan.to_string());
  EXPECT_EQ(bundle["schedule"]["strategy"], "pct");  // seed 5 under "mixed"
  EXPECT_EQ(bundle["schedule"]["pct_depth"], 3);
  EXPECT_EQ(bundle["trace"]["lines"], report_->trace_lines);
  ASSERT_EQ(bundle["trace"]["tail"].size(), report_->trace_tail.size());
  ASSERT_FALSE(report_->trace_tail.empty());
  EXPECT_EQ(bundle["trace"]["tail"][0].get<std::string>() + "\n", report_->trace_tail[0]);
  EXPECT_EQ(bundle["faults_fired"].size(), kFaultSiteCount);
  EXPECT_EQ(bundle["fired_hits"], report_->fired_hits);
  EXPECT_EQ(bundle["replay"],
            "build/x/readyport-stress --replay bundle-test-never-made/seed-5.json");
  EXPECT_EQ(bundle["command_line"].size(), 3u);
  EXPECT_EQ(bundle["readyport"]["compiler"], stress_build_info().compiler);
}

TEST_F(BundleTest, AnAbortBundleHasNoTraceHashAndStillReadsBack) {
  const Json bundle =
      stress_abort_bundle_json(failing_options(), report_->parameters,
                               "O2 handler after the end at line 9: x", context_for(5));
  Result<StressBundle> back = stress_bundle_parse(bundle.dump(), "seed-5.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back.value().status, "aborted");
  EXPECT_EQ(back.value().trace_hash, "");
  EXPECT_EQ(back.value().signature, "O2");
  EXPECT_NE(back.value().message.find("the oracle had found: O2"), std::string::npos);
}

// An exploration's failure: its bundle reads back with the world, the faults allowed and the
// schedule that --replay runs; a bundle whose schedule is not thread ids is a clear error.
TEST(ExploreBundleTest, RoundTripsWithItsScheduleAndIsRefusedWhenMalformed) {
  StressExploreFailure failure;
  failure.world = "close_vs_dispatch";
  failure.preemptions_max = 2;
  failure.faults_max = 1;
  failure.schedule = "1,1,2,1";
  failure.preemptions = 1;
  failure.faults = 1;
  failure.verdict = Status(StatusCode::kInternal, "O12 engine misreports at line 54: planted");
  failure.trace_hash = "c371e571c95841a9";
  failure.trace_lines = 120;
  failure.trace_tail = {"118 0 T1 a\n", "119 0 T2 b\n"};
  const StressBundleContext context{{"build/x/readyport-stress", "--explore", "all"},
                                    "dir/explore-close_vs_dispatch.json",
                                    "explore"};
  const Json document = stress_explore_bundle_json(failure, context);
  Result<StressBundle> back = stress_bundle_parse(document.dump(2), "explore.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back.value().explore_world, "close_vs_dispatch");
  EXPECT_EQ(back.value().explore_faults, 1u);
  EXPECT_EQ(back.value().explore_schedule, "1,1,2,1");
  EXPECT_EQ(back.value().trace_hash, "c371e571c95841a9");
  EXPECT_EQ(back.value().signature, stress_failure_signature(failure.verdict));
  EXPECT_EQ(document["replay"].get<std::string>(),
            "build/x/readyport-stress --replay dir/explore-close_vs_dispatch.json");
  EXPECT_NE(document["replay_flags"].get<std::string>().find("--schedule 1,1,2,1"),
            std::string::npos);
  EXPECT_EQ(document["trace"]["tail"][1].get<std::string>(), "119 0 T2 b");
  for (const auto& [key, value] : {std::pair<std::string, Json>{"schedule", Json("1,x")},
                                   std::pair<std::string, Json>{"world", Json("")},
                                   std::pair<std::string, Json>{"faults_max", Json(99)}}) {
    const Result<StressBundle> bad =
        stress_bundle_parse(edited(document, {"explore", key}, value), "bad.json");
    ASSERT_FALSE(bad.ok()) << key;
    EXPECT_NE(bad.status().message().find("explore"), std::string::npos)
        << key << ": " << bad.status().message();
  }
}

TEST_F(BundleTest, EveryWrongFieldIsAClearError) {
  const Json good = stress_bundle_json(failing_options(), *report_, context_for(5));
  const Json gone = Json(Json::value_t::discarded);
  struct Case {
    std::vector<std::string> path;
    Json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"seed"}, gone, "seed-5.json.seed: missing"},
      {{"seed"}, "5", "seed-5.json.seed: expected a whole number"},
      {{"seed"}, -5, "seed-5.json.seed: expected a whole number"},
      {{"seed"}, 5.5, "seed-5.json.seed: expected a whole number"},
      {{"format"}, "something-else", "seed-5.json.format: 'something-else'"},
      {{"format_version"}, 1, "seed-5.json.format_version: 1, this build reads 3"},
      {{"readyport", "commit"}, gone, "seed-5.json.readyport.commit: missing"},
      {{"options"}, gone, "seed-5.json.options: missing"},
      {{"options"}, "mixed", "seed-5.json.options: expected an object"},
      {{"options", "pct_depth"},
       0,
       "seed-5.json.options.pct_depth: expected a whole number in 1..64"},
      {{"options", "pct_depth"}, gone, "seed-5.json.options.pct_depth: missing"},
      {{"options", "steps_max"}, 10, "seed-5.json.options.steps_max"},
      {{"options", "strategy"}, "fastest", "seed-5.json.options.strategy: 'fastest'"},
      {{"options", "runtime"}, true, "seed-5.json.options.runtime: expected a string"},
      {{"options", "faults"}, "psn.nothing@5", "seed-5.json.options.faults"},
      {{"options", "actions_max"}, "none", "seed-5.json.options.actions_max"},
      {{"options", "depth"}, 3, "seed-5.json.options.depth: unknown field"},
      {{"failure", "signature"}, gone, "seed-5.json.failure.signature: missing"},
      {{"trace", "hash"}, 7, "seed-5.json.trace.hash: expected a string"},
      {{"trace"}, gone, "seed-5.json.trace: missing"},
  };
  for (const Case& c : cases) {
    Result<StressBundle> bundle = stress_bundle_parse(edited(good, c.path, c.value), "seed-5.json");
    ASSERT_FALSE(bundle.ok()) << c.message;
    EXPECT_EQ(bundle.status().code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_NE(bundle.status().message().find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << bundle.status().message();
  }
  for (const char* not_json : {"", "{", "[1, 2", "{\"format\": }", "seed=5"}) {
    Result<StressBundle> bundle = stress_bundle_parse(not_json, "x.json");
    ASSERT_FALSE(bundle.ok()) << not_json;
    EXPECT_NE(bundle.status().message().find("x.json: not valid JSON"), std::string::npos);
  }
  EXPECT_NE(
      stress_bundle_parse("[1]", "x.json").status().message().find("x.json: expected an object"),
      std::string::npos);
}

// A bundle nested 200,000 levels deep overflowed the stack (the field error's dump() recursed once
// a level; from 64,000 levels on, in the fuzz target readyport-fuzz-bundle): now any document
// deeper than kJsonDepthMax is refused.
TEST(BundleDepthTest, ADocumentNestedTooDeepIsAClearError) {
  constexpr std::size_t kLevels = 200'000;
  const std::string deep =
      "{\"format\": " + std::string(kLevels, '[') + std::string(kLevels, ']') + "}";
  const Result<StressBundle> bundle = stress_bundle_parse(deep, "deep.json");
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bundle.status().message().find("deep.json: nested deeper than 64 levels"),
            std::string::npos)
      << bundle.status().message();
  // The deepest document allowed still reads, and its wrong field is named as before.
  const std::string allowed =
      "{\"format\": " + std::string(kJsonDepthMax, '[') + std::string(kJsonDepthMax, ']') + "}";
  EXPECT_NE(stress_bundle_parse(allowed, "x.json").status().message().find("x.json.format: "),
            std::string::npos);
  EXPECT_NE(stress_bundle_parse("{\"format\": " + std::string(kJsonDepthMax + 1, '[') +
                                    std::string(kJsonDepthMax + 1, ']') + "}",
                                "x.json")
                .status()
                .message()
                .find("nested deeper"),
            std::string::npos);
}

TEST(OptionsJsonTest, RunOptionsRoundTrip) {
  StressOptions options;
  options.strategy = StressStrategy::kPct;
  options.pct_depth = 7;
  options.runtime = StressRuntime::kFree;
  options.steps_max = 123456;
  ASSERT_TRUE(stress_faults_set("psn.remove_fails@10", &options).ok());
  options.actions_max = 4;
  options.peers_max = 0;
  const Json json = stress_run_options_json(options);
  EXPECT_TRUE(json["clients_max"].is_null());
  Result<StressOptions> back = stress_run_options_from_json(json, "o");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back.value().strategy, StressStrategy::kPct);
  EXPECT_EQ(back.value().pct_depth, 7u);
  EXPECT_EQ(back.value().runtime, StressRuntime::kFree);
  EXPECT_EQ(back.value().steps_max, 123456u);
  EXPECT_EQ(back.value().faults, StressOptions::Faults::kPlan);
  EXPECT_EQ(back.value().fault_plan, "psn.remove_fails@10");
  EXPECT_EQ(back.value().actions_max, 4u);
  EXPECT_EQ(back.value().clients_max, StressOptions::kNoCap);
  EXPECT_EQ(back.value().peers_max, 0u);
  EXPECT_EQ(stress_run_flags(back.value(), 9),
            "--seed 9 --strategy pct --depth 7 --runtime free --steps-max 123456 --faults "
            "psn.remove_fails@10 --actions-max 4 --peers-max 0");
}

TEST(OptionsJsonTest, PathsOfBundles) {
  EXPECT_EQ(stress_bundle_path("d", 5, ""), "d/seed-5.json");
  EXPECT_EQ(stress_bundle_path("d/", 5, "-shrunk"), "d/seed-5-shrunk.json");
  EXPECT_EQ(stress_bundle_path("", 18446744073709551615ULL, ""), "seed-18446744073709551615.json");
  // A rerun never overwrites: the next free name.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("readyport-bundle-path-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string first = stress_bundle_path(dir.string(), 7, "");
  EXPECT_EQ(std::filesystem::path(first).filename(), "seed-7.json");
  {
    std::ofstream(first) << "{}";
  }
  const std::string second = stress_bundle_path(dir.string(), 7, "");
  EXPECT_EQ(std::filesystem::path(second).filename(), "seed-7.run2.json");
  {
    std::ofstream(second) << "{}";
  }
  EXPECT_EQ(std::filesystem::path(stress_bundle_path(dir.string(), 7, "")).filename(),
            "seed-7.run3.json");
  EXPECT_EQ(std::filesystem::path(stress_bundle_path(dir.string(), 7, "-shrunk")).filename(),
            "seed-7-shrunk.json");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace readyport
