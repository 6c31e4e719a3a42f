// readyport/fake/harness_gtest.hpp: the harness (harness.hpp) as a GoogleTest test. Header only:
// include it from a test that links GoogleTest and readyport::testing.
//
//   READYPORT_HARNESS_TEST(EchoServer, EchoesEveryByteUnderFaults, EchoScenario)
//
// defines TEST(EchoServer, EchoesEveryByteUnderFaults): the scenario's seeds (200 by default) with
// the options of the environment (READYPORT_TEST_SEED, READYPORT_TEST_SEEDS, ...: harness.hpp),
// the report printed, and the test failing with the first failure (its rule, its replay command:
// the environment and this test's --gtest_filter). READYPORT_HARNESS_TEST_WITH(suite, name,
// Scenario, options) takes HarnessOptions to start from (the environment still overrides them).
//
// Ownership, threading: as harness_run. Errors: bad environment values fail the test with the
// variable named.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "readyport/fake/harness.hpp"

namespace readyport::harness_gtest_internal {

// The test binary (argv[0] as GoogleTest kept it) and this test's full name.
inline HarnessOptions options_for_this_test(HarnessOptions options) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info != nullptr) {
    options.test_name = std::string(info->test_suite_name()) + "." + info->name();
  }
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  if (!argv.empty() && options.binary.empty()) {
    options.binary = argv.front();
  }
  return options;
}

template <typename ScenarioType>
void run(HarnessOptions defaults) {
  Result<HarnessOptions> options = harness_options_from_env(options_for_this_test(defaults));
  ASSERT_TRUE(options.ok()) << options.status().to_string();
  const HarnessResult result = harness_run<ScenarioType>(options.value());
  EXPECT_TRUE(result.ok()) << (result.failures.empty()
                                   ? std::string("no seed ran")
                                   : result.failures.front().status.to_string() +
                                         "\nreplay: " + result.replay +
                                         (result.shrunk_replay.empty()
                                              ? std::string()
                                              : "\nshrunk: " + result.shrunk_replay));
}

}  // namespace readyport::harness_gtest_internal

#define READYPORT_HARNESS_TEST_WITH(suite, name, ScenarioType, options) \
  TEST(suite, name) { ::readyport::harness_gtest_internal::run<ScenarioType>(options); }

#define READYPORT_HARNESS_TEST(suite, name, ScenarioType) \
  READYPORT_HARNESS_TEST_WITH(suite, name, ScenarioType, ::readyport::HarnessOptions{})
