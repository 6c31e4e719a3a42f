// readyport/internal/slot_machine.hpp: one connection's state machine, as pure functions.
//
// Each function takes a slot's machine and one event, changes the machine and returns the action
// the engine must take (issue an ENABLE, DISABLE or REMOVE, dispatch, drop, close the socket,
// free). They make no Os call, take no lock and allocate nothing; the engine calls them under its
// lock and does the OS calls. Every state change goes through slot_transition(), which asserts
// the edge against the table kSlotEdges (slot_machine_hot.hpp):
//   kFree        -> kLive         add() took the slot and issues its ENABLE
//   kLive        -> kFree         add()'s ENABLE failed (no packet can exist for the key)
//   kLive        -> kDispatching  a packet arrived; one driver runs the handler
//   kDispatching -> kDispatching  packets arrived meanwhile: the same driver runs it again
//   kDispatching -> kLive         the handler returned; a re-arm is decided (settle)
//   kLive        -> kRemoving     REMOVE issued (close requested, no registration in flight)
//   kRemoving    -> kClosing      the REMOVE packet was dequeued (spec E1, E3)
//   kRemoving    -> kQuarantined  the REMOVE failed (spec B6, E4): socket open, no marker yet;
//                                 or a probe asks whether an applied REMOVE was lost (the socket
//                                 stays open until the drain ends)
//   kQuarantined -> kDraining     socket closed (spec E2), drain marker being posted
//   kDraining    -> kQuarantined  the marker's post failed: tried again later
//   kDraining    -> kGrace        the marker was dequeued; drivers must pass a quiescent point
//   kGrace       -> kClosing      every driver did: no packet for the key can remain
//   kClosing     -> kFree         socket closed, on_closed returned (disposal, after the batch)
// Derived, not stored: the drain marker is in the port iff kDraining; the socket was closed
// early (quarantine) iff the slot's socket is kInvalidSocket. The remaining flags are not
// states: op_in_flight, paused and rearm_needed describe the registration beside the lifetime
// state (kLive or kDispatching), close_requested is the wish that leads kLive to kRemoving, and
// deferred is membership of the engine's deferred list; remove_applied and probe follow a
// REMOVE's result and its probe. Every event asserts on return what its state allows
// (slot_audit_ok), and only slot_transition() writes the state.
// Ownership: a SlotMachine is part of its Slot (slot_table.hpp). Threading: none (the engine's
// lock). Errors: a forbidden edge or an event the state cannot take asserts.
#pragma once

#include <cstdint>

#include "readyport/engine.hpp"
#include "readyport/engine_coverage.hpp"

namespace readyport::internal {

enum class SlotState : std::uint8_t {
  kFree = 0,
  kLive,
  kDispatching,
  kRemoving,
  kQuarantined,
  kDraining,
  kGrace,
  kClosing,
};
inline constexpr std::uint32_t kSlotStateCount = 8;
static_assert(kSlotStateCount == kSlotStatesCovered);

const char* slot_state_name(SlotState state);

inline constexpr std::uint16_t kDriverNone = 0xFFFF;
inline constexpr std::uint32_t kEventsForHandler =
    kSockNotifyEventIn | kSockNotifyEventOut | kSockNotifyEventHangup | kSockNotifyEventErr;

inline bool is_oneshot(Mode mode);
struct SlotMachine;
inline void slot_transition(SlotMachine& m, SlotState to);

struct SlotMachine {
  // Written only by slot_transition(), so every change is an edge of the table.
  SlotState state() const { return state_; }
  Mode mode = Mode::kOneshotLevel;
  bool op_in_flight = false;     // an ENABLE/DISABLE was decided; its result is not processed
  bool paused = false;           // a DISABLE was decided while another driver dispatched it
  bool rearm_needed = false;     // an ENABLE is wanted once op_in_flight clears
  bool close_requested = false;  // close(), kInterestClose, stop() or a failed registration
  bool deferred = false;         // on the engine's deferred list (a driver will settle it)
  bool remove_applied = false;   // kRemoving: its REMOVE's call returned it applied (A8)
  bool probe = false;            // a drain marker asks whether that REMOVE still comes
  std::uint16_t dispatcher = kDriverNone;     // the driver running the handler (kDispatching)
  Interest interest = kInterestNone;          // wanted: from add() or the last handler return
  Interest interest_applied = kInterestNone;  // the filter of the last ENABLE issued
  std::uint32_t pending_events = 0;  // arrived while dispatching; the dispatcher runs again

 private:
  friend void slot_transition(SlotMachine& m, SlotState to);
  SlotState state_ = SlotState::kFree;
};

// Whether `event` may happen to a slot in `state` (the table kSlotEventStates): every event
// asserts it on entry.
inline bool slot_event_accepts(SlotEvent event, SlotState state);

// The edge table and the one function that changes a state (asserts a forbidden edge).
inline bool slot_edge_allowed(SlotState from, SlotState to);

// The flags each state allows (asserted at the end of every event, slot_audit_ok's comment).
inline bool slot_audit_ok(const SlotMachine& m);
inline void slot_audit(const SlotMachine& m);
// Asserts each condition of slot_audit_ok() on its own, so that the failure names it.
[[noreturn]] void slot_audit_fail(const SlotMachine& m);

// add() took a free slot: kFree -> kLive with its first ENABLE in flight.
void slot_on_add(SlotMachine& m, Mode mode, Interest interest);
// add()'s ENABLE came back. Refused: kLive -> kFree (the engine frees the slot; no packet can
// carry the key) and kNone. Applied: kSettle if the slot is still kLive, kNone if a packet made
// it kDispatching meanwhile (spec A7; its dispatcher settles it).
enum class ResultAction : std::uint8_t { kNone, kSettle };
ResultAction slot_on_add_result(SlotMachine& m, bool refused);

// What a live slot's registration needs next (settle). kDefer: the sink is full, the slot goes
// on the deferred list; kEnable: issue an ENABLE of `interest`; kRemove: kLive -> kRemoving,
// issue the REMOVE (once, spec B7).
enum class SettleAction : std::uint8_t { kNone, kDefer, kEnable, kRemove };
inline SettleAction slot_settle(SlotMachine& m, bool sink_full);
// A driver took the slot off the deferred list: true when it is to be settled (kLive); false
// when a packet made it kDispatching meanwhile (its dispatcher settles it on return).
bool slot_on_undeferred(SlotMachine& m);
// A persistent level slot dispatched elsewhere: true when a DISABLE of interest_applied is to be
// issued (only with no registration in flight and room in the sink; it only saves work).
bool slot_pause(SlotMachine& m, bool sink_full);

// The result of an ENABLE or DISABLE came back (failed: spec A8, the connection is closed).
// kSettle: the slot is kLive, not deferred, and a REMOVE or an ENABLE is wanted; else kNone.
inline ResultAction slot_on_op_result(SlotMachine& m, bool failed);
// A REMOVE failed (spec B6): kRemoving -> kQuarantined.
void slot_on_remove_failed(SlotMachine& m);

// A packet (or notify()) for the slot's current generation, dequeued by driver `driver`.
enum class PacketAction : std::uint8_t {
  kDispatch,       // kLive -> kDispatching: run the handler with the events
  kMergeOwn,       // merged into this driver's running dispatch
  kMergeForeign,   // merged into another driver's dispatch
  kMergePause,     // as kMergeForeign, and a DISABLE may stop the re-queued packets (spec C4)
  kRemoveSeen,     // kRemoving -> kClosing: the last packet for the key (spec E3)
  kProbeAnswered,  // the REMOVE of a probed slot: it came after all; the drain goes on
  kDropClosing,    // the connection is closing: dropped (spec B5, D4)
  kDropUnwanted,   // persistent: no bit of the interest and no ERR
};
inline PacketAction slot_on_packet(SlotMachine& m, std::uint32_t mask, std::uint16_t driver);
// slot_on_packet()'s rarer cases (out of line): a slot that is closing or past kLive.
PacketAction slot_on_packet_closing(SlotMachine& m, std::uint32_t mask, std::uint16_t driver);

// The handler returned `result`. kRunAgain: packets were merged meanwhile, run it again with
// *events_out (kDispatching -> kDispatching); kSettle: kDispatching -> kLive, settle it.
enum class ReturnAction : std::uint8_t { kRunAgain, kSettle };
inline ReturnAction slot_on_handler_returned(SlotMachine& m, Interest result,
                                             std::uint32_t* events_out);

// close() or stop(). kSettle: the REMOVE is to be decided now; kNone: nothing to do now (the
// dispatcher or a registration result will decide it); kAlreadyClosing: the slot is past kLive.
enum class CloseAction : std::uint8_t { kNone, kSettle, kAlreadyClosing };
CloseAction slot_on_close(SlotMachine& m);

// A lost REMOVE. A socket closed behind the engine's back after its REMOVE was applied may take
// the REMOVE packet with it (spec psn.md, "closesocket after REMOVE, before its packet": Windows
// does not say). The probe asks the port: kRemoving -> kQuarantined, and the quarantine's marker
// and grace period follow with the socket left open (spec E1: closed after the REMOVE or the
// drain). A REMOVE queued before the marker is dequeued before it (FIFO, spec F1) and seen by the
// grace period's end; slot_on_grace_over() reports it lost when it never came. kRemoving with
// remove_applied only.
void slot_probe(SlotMachine& m);

// The quarantine (spec E4): marker about to be posted, its post failed, marker dequeued, grace
// period over.
void slot_on_marker_posting(SlotMachine& m);
void slot_on_marker_post_failed(SlotMachine& m);
void slot_on_marker_seen(SlotMachine& m);
// kGrace -> kClosing; true when a probed REMOVE never came (lost).
bool slot_on_grace_over(SlotMachine& m);
// Socket closed and on_closed returned: kClosing -> kFree.
void slot_on_disposed(SlotMachine& m);

}  // namespace readyport::internal

// The events above declared inline: they run once per notification in the engine's batch loop.
#include "readyport/internal/slot_machine_hot.hpp"
