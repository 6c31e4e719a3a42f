// readyport/fake/sim_scheduler.hpp: deterministic multi-threaded simulation.
//
// SimScheduler is a Runtime (runtime.hpp) that runs several logical threads so that exactly one
// runs at a time and control passes only at scheduling points: Runtime::point() (FakeOs calls it
// at the start of every seam call), Runtime::park() (a blocking seam call, a contended FakeOs
// mutex), Thread::join() and a thread's end. At each point a seeded strategy picks the next
// thread among the runnable ones. So a run is a pure function of the seed (and of the scenario):
// the same seed replays the same interleaving, byte for byte.
//
// Mechanisms (SimOptions::mechanism): how a logical thread runs. Both make exactly the same
// decisions, so a seed's trace and schedule are byte-identical under either (the trace does not
// name the mechanism); they differ only in speed and in what a debugger sees.
// - kFibers (the default where available): every logical thread is a user-space context with its
//   own stack (stack_bytes, below a guard page), all on the thread that called run(); a switch is
//   a swapcontext, no kernel scheduling. ucontext was chosen over a hand-written switch or
//   Boost.Context because it is portable (glibc on x86-64 and aarch64), needs no assembly, and
//   its cost (one rt_sigprocmask system call per switch) stays well above the target of 1 M
//   scheduled calls/s with a switch at every call: readyport-sim-bench measured 2.4 M calls per
//   CPU second (kThreads: 0.18 M), so a hand-written switch is not needed. On Windows (mingw,
//   MSVC) Win32 fibers implement it, but the default there stays kThreads: fibers are not yet
//   exercised by the Windows legs, and clang-cl's ASan has no annotations for them (kFibers is
//   refused there). Under ASan and TSan every switch is annotated (sim_fiber.hpp), so the
//   sanitizer legs run the fiber mechanism. State that Windows keeps per thread (the fake's last
//   error, FaultyOs's injected one) is per logical thread (logical_locals.hpp); code run by a
//   logical thread must not rely on its own thread_local variables being per logical thread.
// - kThreads: each logical thread is a real std::thread, but only the one holding the baton
//   runs; the others wait on a condition variable (~10 us a switch). Kept for one release, for
//   comparison and where fibers are not available.
//
//   readyport::Trace trace;
//   readyport::SimOptions options;
//   options.seed = 42;                              // the master seed
//   options.strategy = readyport::SimStrategy::kPct;
//   options.trace = &trace;
//   readyport::SimScheduler sim(options);
//   readyport::FakeOs os(readyport::FakeOptions{}, sim);
//   readyport::Status status = sim.run([&] {        // logical thread 1
//     auto worker = os.thread_start("worker", [&] { /* seam calls */ });
//     ...
//     worker.value()->join();
//   });
//   // status.ok(), or a deadlock / step-limit report; trace.hash() names the run.
//
// Time. The virtual clock (now_ns) starts at 0 and moves only when every unfinished thread is
// parked: it jumps to the earliest deadline, and every thread whose deadline it reached becomes
// runnable and returns kDeadline from park(). (SimOptions::tick_ns adds a fixed amount per step
// instead, for workloads that spin on the clock.) So a thread that waits 10 ms with nothing to
// wake it returns at exactly its deadline.
//
// Strategies (SimStrategy):
// - kRandom: at each point, uniform among the runnable threads.
// - kPct: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010). Each thread gets a
//   random distinct priority when it starts (inserted at a uniform position among the existing
//   ones); d-1 change points are drawn uniformly in [1, pct_steps_estimate]; the runnable thread
//   with the highest priority runs; at the i-th change point the running thread drops below every
//   other thread. A bug of depth d shows with probability at least 1/(n k^(d-1)).
// - kRoundRobin: the next runnable thread after the current one, in id order (no randomness;
//   switches at every point when another thread can run). For benchmarks and simple tests.
// - kDelayBounded: delay-bounding (Emmi, Qadeer, Rakamaric, POPL 2011): the deterministic
//   round-robin schedule above, plus at most delay_bound delays at steps drawn uniformly in
//   [1, pct_steps_estimate]. A delay at a step skips the thread round robin would run next (the
//   one after it runs instead; several delays at one step skip several). A delay due at a step
//   with one runnable thread is lost. With delay_bound 0 it is exactly kRoundRobin.
// - kFair: kRandom, except that a runnable thread not picked for fair_window consecutive steps is
//   picked next (the one that waited longest, the lowest id among equals). So no runnable thread
//   waits more than fair_window + (threads - 1) steps (SimStats::wait_steps_max). With a window
//   longer than the run it is exactly kRandom.
// The schedule's randomness is SeedStreams(seed).stream(SeedStream::kSchedule) only, so the
// workload's stream (kWorkload) is the same whatever the strategy.
//
// Ends of a run. run() returns:
// - ok, when every logical thread returned from its body;
// - kFailedPrecondition "deadlock: ...", when every unfinished thread is parked with no deadline
//   (outcome() == SimOutcome::kDeadlock); the message names each thread and its last call;
// - kResourceExhausted "step limit ...", after steps_max steps (outcome() == kStepLimit).
// After a deadlock or the step limit the logical threads are *abandoned*: each stays blocked
// forever inside the scheduler (in point(), park() or join(), where it holds no FakeOs lock) and
// never runs user code again. kThreads: their real threads are detached when the scheduler is
// destroyed, and the state they wait on is kept alive by the threads themselves (so nothing is
// freed under them and LeakSanitizer sees nothing unreachable). kFibers: their fibers are never
// resumed; their stacks stay mapped for good (LeakSanitizer scans them as roots, as it scans a
// blocked thread's stack), the rest of the scheduler is freed with it. Objects those threads
// reference (the scenario's locals) may be destroyed: they are never touched again. Exception:
// ~FakeOs asserts that no thread is parked in one of its ports or blocking socket calls, so such a
// FakeOs must be kept alive (for example moved into a never-destroyed list). Abandoned threads
// cost their stacks until the process exits (kFibers: stack_bytes each); keep them few.
//
// Threads that the runtime did not start (thread_current() == 0, e.g. the test's main thread)
// may use the same FakeOs before run() and after it returns: for them point() does nothing and
// park() behaves like InlineRuntime (a deadline advances the clock; no deadline asserts). During
// run() they must not make seam calls (asserted).
//
// Ownership: the caller owns the scheduler; it must outlive the FakeOs that uses it and the Trace
// must outlive run(). Threads: construct, run() and destroy on one thread that the scheduler did
// not start; Runtime methods are called by FakeOs from logical threads. run() may be called once.
// Several schedulers may run at once on different OS threads (each keeps its own state; the only
// per-OS-thread state is which logical thread is running there).
// Errors: run() returns them as a Status; broken contracts (a seam call from thread 0 during
// run(), a Thread destroyed unjoined) assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "readyport/fake/runtime.hpp"
#include "readyport/status.hpp"

namespace readyport {

class Trace;

enum class SimStrategy : std::uint8_t {
  kRandom,
  kPct,
  kRoundRobin,
  kDelayBounded,
  kFair,
  kExplore,  // steered by SimOptions::choices (sim_explorer.hpp); nothing drawn from the seed
};
// "random", "pct", "round_robin", "delay_bounded", "fair".
const char* sim_strategy_name(SimStrategy strategy);
// Parses a name of sim_strategy_name; false for anything else.
bool sim_strategy_parse(std::string_view name, SimStrategy* strategy_out);

enum class SimMechanism : std::uint8_t {
  kThreads,  // a real thread per logical thread, a condition-variable baton
  kFibers,   // a user-space context per logical thread, all on run()'s thread
};
// "threads", "fibers".
const char* sim_mechanism_name(SimMechanism mechanism);
// Parses a name of sim_mechanism_name; false for anything else.
bool sim_mechanism_parse(std::string_view name, SimMechanism* mechanism_out);
// Whether this build can run `mechanism` (kThreads always; kFibers on POSIX and Windows, not under
// clang-cl's ASan). run() fails with kFailedPrecondition for one that is not.
bool sim_mechanism_available(SimMechanism mechanism);
// kFibers where available, except on Windows (see "Mechanisms"); else kThreads.
SimMechanism sim_mechanism_default();

// The smallest fiber stack SimOptions::stack_bytes accepts.
inline constexpr std::size_t kSimStackBytesMin = 64 * 1024;

// kExplore: one decision of a run, a step at which more than one thread could run next.
struct SimDecision {
  std::uint32_t self = 0;      // the thread that took the step
  bool self_runnable = false;  // it could have gone on: running another is a preemption
  std::uint64_t runnable = 0;  // bit (id - 1) for each thread that could run next
  std::uint32_t chosen = 0;    // the thread that ran next
};

// kExplore: the choices that steer one run (sim_explorer.hpp). At the i-th decision the run picks
// prefix[i]; past the prefix it goes on with the thread that took the step when it can, else with
// the lowest runnable id (no preemption). Every decision is appended to `decisions`. A prefix
// entry that names no runnable thread is not followed (the default choice is made instead) and
// the first such decision's index is kept in `diverged_at`.
struct SimChoices {
  static constexpr std::size_t kFollowed = ~std::size_t{0};
  std::vector<std::uint32_t> prefix;
  std::vector<SimDecision> decisions;
  std::size_t diverged_at = kFollowed;
};

struct SimOptions {
  // The master seed. The schedule draws from SeedStreams(seed).stream(SeedStream::kSchedule).
  std::uint64_t seed = 0;
  SimStrategy strategy = SimStrategy::kRandom;
  // PCT depth d >= 1: d - 1 priority change points.
  std::uint32_t pct_depth = 3;
  // PCT's k: change points are drawn uniformly in [1, pct_steps_estimate]. Use about the number
  // of steps a run of the scenario takes (SimStats::steps of one run). kDelayBounded draws its
  // delay steps in the same range.
  std::uint64_t pct_steps_estimate = 1000;
  // kDelayBounded: delays at most (0: plain round robin).
  std::uint32_t delay_bound = 2;
  // kFair: a runnable thread not picked for this many consecutive steps (>= 1) is picked next.
  std::uint64_t fair_window = 64;
  // How logical threads run (see "Mechanisms"); not part of parameters() nor of the trace.
  SimMechanism mechanism = sim_mechanism_default();
  // kFibers: each logical thread's stack, in bytes (rounded up to pages; >= kSimStackBytesMin),
  // plus a guard page. An overflow faults on the guard page.
  std::size_t stack_bytes = 256 * 1024;
  // Steps at most (every point, park, join and thread end is a step); then the run ends with
  // kResourceExhausted.
  std::uint64_t steps_max = 1'000'000;
  // Logical threads at most, run()'s body included; thread_start fails past it.
  std::uint32_t threads_max = 64;
  // Virtual nanoseconds added at every step (0: time moves only when every thread is parked).
  std::uint64_t tick_ns = 0;
  // Where scheduler events go (may be null). Not owned; must outlive run().
  Trace* trace = nullptr;
  // kExplore: the run's choices (required; threads_max at most 64). Not owned; must outlive run().
  SimChoices* choices = nullptr;
};

enum class SimOutcome : std::uint8_t {
  kNotRun,     // run() was not called yet
  kRunning,    // inside run()
  kCompleted,  // every thread returned
  kDeadlock,   // every unfinished thread parked with no deadline
  kStepLimit,  // steps_max reached
};
const char* sim_outcome_name(SimOutcome outcome);

struct SimStats {
  std::uint64_t steps = 0;            // scheduling points taken by logical threads
  std::uint64_t decisions = 0;        // steps at which more than one thread could run
  std::uint64_t switches = 0;         // steps after which another thread ran
  std::uint64_t parks = 0;            // park() and join() calls that blocked
  std::uint64_t wakes = 0;            // wake() calls that made a parked thread runnable
  std::uint64_t time_jumps = 0;       // times every thread was parked and the clock jumped
  std::uint32_t threads_started = 0;  // logical threads, run()'s body included
  // The longest run of consecutive steps a runnable thread was not picked (any strategy).
  std::uint64_t wait_steps_max = 0;
  std::uint64_t now_ns = 0;  // the virtual clock at the end
  // FNV-1a 64 over the id of the thread that ran after each step: the interleaving alone, free
  // of the seed and of the calls' arguments (counts distinct interleavings across seeds).
  std::uint64_t schedule_hash = 0xcbf29ce484222325ULL;
};

namespace internal {
struct SimCore;
}  // namespace internal

class SimScheduler final : public Runtime {
 public:
  explicit SimScheduler(SimOptions options);
  // Joins every finished thread; detaches abandoned ones (see "Ends of a run").
  ~SimScheduler() override;
  SimScheduler(const SimScheduler&) = delete;
  SimScheduler& operator=(const SimScheduler&) = delete;

  // Runs `main_body` as logical thread 1 ("main") and returns when every logical thread has
  // finished, or at a deadlock or the step limit (see above). Blocks the calling thread, which
  // must not be a logical thread. Call once.
  Status run(std::function<void()> main_body);

  SimOutcome outcome() const;
  // Counters so far; final after run() returned.
  SimStats stats() const;
  // The parameters drawn from the seed, one line: "seed=.. strategy=.. depth=.. estimate=..
  // change_points=[..]". Print it with every failure.
  std::string parameters() const;
  // One line per logical thread: "T<id> '<name>' <state> in <last call>". For reports.
  std::string describe_threads() const;

  // ---- Runtime ----------------------------------------------------------------------------------
  std::uint64_t now_ns() const override;
  void point(const char* call) override;
  ParkEnd park(std::unique_lock<std::mutex>& lock, Waiter& waiter, std::uint64_t deadline_ns,
               const char* call) override;
  void wake(Waiter& waiter) override;
  // From a logical thread only; from any other thread fails with kFailedPrecondition. Fails with
  // kResourceExhausted past threads_max. The new thread is runnable; it runs when picked.
  Result<std::unique_ptr<Thread>> thread_start(std::string_view name,
                                               std::function<void()> body) override;
  std::uint32_t thread_current() const override;

 private:
  std::shared_ptr<internal::SimCore> core_;  // shared with the logical threads
};

}  // namespace readyport
