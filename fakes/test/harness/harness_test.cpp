// The harness over a correct echo server: every seed passes, every rule of the embedder's contract
// is judged, the same scenario runs on real threads; replay, determinism, bundles.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "planted_scenario.hpp"

namespace readyport::harness_test {
namespace {

HarnessOptions quiet_options(std::uint32_t seeds) {
  HarnessOptions options;
  options.seeds = seeds;
  options.test_name = "HarnessTest";
  return options;
}

TEST(HarnessTest, ACorrectEchoServerPassesItsDefaultSeeds) {
  const HarnessOptions options = quiet_options(HarnessOptions{}.seeds);
  const HarnessResult result = harness_run(options, planted_scenario(PlantedBug::kNone));
  ASSERT_TRUE(result.ok()) << result.report;
  EXPECT_EQ(result.seeds_run, 200u);
  EXPECT_EQ(result.passed, 200u);
  for (std::uint32_t rule = 1; rule <= kEmbedderRules; ++rule) {
    EXPECT_EQ(result.embedder.violated[rule], 0u) << "U" << rule;
  }
}

}  // namespace
}  // namespace readyport::harness_test

namespace readyport::harness_test {
namespace {

void set_env(const std::string& name, const std::string& value) {
#if defined(_WIN32)
  (void)_putenv_s(name.c_str(), value.c_str());
#else
  (void)setenv(name.c_str(), value.c_str(), 1);
#endif
}

// The READYPORT_TEST_* words of a printed replay command, set in the environment (quotes removed);
// returns their names.
std::vector<std::string> set_env_of(const std::string& command) {
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at < command.size()) {
    const std::size_t end = command.find(' ', at);
    std::string word = command.substr(at, end == std::string::npos ? end : end - at);
    at = end == std::string::npos ? command.size() : end + 1;
    if (word.rfind("READYPORT_TEST_", 0) != 0) {
      break;
    }
    const std::size_t equals = word.find('=');
    std::string value = word.substr(equals + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    names.push_back(word.substr(0, equals));
    set_env(names.back(), value);
  }
  return names;
}

TEST(HarnessTest, AFailuresPrintedReplayCommandReproducesItsTraceHash) {
  HarnessOptions options = quiet_options(200);
  options.shrink = false;
  options.bundle_dir = testing::TempDir() + "readyport-harness-bundles";
  const HarnessResult failed = harness_run(options, planted_scenario(PlantedBug::kEofIgnored));
  ASSERT_FALSE(failed.ok());
  ASSERT_NE(failed.replay.find("READYPORT_TEST_EXPECT_HASH=" + failed.failures[0].trace_hash),
            std::string::npos)
      << failed.replay;
  const std::vector<std::string> names = set_env_of(failed.replay);
  Result<HarnessOptions> replay = harness_options_from_env(quiet_options(200));
  for (const std::string& name : names) {
    set_env(name, "");
  }
  ASSERT_TRUE(replay.ok()) << replay.status().to_string();
  EXPECT_EQ(replay.value().seeds, 1u);
  const HarnessResult again =
      harness_run(replay.value(), planted_scenario(PlantedBug::kEofIgnored));
  ASSERT_EQ(again.failures.size(), 1u);
  EXPECT_EQ(again.failures[0].trace_hash, failed.failures[0].trace_hash);
  EXPECT_EQ(again.failures[0].signature, failed.failures[0].signature);
  EXPECT_NE(again.report.find("reproduced exactly"), std::string::npos) << again.report;
}

// A failing seed whose trace text passes trace_mb_max (a callback that spins to the step limit)
// is still judged whole and named by its rule; its report shows the run's last lines, and its
// bundle has no .trace (a part of a trace would be judged as a whole run) and says it was cut.
TEST(HarnessTest, ATraceTextPastItsBoundIsCutAndTheFailureStillNamed) {
  HarnessOptions options = quiet_options(1);
  options.shrink = false;
  options.trace_mb_max = 1;
  options.bundle_dir = testing::TempDir() + "readyport-harness-cut";
  const HarnessResult failed = harness_run(options, planted_scenario(PlantedBug::kBusyWait));
  ASSERT_EQ(failed.failures.size(), 1u) << failed.report;
  EXPECT_EQ(failed.failures[0].signature, "U9");
  EXPECT_TRUE(failed.failures[0].trace_cut);
  EXPECT_GT(failed.failures[0].trace_lines, 100'000u);  // far more than 1 MiB of text
  EXPECT_NE(failed.report.find("passed 1 MiB"), std::string::npos) << failed.report;
  EXPECT_NE(failed.report.find("the trace's last lines:"), std::string::npos) << failed.report;
  EXPECT_NE(failed.report.find("sched.limit"), std::string::npos) << failed.report;
  const std::string stem = options.bundle_dir + "/HarnessTest/seed-1";
  EXPECT_FALSE(std::filesystem::exists(stem + ".trace"));
  std::ifstream bundle(stem + ".json");
  const std::string json((std::istreambuf_iterator<char>(bundle)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"file\": null, \"cut\": true"), std::string::npos) << json;
}

TEST(HarnessTest, BadEnvironmentValuesAreNamed) {
  set_env("READYPORT_TEST_SEEDS", "many");
  Result<HarnessOptions> options = harness_options_from_env();
  set_env("READYPORT_TEST_SEEDS", "");
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("READYPORT_TEST_SEEDS='many'"), std::string::npos);
  set_env("READYPORT_TEST_FAULTS", "send.nonsense@10");
  options = harness_options_from_env();
  set_env("READYPORT_TEST_FAULTS", "");
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("READYPORT_TEST_FAULTS"), std::string::npos);
}

// A scenario whose client count depends on the wall clock: the determinism mode names the first
// trace line where two runs of one seed differ.
class WallClockScenario final : public PlantedScenario {
 public:
  WallClockScenario() : PlantedScenario(PlantedBug::kNone) {}
  Status drive(ScenarioContext& ctx) override {
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    ctx.os().sleep_ms(1 + static_cast<std::uint32_t>(now % 1000));  // reads the wall clock
    return PlantedScenario::drive(ctx);
  }
};

TEST(HarnessTest, TheDeterminismModeNamesTheFirstLineThatDiffers) {
  HarnessOptions options = quiet_options(20);
  options.determinism = true;
  options.faults = HarnessOptions::Faults::kNone;
  options.shrink = false;
  options.bundle_dir = testing::TempDir() + "readyport-harness-bundles";
  const HarnessResult result = harness_run<WallClockScenario>(options);
  ASSERT_FALSE(result.ok());
  const std::string message = result.failures[0].status.message();
  EXPECT_NE(message.find("not deterministic"), std::string::npos) << message;
  EXPECT_NE(message.find("first run:  "), std::string::npos) << message;
  EXPECT_NE(message.find("second run: "), std::string::npos) << message;
  EXPECT_NE(message.find("call=sleep_ms"), std::string::npos) << message;  // the clock's sleep
  // The same mode passes a deterministic scenario.
  options.seeds = 5;
  EXPECT_TRUE(harness_run(options, planted_scenario(PlantedBug::kNone)).ok());
}

// The same scenario on real threads (FreeRuntime: what ThreadSanitizer runs), judged the same way.
TEST(HarnessTest, ACorrectEchoServerPassesOnRealThreads) {
  HarnessOptions options = quiet_options(20);
  options.runtime = HarnessRuntime::kFree;
  const HarnessResult result = harness_run(options, planted_scenario(PlantedBug::kNone));
  EXPECT_TRUE(result.ok()) << result.report;
  EXPECT_EQ(result.passed, 20u);
}

// The same scenario over the real API (WindowsOs: real loopback sockets, the real
// ProcessSocketNotifications), judged the same way: on the Windows runners; skipped elsewhere.
TEST(HarnessTest, ACorrectEchoServerPassesOverTheRealApi) {
  std::string why;
  if (!harness_runtime_available(HarnessRuntime::kWindows, &why)) {
    GTEST_SKIP() << "no real API here: " << why;
  }
  HarnessOptions options = quiet_options(20);
  options.runtime = HarnessRuntime::kWindows;
  const HarnessResult result = harness_run(options, planted_scenario(PlantedBug::kNone));
  EXPECT_TRUE(result.ok()) << result.report;
  EXPECT_EQ(result.passed, 20u);
}

}  // namespace
}  // namespace readyport::harness_test
