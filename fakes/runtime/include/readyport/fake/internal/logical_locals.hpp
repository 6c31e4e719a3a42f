// readyport/fake/internal/logical_locals.hpp: the testing kit's internals. State that Windows keeps
// per thread (the last error, FaultyOs's injected last error), kept per *logical* thread.
//
// Why: SimScheduler's fiber mechanism runs every logical thread of a run on one OS thread, so a
// plain thread_local would be shared by all of them. Each OS thread has its own LogicalLocals
// (thread_local) and a pointer to the active one; a scheduler that multiplexes logical threads on
// one OS thread points it at the running logical thread's own slot at every switch
// (logical_locals_activate), and back when it returns to the OS thread's own context. With real
// threads (FreeRuntime, InlineRuntime, SimScheduler's thread mechanism) nothing is activated and
// each OS thread uses its own slot, as before.
//
// Not a public API. Ownership and lifetime: each OS thread owns its slot (thread_local); a
// scheduler owns the slots of its logical threads and activates one only while it runs.
// Threading: any thread; each OS thread sees its active slot. No globals. Errors: none.
#pragma once

#include <cstdint>

namespace readyport::fake_internal {

struct LogicalLocals {
  std::uint32_t last_error = 0;          // FakeOs's GetLastError value (fake_last_error.hpp)
  const void* injected_owner = nullptr;  // FaultyOs that injected `injected_code`, or null
  std::uint32_t injected_code = 0;       // FaultyOs's injected last error
  void* pending_begins = nullptr;  // the running call's EffectBegins (effect_point.hpp), or null
  // Spec F7: the port this thread is associated with (its last dequeue call's; 0: none) and the
  // FakeOs it belongs to (FakeOs::instance(): port values repeat across instances, and an OS
  // thread outlives one), and whether it counts among that port's running threads (released,
  // not waiting or blocked) or is blocked in a seam call it will run again from.
  std::uint64_t port_os = 0;
  std::uintptr_t port_value = 0;
  bool port_running = false;
  bool port_blocked = false;
};

// The calling logical thread's slot: the active one on this OS thread, else the OS thread's own.
LogicalLocals& logical_locals();

// Makes `slot` the calling OS thread's active slot (null: its own again); returns the previous
// one, to restore. `slot` must outlive its activation. For schedulers only.
LogicalLocals* logical_locals_activate(LogicalLocals* slot);

}  // namespace readyport::fake_internal
