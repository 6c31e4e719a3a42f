// The slot state machine (readyport/internal/slot_machine.hpp): the edge table and the events.
#include "readyport/internal/slot_machine.hpp"

namespace readyport::internal {

namespace {

using S = SlotState;

constexpr std::uint32_t bit(SlotState state) { return 1u << static_cast<std::uint32_t>(state); }

// Every allowed transition, as the set of states each state may move to (indexed by SlotState);
// slot_transition() refuses the rest.
constexpr std::uint32_t kSlotEdges[kSlotStateCount] = {
    /* kFree        -> */ bit(S::kLive),
    /* kLive        -> */ bit(S::kFree) | bit(S::kDispatching) | bit(S::kRemoving),
    /* kDispatching -> */ bit(S::kDispatching) | bit(S::kLive),
    /* kRemoving    -> */ bit(S::kClosing) | bit(S::kQuarantined),
    /* kQuarantined -> */ bit(S::kDraining),
    /* kDraining    -> */ bit(S::kQuarantined) | bit(S::kGrace),
    /* kGrace       -> */ bit(S::kClosing),
    /* kClosing     -> */ bit(S::kFree),
};

}  // namespace

const char* slot_state_name(SlotState state) {
  constexpr const char* kNames[kSlotStateCount] = {
      "free", "live", "dispatching", "removing", "quarantined", "draining", "grace", "closing"};
  const auto i = static_cast<std::uint32_t>(state);
  return i < kSlotStateCount ? kNames[i] : "unknown";
}

bool is_oneshot(Mode mode) { return mode == Mode::kOneshotLevel || mode == Mode::kOneshotEdge; }

bool slot_edge_allowed(SlotState from, SlotState to) {
  const auto i = static_cast<std::uint32_t>(from);
  const bool known = i < kSlotStateCount && static_cast<std::uint32_t>(to) < kSlotStateCount;
  return known && (kSlotEdges[i] & bit(to)) != 0;
}

void slot_transition(SlotMachine& m, SlotState to) {
  READYPORT_ASSERT(slot_edge_allowed(m.state, to));
  m.state = to;
}

void slot_on_add(SlotMachine& m, Mode mode, Interest interest) {
  slot_transition(m, S::kLive);
  m.mode = mode;
  m.interest = interest;
  m.interest_applied = interest;
  m.op_in_flight = true;
}

ResultAction slot_on_add_result(SlotMachine& m, bool refused) {
  // op_in_flight kept the slot ours: no REMOVE could be decided meanwhile.
  READYPORT_ASSERT(m.op_in_flight);
  m.op_in_flight = false;
  if (refused) {
    READYPORT_ASSERT(!m.deferred);
    slot_transition(m, S::kFree);
    return ResultAction::kNone;
  }
  return m.state == S::kLive ? ResultAction::kSettle : ResultAction::kNone;
}

SettleAction slot_settle(SlotMachine& m, bool sink_full) {
  READYPORT_ASSERT(m.state == S::kLive);
  // A registration in flight: its result settles again (one in flight per slot keeps the port's
  // order of operations equal to ours). Deferred: the driver that takes it settles it.
  if (m.op_in_flight || m.deferred) return SettleAction::kNone;
  // Armed as wanted and not closing: nothing to issue.
  if (!m.close_requested && !m.rearm_needed) return SettleAction::kNone;
  if (sink_full) {
    m.deferred = true;
    return SettleAction::kDefer;
  }
  m.rearm_needed = false;
  if (m.close_requested) {
    // No registration in flight, so REMOVE is the port's last operation on this key.
    slot_transition(m, S::kRemoving);
    return SettleAction::kRemove;
  }
  m.paused = false;
  m.op_in_flight = true;
  m.interest_applied = m.interest;  // the whole registration, all directions (spec C2)
  return SettleAction::kEnable;
}

bool slot_on_undeferred(SlotMachine& m) {
  READYPORT_ASSERT(m.deferred);
  m.deferred = false;
  if (m.state == S::kDispatching) return false;
  READYPORT_ASSERT(m.state == S::kLive);
  return true;
}

bool slot_pause(SlotMachine& m, bool sink_full) {
  READYPORT_ASSERT(m.state == S::kDispatching);
  if (m.paused || m.op_in_flight || m.deferred || m.close_requested || sink_full) return false;
  m.paused = true;
  m.op_in_flight = true;  // DISABLE keeps the registration (spec B4); the re-arm enables it
  return true;
}

ResultAction slot_on_op_result(SlotMachine& m, bool failed) {
  // An ENABLE or DISABLE in flight keeps its slot: REMOVE waits for op_in_flight to clear.
  READYPORT_ASSERT(m.op_in_flight);
  m.op_in_flight = false;
  if (failed) m.close_requested = true;
  // Idle: a REMOVE, or an ENABLE wanted meanwhile.
  if (m.state == S::kLive) return ResultAction::kSettle;
  // A driver runs the handler: it settles. Past kLive needs op_in_flight clear.
  READYPORT_ASSERT(m.state == S::kDispatching);
  return ResultAction::kNone;
}

void slot_on_remove_failed(SlotMachine& m) { slot_transition(m, S::kQuarantined); }

namespace {

PacketAction on_live_packet(SlotMachine& m, std::uint32_t events, std::uint16_t driver) {
#if defined(READYPORT_CANARY_dispatch_after_close)
  // CANARY dispatch_after_close: packets of a connection being closed still reach its handler.
  if (false) {
#else
  if (m.close_requested) {
#endif
    // The pending registration's result (or the deferred list) leads to the REMOVE.
    READYPORT_ASSERT(m.op_in_flight || m.deferred);
    return PacketAction::kDropClosing;
  }
  // Persistent: nothing the handler still asks for. One-shot packets are always delivered: the
  // packet disarmed the registration and only the handler's return re-arms it.
  if (!is_oneshot(m.mode) && (events & (m.interest | kSockNotifyEventErr)) == 0)
    return PacketAction::kDropUnwanted;
  slot_transition(m, S::kDispatching);
  m.dispatcher = driver;
  m.pending_events = 0;
  return PacketAction::kDispatch;
}

PacketAction on_dispatching_packet(SlotMachine& m, std::uint32_t events, std::uint16_t driver) {
  // Never a second thread in the handler: the events wait for the dispatcher.
  m.pending_events |= events;
  if (m.dispatcher == driver) return PacketAction::kMergeOwn;
  // The condition re-queues the packet after every dequeue (spec C4): without a pause this
  // driver would spin on it until the other one returns.
  if (m.mode == Mode::kPersistentLevel) return PacketAction::kMergePause;
  return PacketAction::kMergeForeign;
}

}  // namespace

PacketAction slot_on_packet(SlotMachine& m, std::uint32_t mask, std::uint16_t driver) {
  // REMOVE can come OR-ed with other bits (spec D4): test it with &.
  const bool remove = (mask & kSockNotifyEventRemove) != 0;
  const std::uint32_t events = mask & kEventsForHandler;
  switch (m.state) {
    case S::kFree:
      READYPORT_UNREACHABLE();  // a free slot's generation is carried by no key yet
    case S::kLive:
      READYPORT_ASSERT(!remove);  // REMOVE is issued only after kLive -> kRemoving
      return on_live_packet(m, events, driver);
    case S::kDispatching:
      READYPORT_ASSERT(!remove);
      return on_dispatching_packet(m, events, driver);
    case S::kRemoving:
#if defined(READYPORT_CANARY_free_before_remove)
      // CANARY free_before_remove: any packet of a removing slot is taken as its REMOVE, so the
      // socket is closed and the slot freed while the real REMOVE packet is still to come.
      if (true) {
#else
      if (remove) {
#endif
        slot_transition(m, S::kClosing);
        return PacketAction::kRemoveSeen;
      }
      return PacketAction::kDropClosing;
    case S::kQuarantined:
    case S::kDraining:
    case S::kGrace:
    case S::kClosing:
      // No REMOVE was applied (quarantine) or it was already seen (closing, spec B7).
      READYPORT_ASSERT(!remove);
      return PacketAction::kDropClosing;
  }
  READYPORT_UNREACHABLE();
}

ReturnAction slot_on_handler_returned(SlotMachine& m, Interest result, std::uint32_t* events_out) {
  READYPORT_ASSERT(m.state == S::kDispatching);
  if (result == kInterestClose) {
    m.close_requested = true;
  } else {
    m.interest = result;
  }
  if (m.pending_events != 0 && !m.close_requested) {
    slot_transition(m, S::kDispatching);
    *events_out = m.pending_events;
    m.pending_events = 0;
    return ReturnAction::kRunAgain;
  }
  // One-shot: the packet disarmed every direction (spec C2), so re-arm the whole interest.
  // Persistent: only if the interest changed (or a DISABLE paused it).
  slot_transition(m, S::kLive);
  m.dispatcher = kDriverNone;
  m.pending_events = 0;
  m.rearm_needed = is_oneshot(m.mode) || m.interest != m.interest_applied || m.paused;
  return ReturnAction::kSettle;
}

CloseAction slot_on_close(SlotMachine& m) {
  READYPORT_ASSERT(m.state != S::kFree);  // the engine never closes a free slot
  if (m.state == S::kDispatching) {
    m.close_requested = true;  // the dispatcher sees it when the handler returns
    return CloseAction::kNone;
  }
  // kRemoving or past it: closing already.
  if (m.state != S::kLive) return CloseAction::kAlreadyClosing;
  if (m.close_requested) return CloseAction::kNone;  // a result or a driver decides it
  m.close_requested = true;
  return CloseAction::kSettle;
}

void slot_on_marker_posting(SlotMachine& m) { slot_transition(m, S::kDraining); }
void slot_on_marker_post_failed(SlotMachine& m) { slot_transition(m, S::kQuarantined); }
void slot_on_marker_seen(SlotMachine& m) { slot_transition(m, S::kGrace); }
void slot_on_grace_over(SlotMachine& m) { slot_transition(m, S::kClosing); }
void slot_on_disposed(SlotMachine& m) { slot_transition(m, S::kFree); }

}  // namespace readyport::internal
