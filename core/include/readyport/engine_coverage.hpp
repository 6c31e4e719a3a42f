// readyport/engine_coverage.hpp: where a connection's events met the engine as a whole, for
// coverage of states in context (docs/coverage.md).
//
// Every event the engine's slot state machine handles (an add, a packet, a handler's return, a
// close, a quarantine's marker, ...) happens to a slot in one state while the engine is in one
// phase (running, stop() sweeping every connection, stop() draining the port after its sweep)
// with some conditions of its own true (a probe in flight, a deferred slot waiting, ...). The
// engine reports each such meeting to EngineObserver::on_slot_event as a SlotEventPoint; a test
// world counts them per tuple (state, event, context) and a run reports how many of the tuples
// the code allows it reached. The events' states the code allows are the slot machine's own
// contract: each event asserts on entry that its slot is in one of them (slot_event_allowed()
// reads the same table), so the set of tuples cannot drift from the code.
//
//   void on_slot_event(ConnId id, SlotEventPoint point) override {
//     for (std::uint32_t c = 0; c < kEngineContextCount; ++c)
//       if (point.contexts & (1u << c)) ++counts[point.event][point.state][c];
//   }
//
// Ownership: values and static names. Threading: none (pure functions). Errors: an index out of
// range gets the name "unknown" and is never allowed.
#pragma once

#include <cstdint>

namespace readyport {

// The slot machine's events (readyport/internal/slot_machine.hpp), one per entry point; a
// packet is split by whether it carries REMOVE.
enum class SlotEvent : std::uint8_t {
  kAdd = 0,           // add() took a free slot
  kAddResult,         // add()'s ENABLE came back (applied or refused)
  kSettle,            // a live slot's next registration is decided
  kUndeferred,        // a driver took the slot off the deferred list
  kPause,             // a persistent level slot dispatched elsewhere (a DISABLE is weighed)
  kOpResult,          // an ENABLE or DISABLE came back
  kRemoveFailed,      // the port refused the REMOVE (spec B6)
  kPacket,            // a packet (or notify()) without REMOVE for the current generation
  kRemovePacket,      // a packet with REMOVE for the current generation
  kHandlerReturned,   // on_events returned
  kClose,             // close(), or stop()'s sweep, asked the slot to close
  kProbe,             // a probe asks whether an applied REMOVE was lost
  kMarkerPosting,     // a quarantine's drain marker is about to be posted
  kMarkerPostFailed,  // its post failed
  kMarkerSeen,        // the marker was dequeued
  kGraceOver,         // every driver passed a quiescent point after the marker
  kDisposed,          // the socket was closed and on_closed returned
};
inline constexpr std::uint32_t kSlotEventCount = 17;

// The slot states (SlotState in readyport/internal/slot_machine.hpp), by index: free, live,
// dispatching, removing, quarantined, draining, grace, closing.
inline constexpr std::uint32_t kSlotStatesCovered = 8;

// Where the engine is. The first kEnginePhaseCount are its phase (exactly one holds); the rest
// are conditions (any number hold).
enum class EngineContext : std::uint8_t {
  kRunning = 0,      // started, stop() not called
  kStopSweep,        // stop() is asking every live connection to close
  kStopDrain,        // stop() swept; it drives the port until every slot is free
  kProbeOut,         // a probe's marker asks after a REMOVE (engine.md, "A lost REMOVE")
  kDeferredWaiting,  // a slot waits on the deferred list for room in a driver's next call
  kQuarantineOpen,   // a slot is quarantined, draining or in its grace period (spec E4)
  kBatchFull,        // a driver is handling a batch that filled its whole buffer
  kNoDriver,         // no thread holds a driver: nobody dequeues until one comes
};
inline constexpr std::uint32_t kEngineContextCount = 8;
inline constexpr std::uint32_t kEnginePhaseCount = 3;

// One event as the engine saw it: the slot's state before it, and the contexts (bit i set:
// EngineContext i holds; exactly one phase bit).
struct SlotEventPoint {
  SlotEvent event = SlotEvent::kAdd;
  std::uint8_t state = 0;
  std::uint16_t contexts = 0;
};

// Names: "packet", "live", "stop_drain"; "unknown" out of range. Never null.
const char* slot_event_name(std::uint32_t event);
const char* slot_state_name_at(std::uint32_t state);
const char* engine_context_name(std::uint32_t context);

// Whether the slot machine accepts `event` in `state` (the states its entry assertion allows).
bool slot_event_allowed(std::uint32_t event, std::uint32_t state);

}  // namespace readyport
