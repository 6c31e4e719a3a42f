// The interleaving check of the engine property's parallel branches (engine_parallel.hpp): results
// one interleaving explains pass (and that interleaving is the one found), results no
// interleaving explains fail with a report naming the branches, their results and why.
#include "engine_parallel.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace readyport::properties {
namespace {

using K = ApiStepKind;
using C = StatusCode;
using S = ApiConnState;

ApiStep step(K kind, std::uint32_t conn, C code, bool ended_before = false) {
  ApiStep s;
  s.kind = kind;
  s.conn = conn;
  s.code = code;
  s.ended_before = ended_before;
  s.text = std::string(kind == K::kClose    ? "close"
                       : kind == K::kNotify ? "notify"
                       : kind == K::kAdd    ? "add"
                       : kind == K::kPost   ? "post"
                                            : "step") +
           "(c#" + std::to_string(conn) + ")";
  return s;
}

ApiModelStart start_of(std::vector<S> conns, bool faults = false) {
  ApiModelStart start;
  start.conns = std::move(conns);
  start.connections_max = 6;
  start.faults = faults;
  return start;
}

// close -> ok in one branch and close -> not_found in the other, of one open connection: only the
// ok first explains it.
TEST(EngineParallelCheck, ResultsOnlyOneInterleavingExplainsPass) {
  const ApiModelStart start = start_of({S::kOpen});
  // Branch 1: close -> ok. Branch 2: close -> not_found, which needs branch 1's close before it.
  const std::vector<std::vector<ApiStep>> branches = {
      {step(K::kClose, 0, C::kOk)},
      {step(K::kClose, 0, C::kNotFound)},
  };
  std::vector<std::uint32_t> order;
  const Status explained = branches_explained(start, branches, &order);
  ASSERT_TRUE(explained.ok()) << explained.message();
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 1}));
  // The other order is refused step by step: not_found of an open connection.
  std::vector<S> conns = start.conns;
  std::string why;
  EXPECT_FALSE(api_step_apply(branches[1][0], start, conns, &why));
  EXPECT_NE(why.find("not_found, yet the connection is open"), std::string::npos) << why;
}

TEST(EngineParallelCheck, CrossedResultsNeedTheOnlyOrderThatExplainsThem) {
  // c0 and c1 open. Branch 1 closes c0 (ok), then finds c1 gone; branch 2 finds c0 gone, then
  // closes c1 (ok). Only b1 b2 b2 b1 explains it: b2's not_found of c0 needs b1's close before
  // it, and b1's not_found of c1 needs b2's close before it.
  const ApiModelStart start = start_of({S::kOpen, S::kOpen});
  std::vector<std::vector<ApiStep>> branches = {
      {step(K::kClose, 0, C::kOk), step(K::kNotify, 1, C::kNotFound)},
      {step(K::kNotify, 0, C::kNotFound), step(K::kClose, 1, C::kOk)},
  };
  std::vector<std::uint32_t> order;
  Status explained = branches_explained(start, branches, &order);
  ASSERT_TRUE(explained.ok()) << explained.message();
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 1, 1, 0}));
  // A third branch that posts may go anywhere; the crossed steps keep their only order.
  branches.push_back({step(K::kPost, 0, C::kOk), step(K::kPost, 0, C::kOk)});
  explained = branches_explained(start, branches, &order);
  ASSERT_TRUE(explained.ok()) << explained.message();
  std::vector<std::uint32_t> crossed;
  for (std::uint32_t b : order) {
    if (b != 2) {
      crossed.push_back(b);
    }
  }
  EXPECT_EQ(crossed, (std::vector<std::uint32_t>{0, 1, 1, 0}));
  EXPECT_EQ(order.size(), 6u);
  // Each branch's close turned into not_found of a connection still open in every order: none.
  branches[1][1].code = C::kNotFound;
  branches[0][0].code = C::kNotFound;
  EXPECT_FALSE(branches_explained(start, branches).ok());
}

TEST(EngineParallelCheck, CloseNotFoundOfAConnectionOpenThroughoutFails) {
  const ApiModelStart start = start_of({S::kOpen});
  const std::vector<std::vector<ApiStep>> branches = {
      {step(K::kNotify, 0, C::kOk), step(K::kClose, 0, C::kNotFound)},
      {step(K::kPost, 0, C::kOk)},
  };
  const Status explained = branches_explained(start, branches);
  ASSERT_FALSE(explained.ok());
  const std::string& m = explained.message();
  EXPECT_NE(m.find("no interleaving of the branches explains their results"), std::string::npos)
      << m;
  EXPECT_NE(m.find("branch 1:\n    notify(c#0) -> ok\n    close(c#0) -> not_found"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("branch 2:\n    post(c#0) -> ok"), std::string::npos) << m;
  EXPECT_NE(m.find("not_found, yet the connection is open"), std::string::npos) << m;
}

// Both branches see their close -> ok and then the connection gone (on_closed ran, its slot
// freed), and then one of them gets ok again: a second life, which no order explains.
TEST(EngineParallelCheck, CloseOkAfterTheConnectionWasGoneFails) {
  const ApiModelStart start = start_of({S::kOpen});
  const std::vector<std::vector<ApiStep>> branches = {
      {step(K::kClose, 0, C::kOk), step(K::kClose, 0, C::kNotFound)},
      {step(K::kClose, 0, C::kOk), step(K::kClose, 0, C::kNotFound), step(K::kClose, 0, C::kOk)},
  };
  const Status explained = branches_explained(start, branches);
  ASSERT_FALSE(explained.ok());
  EXPECT_NE(explained.message().find("a second life"), std::string::npos) << explained.message();
  // Without the last step, both closes are idempotent oks, then both see it gone: explained.
  std::vector<std::vector<ApiStep>> fewer = branches;
  fewer[1].pop_back();
  EXPECT_TRUE(branches_explained(start, fewer).ok());
}

TEST(EngineParallelCheck, OnClosedOfAConnectionNothingCouldEndFails) {
  const ApiModelStart open = start_of({S::kOpen});
  const std::vector<std::vector<ApiStep>> branches = {
      {step(K::kNotify, 0, C::kNotFound, /*ended_before=*/true)},
      {step(K::kPost, 0, C::kOk)},
  };
  const Status explained = branches_explained(open, branches);
  ASSERT_FALSE(explained.ok());
  EXPECT_NE(explained.message().find("its on_closed had run"), std::string::npos)
      << explained.message();
  // Once something may end it (its peer shut down: a kMayEnd step of branch 2), it is explained
  // with the effect first.
  const std::vector<std::vector<ApiStep>> with_effect = {branches[0],
                                                         {step(K::kMayEnd, 0, C::kOk)}};
  std::vector<std::uint32_t> order;
  ASSERT_TRUE(branches_explained(open, with_effect, &order).ok());
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 0}));
}

TEST(EngineParallelCheck, FaultsAllowASetOfResults) {
  const std::vector<std::vector<ApiStep>> branches = {
      {step(K::kNotify, 0, C::kOsError), step(K::kClose, 0, C::kNotFound)},
      {step(K::kPost, 0, C::kOsError), step(K::kAdd, 1, C::kOsError)},
  };
  // With faults armed the connection may end by itself and calls may fail with os_error.
  EXPECT_TRUE(branches_explained(start_of({S::kOpen}, /*faults=*/true), branches).ok());
  const Status without = branches_explained(start_of({S::kOpen}, /*faults=*/false), branches);
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.message().find("no fault is armed"), std::string::npos) << without.message();
}

TEST(EngineParallelCheck, AddAgainstTheTable) {
  // Six open connections fill the table: an add -> ok is impossible, resource_exhausted right.
  const ApiModelStart full = start_of(std::vector<S>(6, S::kOpen));
  EXPECT_FALSE(branches_explained(full, {{step(K::kAdd, 6, C::kOk)}}).ok());
  EXPECT_TRUE(branches_explained(full, {{step(K::kAdd, 6, C::kResourceExhausted)}}).ok());
  // With two open, resource_exhausted is impossible; an add -> ok makes a connection that a
  // close of the same branch then finds open.
  const ApiModelStart two = start_of({S::kOpen, S::kOpen});
  EXPECT_FALSE(branches_explained(two, {{step(K::kAdd, 2, C::kResourceExhausted)}}).ok());
  EXPECT_TRUE(branches_explained(two, {{step(K::kAdd, 2, C::kOk), step(K::kClose, 2, C::kOk)},
                                       {step(K::kClose, 0, C::kOk)}})
                  .ok());
  EXPECT_FALSE(
      branches_explained(two, {{step(K::kAdd, 2, C::kOk), step(K::kClose, 2, C::kNotFound)}}).ok());
  // Once a close may have freed a slot, a full table may take an add.
  const ApiModelStart ending =
      start_of({S::kOpen, S::kOpen, S::kOpen, S::kOpen, S::kOpen, S::kMayEnd});
  EXPECT_TRUE(branches_explained(ending, {{step(K::kAdd, 6, C::kOk)}}).ok());
  EXPECT_TRUE(branches_explained(ending, {{step(K::kAdd, 6, C::kResourceExhausted)}}).ok());
}

// The bound: three branches of kApiBranchStepsMax steps that no order explains end well within
// kApiSearchNodesMax (every node is visited once), and the verdict is "no interleaving", not
// "undecided".
TEST(EngineParallelCheck, TheSearchIsBounded) {
  std::vector<std::vector<ApiStep>> branches(kEngineBranchesMax);
  for (std::vector<ApiStep>& branch : branches) {
    for (std::size_t i = 0; i + 1 < kApiBranchStepsMax; ++i) {
      branch.push_back(step(i % 2 == 0 ? K::kPost : K::kNotify, 0, C::kOk));
    }
    branch.push_back(step(K::kClose, 0, C::kNotFound));  // c0 is open throughout
  }
  const Status explained = branches_explained(start_of({S::kOpen}), branches);
  ASSERT_FALSE(explained.ok());
  EXPECT_EQ(explained.message().rfind("no interleaving", 0), 0u) << explained.message();
}

}  // namespace
}  // namespace readyport::properties
