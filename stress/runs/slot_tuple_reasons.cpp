// The unreachable tuples and their reasons; the check (slot_tuple_reasons.hpp).
#include "runs/slot_tuple_reasons.hpp"

#include <string_view>

namespace readyport {
namespace {

bool in_set(std::string_view set, std::string_view name) {
  if (set == "*") {
    return true;
  }
  while (!set.empty()) {
    const std::size_t bar = set.find('|');
    if (set.substr(0, bar) == name) {
      return true;
    }
    if (bar == std::string_view::npos) {
      break;
    }
    set.remove_prefix(bar + 1);
  }
  return false;
}

bool matches(const SlotTupleReason& rule, std::uint32_t index) {
  const SlotTuple t = slot_tuple_at(index);
  return in_set(rule.states, slot_state_name_at(t.state)) &&
         in_set(rule.events, slot_event_name(t.event)) &&
         in_set(rule.contexts, engine_context_name(t.context));
}

}  // namespace

const std::vector<SlotTupleReason>& slot_tuple_reasons() {
  static const std::vector<SlotTupleReason> reasons = {
      {"free", "add", "stop_sweep|stop_drain",
       "add() takes a free slot only in the lock section that finds the engine running "
       "(check_running in reserve_slot); stop() sets kStopping under the same lock"},
      {"*",
       "packet|remove_packet|handler_returned|pause|undeferred|marker_seen|grace_over|"
       "disposed|probe",
       "no_driver",
       "these run on a thread that holds a claimed driver: its batch (packets, handlers, "
       "pauses, markers), its call's start (the deferred list, probes) or its quiescent point "
       "and disposal; a driver is released only after them (quiesce, drive_once)"},
      {"dispatching", "*", "no_driver",
       "a dispatching slot's dispatcher is a claimed driver: it settles the slot when the handler "
       "returned (finish_dispatches) before its quiescent point can release it"},
      {"grace|closing", "close", "no_driver",
       "a slot in grace waits for a claimed driver: the one that saw its marker, until its "
       "quiescent point (check_grace ends the grace there unless another driver's call began "
       "before the marker, and that driver is claimed until its own); a closing slot is on the "
       "dispose list of the driver that moved it there, which disposes it before it can be "
       "released (quiesce, drive_once; release_locked asserts the list empty)"},
  };
  return reasons;
}

int slot_tuple_reason_of(std::uint32_t index, const std::vector<SlotTupleReason>& reasons) {
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (matches(reasons[i], index)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

SlotTupleCheck slot_tuple_check(const SlotTuples& tuples,
                                const std::vector<SlotTupleReason>& reasons) {
  SlotTupleCheck check;
  std::vector<bool> rule_used(reasons.size(), false);
  for (std::uint32_t i = 0; i < kSlotTupleCount; ++i) {
    if (!slot_tuple_allowed(i)) {
      continue;
    }
    ++check.allowed;
    const bool reached = tuples.counts[i] != 0;
    check.reached += reached ? 1 : 0;
    const int rule = slot_tuple_reason_of(i, reasons);
    if (rule >= 0) {
      rule_used[static_cast<std::size_t>(rule)] = true;
      ++check.listed;
      check.pending += reasons[static_cast<std::size_t>(rule)].pending ? 1 : 0;
      if (reached) {
        check.listed_reached.push_back(i);
      }
    } else if (!reached) {
      check.unreached.push_back(i);
    }
  }
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (!rule_used[i]) {
      const SlotTupleReason& r = reasons[i];
      check.rules_stale.push_back(std::string(r.states) + " " + r.events + " " + r.contexts);
    }
  }
  return check;
}

}  // namespace readyport
