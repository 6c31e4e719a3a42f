// SimScheduler: one baton, many logical threads, seeded choices. See sim_scheduler.hpp.
//
// Locking. `SimCore::mutex` guards the core (sim_core.hpp). Lock order: a FakeOs state mutex,
// then SimCore::mutex (park() and wake() are called with the state mutex held); nothing locks a
// state mutex while holding SimCore::mutex. park() releases the state mutex before handing the
// baton on and takes it back only after releasing SimCore::mutex.
//
// The baton. `SimCore::running` names the one logical thread allowed to run user code. A thread
// gives the baton away only inside step(), with SimCore::mutex held: it sets `running` to the
// next thread and hands over (hand_over()):
// - kThreads: it signals the next thread's condition variable and waits on its own until
//   `running` names it again;
// - kFibers: it releases SimCore::mutex (one OS thread: no one else could take it) and switches
//   to the next thread's fiber; it takes the mutex again when switched back to.
// A run that ends early (deadlock, step limit) sets `running` to 0 for good: every thread still
// waiting stays waiting (abandoned; kFibers: its fiber is never resumed and the thread that
// ended the run switches to run()'s context, never to be resumed either).
#include "readyport/fake/sim_scheduler.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "readyport/assert.hpp"
#include "readyport/fake/internal/logical_locals.hpp"
#include "readyport/fake/rng.hpp"
#include "readyport/fake/trace.hpp"
#include "sim_core.hpp"
#include "sim_fiber.hpp"

namespace readyport {

namespace internal {

void append_thread(std::string& text, std::uint32_t id) {
  text += 'T';
  text += std::to_string(id);
}

void trace_line(SimCore& core, std::uint32_t thread_id) {
  if (core.options.trace == nullptr) {
    return;
  }
  core.options.trace->record(core.now_ns.load(std::memory_order_relaxed), thread_id, core.line);
}

TraceEvent& event_start(SimCore& core, const TraceText& name) {
  core.event.clear();
  core.event.rename(name);
  return core.event;
}

void trace_event(SimCore& core, std::uint32_t thread_id) {
  if (core.options.trace == nullptr) {
    return;
  }
  core.options.trace->record(core.now_ns.load(std::memory_order_relaxed), thread_id, core.event);
}

bool tracing(const SimCore& core) { return core.options.trace != nullptr; }

}  // namespace internal

namespace {

using internal::SimCore;
using internal::SimCoreLock;
using internal::SimCoreMutex;
using internal::SimThread;
using internal::SimThreadState;

// The logical thread running on this OS thread, and its scheduler. kThreads: set once by the
// thread's real thread. kFibers: set at every switch by the thread switching (enter()).
thread_local const SimCore* tls_core = nullptr;
thread_local SimThread* tls_thread = nullptr;

SimThread* current_thread(const SimCore& core) { return tls_core == &core ? tls_thread : nullptr; }

bool exploring(const SimCore& core) { return core.options.strategy == SimStrategy::kExplore; }

const char* state_name(SimThreadState state) {
  switch (state) {
    case SimThreadState::kRunnable:
      return "runnable";
    case SimThreadState::kParked:
      return "parked";
    case SimThreadState::kFinished:
      return "finished";
  }
  READYPORT_UNREACHABLE();
}

using internal::append_thread;
using internal::trace_line;

// SimStats::schedule_hash's step: xor the id, then an odd multiplier (a bijection of the hash).
constexpr std::uint64_t kScheduleHashMultiplier = 0x9E3779B97F4A7C15ULL;
using internal::tracing;

std::string describe_threads_locked(const SimCore& core) {
  std::string text;
  for (const auto& thread : core.threads) {
    if (!text.empty()) {
      text += "; ";
    }
    append_thread(text, thread->id);
    text += " '" + thread->name + "' " + state_name(thread->state) + " in " + thread->last_call;
    if (thread->state != SimThreadState::kParked) {
      continue;
    }
    if (thread->join_target != 0) {
      text += " (joins ";
      append_thread(text, thread->join_target);
      text += ")";
    } else if (thread->deadline_ns == kDeadlineNone) {
      text += " (no deadline)";
    } else {
      text += " (deadline " + std::to_string(thread->deadline_ns) + " ns)";
    }
  }
  return text;
}

std::string parameters_locked(const SimCore& core) {
  std::string text = "seed=" + std::to_string(core.options.seed);
  text += " strategy=";
  text += sim_strategy_name(core.options.strategy);
  internal::strategy_parameters(core, text);
  if (!core.stalls.empty()) {
    text += " stalls=" + sim_stalls_text(core.stalls);
  }
  text += " steps_max=" + std::to_string(core.options.steps_max);
  return text;
}

// Ends the run with `outcome`; the baton goes to nobody. Mutex held.
void end_run(SimCore& core, const SimThread& self, SimOutcome outcome) {
  READYPORT_ASSERT(core.outcome == SimOutcome::kRunning);
  core.outcome = outcome;
  core.running = 0;
  core.stats.now_ns = core.now_ns.load(std::memory_order_relaxed);
  switch (outcome) {
    case SimOutcome::kCompleted:
      core.status = Status();
      break;
    case SimOutcome::kDeadlock: {
      core.line = "sched.deadlock [";
      bool first = true;
      for (const auto& thread : core.threads) {
        if (thread->state == SimThreadState::kFinished) {
          continue;
        }
        if (!first) {
          core.line += ',';
        }
        first = false;
        append_thread(core.line, thread->id);
        core.line += ':';
        core.line += thread->last_call;
      }
      core.line += ']';
      trace_line(core, self.id);
      core.status =
          Status(StatusCode::kFailedPrecondition,
                 "deadlock: every unfinished thread is parked with no deadline at t=" +
                     std::to_string(core.stats.now_ns) + " ns: " + describe_threads_locked(core) +
                     " [" + parameters_locked(core) + "]");
      break;
    }
    case SimOutcome::kCut:
      core.line = "sched.cut steps=" + std::to_string(core.stats.steps);
      trace_line(core, self.id);
      core.status = Status(StatusCode::kFailedPrecondition,
                           "the run was cut at step " + std::to_string(core.stats.steps) +
                               " (its owner had its verdict): " + describe_threads_locked(core));
      break;
    case SimOutcome::kStepLimit:
      core.line = "sched.limit steps=" + std::to_string(core.options.steps_max);
      trace_line(core, self.id);
      core.status = Status(StatusCode::kResourceExhausted,
                           "step limit " + std::to_string(core.options.steps_max) +
                               " reached at t=" + std::to_string(core.stats.now_ns) +
                               " ns: " + describe_threads_locked(core) + " [" +
                               parameters_locked(core) + "]");
      break;
    case SimOutcome::kNotRun:
    case SimOutcome::kRunning:
      READYPORT_UNREACHABLE();
  }
  core.done.notify_all();
}

// kFibers: makes `next` the running logical thread of this OS thread (its thread-locals and
// last-error slots), or, for null, run()'s own context again. Just before a switch.
void enter(SimCore& core, SimThread* next) {
  if (next == nullptr) {
    tls_core = core.host_tls_core;
    tls_thread = core.host_tls_thread;
    fake_internal::logical_locals_activate(core.host_locals);
    return;
  }
  tls_core = &core;
  tls_thread = next;
  fake_internal::logical_locals_activate(&next->locals);
}

// An abandoned thread stays here for good (docs/simulation.md#deadlock-and-step-limit-reports).
// kThreads: it waits on its condition variable forever. kFibers: it switches to run()'s context,
// which never switches back to it.
[[noreturn]] void wait_forever(SimCore& core, SimCoreLock& held, SimThread& self) {
  if (core.options.mechanism == SimMechanism::kFibers) {
    held.unlock();
    enter(core, nullptr);
    internal::SimFiber::switch_to(self.fiber, core.host);
    READYPORT_UNREACHABLE();  // an abandoned fiber is never resumed
  }
  for (;;) {
    self.turn.wait(held);
  }
}

// Makes runnable every thread parked in park() whose deadline the clock reached; returns how many.
// `ready_out` lists them when tracing. Mutex held.
std::uint32_t release_expired(SimCore& core, std::vector<std::uint64_t>* ready_out) {
  const std::uint64_t now = core.now_ns.load(std::memory_order_relaxed);
  std::uint32_t released = 0;
  for (const auto& thread : core.threads) {
    if (thread->state != SimThreadState::kParked || thread->deadline_ns > now) {
      continue;
    }
    set_thread_state(core, *thread, SimThreadState::kRunnable);
    released += 1;
    if (ready_out == nullptr) {
      continue;
    }
    ready_out->push_back(thread->id);
  }
  return released;
}

// Every unfinished thread is parked: jumps the clock to the earliest deadline and releases the
// threads that reach it. Returns false when no parked thread has a deadline. Mutex held.
bool jump_time(SimCore& core, const SimThread& self) {
  std::uint64_t earliest = kDeadlineNone;
  for (const auto& thread : core.threads) {
    if (thread->state == SimThreadState::kParked) {
      earliest = std::min(earliest, thread->deadline_ns);
    }
  }
  if (earliest == kDeadlineNone) {
    return false;
  }
  READYPORT_ASSERT(earliest > core.now_ns.load(std::memory_order_relaxed));
  core.now_ns.store(earliest, std::memory_order_relaxed);
  core.stats.time_jumps += 1;
  core.ids.clear();
  const std::uint32_t released = release_expired(core, tracing(core) ? &core.ids : nullptr);
  READYPORT_ASSERT(released > 0);
  if (tracing(core)) {
    event_start(core, "sched.time")
        .num("to", earliest)
        .list("ready", TraceValueKind::kThread, core.ids.data(), core.ids.size());
    trace_event(core, self.id);
  }
  return true;
}

// Every 256th step that reuses the list checks the contract: a state changed without
// set_thread_state() would otherwise leave a thread picked that may not run, or never picked,
// silently.
void check_runnable(const SimCore& core) {
  std::size_t listed = 0;
  bool same = true;
  for (const auto& thread : core.threads) {
    if (thread->state == SimThreadState::kRunnable) {
      same = same && listed < core.runnable.size() && core.runnable[listed] == thread.get();
      listed += 1;
    }
  }
  const bool states_changed_through_set_thread_state = same && listed == core.runnable.size();
  READYPORT_ASSERT(states_changed_through_set_thread_state);
}

// Lists the runnable threads in id order.
void recollect_runnable(SimCore& core) {
  core.runnable_stale = false;
  core.runnable.clear();
  core.runnable_ids.clear();
  for (const auto& thread : core.threads) {
    if (thread->state == SimThreadState::kRunnable) {
      core.runnable.push_back(thread.get());
      core.runnable_ids.push_back(thread->id);
    }
  }
}

// The runnable threads, collected again only after a thread's state changed
// (core.runnable_stale): the list is unchanged otherwise.
void collect_runnable(SimCore& core) {
  if (core.runnable_stale) {
    recollect_runnable(core);
  } else if ((core.stats.steps & 255) == 0) {
    check_runnable(core);
  }
}

// After a pick: every runnable thread but `next` waited one more step (the clock moves), and
// next's wait ends (its length kept for the stats) and starts again.
void count_waits(SimCore& core, SimThread& next) {
  core.stats.wait_steps_max = std::max(core.stats.wait_steps_max, sim_wait_steps(core, next));
  core.wait_clock += 1;
  next.wait_since = core.wait_clock;
}

// Gives the baton to `next` (core.running names it already). Returns when self holds the baton
// again, or at once when self finished (kFibers: its entry then switches away for good).
void hand_over(SimCore& core, SimCoreLock& held, SimThread& self, SimThread& next, bool finished) {
  if (core.options.mechanism == SimMechanism::kThreads) {
    next.turn.notify_one();
    if (finished) {
      return;
    }
    self.turn.wait(held, [&] { return core.running == self.id; });
    return;
  }
  if (finished) {
    return;
  }
  held.unlock();  // one OS thread: the next fiber takes it
  enter(core, &next);
  internal::SimFiber::switch_to(self.fiber, next.fiber);
  held.lock();
  READYPORT_ASSERT(core.running == self.id);
}

// A scheduling point's call name as text, its length from core.call_names.
std::string_view call_name(SimCore& core, const char* at) {
  const auto address = reinterpret_cast<std::uintptr_t>(at);
  SimCore::CallName& known = core.call_names[(address >> 3) % core.call_names.size()];
  if (known.text != at) {
    known = SimCore::CallName{at, std::strlen(at)};
  }
  return std::string_view(at, known.size);
}

void trace_pick(SimCore& core, const SimThread& self, const SimThread& next, const char* at) {
  event_start(core, "sched.pick")
      .word_thread(next.id)
      .list("of", TraceValueKind::kThread, core.runnable_ids.data(), core.runnable_ids.size())
      .text("at", call_name(core, at));
  trace_event(core, self.id);
}

// kExplore: self's step ends here (a park's step goes on when the thread is resumed): its
// segment, who ran and what it touched, for the explorer's dependence relation.
void end_segment(SimCore& core, const SimThread& self) {
  SimFootprint footprint = core.footprint_declared ? core.footprint : ~SimFootprint{0};
  if (core.options.tick_ns > 0) {
    footprint |= sim_footprint_of(SimObject::kClock, 0);  // every step moves the clock
  }
  core.options.choices->segments.push_back(SimSegment{self.id, footprint});
}

// The stalls sorted by step (each step once, each length in range: asserted).
void init_stalls(SimCore& core) {
  core.stalls = core.options.stalls;
  std::sort(core.stalls.begin(), core.stalls.end(),
            [](const SimStall& a, const SimStall& b) { return a.step < b.step; });
  for (std::size_t i = 0; i < core.stalls.size(); ++i) {
    READYPORT_ASSERT(core.stalls[i].step >= 1);
    READYPORT_ASSERT(core.stalls[i].steps >= 1 && core.stalls[i].steps <= kSimStallStepsMax);
    READYPORT_ASSERT(i == 0 || core.stalls[i - 1].step < core.stalls[i].step);
  }
}

// The stall due at this step, if any: `self` (which took it) is kept off the CPU from now on.
void start_stall(SimCore& core, SimThread& self) {
  while (core.stall_next < core.stalls.size() &&
         core.stalls[core.stall_next].step <= core.stats.steps) {
    const SimStall& stall = core.stalls[core.stall_next++];
    if (stall.step != core.stats.steps || self.state == SimThreadState::kFinished) {
      continue;
    }
    self.stalled_until = core.stats.steps + stall.steps;
    if (tracing(core)) {
      event_start(core, "sched.stall").word_thread(self.id).num("steps", stall.steps);
      trace_event(core, self.id);
    }
  }
}

// The strategy's pick among the runnable threads (two or more) that are not stalled; among all of
// them when every one is stalled, or none.
SimThread* pick_unstalled(SimCore& core, SimThread& self) {
  const std::uint64_t now = core.stats.steps;
  std::size_t stalled = 0;
  for (const SimThread* thread : core.runnable) {
    stalled += thread->stalled_until > now ? 1 : 0;
  }
  if (stalled == 0 || stalled == core.runnable.size()) {
    return internal::strategy_pick(core, self);
  }
  std::vector<SimThread*> all;
  all.swap(core.runnable);
  for (SimThread* thread : all) {
    if (thread->stalled_until <= now) {
      core.runnable.push_back(thread);
    }
  }
  core.skip_stalled = true;
  SimThread* next =
      core.runnable.size() == 1 ? core.runnable.front() : internal::strategy_pick(core, self);
  core.skip_stalled = false;
  core.runnable.swap(all);
  return next;
}

// Who runs after `self`'s step: the stall due now begins; one runnable thread runs without a
// choice; else the strategy picks (among the threads not stalled, when there are stalls).
SimThread* pick_next(SimCore& core, SimThread& self) {
  if (core.stall_next < core.stalls.size()) {
    start_stall(core, self);
  }
  return core.runnable.size() == 1 ? core.runnable.front()
         : core.stalls.empty()     ? internal::strategy_pick(core, self)
                                   : pick_unstalled(core, self);
}

// One step, taken by the baton holder `self` after it set its own state (runnable, parked or
// finished), with the mutex held: picks who runs next and hands over the baton. Returns when self
// holds the baton again, or at once when self finished. Does not return to an abandoned thread.
void step(SimCore& core, SimCoreLock& held, SimThread& self, const char* at) {
  READYPORT_ASSERT(held.owns_lock());
  READYPORT_ASSERT(core.outcome == SimOutcome::kRunning && core.running == self.id);
  const bool finished = self.state == SimThreadState::kFinished;
  if (exploring(core)) {
    end_segment(core, self);
  }
  core.stats.steps += 1;
  if (core.stats.steps > core.options.steps_max ||
      core.cut_requested.load(std::memory_order_relaxed)) [[unlikely]] {
    end_run(core, self,
            core.stats.steps > core.options.steps_max ? SimOutcome::kStepLimit : SimOutcome::kCut);
    if (finished) {
      return;
    }
    wait_forever(core, held, self);
  }
  if (core.options.tick_ns > 0) {
    core.now_ns.store(core.now_ns.load(std::memory_order_relaxed) + core.options.tick_ns,
                      std::memory_order_relaxed);
    release_expired(core, nullptr);
  }
  if (internal::strategy_step_due(core)) {
    internal::strategy_step(core, self);
  }
  collect_runnable(core);
  if (core.runnable.empty()) {
    if (!jump_time(core, self)) {
      const bool all_finished = std::all_of(
          core.threads.begin(), core.threads.end(),
          [](const auto& thread) { return thread->state == SimThreadState::kFinished; });
      // Every thread finished: the run is complete (self is the last one). Otherwise every
      // unfinished thread waits for something only another parked thread could do.
      end_run(core, self, all_finished ? SimOutcome::kCompleted : SimOutcome::kDeadlock);
      if (finished) {
        return;
      }
      wait_forever(core, held, self);
    }
    collect_runnable(core);
  }
  SimThread* next = pick_next(core, self);
  count_waits(core, *next);
  // The next step starts undeclared (a resumed call declares again what it touches), except a new
  // thread's first.
  core.footprint = 0;
  core.footprint_declared = next->first_step;
  next->first_step = false;
  if (core.runnable.size() > 1) {
    core.stats.decisions += 1;
  }
  core.stats.schedule_hash = (core.stats.schedule_hash ^ next->id) * kScheduleHashMultiplier;
  if (tracing(core) && (core.runnable.size() > 1 || next != &self)) {
    trace_pick(core, self, *next, at);
  }
  if (next == &self) {
    return;
  }
  core.stats.switches += 1;
  core.running = next->id;
  hand_over(core, held, self, *next, finished);
  if (finished) {
    return;
  }
  READYPORT_ASSERT(self.state == SimThreadState::kRunnable);
}

// A logical thread's end: finished, joiners released, one last step. Mutex held.
void finish_thread(SimCore& core, SimCoreLock& held, SimThread& self) {
  set_thread_state(core, self, SimThreadState::kFinished);
  self.last_call = "finish";
  if (exploring(core)) {
    core.footprint |= sim_footprint_of(SimObject::kThread, self.id);
    core.footprint_declared = true;
  }
  for (const auto& thread : core.threads) {
    if (thread->state == SimThreadState::kParked && thread->join_target == self.id) {
      set_thread_state(core, *thread, SimThreadState::kRunnable);
    }
  }
  if (tracing(core)) {
    event_start(core, "sched.finish");
    trace_event(core, self.id);
  }
  step(core, held, self, "finish");
}

// kThreads: the body of every logical thread's real thread.
void thread_main(std::shared_ptr<SimCore> core_owner, SimThread* self) {
  SimCore& core = *core_owner;
  tls_core = &core;
  tls_thread = self;
  {
    SimCoreLock held(core.mutex);
    self->turn.wait(held, [&] { return core.running == self->id; });
  }
  self->body();
  self->body = nullptr;  // destroys the captures while this thread still holds the baton
  SimCoreLock held(core.mutex);
  finish_thread(core, held, *self);
  held.unlock();
  tls_core = nullptr;
  tls_thread = nullptr;
}

// kFibers: the entry of every logical thread's fiber, on its own stack. Its last switch goes to
// the thread that runs next, or to run()'s context when the run is over; nothing resumes it.
void fiber_main(void* argument) {
  auto* self = static_cast<SimThread*>(argument);
  SimCore& core = *self->core;
  self->body();
  self->body = nullptr;  // destroys the captures while this fiber still holds the baton
  SimCoreLock held(core.mutex);
  finish_thread(core, held, *self);
  const std::uint32_t next_id = core.running;  // 0: the run is over
  SimThread* next = next_id == 0 ? nullptr : core.threads[next_id - 1].get();
  held.unlock();
  enter(core, next);
  internal::SimFiber::switch_final(self->fiber, next == nullptr ? core.host : next->fiber);
}

// Creates logical thread `name` (runnable, waiting for the baton). Mutex held.
Result<SimThread*> create_thread(const std::shared_ptr<SimCore>& core_owner, std::string_view name,
                                 std::function<void()> body) {
  SimCore& core = *core_owner;
  if (core.threads.size() >= core.options.threads_max) {
    return Status(StatusCode::kResourceExhausted,
                  "SimScheduler: threads_max " + std::to_string(core.options.threads_max) +
                      " reached; cannot start '" + std::string(name) + "'");
  }
  auto thread = std::make_unique<SimThread>();
  thread->id = static_cast<std::uint32_t>(core.threads.size()) + 1;
  thread->name = std::string(name);
  thread->core = &core;
  thread->body = std::move(body);
  SimThread* raw = thread.get();
  if (core.options.mechanism == SimMechanism::kFibers) {
    const Status started = raw->fiber.start(core.options.stack_bytes, &fiber_main, raw);
    if (!started.ok()) {
      return started;
    }
  } else {
    try {
      raw->thread = std::thread(thread_main, core_owner, raw);
    } catch (const std::system_error& error) {
      return Status(StatusCode::kResourceExhausted,
                    "SimScheduler: cannot start a real thread for '" + std::string(name) +
                        "': " + error.what());
    }
  }
  raw->wait_since = core.wait_clock;  // runnable from the start: its wait starts now
  core.threads.push_back(std::move(thread));
  core.runnable_stale = true;
  internal::strategy_thread_added(core, *raw);
  core.stats.threads_started += 1;
  return raw;
}

// kFibers: runs the logical threads on this OS thread from `main` until the run ends; then
// keeps the stacks of the abandoned ones (docs/simulation.md#deadlock-and-step-limit-reports).
// Mutex held on entry and return.
void run_fibers(SimCore& core, SimCoreLock& held, SimThread& main) {
  core.host_tls_core = tls_core;
  core.host_tls_thread = tls_thread;
  core.host_locals = fake_internal::logical_locals_activate(nullptr);
  fake_internal::logical_locals_activate(core.host_locals);
  // Every fiber runs on this OS thread: until the run is over, this thread keeps the core's real
  // mutex and its fibers' lock() and unlock() only mark it held or free (sim_core_mutex.hpp).
  core.mutex.begin_elision();
  held.unlock();
  enter(core, &main);
  internal::SimFiber::switch_to(core.host, main.fiber);
  // Back on this OS thread's own context: every thread finished, or the run was abandoned.
  held.lock();
  core.mutex.end_elision();
  READYPORT_ASSERT(core.outcome != SimOutcome::kRunning && core.running == 0);
  READYPORT_ASSERT(tls_core == core.host_tls_core && tls_thread == core.host_tls_thread);
  core.host.release_thread();
  for (const auto& thread : core.threads) {
    if (thread->state != SimThreadState::kFinished) {
      thread->fiber.abandon();
    }
  }
}

class SimThreadHandle final : public Thread {
 public:
  SimThreadHandle(std::shared_ptr<SimCore> core, SimThread* target)
      : core_(std::move(core)), target_(target) {}
  ~SimThreadHandle() override {
    if (joined_) {
      return;
    }
    // Destroying an unjoined Thread breaks the contract, except when the run was abandoned.
    std::lock_guard<SimCoreMutex> guard(core_->mutex);
    READYPORT_ASSERT(core_->outcome == SimOutcome::kDeadlock ||
                     core_->outcome == SimOutcome::kStepLimit ||
                     core_->outcome == SimOutcome::kCut);
  }
  SimThreadHandle(const SimThreadHandle&) = delete;
  SimThreadHandle& operator=(const SimThreadHandle&) = delete;

  void join() override;

 private:
  std::shared_ptr<SimCore> core_;
  SimThread* target_;
  bool joined_ = false;
};

void SimThreadHandle::join() {
  READYPORT_ASSERT(!joined_);
  SimCore& core = *core_;
  SimThread* self = current_thread(core);
  SimCoreLock held(core.mutex);
  if (self == nullptr) {
    // A thread the scheduler did not start may join only once the run is over.
    READYPORT_ASSERT(core.outcome != SimOutcome::kRunning);
    READYPORT_ASSERT(target_->state == SimThreadState::kFinished);
  } else {
    READYPORT_ASSERT(self != target_);
    self->last_call = "Thread::join";
    if (target_->state != SimThreadState::kFinished) {
      set_thread_state(core, *self, SimThreadState::kParked);
      self->join_target = target_->id;
      self->deadline_ns = kDeadlineNone;
      core.stats.parks += 1;
      if (tracing(core)) {
        event_start(core, "sched.park")
            .text("call", "Thread::join")
            .thread_ref("target", target_->id);
        trace_event(core, self->id);
      }
    }
    // A join is a scheduling point whether or not it blocks.
    step(core, held, *self, "Thread::join");
    READYPORT_ASSERT(target_->state == SimThreadState::kFinished);
    if (exploring(core)) {
      // The step after the join's point reads the target's end.
      core.footprint |= sim_footprint_of(SimObject::kThread, target_->id);
      core.footprint_declared = true;
    }
    self->join_target = 0;
  }
  std::thread real = std::move(target_->thread);
  held.unlock();
  // The target's real thread handed the baton on and is returning: this wait is short.
  if (real.joinable()) {
    real.join();
  }
  joined_ = true;
}

}  // namespace

SimFootprint sim_footprint_of(SimObject object, std::uint64_t id) {
  if (object == SimObject::kAnything) {
    return ~SimFootprint{0};
  }
  // SplitMix64's finaliser over (kind, id): a fixed function, the same on every compiler.
  std::uint64_t x = (std::uint64_t{static_cast<std::uint8_t>(object)} << 56) ^ id;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return SimFootprint{1} << (x % 64);
}

const char* sim_mechanism_name(SimMechanism mechanism) {
  switch (mechanism) {
    case SimMechanism::kThreads:
      return "threads";
    case SimMechanism::kFibers:
      return "fibers";
  }
  READYPORT_UNREACHABLE();
}

bool sim_mechanism_parse(std::string_view name, SimMechanism* mechanism_out) {
  READYPORT_ASSERT(mechanism_out != nullptr);
  for (const SimMechanism mechanism : {SimMechanism::kThreads, SimMechanism::kFibers}) {
    if (name == sim_mechanism_name(mechanism)) {
      *mechanism_out = mechanism;
      return true;
    }
  }
  return false;
}

bool sim_mechanism_available(SimMechanism mechanism) {
  return mechanism == SimMechanism::kThreads || internal::sim_fibers_available();
}

SimMechanism sim_mechanism_default() {
  // Fibers wherever this build has them: on Linux and on Windows (Win32 fibers; under Wine an
  // exploration ran 47 times slower on the baton, which starts OS threads for every run). Both
  // mechanisms give the same traces (SimMechanism's tests), so the default changes only the
  // speed. Threads elsewhere, as under clang-cl's ASan, which has no annotations for Win32 fibers.
  return internal::sim_fibers_available() ? SimMechanism::kFibers : SimMechanism::kThreads;
}

const char* sim_outcome_name(SimOutcome outcome) {
  switch (outcome) {
    case SimOutcome::kNotRun:
      return "not_run";
    case SimOutcome::kRunning:
      return "running";
    case SimOutcome::kCompleted:
      return "completed";
    case SimOutcome::kDeadlock:
      return "deadlock";
    case SimOutcome::kStepLimit:
      return "step_limit";
    case SimOutcome::kCut:
      return "cut";
  }
  READYPORT_UNREACHABLE();
}

SimScheduler::SimScheduler(SimOptions options)
    : core_(std::make_shared<internal::SimCore>(options)) {
  READYPORT_ASSERT(options.threads_max >= 1);
  READYPORT_ASSERT(options.steps_max >= 1);
  READYPORT_ASSERT(options.stack_bytes >= kSimStackBytesMin);
  READYPORT_ASSERT(options.stalls.size() <= kSimStallsMax);
  READYPORT_ASSERT(options.stalls.empty() || options.strategy != SimStrategy::kExplore);
  std::lock_guard<SimCoreMutex> guard(core_->mutex);
  internal::strategy_init(*core_);
  init_stalls(*core_);
}

void SimScheduler::cut() { core_->cut_requested.store(true, std::memory_order_relaxed); }

SimScheduler::~SimScheduler() {
  std::vector<std::thread> finished;
  std::vector<std::thread> abandoned;
  {
    std::lock_guard<SimCoreMutex> guard(core_->mutex);
    READYPORT_ASSERT(core_->outcome != SimOutcome::kRunning);
    for (const auto& thread : core_->threads) {
      if (!thread->thread.joinable()) {
        continue;
      }
      if (thread->state == SimThreadState::kFinished) {
        finished.push_back(std::move(thread->thread));
      } else {
        abandoned.push_back(std::move(thread->thread));
      }
    }
  }
  for (std::thread& thread : finished) {
    thread.join();
  }
  // Each abandoned thread waits forever on state it keeps alive (it holds the core).
  for (std::thread& thread : abandoned) {
    thread.detach();
  }
}

Status SimScheduler::run(std::function<void()> main_body) {
  SimCore& core = *core_;
  READYPORT_ASSERT(current_thread(core) == nullptr);  // not from a logical thread
  READYPORT_ASSERT(main_body != nullptr);
  const bool fibers = core.options.mechanism == SimMechanism::kFibers;
  if (!sim_mechanism_available(core.options.mechanism)) {
    return Status(StatusCode::kFailedPrecondition, std::string("SimScheduler: mechanism '") +
                                                       sim_mechanism_name(core.options.mechanism) +
                                                       "' is not available here");
  }
  std::vector<std::thread> finished;
  {
    SimCoreLock held(core.mutex);
    READYPORT_ASSERT(core.outcome == SimOutcome::kNotRun);  // run() is called once
    if (fibers) {
      const Status adopted = core.host.adopt_thread();
      if (!adopted.ok()) {
        return adopted;
      }
    }
    core.outcome = SimOutcome::kRunning;
    if (tracing(core)) {
      core.line = "sched.params " + parameters_locked(core);
      trace_line(core, 0);
    }
    Result<SimThread*> main = create_thread(core_, "main", std::move(main_body));
    if (!main.ok()) {
      core.outcome = SimOutcome::kNotRun;
      if (fibers) {
        core.host.release_thread();
      }
      return main.status();
    }
    READYPORT_ASSERT(main.value()->id == 1);
    core.running = 1;
    if (fibers) {
      run_fibers(core, held, *main.value());
    } else {
      main.value()->turn.notify_one();
      core.done.wait(held, [&] { return core.outcome != SimOutcome::kRunning; });
    }
    if (core.outcome == SimOutcome::kCompleted) {
      for (const auto& thread : core.threads) {
        READYPORT_ASSERT(thread->state == SimThreadState::kFinished);
        if (thread->thread.joinable()) {
          finished.push_back(std::move(thread->thread));
        }
      }
    }
  }
  for (std::thread& thread : finished) {
    thread.join();
  }
  std::lock_guard<SimCoreMutex> guard(core.mutex);
  return core.status;
}

SimOutcome SimScheduler::outcome() const {
  std::lock_guard<SimCoreMutex> guard(core_->mutex);
  return core_->outcome;
}

SimStats SimScheduler::stats() const {
  std::lock_guard<SimCoreMutex> guard(core_->mutex);
  SimStats stats = core_->stats;
  stats.now_ns = core_->now_ns.load(std::memory_order_relaxed);
  for (const auto& thread : core_->threads) {  // the waits still going
    if (thread->state == SimThreadState::kRunnable) {
      stats.wait_steps_max = std::max(stats.wait_steps_max, sim_wait_steps(*core_, *thread));
    }
  }
  return stats;
}

std::string SimScheduler::parameters() const {
  std::lock_guard<SimCoreMutex> guard(core_->mutex);
  return parameters_locked(*core_);
}

std::string SimScheduler::describe_threads() const {
  std::lock_guard<SimCoreMutex> guard(core_->mutex);
  return describe_threads_locked(*core_);
}

std::uint64_t SimScheduler::now_ns() const { return core_->now_ns.load(std::memory_order_relaxed); }

bool SimScheduler::choose() {
  SimCore& core = *core_;
  std::lock_guard<SimCoreMutex> lock(core.mutex);
  if (core.options.strategy != SimStrategy::kExplore) {
    return false;
  }
  const SimThread* self = current_thread(core);
  READYPORT_ASSERT(self != nullptr);  // a logical thread's choice
  SimChoices& choices = *core.options.choices;
  SimDecision decision;
  decision.self = self->id;
  decision.choice = true;
  decision.runnable = 0b11;
  decision.chosen = 1;
  decision.segment = choices.segments.size();  // the running step, not yet appended
  core.footprint = sim_footprint_of(SimObject::kAnything, 0);
  core.footprint_declared = true;
  const std::size_t index = choices.decisions.size();
  if (index < choices.prefix.size()) {
    const std::uint32_t wanted = choices.prefix[index];
    if (wanted == 1 || wanted == 2) {
      decision.chosen = wanted;
    } else if (choices.diverged_at == SimChoices::kFollowed) {
      choices.diverged_at = index;
    }
  }
  choices.decisions.push_back(decision);
  return decision.chosen == 2;
}

void SimScheduler::touch(SimObject object, std::uint64_t id) {
  SimCore& core = *core_;
  if (!exploring(core)) {
    return;
  }
  const SimThread* self = current_thread(core);
  std::lock_guard<SimCoreMutex> lock(core.mutex);
  if (self != nullptr && core.running == self->id) {
    core.footprint |= object == SimObject::kNothing ? 0 : sim_footprint_of(object, id);
    core.footprint_declared = true;
  }
}

std::uint32_t SimScheduler::thread_current() const {
  const SimThread* self = current_thread(*core_);
  return self == nullptr ? 0 : self->id;
}

TraceStamp SimScheduler::trace_stamp() const {
  const SimThread* self = current_thread(*core_);
  return TraceStamp{core_->now_ns.load(std::memory_order_relaxed), self == nullptr ? 0 : self->id};
}

void SimScheduler::point(const char* call) {
  READYPORT_ASSERT(call != nullptr);
  SimCore& core = *core_;
  SimThread* self = current_thread(core);
  SimCoreLock held(core.mutex);
  if (self == nullptr) {
    // Thread 0 outside run(): nothing to schedule. During run() it would race the logical threads.
    READYPORT_ASSERT(core.outcome != SimOutcome::kRunning);
    return;
  }
  self->last_call = call;
  step(core, held, *self, call);
}

ParkEnd SimScheduler::park(std::unique_lock<std::mutex>& lock, Waiter& waiter,
                           std::uint64_t deadline_ns, const char* call) {
  READYPORT_ASSERT(lock.owns_lock());
  READYPORT_ASSERT(call != nullptr);
  SimCore& core = *core_;
  SimThread* self = current_thread(core);
  SimCoreLock held(core.mutex);
  waiter.deadline_ns = deadline_ns;
  waiter.thread_id = self == nullptr ? 0 : self->id;
  if (waiter.woken) {
    return ParkEnd::kWoken;
  }
  const std::uint64_t now = core.now_ns.load(std::memory_order_relaxed);
  if (deadline_ns <= now) {
    return ParkEnd::kDeadline;
  }
  if (self == nullptr) {
    // Thread 0 outside run(): like InlineRuntime, nothing else can end the wait.
    READYPORT_ASSERT(core.outcome != SimOutcome::kRunning);
    if (deadline_ns == kDeadlineNone) {
      std::fprintf(stderr,
                   "readyport SimScheduler: deadlock: %s waits with no deadline on a thread the "
                   "scheduler did not start, outside run()\n",
                   call);
      READYPORT_ASSERT(deadline_ns != kDeadlineNone);
    }
    core.now_ns.store(deadline_ns, std::memory_order_relaxed);
    return ParkEnd::kDeadline;
  }
  self->last_call = call;
  set_thread_state(core, *self, SimThreadState::kParked);
  self->waiter = &waiter;
  self->deadline_ns = deadline_ns;
  self->join_target = 0;
  waiter.runtime_data = self;
  core.stats.parks += 1;
  if (tracing(core)) {
    TraceEvent& event = event_start(core, "sched.park").text("call", call);
    if (deadline_ns == kDeadlineNone) {
      event.text("deadline", "none");
    } else {
      event.num("deadline", deadline_ns);
    }
    trace_event(core, self->id);
  }
  lock.unlock();  // FakeOs's state is free while this thread is parked
  step(core, held, *self, call);
  self->waiter = nullptr;
  self->deadline_ns = kDeadlineNone;
  held.unlock();  // lock order: the state mutex is never taken while holding core.mutex
  lock.lock();
  waiter.runtime_data = nullptr;
  // Woken wins over a deadline reached at the same time: the waker may have handed it something.
  return waiter.woken ? ParkEnd::kWoken : ParkEnd::kDeadline;
}

void SimScheduler::wake(Waiter& waiter) {
  waiter.woken = true;
  auto* target = static_cast<SimThread*>(waiter.runtime_data);
  if (target == nullptr) {
    return;  // not parked (yet): park() will see `woken`
  }
  SimCore& core = *core_;
  const SimThread* self = current_thread(core);
  std::lock_guard<SimCoreMutex> guard(core.mutex);
  if (target->state != SimThreadState::kParked || target->waiter != &waiter) {
    return;
  }
  set_thread_state(core, *target, SimThreadState::kRunnable);
  core.stats.wakes += 1;
  if (tracing(core)) {
    event_start(core, "sched.wake").word_thread(target->id);
    trace_event(core, self == nullptr ? 0 : self->id);
  }
}

Result<std::unique_ptr<Thread>> SimScheduler::thread_start(std::string_view name,
                                                           std::function<void()> body) {
  READYPORT_ASSERT(body != nullptr);
  SimCore& core = *core_;
  const SimThread* self = current_thread(core);
  if (self == nullptr) {
    return Status(StatusCode::kFailedPrecondition,
                  "SimScheduler: thread_start('" + std::string(name) +
                      "') from a thread the scheduler did not start: start threads inside run()");
  }
  std::lock_guard<SimCoreMutex> guard(core.mutex);
  if (exploring(core)) {
    core.footprint |= sim_footprint_of(SimObject::kThreadIds, 0);
    core.footprint_declared = true;
  }
  Result<SimThread*> created = create_thread(core_, name, std::move(body));
  if (!created.ok()) {
    return created.status();
  }
  if (tracing(core)) {
    event_start(core, "sched.start")
        .word_thread(created.value()->id)
        .text("name", trace_intern(name));
    trace_event(core, self->id);
  }
  return std::unique_ptr<Thread>(std::make_unique<SimThreadHandle>(core_, created.value()));
}

}  // namespace readyport
