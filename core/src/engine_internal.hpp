// The engine's private types, shared by its source files (engine.cpp, engine_drivers.cpp,
// engine_registrations.cpp, engine_quarantine.cpp). Not installed.
// Ownership: the Engine owns its Drivers and their buffers (allocated by its constructor).
// Threading: a Driver's claim, epoch, pending registrations and dispose list are used under the
// engine's lock (the dispose list only by its own thread, which may test it without the lock);
// its entries, sent registrations, dispatches and tasks only by the thread that claimed it.
// Errors: broken invariants assert.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/engine_boundary.hpp"
#include "readyport/internal/engine_tuning.hpp"
#include "readyport/internal/force_inline.hpp"
#include "readyport/internal/slot_machine.hpp"
#include "readyport/internal/slot_table.hpp"

namespace readyport::internal {

struct RegRef {
  std::uint32_t slot = kSlotNone;
  std::uint32_t generation = 0;
};

// Where settle() puts the registrations it decides: a driver's buffer or a direct call's.
struct RegSink {
  SockNotifyRegistration* regs = nullptr;
  RegRef* refs = nullptr;
  std::uint32_t capacity = 0;
  std::uint32_t count = 0;

  bool full() const { return count >= capacity; }
  void append(const SockNotifyRegistration& reg, RegRef ref) {
    READYPORT_ASSERT(!full());
    regs[count] = reg;
    refs[count] = ref;
    ++count;
  }
};

// A sink over storage allocated once. Swapping the RegSink parts of two RegBuffers swaps their
// registrations (each then fills the other's storage), allocating nothing.
struct RegBuffer : RegSink {
  std::vector<SockNotifyRegistration> reg_storage;
  std::vector<RegRef> ref_storage;

  void allocate(std::uint32_t capacity_max) {
    reg_storage.resize(capacity_max);
    ref_storage.resize(capacity_max);
    regs = reg_storage.data();
    refs = ref_storage.data();
    capacity = capacity_max;
  }
};

struct Dispatch {
  ConnId id;  // id.slot: the slot's index
  Socket socket = kInvalidSocket;
  Handler* handler = nullptr;
  std::uint32_t events = 0;
  Interest result = kInterestNone;
};

// A thread that dequeues: its batch buffers, allocated once by the engine's constructor.
struct Driver {
  std::uint16_t index = 0;
  bool claimed = false;
  // EngineOs::thread_id() of the thread that claimed it (valid while claimed): lets close() from a
  // handler put its REMOVE into this driver's next call, and lets stop() refuse to run there.
  std::uint64_t thread = 0;
  std::uint64_t call_epoch = 0;  // engine epoch when its current call began; 0: quiescent
  std::uint32_t failures_in_row = 0;
  std::uint32_t idle_calls = 0;  // port calls in a row that dequeued nothing (a lost REMOVE)
  RegBuffer pending;             // decided, for the next call
  RegBuffer sent;                // in the current call
  std::vector<OverlappedEntry> entries;
  std::vector<Dispatch> dispatches;
  std::uint32_t dispatch_count = 0;
  std::vector<Task*> tasks;
  std::uint32_t task_count = 0;
  std::uint32_t dispose_head = kSlotNone;  // FIFO: closed in the order the REMOVEs were seen
  std::uint32_t dispose_tail = kSlotNone;
  std::uint32_t wakes_to_post = 0;
  std::uint32_t wasted = 0;       // this batch's entries that were stale, dropped or merged
  std::uint32_t wasted_runs = 0;  // batches in a row made only of those (spin guard)
  bool spin_sleep_due = false;    // enough of them: sleep after this batch
  bool exit_seen = false;
  bool batch_full = false;  // its last call dequeued batch_count entries (until its next call)
};

// The trigger bits of each mode (SOCK_NOTIFY_TRIGGER_*), indexed by Mode.
inline constexpr std::uint8_t kModeTriggers[] = {
    kSockNotifyTriggerOneshot | kSockNotifyTriggerLevel,
    kSockNotifyTriggerPersistent | kSockNotifyTriggerLevel,
    kSockNotifyTriggerPersistent | kSockNotifyTriggerEdge,
    kSockNotifyTriggerOneshot | kSockNotifyTriggerEdge};
inline std::uint8_t trigger_of(Mode mode) {  // inline: once per registration
  const auto i = static_cast<std::size_t>(mode);
  READYPORT_ASSERT(i < sizeof(kModeTriggers));
  return kModeTriggers[i];
}

// Appends slot `index`'s ENABLE, DISABLE or REMOVE to `sink` (inline: once per re-arm). ENABLE
// and DISABLE carry the filter the machine applied (slot_settle, slot_on_add) and the mode's
// trigger; REMOVE carries neither.
READYPORT_FORCE_INLINE void append_registration(const SlotTable& slots, RegSink& sink,
                                                std::uint32_t index, std::uint8_t operation) {
  const Slot& slot = slots.at(index);
  const std::uintptr_t key = slots.key_of(index);
  const bool remove = operation == kSockNotifyOpRemove;
  const Interest filter = remove ? kInterestNone : slot.interest_applied;
  const std::uint8_t trigger = remove ? 0 : trigger_of(slot.mode);
  sink.append(SockNotifyRegistration{slot.socket, key, filter, operation, trigger, 0},
              RegRef{index, slot.generation});
}

// An OS failure as a Status: `what` followed by the error's name.
Status os_failure(const std::string& what, std::uint32_t error);

// A public call's body `body` (returning R: Status or a Result), reported to `boundary` before and
// after when there is one (engine_boundary.hpp).
inline ConnId added_of(const Result<ConnId>& result) {
  return result.ok() ? result.value() : ConnId{};
}
template <typename T>
ConnId added_of(const T& /*result*/) {
  return ConnId{};
}
inline const Status& status_of(const Status& status) { return status; }
template <typename T>
Status status_of(const Result<T>& result) {
  return result.status();
}
template <typename R, typename Body>
R across_boundary(EngineBoundary* boundary, const EngineCrossing& call, Body body) {
  if (boundary == nullptr) {
    return body();
  }
  boundary->call_begin(call);
  R result = body();
  boundary->call_end(call, status_of(result), added_of(result));
  return result;
}

}  // namespace readyport::internal

namespace readyport {
// The engine's sources name the internal types and functions unqualified.
using namespace internal;  // a private header, included by the engine's sources only

// Reports slot `index`'s event, its state and the engine's contexts to the observer (under the
// lock; engine_coverage.hpp).
READYPORT_FORCE_INLINE void Engine::note(SlotEvent event, std::uint32_t index) {
  if (options_.observer != nullptr) {
    const Slot& slot = slots_->at(index);
    options_.observer->on_slot_event(
        ConnId{index, slot.generation},
        SlotEventPoint{event, static_cast<std::uint8_t>(slot.state()), contexts_locked()});
  }
}

// Turns slot `index`'s machine decision into a registration in `sink` (under the lock). kDefer:
// the sink has no room; a driver takes the slot before its next call (bounded buffers). kEnable:
// the whole registration, all directions (spec C2). kRemove (kLive -> kRemoving): REMOVE is the
// port's last operation on this key (spec B7).
READYPORT_FORCE_INLINE void Engine::settle(std::uint32_t index, RegSink& sink) {
  note(SlotEvent::kSettle, index);
  const SettleAction action = internal::slot_settle(slots_->at(index), sink.full());
  if (action == SettleAction::kDefer) {
    slots_->list_push(deferred_head_, index);
  }
  if (action == SettleAction::kEnable) {
    append_registration(*slots_, sink, index, kSockNotifyOpEnable);
  }
  if (action == SettleAction::kRemove) {
    append_registration(*slots_, sink, index, kSockNotifyOpRemove);
  }
}

}  // namespace readyport
