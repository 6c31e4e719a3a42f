// properties/runner/property_runner.hpp: runs a RapidCheck property inside the current GoogleTest
// test, like RC_GTEST_PROP, with a default number of cases that READYPORT_PROPERTY_SCALE scales.
//
//   TEST_P(PsnFakeProperty, FakeMatchesModel) {
//     readyport::properties::check_property([&] { ... RC_ASSERT(...); });
//   }
//
// Cases: RC_PARAMS (RapidCheck's own variable) wins when it sets max_success; otherwise
// kPropertyCasesDefault times READYPORT_PROPERTY_SCALE (a positive decimal, default 1; e.g. 0.25
// for a quick run, 10 for a soak), at least 1. Everything else RC_PARAMS sets (seed, max_size,
// noshrink, verbose_progress, reproduce) applies as RapidCheck documents. The test id RapidCheck
// prints in its reproduce line is "<suite>/<test>" as GoogleTest names them.
//
// Threading: GoogleTest's thread. Errors: a failing property fails the GoogleTest test with
// RapidCheck's message (counterexample and reproduce line); a malformed
// READYPORT_PROPERTY_SCALE fails the test too.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>
#include <sstream>
#include <string>
#include <utility>

namespace readyport::properties {

inline constexpr int kPropertyCasesDefault = 500;

// The test parameters for this run (see above). Sets *error_out and returns RapidCheck's
// defaults when READYPORT_PROPERTY_SCALE is malformed.
// The seed is RapidCheck's (RC_PARAMS seed=N, or its own random one, printed as "Using
// configuration: seed=...") mixed with `test_id`, so that each test draws its own cases.
// `cases_default` is the number of cases at scale 1 (a costlier property asks for fewer).
rc::detail::TestParams property_params(const std::string& test_id, std::string* error_out,
                                       int cases_default = kPropertyCasesDefault);

// The running GoogleTest test as RapidCheck's test metadata: id "<suite>/<test>".
rc::detail::TestMetadata current_test_metadata();

// For a failed result: the one command that replays it, RapidCheck's reproduce string in
// RC_PARAMS with this test binary and the running test's --gtest_filter (call it from the test):
//   replay: RC_PARAMS="reproduce=BchdlNGdvJ3XzVXbg..."
//           build/default/properties/readyport_properties_test --gtest_filter='Suite.Test'
// (one line in the output).
// "" for a result that is not a failure.
std::string property_replay_line(const rc::detail::TestMetadata& metadata,
                                 const rc::detail::TestResult& result);

template <typename Testable>
void check_property(Testable&& testable, int cases_default = kPropertyCasesDefault) {
  const rc::detail::TestMetadata metadata = current_test_metadata();
  std::string error;
  const rc::detail::TestParams params = property_params(metadata.id, &error, cases_default);
  ASSERT_TRUE(error.empty()) << error;
  const rc::detail::TestResult result =
      rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    rc::detail::printResultMessage(result, std::cout);
    std::cout << std::endl;
  } else {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str() << "\n" << property_replay_line(metadata, result);
  }
}

}  // namespace readyport::properties
