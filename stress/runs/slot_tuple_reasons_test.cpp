// Coverage of states in context (slot_tuple_reasons.hpp): the check judges a real run's tuples
// against the code and the reasons, and fails on a planted unreached tuple, a listed tuple that
// was reached, and a reason that names nothing the code allows.
#include "runs/slot_tuple_reasons.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "runs/stress_run.hpp"

namespace readyport {
namespace {

// Seeds 1..20 of the default run, their tuples summed.
SlotTuples tuples_of_twenty_seeds() {
  StressOptions options;
  SlotTuples tuples;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const SeedReport report = stress_run_seed(options, seed);
    EXPECT_TRUE(report.status.ok()) << seed << ": " << report.status.to_string();
    tuples.add(report.tuples);
  }
  return tuples;
}

// The first allowed tuple, not listed, that the run reached.
std::uint32_t a_reached_tuple(const SlotTuples& tuples) {
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (slot_tuple_allowed(i) && slot_tuple_reason_of(i) < 0 && tuples.counts[i] != 0) {
      return i;
    }
  }
  ADD_FAILURE() << "the run reached no allowed tuple";
  return 0;
}

bool contains(const std::vector<std::uint32_t>& list, std::uint32_t index) {
  return std::find(list.begin(), list.end(), index) != list.end();
}

TEST(SlotTupleCheck, EveryReachedTupleIsOneTheCodeAllowsAndTheReasonsAreCurrent) {
  const SlotTuples tuples = tuples_of_twenty_seeds();
  const SlotTupleCheck check = slot_tuple_check(tuples);
  EXPECT_GT(check.reached, 0u);
  EXPECT_EQ(check.allowed, slot_tuples_allowed());
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (tuples.counts[i] != 0) {
      EXPECT_TRUE(slot_tuple_allowed(i)) << slot_tuple_name(i) << " reached, yet not allowed";
    }
  }
  EXPECT_TRUE(check.listed_reached.empty()) << slot_tuple_name(check.listed_reached.front());
  EXPECT_TRUE(check.rules_stale.empty()) << check.rules_stale.front();
}

TEST(SlotTupleCheck, APlantedUnreachedTupleFailsTheCheckByName) {
  SlotTuples tuples = tuples_of_twenty_seeds();
  const std::uint32_t planted = a_reached_tuple(tuples);
  ASSERT_FALSE(contains(slot_tuple_check(tuples).unreached, planted));
  tuples.counts[planted] = 0;
  const SlotTupleCheck check = slot_tuple_check(tuples);
  EXPECT_FALSE(check.ok());
  EXPECT_TRUE(contains(check.unreached, planted)) << slot_tuple_name(planted);
}

TEST(SlotTupleCheck, AReasonForAReachedTupleOrForNothingAllowedFailsTheCheck) {
  const SlotTuples tuples = tuples_of_twenty_seeds();
  const std::uint32_t reached = a_reached_tuple(tuples);
  const SlotTuple t = slot_tuple_at(reached);
  std::vector<SlotTupleReason> reasons = slot_tuple_reasons();
  const std::string state = slot_state_name_at(t.state);
  const std::string event = slot_event_name(t.event);
  const std::string context = engine_context_name(t.context);
  reasons.push_back({state.c_str(), event.c_str(), context.c_str(), "planted: said unreachable"});
  // The slot machine never takes a packet on a free slot (its key names no live generation).
  reasons.push_back({"free", "packet", "*", "planted: names no allowed tuple"});
  const SlotTupleCheck check = slot_tuple_check(tuples, reasons);
  EXPECT_FALSE(check.ok());
  EXPECT_TRUE(contains(check.listed_reached, reached)) << slot_tuple_name(reached);
  ASSERT_EQ(check.rules_stale.size(), 1u);
  EXPECT_EQ(check.rules_stale.front(), "free packet *");
}

TEST(SlotTupleNames, EachIndexNamesItsOwnTupleAndBack) {
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    const SlotTuple t = slot_tuple_at(i);
    EXPECT_EQ(slot_tuple_index(t.event, t.state, t.context), i);
    EXPECT_EQ(slot_tuple_name(i).find("unknown"), std::string::npos) << i;
  }
  EXPECT_STREQ(slot_event_name(kSlotEventCount), "unknown");
  EXPECT_STREQ(engine_context_name(kEngineContextCount), "unknown");
  EXPECT_FALSE(slot_event_allowed(kSlotEventCount, 0));
}

}  // namespace
}  // namespace readyport
