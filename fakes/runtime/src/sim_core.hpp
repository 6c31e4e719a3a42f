// sim_core.hpp: SimScheduler internals. The state shared by the scheduler, its logical threads and
// its strategies (sim_strategy.cpp). Not a public API.
//
// Ownership and lifetime: SimScheduler and its logical threads share the SimCore (shared_ptr), so
// it outlives every thread, abandoned ones included; the core owns its SimThreads. Errors: broken
// contracts assert. Locking: SimCore::mutex guards every field of the core and of each SimThread,
// except the immutable id and name, `body` (only its own thread touches it once started) and the
// fiber fields (touched only by the OS thread running the scheduler, between switches). Inside a
// kFibers run the mutex is marked held, not taken (sim_core_mutex.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "readyport/fake/internal/logical_locals.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/sim_scheduler.hpp"
#include "readyport/fake/trace_event.hpp"
#include "sim_core_mutex.hpp"
#include "sim_fiber.hpp"

namespace readyport::internal {

enum class SimThreadState : std::uint8_t {
  kRunnable,  // may be picked; the running thread is runnable too
  kParked,    // in park() or join(): waits for wake(), its deadline or its join target's end
  kFinished,  // returned from its body
};

struct SimCore;

struct SimThread {
  std::uint32_t id = 0;                              // immutable: 1, 2, ... in start order
  std::string name;                                  // immutable
  SimCore* core = nullptr;                           // immutable: the owner
  SimThreadState state = SimThreadState::kRunnable;  // changed through set_thread_state() only
  const char* last_call = "start";                   // the last scheduling point's call name
  Waiter* waiter = nullptr;                          // while parked in park()
  std::uint64_t deadline_ns = kDeadlineNone;         // while parked
  std::uint32_t join_target = 0;                     // while parked in join(): the awaited thread
  // kExplore: its next step is declared to touch nothing until it says otherwise: a new thread's
  // first (its code before its first point reads only what its creation ordered before it).
  bool first_step = true;
  // Its wait (kFair; stats): while runnable, it has waited core.wait_clock - wait_since
  // consecutive steps without being picked (sim_wait_steps()).
  std::uint64_t wait_since = 0;
  // Stalled (SimOptions::stalls) while core.stats.steps < stalled_until: not picked while another
  // thread can run.
  std::uint64_t stalled_until = 0;
  std::function<void()> body;  // only its own thread touches it once started
  // kThreads: signalled when `running` becomes this id; the real thread (joined by Thread::join,
  // run() or ~SimScheduler).
  std::condition_variable_any turn;
  std::thread thread;
  // kFibers: the context and the thread's own last error slots (logical_locals.hpp).
  SimFiber fiber;
  fake_internal::LogicalLocals locals;
};

struct SimCore {
  explicit SimCore(const SimOptions& options_in)
      : options(options_in), rng(SeedStreams(options_in.seed).stream(SeedStream::kSchedule)) {}

  const SimOptions options;
  Rng rng;                     // the schedule stream; guarded by mutex
  mutable SimCoreMutex mutex;  // sim_core_mutex.hpp: not taken inside a kFibers run
  std::vector<std::unique_ptr<SimThread>> threads;  // index id - 1; at most threads_max
  std::vector<std::uint32_t> priorities;            // kPct: thread ids, highest priority first
  std::vector<std::uint64_t> change_points;         // kPct: step numbers, sorted
  std::size_t change_next = 0;                      // kPct: the next change point's index
  std::vector<std::uint64_t> delay_points;          // kDelayBounded: step numbers, sorted
  std::size_t delay_next = 0;                       // kDelayBounded: the next delay's index
  std::uint32_t delays_now = 0;                     // kDelayBounded: delays at this step
  std::uint32_t running = 0;                        // the thread allowed to run; 0: none
  SimFootprint footprint = 0;                       // kExplore: the running step's, so far
  bool footprint_declared = false;                  // kExplore: touch() was called in it
  std::atomic<std::uint64_t> now_ns{0};             // written under mutex, read anywhere
  SimOutcome outcome = SimOutcome::kNotRun;
  std::atomic<bool> cut_requested{false};  // SimScheduler::cut(): any thread, read by step()
  Status status;                           // run()'s result once outcome is final
  std::condition_variable_any done;        // kThreads: signalled when outcome leaves kRunning
  SimStats stats;  // wait_steps_max: of the waits that ended (SimScheduler::stats() adds the rest)
  // Steps taken, as the runnable threads' waits count them: each step's pick advances it by one
  // and starts the picked thread's wait again, so the others' waits grow without a loop.
  std::uint64_t wait_clock = 0;
  // The stalls (options.stalls, sorted by step) and the next one's index.
  std::vector<SimStall> stalls;
  std::size_t stall_next = 0;
  // Set while a pick skips the stalled threads: `runnable` then lists only the others, and kPct
  // skips a thread whose stalled_until is still ahead.
  bool skip_stalled = false;
  // The runnable threads in id order, as step() last collected them; collected again only when
  // `runnable_stale` (a thread's state changed or a thread was added since: set_thread_state()).
  std::vector<SimThread*> runnable;
  std::vector<std::uint64_t> runnable_ids;  // their ids, for the trace's sched.pick lines
  bool runnable_stale = true;
  std::string line;                // scratch for the rare lines recorded as text
  TraceEvent event;                // scratch for the other lines (trace_event.hpp)
  std::vector<std::uint64_t> ids;  // scratch for an event's list of threads
  // The lengths of the scheduling points' call names (literals, as SimThread::last_call), kept
  // by address (direct-mapped): a sched.pick line's `at` is not measured again at every step.
  // Only a memo of strlen: nothing depends on the addresses.
  struct CallName {
    const char* text = nullptr;
    std::size_t size = 0;
  };
  std::array<CallName, 32> call_names{};
  // kFibers: the context of the OS thread inside run(), and what it had active before run().
  SimFiber host;
  const SimCore* host_tls_core = nullptr;
  SimThread* host_tls_thread = nullptr;
  fake_internal::LogicalLocals* host_locals = nullptr;
};

// Every change of a thread's state goes through here (mutex held): step() collects the runnable
// threads again only after one.
inline void set_thread_state(SimCore& core, SimThread& thread, SimThreadState state) {
  if (state == SimThreadState::kRunnable && thread.state != SimThreadState::kRunnable) {
    thread.wait_since = core.wait_clock;  // a wait starts
  } else if (state != SimThreadState::kRunnable && thread.state == SimThreadState::kRunnable) {
    // A wait ends (a thread leaves the runnable ones only by its own call: picked, so 0).
    core.stats.wait_steps_max =
        std::max(core.stats.wait_steps_max, core.wait_clock - thread.wait_since);
  }
  thread.state = state;
  core.runnable_stale = true;
}

// How many consecutive steps runnable `thread` has waited without being picked.
inline std::uint64_t sim_wait_steps(const SimCore& core, const SimThread& thread) {
  READYPORT_ASSERT(thread.state == SimThreadState::kRunnable);
  return core.wait_clock - thread.wait_since;
}

// ---- Strategies (sim_strategy.cpp); all with the mutex held ------------------------------------

// Draws the strategy's per-run parameters (PCT change points, delay steps). From the constructor.
void strategy_init(SimCore& core);
// A new thread `thread` was added to core.threads (kPct: its random priority).
void strategy_thread_added(SimCore& core, const SimThread& thread);
// At a step where strategy_step_due(), before the runnable threads are collected (kPct's change
// points, kDelayBounded's delays due at this step).
void strategy_step(SimCore& core, SimThread& self);
// Whether strategy_step() has work at this step: kDelayBounded at every step (its delays), kPct at
// its next change point, the other strategies never. Inline: asked at every step.
inline bool strategy_step_due(const SimCore& core) {
  switch (core.options.strategy) {
    case SimStrategy::kDelayBounded:
      return true;
    case SimStrategy::kPct:
      return core.change_next < core.change_points.size() &&
             core.change_points[core.change_next] == core.stats.steps;
    case SimStrategy::kRandom:
    case SimStrategy::kRoundRobin:
    case SimStrategy::kFair:
    case SimStrategy::kExplore:
      return false;
  }
  return true;  // a strategy added later: let strategy_step() decide
}
// The strategy's choice among core.runnable (two threads or more, id order).
SimThread* strategy_pick(SimCore& core, const SimThread& self);
// The strategy's part of parameters(): " depth=.. estimate=.. change_points=[..]" and so on.
void strategy_parameters(const SimCore& core, std::string& text);

// Records `core.line` as a line of thread `thread_id`, when tracing.
void trace_line(SimCore& core, std::uint32_t thread_id);
// Clears core.event and names it `name` (a literal): the event to build and trace_event().
TraceEvent& event_start(SimCore& core, const TraceText& name);
// Records core.event as an event of thread `thread_id`, when tracing.
void trace_event(SimCore& core, std::uint32_t thread_id);
bool tracing(const SimCore& core);
void append_thread(std::string& text, std::uint32_t id);

}  // namespace readyport::internal
