// stress/runs/slot_tuple_reasons.hpp: the tuples (slot state, event, engine context) that the code
// allows and no run can reach, each with its reason, and the check of a run's tuples against
// them (coverage of states in context, docs/coverage.md).
//
// Every tuple the slot machine allows (readyport/fake/slot_tuples.hpp) is an obligation of the
// default run unless a rule here names it with the reason no run reaches it. The list is checked
// against the code and the run both ways, so that it cannot go stale: a rule that matches no
// allowed tuple is an error (the code changed under it), and a listed tuple the run reached is an
// error (it was not unreachable after all; the rule is wrong, or the code changed).
//
//   SlotTupleCheck check = slot_tuple_check(totals.tuples);
//   if (!check.unreached.empty() || !check.listed_reached.empty() || !check.rules_stale.empty())
//     ... the coverage check fails, naming them ...
//
// Ownership: values. Threading: none (pure functions). Errors: none; a stale rule is reported
// in the check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "readyport/fake/slot_tuples.hpp"

namespace readyport {

// One rule: each field is a set of names separated by '|', or "*" for any; a tuple matches when
// its state, event and context are each in the rule's set. A pending rule names tuples the code
// can reach that the default run does not reach yet, with what they need: they are counted and
// printed apart from the unreachable ones, and checked the same way (reached, the rule is stale).
struct SlotTupleReason {
  const char* states;
  const char* events;
  const char* contexts;
  const char* reason;
  bool pending = false;
};

// The rules, in order: the first that matches a tuple gives its reason.
const std::vector<SlotTupleReason>& slot_tuple_reasons();

// The rule index for tuple `index` (allowed or not), or -1 when no rule names it.
int slot_tuple_reason_of(std::uint32_t index,
                         const std::vector<SlotTupleReason>& reasons = slot_tuple_reasons());

struct SlotTupleCheck {
  std::uint32_t allowed = 0;             // tuples the code allows
  std::uint32_t listed = 0;              // of those, named by a rule (unreachable, with its reason)
  std::uint32_t pending = 0;             // of those listed, by a pending rule (reachable, not yet)
  std::uint32_t reached = 0;             // of those, reached by the run
  std::vector<std::uint32_t> unreached;  // allowed, not listed, not reached
  std::vector<std::uint32_t> listed_reached;  // listed as unreachable, yet reached
  std::vector<std::string> rules_stale;       // rules that match no allowed tuple
  bool ok() const { return unreached.empty() && listed_reached.empty() && rules_stale.empty(); }
};

// Checks a run's tuple counts against the code (slot_tuple_allowed) and `reasons`.
SlotTupleCheck slot_tuple_check(const SlotTuples& tuples,
                                const std::vector<SlotTupleReason>& reasons = slot_tuple_reasons());

}  // namespace readyport
