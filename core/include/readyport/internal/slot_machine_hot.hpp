// readyport/internal/slot_machine_hot.hpp: the slot machine's once-per-packet events and its edge
// table, inline for the batch loop; declared, documented and included by slot_machine.hpp, which
// states ownership, threading and errors. The rest, and the canaries, are in slot_machine.cpp.
#pragma once

#include <array>

namespace readyport::internal {

// Every allowed transition, as the set of states each state may move to (indexed by SlotState);
// slot_transition() refuses the rest.
inline constexpr auto kSlotEdges = [] {
  using enum SlotState;
  const auto to = [](auto... states) { return ((1u << static_cast<std::uint32_t>(states)) | ...); };
  return std::array<std::uint32_t, kSlotStateCount>{
      to(kLive),                           // from kFree
      to(kFree, kDispatching, kRemoving),  // from kLive
      to(kDispatching, kLive),             // from kDispatching
      to(kClosing, kQuarantined),          // from kRemoving
      to(kDraining),                       // from kQuarantined
      to(kQuarantined, kGrace),            // from kDraining
      to(kClosing),                        // from kGrace
      to(kFree)};                          // from kClosing
}();

// The states each event accepts (indexed by SlotEvent, readyport/engine_coverage.hpp): each event
// asserts it on entry (slot_event_accepts), and coverage of states in context counts its tuples
// over these (slot_event_allowed).
inline constexpr auto kSlotEventStates = [] {
  using enum SlotState;
  const auto in = [](auto... states) { return ((1u << static_cast<std::uint32_t>(states)) | ...); };
  const std::uint32_t not_free =
      in(kLive, kDispatching, kRemoving, kQuarantined, kDraining, kGrace, kClosing);
  return std::array<std::uint32_t, kSlotEventCount>{
      in(kFree),                                       // kAdd
      in(kLive, kDispatching),                         // kAddResult: its ENABLE holds the slot
      in(kLive),                                       // kSettle
      in(kLive, kDispatching),                         // kUndeferred
      in(kDispatching),                                // kPause
      in(kLive, kDispatching),                         // kOpResult: its ENABLE/DISABLE holds it
      in(kRemoving),                                   // kRemoveFailed
      not_free,                                        // kPacket
      in(kRemoving, kQuarantined, kDraining, kGrace),  // kRemovePacket: issued, or probed
      in(kDispatching),                                // kHandlerReturned
      not_free,                                        // kClose
      in(kRemoving),                                   // kProbe
      in(kQuarantined),                                // kMarkerPosting
      in(kDraining),                                   // kMarkerPostFailed
      in(kDraining),                                   // kMarkerSeen
      in(kGrace),                                      // kGraceOver
      in(kClosing)};                                   // kDisposed
}();

inline bool slot_event_accepts(SlotEvent event, SlotState state) {
  const auto e = static_cast<std::uint32_t>(event);
  const auto s = static_cast<std::uint32_t>(state);
  return e < kSlotEventCount && s < kSlotStateCount && (kSlotEventStates[e] & (1u << s)) != 0;
}

inline bool slot_edge_allowed(SlotState from, SlotState to) {
  const auto i = static_cast<std::uint32_t>(from);
  const auto j = static_cast<std::uint32_t>(to);
  return i < kSlotStateCount && j < kSlotStateCount && (kSlotEdges[i] & (1u << j)) != 0;
}

inline void slot_transition(SlotMachine& m, SlotState to) {
  READYPORT_ASSERT(slot_edge_allowed(m.state_, to));
  m.state_ = to;
}

// What each state allows: a registration in flight or a deferred settle only while live or
// dispatching; a dispatcher exactly while dispatching; past kLive, the close asked for and no
// handler or registration of it left; a REMOVE applied only past kLive, a probe only while its
// drain runs. Evaluated without branches (once per event on the hot path); a failure is named
// condition by condition by slot_audit_fail() (slot_machine.cpp), which asserts.
inline bool slot_audit_ok(const SlotMachine& m) {
  using enum SlotState;
  const SlotState s = m.state();
  const bool live = (s == kLive) | (s == kDispatching);
  const bool draining = (s == kQuarantined) | (s == kDraining) | (s == kGrace);
  const bool closing = (s == kRemoving) | draining | (s == kClosing);
  const bool idle = !m.op_in_flight && !m.deferred;  // plain loads: no branch in practice
  const bool dispatching = s == kDispatching;
  const bool has_dispatcher = m.dispatcher != kDriverNone;
  const bool no_pending = m.pending_events == 0;
  const bool not_applied = !m.remove_applied;
  const bool no_probe = !m.probe;
  return (live | idle) & (dispatching == has_dispatcher) & (dispatching | no_pending) &
         ((!closing) | m.close_requested) & (not_applied | closing | (s == kFree)) &
         (no_probe | (m.remove_applied & draining));
}

inline void slot_audit(const SlotMachine& m) {
  if (!slot_audit_ok(m)) [[unlikely]] {
    slot_audit_fail(m);
  }
}

// Audits the machine when the event that declares it returns (every path out).
class SlotAuditOnReturn {
 public:
  explicit SlotAuditOnReturn(const SlotMachine& m) : m_(m) {}
  ~SlotAuditOnReturn() { slot_audit(m_); }
  SlotAuditOnReturn(const SlotAuditOnReturn&) = delete;
  SlotAuditOnReturn& operator=(const SlotAuditOnReturn&) = delete;

 private:
  const SlotMachine& m_;
};

inline bool is_oneshot(Mode mode) {
  return mode == Mode::kOneshotLevel || mode == Mode::kOneshotEdge;
}

inline SettleAction slot_settle(SlotMachine& m, bool sink_full) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kSettle, m.state()));
  // A registration in flight: its result settles again (one in flight per slot keeps the port's
  // order of operations equal to ours). Deferred: the driver that takes it settles it.
  if (m.op_in_flight || m.deferred) {
    return SettleAction::kNone;
  }
  // Armed as wanted and not closing: nothing to issue.
  if (!m.close_requested && !m.rearm_needed) {
    return SettleAction::kNone;
  }
  if (sink_full) {
    m.deferred = true;
    return SettleAction::kDefer;
  }
  m.rearm_needed = false;
  if (m.close_requested) {
    // No registration in flight, so REMOVE is the port's last operation on this key.
    slot_transition(m, SlotState::kRemoving);
    return SettleAction::kRemove;
  }
  m.paused = false;
  m.op_in_flight = true;
  m.interest_applied = m.interest;  // the whole registration, all directions (spec C2)
  return SettleAction::kEnable;
}

inline ResultAction slot_on_op_result(SlotMachine& m, bool failed) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kOpResult, m.state()));
  // An ENABLE or DISABLE in flight keeps its slot: REMOVE waits for op_in_flight to clear.
  READYPORT_ASSERT(m.op_in_flight);
  m.op_in_flight = false;
  if (failed) {
    m.close_requested = true;
  }
  // Idle: settle when a REMOVE or an ENABLE is wanted (and no driver took it off the deferred
  // list yet, which settles it); else it stays armed as it is.
  if (m.state() == SlotState::kLive) {
    const bool wanted = (m.close_requested || m.rearm_needed) && !m.deferred;
    return wanted ? ResultAction::kSettle : ResultAction::kNone;
  }
  // A driver runs the handler: it settles. Past kLive needs op_in_flight clear.
  READYPORT_ASSERT(m.state() == SlotState::kDispatching);
  return ResultAction::kNone;
}

// A packet for a live slot that is not closing: kLive -> kDispatching, or dropped.
inline PacketAction slot_on_live_packet(SlotMachine& m, std::uint32_t events,
                                        std::uint16_t driver) {
  // Persistent: nothing the handler still asks for. One-shot packets are always delivered: the
  // packet disarmed the registration and only the handler's return re-arms it.
  if (!is_oneshot(m.mode) && (events & (m.interest | kSockNotifyEventErr)) == 0) {
    return PacketAction::kDropUnwanted;
  }
  slot_transition(m, SlotState::kDispatching);
  m.dispatcher = driver;
  m.pending_events = 0;
  return PacketAction::kDispatch;
}

inline PacketAction slot_on_packet(SlotMachine& m, std::uint32_t mask, std::uint16_t driver) {
  const SlotAuditOnReturn audit(m);
  // REMOVE can come OR-ed with other bits (spec D4): test it with &. A REMOVE is issued only
  // after kLive -> kRemoving, so kLive and kDispatching never see one (slot_on_packet_closing
  // asserts it).
  const bool remove = (mask & kSockNotifyEventRemove) != 0;
  READYPORT_ASSERT(
      slot_event_accepts(remove ? SlotEvent::kRemovePacket : SlotEvent::kPacket, m.state()));
  const std::uint32_t events = mask & kEventsForHandler;
  if (m.state() == SlotState::kLive && !m.close_requested && !remove) {
    return slot_on_live_packet(m, events, driver);
  }
  if (m.state() == SlotState::kDispatching && !remove) {
    // Never a second thread in the handler: the events wait for the dispatcher.
    m.pending_events |= events;
    if (m.dispatcher == driver) {
      return PacketAction::kMergeOwn;
    }
    // The condition re-queues the packet after every dequeue (spec C4): without a pause this
    // driver would spin on it until the other one returns.
    if (m.mode == Mode::kPersistentLevel) {
      return PacketAction::kMergePause;
    }
    return PacketAction::kMergeForeign;
  }
  return slot_on_packet_closing(m, mask, driver);
}

inline ReturnAction slot_on_handler_returned(SlotMachine& m, Interest result,
                                             std::uint32_t* events_out) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kHandlerReturned, m.state()));
  if (result == kInterestClose) {
    m.close_requested = true;
  } else {
    m.interest = result;
  }
  if (m.pending_events != 0 && !m.close_requested) {
    slot_transition(m, SlotState::kDispatching);
    *events_out = m.pending_events;
    m.pending_events = 0;
    return ReturnAction::kRunAgain;
  }
  // One-shot: the packet disarmed every direction (spec C2), so re-arm the whole interest.
  // Persistent: only if the interest changed (or a DISABLE paused it).
  slot_transition(m, SlotState::kLive);
  m.dispatcher = kDriverNone;
  m.pending_events = 0;
  m.rearm_needed = is_oneshot(m.mode) || m.interest != m.interest_applied || m.paused;
  return ReturnAction::kSettle;
}

}  // namespace readyport::internal
