// The engine case's one-line form: engine_case_parse is the exact inverse of engine_case_line
// (a RapidCheck property over generated cases), and bad lines are refused with a message.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "engine_commands.hpp"
#include "engine_pinned.hpp"
#include "engine_replay.hpp"

namespace readyport::properties {
namespace {

// A generated command is normalised the way its text is: fields a kind does not print are
// left at their defaults, so that the round trip compares what the run uses.
EngineCommand normalised(EngineCommand c) {
  const EngineCommand defaults;
  using K = EngineCommandKind;
  if (c.kind != K::kAdd) {
    c.mode = defaults.mode;
    c.interest = defaults.interest;
  }
  if (c.kind != K::kArm) {
    c.site = defaults.site;
  }
  if (c.kind == K::kAdd || c.kind == K::kPost || c.kind == K::kArm || c.kind == K::kRun) {
    if (c.kind != K::kRun) {
      c.value = 0;
    }
    c.conn = 0;
  }
  if (c.kind == K::kPeerShutdown || c.kind == K::kPeerReset || c.kind == K::kClose ||
      c.kind == K::kAddAgain || c.kind == K::kStopInside) {
    c.value = 0;
  }
  if (c.kind == K::kCloseForeign) {
    c.conn = 0;
  }
  if (c.kind == K::kCloseInside) {
    c.value %= 2;
  }
  return c;
}

RC_GTEST_PROP(EngineCaseLine, ParseIsTheInverseOfLine, ()) {
  EngineCase generated = *gen_engine_case();
  for (EngineCommand& c : generated.commands) {
    c = normalised(c);
  }
  for (std::vector<EngineCommand>& branch : generated.branches) {
    for (EngineCommand& c : branch) {
      c = normalised(c);
    }
  }
  const std::string line = engine_case_line(generated);
  const Result<EngineCase> parsed = engine_case_parse(line);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed.value() == generated);
  RC_ASSERT(engine_case_line(parsed.value()) == line);
}

TEST(EngineCaseLine, PinnedCasesRoundTrip) {
  ASSERT_FALSE(pinned_cases().empty());
  for (const PinnedCase& pinned : pinned_cases()) {
    const std::string line = engine_case_line(pinned.engine_case);
    const Result<EngineCase> parsed = engine_case_parse(line);
    ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.status().to_string();
    EXPECT_EQ(engine_case_line(parsed.value()), line);
  }
}

TEST(EngineCaseLine, AnExampleLine) {
  const Result<EngineCase> parsed = engine_case_parse(
      "seed=7 workers=2 batch=4;add(persistent_level IN|OUT) ; notify(c0, IN|ERR);"
      " close_inside(c0, call); arm(psn.remove_fails); run(5 ms); post(); peer_send(c1, 300);");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const EngineCase& c = parsed.value();
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.workers, 2u);
  EXPECT_EQ(c.batch_count, 4u);
  ASSERT_EQ(c.commands.size(), 7u);
  EXPECT_EQ(c.commands[0].kind, EngineCommandKind::kAdd);
  EXPECT_EQ(c.commands[0].mode, Mode::kPersistentLevel);
  EXPECT_EQ(c.commands[0].interest, static_cast<Interest>(kInterestIn | kInterestOut));
  EXPECT_EQ(c.commands[1].value, kSockNotifyEventIn | kSockNotifyEventErr);
  EXPECT_EQ(c.commands[2].value, 1u);
  EXPECT_EQ(c.commands[3].site, FaultSite::kPsnRemoveFails);
  EXPECT_EQ(c.commands[4].value, 5u);
  EXPECT_EQ(c.commands[5].kind, EngineCommandKind::kPost);
  EXPECT_EQ(c.commands[6].conn, 1u);
  EXPECT_EQ(c.commands[6].value, 300u);
  EXPECT_EQ(engine_case_replay_command(c).rfind("readyport-stress --engine-case 'seed=7 ", 0), 0u);
}

// A case with branches: its line, the parse back, and the line again, exactly.
TEST(EngineCaseLine, ABranchCaseRoundTrips) {
  const std::string line =
      "seed=9 workers=3 batch=1; add(oneshot_level IN); add(persistent_edge IN|OUT)"
      " || close(c0); post(); add(oneshot_level IN|HANGUP); notify(c2, IN|ERR)"
      " || close(c0) || peer_send(c1, 40); run(2 ms)";
  const Result<EngineCase> parsed = engine_case_parse(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const EngineCase& c = parsed.value();
  ASSERT_EQ(c.commands.size(), 2u);
  ASSERT_EQ(c.branches.size(), 3u);
  ASSERT_EQ(c.branches[0].size(), 4u);
  EXPECT_EQ(c.branches[0][0].kind, EngineCommandKind::kClose);
  EXPECT_EQ(c.branches[0][3].conn, 2u);
  EXPECT_EQ(c.branches[0][3].value, kSockNotifyEventIn | kSockNotifyEventErr);
  ASSERT_EQ(c.branches[1].size(), 1u);
  EXPECT_EQ(c.branches[1][0].kind, EngineCommandKind::kClose);
  ASSERT_EQ(c.branches[2].size(), 2u);
  EXPECT_EQ(c.branches[2][1].value, 2u);
  EXPECT_EQ(engine_case_line(c), line);
  EXPECT_EQ(case_command_count(c), 9u);
  EXPECT_EQ(case_step_number(c, 1, 0), 6u);
  EXPECT_NE(case_text(c).find("  branch 3 (parallel):\n    7: peer_send(c1, 40)\n"),
            std::string::npos)
      << case_text(c);
  // No prefix, and spacing free around the separators: the same value, written canonically.
  const Result<EngineCase> bare =
      engine_case_parse("seed=1 workers=2 batch=4||post();post()|| post()");
  ASSERT_TRUE(bare.ok()) << bare.status().to_string();
  EXPECT_TRUE(bare.value().commands.empty());
  ASSERT_EQ(bare.value().branches.size(), 2u);
  EXPECT_EQ(engine_case_line(bare.value()), "seed=1 workers=2 batch=4 || post(); post() || post()");
  // A case without branches keeps its line: no `||`.
  EXPECT_EQ(engine_case_line(engine_case_parse("seed=1 workers=2 batch=4; post()").value()),
            "seed=1 workers=2 batch=4; post()");
}

TEST(EngineCaseLine, BadBranchesAreRefusedWithTheirToken) {
  const char* const bad[] = {
      "seed=1 workers=2 batch=4 || post() || post() || post() || post()",  // 4 branches
      ("seed=1 workers=2 batch=4 || post(); post(); post(); post(); post(); post(); post(); "
       "post(); post()"),                               // 9 commands in a branch
      "seed=1 workers=2 batch=4 || post() || jump()",   // unknown command in a branch
      "seed=1 workers=2 batch=4 || post() ||| post()",  // a stray `|`
  };
  for (const char* line : bad) {
    const Result<EngineCase> parsed = engine_case_parse(line);
    EXPECT_FALSE(parsed.ok()) << "accepted: " << line;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << line;
      EXPECT_NE(parsed.status().message().find("engine case:"), std::string::npos) << line;
    }
  }
  EXPECT_NE(engine_case_parse("seed=1 workers=2 batch=4 || post() || jump()")
                .status()
                .message()
                .find("'jump()'"),
            std::string::npos);
}

// The custom shrinks (engine_commands.hpp): whole branches removed, a branch's first command
// moved into the prefix, single commands removed; none without branches.
TEST(EngineCaseShrink, MovesBranchCommandsIntoThePrefixAndDropsBranches) {
  const EngineCase c =
      engine_case_parse(
          "seed=1 workers=2 batch=4; add(oneshot_level IN) || close(c0); post() || "
          "notify(c0, IN)")
          .value();
  const std::vector<EngineCase> shrinks = engine_case_branch_shrinks(c);
  std::vector<std::string> lines;
  for (const EngineCase& s : shrinks) {
    lines.push_back(engine_case_line(s));
    EXPECT_LT(
        s.branches.size() + case_command_count(s) + (case_command_count(s) - s.commands.size()),
        c.branches.size() + case_command_count(c) + (case_command_count(c) - c.commands.size()))
        << lines.back();
  }
  const auto has = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_TRUE(has("seed=1 workers=2 batch=4; add(oneshot_level IN) || notify(c0, IN)"));
  EXPECT_TRUE(has("seed=1 workers=2 batch=4; add(oneshot_level IN) || close(c0); post()"));
  EXPECT_TRUE(
      has("seed=1 workers=2 batch=4; add(oneshot_level IN); close(c0) || post() || "
          "notify(c0, IN)"));
  EXPECT_TRUE(
      has("seed=1 workers=2 batch=4; add(oneshot_level IN); notify(c0, IN) || close(c0); "
          "post()"));
  EXPECT_TRUE(has("seed=1 workers=2 batch=4 || close(c0); post() || notify(c0, IN)"));
  EXPECT_TRUE(
      engine_case_branch_shrinks(engine_case_parse("seed=1 workers=2 batch=4; post()").value())
          .empty());
}

TEST(EngineCaseLine, BadLinesAreRefusedWithTheirToken) {
  const char* const bad[] = {
      "",                                                  // no fields
      "seed=1 workers=2",                                  // batch missing
      "seed=1 workers=2 batch=4 seed=2",                   // twice
      "seed=-5 workers=2 batch=4",                         // not a decimal uint64
      "seed=1 workers=0 batch=4",                          // out of range
      "seed=1 workers=2 batch=4; add(sideways IN)",        // unknown mode
      "seed=1 workers=2 batch=4; add(oneshot_level ERR)",  // not an interest
      "seed=1 workers=2 batch=4; notify(c0, LOUD)",        // unknown event
      "seed=1 workers=2 batch=4; close(x0)",               // not a connection
      "seed=1 workers=2 batch=4; arm(psn.nothing)",        // unknown site
      "seed=1 workers=2 batch=4; run(5)",                  // no unit
      "seed=1 workers=2 batch=4; jump(c0)",                // unknown command
      "seed=1 workers=2 batch=4; post(1)",                 // argument to post
      "seed=1 workers=2 batch=4; peer_send(c0, 12x)",      // trailing garbage
      "seed=1 workers=2 batch=4;; post()",                 // an empty command
  };
  for (const char* line : bad) {
    const Result<EngineCase> parsed = engine_case_parse(line);
    EXPECT_FALSE(parsed.ok()) << "accepted: " << line;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << line;
      EXPECT_NE(parsed.status().message().find("engine case:"), std::string::npos) << line;
    }
  }
}

TEST(EngineCaseLine, ReplayMainReportsABadLineWithExitTwo) {
  std::ostringstream out;
  EXPECT_EQ(engine_case_replay_main("seed=1 workers=2 batch=4; jump(c0)", out), 2);
  EXPECT_NE(out.str().find("unknown command 'jump'"), std::string::npos) << out.str();
}

TEST(EngineCaseLine, ReplayMainRunsACase) {
  std::ostringstream out;
  EXPECT_EQ(
      engine_case_replay_main(
          "seed=3 workers=2 batch=4; add(oneshot_level IN); peer_send(c0, 100); run(5 ms)", out),
      0)
      << out.str();
  EXPECT_NE(out.str().find("engine case passed: 1 connections added"), std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace readyport::properties
