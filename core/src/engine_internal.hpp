// The engine's private types, shared by its source files (engine.cpp, engine_drivers.cpp,
// engine_registrations.cpp, engine_quarantine.cpp). Not installed.
// Ownership: the Engine owns its Drivers and their buffers (allocated by its constructor).
// Threading: a Driver's claim, epoch, pending registrations and dispose list are used under the
// engine's lock; its entries, sent registrations, dispatches and tasks only by the thread that
// claimed it. Errors: broken invariants assert.
#pragma once

#include <cstdint>
#include <vector>

#include "readyport/engine.hpp"
#include "readyport/internal/engine_tuning.hpp"
#include "readyport/internal/slot_machine.hpp"
#include "readyport/internal/slot_table.hpp"

namespace readyport::internal {

struct RegRef {
  std::uint32_t slot = kSlotNone;
  std::uint32_t generation = 0;
};

// Where settle() puts the registration it decides: a driver's next call or a direct call.
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

struct RegBuffer {
  std::vector<SockNotifyRegistration> regs;
  std::vector<RegRef> refs;
  std::uint32_t count = 0;

  void allocate(std::uint32_t capacity) {
    regs.resize(capacity);
    refs.resize(capacity);
  }
  RegSink sink() {
    return RegSink{regs.data(), refs.data(), static_cast<std::uint32_t>(regs.size()), count};
  }
  void commit(const RegSink& sink) { count = sink.count; }
};

struct Dispatch {
  std::uint32_t slot = kSlotNone;
  ConnId id;
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
  RegBuffer pending;  // decided, for the next call
  RegBuffer sent;     // in the current call
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
  bool exit_seen = false;
};

// The trigger bits of a mode (SOCK_NOTIFY_TRIGGER_*).
std::uint8_t trigger_of(Mode mode);

}  // namespace readyport::internal

namespace readyport {
// The engine's sources name these unqualified.
using internal::CloseAction;
using internal::Dispatch;
using internal::Driver;
using internal::EngineLock;
using internal::PacketAction;
using internal::RegRef;
using internal::RegSink;
using internal::ResultAction;
using internal::ReturnAction;
using internal::SettleAction;
using internal::Slot;
using internal::SlotState;
using internal::kSlotNone;
using internal::trigger_of;
}  // namespace readyport
