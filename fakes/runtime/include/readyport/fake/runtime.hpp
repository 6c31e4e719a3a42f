// readyport/fake/runtime.hpp: how the fake's threads run, wait and tell time.
//
// FakeOs models sockets and ports; a Runtime decides what "wait", "now" and "another thread" mean.
// Three runtimes exist:
// - InlineRuntime (fakes/, FakeOs's default): one thread. A wait that nothing can end advances the
//   virtual clock to its deadline at once; a wait with no deadline is a deadlock and asserts.
//   Starting threads fails with a Status.
// - FreeRuntime: real, unscheduled threads (for ThreadSanitizer). Waits block on real condition
//   variables; a timed wait that is not woken soon advances the virtual clock to its deadline.
// - SimScheduler: several logical threads, exactly one running at a time, switching only at
//   point() and park(), chosen by a seeded strategy. Replays from a seed.
//
// The contract between FakeOs and a Runtime:
// - FakeOs calls point(call) at the start of every seam call, holding no lock of its own.
// - FakeOs keeps its model under one state mutex. To wait, it calls park() with that mutex held
//   in `lock`; the runtime releases it while the thread is parked and holds it again on return.
//   So the state mutex is never held across a thread switch.
// - FakeOs calls wake(waiter) with the state mutex held, for a waiter that is parked or about to
//   park under that same mutex. wake() never blocks and never switches threads.
// - A Waiter lives on the parking thread's stack, from before park() until after it returns;
//   FakeOs keeps it in its own wait lists (for example a port's LIFO stack of waiters, spec F1).
// Lifetime: a Runtime outlives every FakeOs that uses it and every thread it started.
// Threading: all methods may be called from any thread the runtime knows (and, for InlineRuntime,
// from the one thread that uses it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

#include "readyport/fake/trace.hpp"
#include "readyport/os.hpp"
#include "readyport/status.hpp"

namespace readyport {

// A deadline that never comes (kInfinite waits).
inline constexpr std::uint64_t kDeadlineNone = ~std::uint64_t{0};

// One thread's wait. Owned by the parking thread (on its stack).
struct Waiter {
  bool woken = false;                         // set by Runtime::wake, under the state mutex
  std::uint64_t deadline_ns = kDeadlineNone;  // set by park(), for the runtime's bookkeeping
  std::uint32_t thread_id = 0;                // set by park(): the logical thread that waits
  void* runtime_data = nullptr;               // the runtime's own, set by park()
};

// The shared objects a step of a logical thread may touch: the terms of the dependence relation
// that SimStrategy::kExplore prunes by (docs/simulation.md#the-dependence-relation). A step is
// what a thread does from one scheduling point to the next. Two steps that touch no common object
// commute: run in either order from one state, they reach the same state. A step's code between
// its points may touch only its own memory and memory that a touched object guards (the engine's
// state under its mutex); a step that declares nothing (Runtime::touch never called in it) is
// taken to touch everything.
enum class SimObject : std::uint8_t {
  kNothing = 0,    // declared: the step touches nothing shared (the last error, the clock's read)
  kFakeState = 1,  // everything under a FakeOs's state mutex: ports, sockets, handles, the
                   // early-wake draws (one object: every call of the fake reaches the one port of
                   // a small world, so a finer split would prune nothing there)
  kMutex = 2,      // one FakeMutex (id: its creation number): its holder and its waiters
  kThread = 3,     // one logical thread's end (id: the thread): what join() waits for
  kThreadIds = 4,  // the next logical thread id (thread_start)
  kClock = 5,      // the virtual clock, where every step moves it (SimOptions::tick_ns > 0)
  kAnything = 6,   // not known: depends on every step that touches something (a fault's choice)
};

enum class ParkEnd : std::uint8_t {
  kWoken,     // wake(waiter) was called
  kDeadline,  // the virtual clock reached the deadline first
};

class Runtime {
 public:
  virtual ~Runtime() = default;

  // The virtual clock, in nanoseconds. Never goes backwards.
  virtual std::uint64_t now_ns() const = 0;

  // A scheduling point. `call` names the seam call (a string literal, it appears in traces).
  // In simulation, other threads may run before this returns. Must be called without the state
  // mutex held.
  virtual void point(const char* call) = 0;

  // Parks the calling thread until wake(waiter) or until now_ns() >= deadline_ns (kDeadlineNone:
  // no deadline). `lock` holds the FakeOs state mutex on entry and on return; it is released in
  // between. If waiter.woken is already true, returns kWoken at once. `call` names the seam call
  // (a string literal, as for point()).
  virtual ParkEnd park(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                       std::uint64_t deadline_ns, const char* call) = 0;

  // Marks `waiter` woken and makes its thread runnable. Called with the state mutex held.
  // Waking a waiter twice is harmless.
  virtual void wake(Waiter& waiter) = 0;

  // Declares that the calling logical thread's step touches `object` `id` (SimObject); call it
  // right after the step's point, and again after park() returns (a resumed thread runs a new
  // step). Only SimScheduler under kExplore records it; the others ignore it. Never a scheduling
  // point.
  virtual void touch(SimObject object, std::uint64_t id) {
    (void)object;
    (void)id;
  }

  // Starts a thread running `body` (Os::thread_start forwards here). Fails with a Status where
  // the runtime cannot run threads (InlineRuntime).
  virtual Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                                       std::function<void()> body) = 0;

  // The calling thread's logical id: 0 for a thread the runtime did not start (a test's main
  // thread), then 1, 2, ... in start order. Deterministic in simulation.
  virtual std::uint32_t thread_current() const = 0;

  // Whether the runtime runs one of its threads at a time, each handing over to the next through
  // the runtime's own synchronisation, and only at its scheduling points (SimScheduler): then
  // what its threads share changes hands only at those points, and needs no atomic
  // read-modify-write between two of them. Fixed for the runtime's life. Not FreeRuntime (real
  // concurrency) nor InlineRuntime (which does not stop other OS threads from calling in).
  virtual bool serializes_threads() const { return false; }

  // now_ns() and thread_current() in one call, for a trace line's stamp (every line asks).
  virtual TraceStamp trace_stamp() const { return TraceStamp{now_ns(), thread_current()}; }
};

// Trace lines stamped with a Runtime's virtual clock and logical thread. The runtime must outlive
// it.
class RuntimeTraceContext final : public TraceContext {
 public:
  explicit RuntimeTraceContext(const Runtime& runtime) : runtime_(runtime) {}
  std::uint64_t trace_time_ns() const override { return runtime_.now_ns(); }
  std::uint32_t trace_thread() const override { return runtime_.thread_current(); }
  TraceStamp trace_stamp() const override { return runtime_.trace_stamp(); }

 private:
  const Runtime& runtime_;
};

}  // namespace readyport
