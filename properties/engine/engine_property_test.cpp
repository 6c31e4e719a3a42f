// The engine property: see docs/properties.md "The engine property".
#include "engine_property.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <vector>

#include "engine_pinned.hpp"

namespace readyport::properties {
namespace {

#if !defined(READYPORT_CANARY_free_before_remove) &&     \
    !defined(READYPORT_CANARY_remove_failure_as_done) && \
    !defined(READYPORT_CANARY_dispatch_after_close) && !defined(READYPORT_CANARY_double_remove)

TEST(EngineProperty, LifetimesAndEcho) {
  const EnginePropertyOutcome outcome = check_engine_property();
  EXPECT_FALSE(outcome.failed);
}

// Without a canary the engine is correct on every pinned counterexample.
TEST(EngineProperty, PinnedCasesPass) {
  for (const PinnedCase& pinned : pinned_cases()) {
    const EngineRunResult r = run_engine_case_isolated(pinned.engine_case);
    EXPECT_TRUE(r.status.ok()) << pinned.canary << ": "
                               << engine_failure_text(pinned.engine_case, r);
  }
}

// Found by the property's misuse commands (2026-11-25): an add() of a socket whose REMOVE had been
// applied but which the engine had not closed yet passed the socket index (erased before the
// close) and registered the socket a second time; the engine then closed it under the new
// registration (O1) and the refused add()'s handler, gone with its scope, was called. add() now
// gets kAlreadyExists until the engine has closed the socket.
TEST(EngineProperty, AddOfASocketTheEngineIsClosingIsRefused) {
  const Result<EngineCase> found = engine_case_parse(
      "seed=110126431889434466 workers=3 batch=1; add(oneshot_edge IN|HANGUP); post(); "
      "close_inside(c0, call); post(); add_again(c0)");
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const EngineRunResult r = run_engine_case_isolated(found.value());
  EXPECT_TRUE(r.status.ok()) << engine_failure_text(found.value(), r);
}

// A case with parallel branches runs them on their own threads and judges their results: two
// branches close and notify the prefix's connection, a third adds its own and closes it (its c1
// is its own add: the prefix's connection, then its adds).
TEST(EngineProperty, ABranchCaseRunsItsBranchesAndJudgesThem) {
  const Result<EngineCase> parsed = engine_case_parse(
      "seed=5 workers=2 batch=4; add(oneshot_level IN); peer_send(c0, 100)"
      " || close(c0); run(2 ms) || notify(c0, IN); post() || add(persistent_level IN); close(c1)");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const EngineRunResult r = run_engine_case_isolated(parsed.value());
  EXPECT_TRUE(r.status.ok()) << engine_failure_text(parsed.value(), r);
  EXPECT_EQ(r.branches_run, 3u);
  EXPECT_EQ(r.branch_steps, 5u);  // close, notify, post, add, close
  EXPECT_EQ(r.adds_ok, 2u);
}

#else

// With a canary compiled in: its pinned case still fails with the same rule, and the property
// still finds a counterexample of at most kPinnedShrunkMax commands.
void check_canary(const char* canary) {
  const EnginePropertyOutcome outcome = check_engine_property(/*expect_failure=*/true);
  ASSERT_TRUE(outcome.failed) << "the property did not catch canary " << canary;
  std::cout << "canary " << canary << ": failed and shrank to "
            << case_command_count(outcome.shrunk) << " commands in " << outcome.seconds
            << " s (rule " << outcome.result.rule << ")\n"
            << case_text(outcome.shrunk);
  // Every command counts, the branches' too.
  EXPECT_LE(case_command_count(outcome.shrunk), kPinnedShrunkMax) << case_text(outcome.shrunk);
  const PinnedCase* pinned = pinned_case(canary);
  ASSERT_NE(pinned, nullptr) << "no pinned case for canary " << canary;
  const EngineRunResult replay = run_engine_case_isolated(pinned->engine_case);
  EXPECT_FALSE(replay.status.ok()) << "the pinned case of " << canary << " passes";
  EXPECT_EQ(replay.rule, pinned->rule) << engine_failure_text(pinned->engine_case, replay);
}

#if defined(READYPORT_CANARY_free_before_remove)
TEST(EngineProperty, Canary_free_before_remove_ShrinksToAtMost10) {
  check_canary("free_before_remove");
}
#endif
#if defined(READYPORT_CANARY_remove_failure_as_done)
TEST(EngineProperty, Canary_remove_failure_as_done_ShrinksToAtMost10) {
  check_canary("remove_failure_as_done");
}
#endif
#if defined(READYPORT_CANARY_dispatch_after_close)
TEST(EngineProperty, Canary_dispatch_after_close_ShrinksToAtMost10) {
  check_canary("dispatch_after_close");
}
#endif
#if defined(READYPORT_CANARY_double_remove)
TEST(EngineProperty, Canary_double_remove_ShrinksToAtMost10) { check_canary("double_remove"); }
#endif

#endif

}  // namespace
}  // namespace readyport::properties
