// The slot state machine (readyport/internal/slot_machine.hpp): the events that do not run once
// per notification (slot_machine_hot.hpp has those, and the edge table).
#include "readyport/internal/slot_machine.hpp"

namespace readyport::internal {

using S = SlotState;

const char* slot_state_name(SlotState state) {
  constexpr const char* kNames[kSlotStateCount] = {
      "free", "live", "dispatching", "removing", "quarantined", "draining", "grace", "closing"};
  const auto i = static_cast<std::uint32_t>(state);
  return i < kSlotStateCount ? kNames[i] : "unknown";
}

void slot_audit_fail(const SlotMachine& m) {
  using enum SlotState;
  const SlotState s = m.state();
  const bool live = s == kLive || s == kDispatching;
  const bool draining = s == kQuarantined || s == kDraining || s == kGrace;
  const bool closing = s == kRemoving || draining || s == kClosing;
  READYPORT_ASSERT(live || !m.op_in_flight);
  READYPORT_ASSERT(live || !m.deferred);
  READYPORT_ASSERT((s == kDispatching) == (m.dispatcher != kDriverNone));
  READYPORT_ASSERT(s == kDispatching || m.pending_events == 0);
  READYPORT_ASSERT(!closing || m.close_requested);
  READYPORT_ASSERT(!m.remove_applied || closing || s == kFree);
  READYPORT_ASSERT(!m.probe || (m.remove_applied && draining));
  READYPORT_ASSERT(slot_audit_ok(m));  // the two lists must agree
  READYPORT_UNREACHABLE();
}

void slot_on_add(SlotMachine& m, Mode mode, Interest interest) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kAdd, m.state()));
  slot_transition(m, S::kLive);
  m.mode = mode;
  m.interest = interest;
  m.interest_applied = interest;
  m.op_in_flight = true;
}

ResultAction slot_on_add_result(SlotMachine& m, bool refused) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kAddResult, m.state()));
  // op_in_flight kept the slot ours: no REMOVE could be decided meanwhile.
  READYPORT_ASSERT(m.op_in_flight);
  m.op_in_flight = false;
  if (refused) {
    READYPORT_ASSERT(!m.deferred);
    slot_transition(m, S::kFree);
    return ResultAction::kNone;
  }
  return m.state() == S::kLive ? ResultAction::kSettle : ResultAction::kNone;
}

bool slot_on_undeferred(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kUndeferred, m.state()));
  READYPORT_ASSERT(m.deferred);
  m.deferred = false;
  if (m.state() == S::kDispatching) {
    return false;
  }
  READYPORT_ASSERT(m.state() == S::kLive);
  return true;
}

bool slot_pause(SlotMachine& m, bool sink_full) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kPause, m.state()));
  READYPORT_ASSERT(m.state() == S::kDispatching);
  if (m.paused || m.op_in_flight || m.deferred || m.close_requested || sink_full) {
    return false;
  }
  m.paused = true;
  m.op_in_flight = true;  // DISABLE keeps the registration (spec B4); the re-arm enables it
  return true;
}

void slot_on_remove_failed(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kRemoveFailed, m.state()));
  slot_transition(m, S::kQuarantined);
}

PacketAction slot_on_packet_closing(SlotMachine& m, std::uint32_t mask,
                                    [[maybe_unused]] std::uint16_t driver) {
  const SlotAuditOnReturn audit(m);
  const bool remove = (mask & kSockNotifyEventRemove) != 0;
  // No key carries a free slot's generation yet; slot_on_packet() takes every packet of a
  // dispatching slot but a REMOVE, which only kRemoving can see (issued on kLive -> kRemoving).
  READYPORT_ASSERT(m.state() != S::kFree && m.state() != S::kDispatching);
  READYPORT_ASSERT(!remove || m.state() == S::kRemoving || m.probe);
  // Live and closing: the pending registration's result (or the deferred list) leads to REMOVE.
  READYPORT_ASSERT(m.state() != S::kLive || m.op_in_flight || m.deferred);
  if (m.state() == S::kRemoving && remove) {
    slot_transition(m, S::kClosing);
    return PacketAction::kRemoveSeen;
  }
  if (remove && m.probe) {
    m.probe = false;  // not lost: the grace period ends the drain as for any quarantine
    return PacketAction::kProbeAnswered;
  }
  // Live and closing, removing (not the REMOVE), quarantined (no REMOVE applied) or closing (its
  // REMOVE seen, spec B7): dropped.
  return PacketAction::kDropClosing;
}

CloseAction slot_on_close(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kClose, m.state()));
  READYPORT_ASSERT(m.state() != S::kFree);  // the engine never closes a free slot
  if (m.state() == S::kDispatching) {
    m.close_requested = true;  // the dispatcher sees it when the handler returns
    return CloseAction::kNone;
  }
  // kRemoving or past it: closing already.
  if (m.state() != S::kLive) {
    return CloseAction::kAlreadyClosing;
  }
  if (m.close_requested) {
    return CloseAction::kNone;  // a result or a driver decides it
  }
  m.close_requested = true;
  return CloseAction::kSettle;
}

void slot_probe(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kProbe, m.state()));
  READYPORT_ASSERT(m.state() == S::kRemoving && m.remove_applied && !m.probe);
  m.probe = true;
  slot_transition(m, S::kQuarantined);
}

void slot_on_marker_posting(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kMarkerPosting, m.state()));
  slot_transition(m, S::kDraining);
}
void slot_on_marker_post_failed(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kMarkerPostFailed, m.state()));
  slot_transition(m, S::kQuarantined);
}
void slot_on_marker_seen(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kMarkerSeen, m.state()));
  slot_transition(m, S::kGrace);
}
bool slot_on_grace_over(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kGraceOver, m.state()));
  slot_transition(m, S::kClosing);
  const bool lost = m.probe;
  m.probe = false;  // a REMOVE after the drain would break FIFO (spec F1): asserted, not taken
  return lost;
}
void slot_on_disposed(SlotMachine& m) {
  const SlotAuditOnReturn audit(m);
  READYPORT_ASSERT(slot_event_accepts(SlotEvent::kDisposed, m.state()));
  slot_transition(m, S::kFree);
}

}  // namespace readyport::internal

namespace readyport {

const char* slot_event_name(std::uint32_t event) {
  constexpr const char* kNames[kSlotEventCount] = {
      "add",        "add_result",    "settle",         "undeferred",         "pause",
      "op_result",  "remove_failed", "packet",         "remove_packet",      "handler_returned",
      "close",      "probe",         "marker_posting", "marker_post_failed", "marker_seen",
      "grace_over", "disposed"};
  return event < kSlotEventCount ? kNames[event] : "unknown";
}

const char* slot_state_name_at(std::uint32_t state) {
  return internal::slot_state_name(static_cast<internal::SlotState>(state));
}

const char* engine_context_name(std::uint32_t context) {
  constexpr const char* kNames[kEngineContextCount] = {
      "running",          "stop_sweep",      "stop_drain", "probe_out",
      "deferred_waiting", "quarantine_open", "batch_full", "no_driver"};
  return context < kEngineContextCount ? kNames[context] : "unknown";
}

bool slot_event_allowed(std::uint32_t event, std::uint32_t state) {
  return event < kSlotEventCount && state < internal::kSlotStateCount &&
         internal::slot_event_accepts(static_cast<SlotEvent>(event),
                                      static_cast<internal::SlotState>(state));
}

}  // namespace readyport
